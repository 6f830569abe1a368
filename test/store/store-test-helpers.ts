/** Small helpers shared by the store tests. */
import { StoreError } from '../../src/store';

export const enc = (text: string): Uint8Array => Buffer.from(text);
export const dec = (value: Uint8Array | undefined): string | undefined => (value ? Buffer.from(value).toString() : undefined);

/** The StoreError a promise rejects with (anything else fails the test). */
export async function storeError(promise: Promise<unknown>): Promise<StoreError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof StoreError) return err;
    throw err;
  }
  throw new Error('expected the operation to fail with a StoreError');
}

/** Lets timers and I/O run (one macrotask turn); not a sleep. */
export const yieldTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

export { seededRandom } from '../../src/util/seeded-random';
