/**
 * Whether the event loop is streaming bulk responses (lists of thousands of objects) in write
 * turns (docs/ARCHITECTURE.md, "Write turns"). The loop is the process's, so this is too: every
 * server in the process shares it.
 *
 * While bulk writes are pending, each turn of the loop ends with a slice of them, queued with
 * `setImmediate` in the turn before, so ahead of any `setImmediate` queued in this turn. The
 * small steps that wait for the end of a turn to batch their work (requests started together,
 * responses ended together, consistent reads sharing a revision read) would then wait a slice
 * for nothing: through `atTurnEnd` they take their step at once instead, and a short request
 * stays short under a flood of lists.
 */
let writers = 0;

/** A gateway's write turns started (or stopped) having writers waiting or writing. */
export function bulkWriting(active: boolean): void {
  writers += active ? 1 : -1;
}

/** Some gateway in this process has bulk writes pending. */
export function bulkWritesPending(): boolean {
  return writers > 0;
}

/**
 * Run `step` once this turn's I/O is handled (`schedule`, `setImmediate` unless a test gives its
 * own), or at once while bulk writes are pending. A caller batching into `step` queues its
 * own work before calling this, since `step` may run within the call.
 */
export function atTurnEnd(step: () => void, schedule: (step: () => void) => void = setImmediate): void {
  if (writers > 0) step();
  else schedule(step);
}
