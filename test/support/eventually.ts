/**
 * The one way a test waits for something that happens on its own time (a controller's write, a
 * watch catching up, a child process's output): ask again until the answer holds. A test that
 * can wait on an event (a promise, a stream's `data`) or drive a `ManualClock` does that instead.
 */

export interface EventuallyOptions {
  /** What is awaited, for the failure's message. */
  what?: string;
  /** How long to keep asking (default 10 s). */
  timeoutMs?: number;
  /** The pause between two checks (default 20 ms). */
  intervalMs?: number;
}

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * Calls `check` until it returns (or resolves to) a truthy value, and resolves with that value;
 * a check that throws counts as "not yet". Rejects after `timeoutMs`, naming `what` and the
 * last error the check threw.
 */
export async function eventually<T>(check: () => T | Promise<T>, options: EventuallyOptions = {}): Promise<Truthy<T>> {
  const { what = 'the condition', timeoutMs = 10_000, intervalMs = 20 } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as Truthy<T>;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const cause = lastError === undefined ? '' : `; the last check threw: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
