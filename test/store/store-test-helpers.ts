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

/** A small seeded PRNG (mulberry32), so random histories are reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
