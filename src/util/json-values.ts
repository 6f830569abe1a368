/** Helpers over JSON-shaped values (what every decoder produces and every object is). */

/** A JSON object: not null, not an array. `T` names the record type a caller works with. */
export function isObject<T extends object = Record<string, unknown>>(value: unknown): value is T {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object JSON.parse could have made: not null, not an array, and no class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A deep copy of JSON-shaped data (objects are plain JSON data throughout the server). */
export function deepCopy<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** The value with every `null` object member removed, recursively (a Go struct decoded from it has no such field). */
export function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(value)) if (x !== null) out[k] = dropNulls(x);
    return out;
  }
  return value;
}
