/** Helpers over JSON-shaped values (what every decoder produces and every object is). */
import { isFrozen } from './frozen';

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

/**
 * Whether `value` is exactly what JSON.parse would give back for its JSON: plain objects and
 * arrays (no holes), strings, booleans, null and finite numbers other than -0; no undefined.
 * Such a value and its stored JSON decode are interchangeable.
 *
 * With `frozenIsPlain`, a `Frozen` part (util/frozen.ts) is taken as plain without a look
 * inside: deepFreeze freezes only plain JSON (the shared field sets of managedFields, the field
 * manager's remembered entries, parts of cached objects an update kept), and the field sets are
 * half of a typical object. Sound for a write's own object, whose other parts the core made or
 * copied (an in-process caller's body is copied as JSON, core.ts).
 */
export function isPlainJson(value: unknown, frozenIsPlain = false): boolean {
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return true;
  if (typeof value === 'number') return Number.isFinite(value) && (value !== 0 || 1 / value > 0);
  if (typeof value !== 'object') return false;
  if (frozenIsPlain && isFrozen(value)) return true;
  if (Array.isArray(value)) {
    // A hole reads as undefined, which fails like an undefined element.
    for (let i = 0; i < value.length; i++) if (!isPlainJson(value[i], frozenIsPlain)) return false;
    return true;
  }
  if (!isPlainObject(value)) return false;
  for (const key in value) if (!isPlainJson(value[key], frozenIsPlain)) return false;
  return true;
}

/**
 * Whether two JSON-shaped values write the same JSON up to the order of object keys: what Go's
 * semantic equality of decoded structs and maps answers (upstream's apiequality.Semantic.DeepEqual).
 * Undefined object members are not written, so they count as absent. Stricter than
 * validation/equality's semanticEqual, which also takes a missing value as equal to an empty one
 * (`replicas: 0` and no `replicas` are different stored objects).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let count = 0;
  for (const key in x) {
    const v = x[key];
    if (v === undefined) continue;
    count++;
    if (!jsonEqual(v, y[key])) return false;
  }
  for (const key in y) if (y[key] !== undefined) count--;
  return count === 0;
}

/**
 * A deep copy of JSON-shaped data (objects are plain JSON data throughout the server): what
 * `JSON.parse(JSON.stringify(value))` gives, built directly where the value is plain JSON (3.5
 * against 14 µs for a pod, docs/BENCHMARKS.md, "What the mechanisms save"). Whatever JSON
 * itself would change or refuse is left to that round trip, part by part: a class instance (a
 * Date, a boxed string), an object with a `toJSON`, a BigInt, a cycle (past `MAX_COPY_DEPTH`).
 * Members that are undefined, functions or symbols are left out of objects and become null in
 * arrays, as are non-finite numbers; -0 is 0.
 */
export function deepCopy<T>(value: T): T {
  return value === undefined ? value : (copyJson(value, 0) as T);
}

/** Below this depth a value is copied by JSON's round trip, which names a cycle as JSON does. */
const MAX_COPY_DEPTH = 1000;

/** `value` as JSON would copy it; `undefined` where JSON writes nothing (a member then left out). */
function copyJson(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? (value === 0 ? 0 : value) : null;
    case 'object':
      break;
    case 'bigint':
      return JSON.parse(JSON.stringify(value)) as unknown; // throws as JSON does
    default:
      return undefined; // undefined, a function, a symbol
  }
  if (value === null) return null;
  if (depth >= MAX_COPY_DEPTH) return roundTrip(value);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return roundTrip(value);
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return roundTrip(value);
    const n = value.length;
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) out[i] = copyJson(value[i], depth + 1) ?? null;
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return roundTrip(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = copyJson((value as Record<string, unknown>)[key], depth + 1);
    if (v === undefined) continue;
    // `__proto__` must become an own member, as JSON.parse makes it.
    if (key === '__proto__') Object.defineProperty(out, key, { value: v, writable: true, enumerable: true, configurable: true });
    else out[key] = v;
  }
  return out;
}

/** JSON's own copy of a part the direct copy does not take on (undefined where JSON writes nothing). */
function roundTrip(value: object): unknown {
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
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
