/**
 * Whether the event loop is streaming bulk responses (lists of thousands of objects) in write
 * turns (docs/ARCHITECTURE.md, "Write turns"). The loop is the process's, so this is too: every
 * server in the process shares it.
 *
 * While bulk writes are pending, each turn of the loop ends with a slice of them, queued with
 * `setImmediate` in the turn before, so ahead of any `setImmediate` queued in this turn. The
 * small steps that wait for the end of a turn to batch their work (requests started together,
 * responses ended together, consistent reads sharing a revision read) then wait a slice for
 * nothing: they take their step at once instead, and a short request stays short under a flood
 * of lists.
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
