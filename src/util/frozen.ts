/**
 * Frozen values: the watch cache's objects and what is shared with them (docs/ARCHITECTURE.md,
 * "Ownership"). A `Frozen<T>` is made only by `deepFreeze`, only of plain JSON (an object decoded
 * from the store, or one the server built), and no one changes it after, so any number of readers
 * may hold it and a memo may key on it (encoded bytes, a read field set). A function that takes
 * a `Frozen` only reads it; one that means to change a value takes it as its own (`Owned` in
 * core/api.ts) or copies it.
 */

declare const FROZEN: unique symbol;

/** A deep-frozen value: read it, share it, key a memo on it; never change it. */
export type Frozen<T> = Readonly<T> & { readonly [FROZEN]: true };

/**
 * Freeze a JSON value and everything in it; returns it, now `Frozen`. A frozen part is taken as
 * frozen throughout: what the server freezes it freezes whole, here or as a new container of
 * frozen values (the watch cache's events and list items). Walks by index and
 * `for…in` rather than `Object.values`, which allocates an array per object: half the time, and
 * it runs for every object the cache loads.
 */
export function deepFreeze<T>(value: T): Frozen<T> {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value as Frozen<T>;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  } else {
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value as Frozen<T>;
}

/**
 * Whether `value` is `Frozen`: the one runtime test of it, for the memos that key on values
 * that can no longer change (codecs/encode-once.ts, the field-set bytes of codecs/json-order.ts,
 * the read field sets of core/apply/set.ts) and for isPlainJson, which takes a frozen part as
 * plain because deepFreeze freezes only plain JSON. It says that a value is immutable, not
 * whose it is: who may change a value is in the types (`Owned`, `Frozen`), never asked.
 */
export function isFrozen<T extends object>(value: T): value is Frozen<T> {
  return Object.isFrozen(value);
}
