/**
 * Encode a shared value once per wire format, so that every watcher of one event gets the same
 * bytes (as upstream's cacher shares a cachingObject's serializations).
 *
 * The watch cache hands every watcher the same frozen event object for one change (and the same
 * frozen object to every get and list), so a door can key its encoded bytes on that object:
 *
 *     const bytes = encodeOnce(event, 'application/json', (e) => codec.stream.encodeEvent(e));
 *
 * Only `Frozen` values are memoised (util/frozen.ts): they cannot change after their bytes were
 * made, and being frozen at run time is how this memo knows it, whoever holds the value. Anything
 * else is simply encoded (a door may call this on every value it writes). The memo is a
 * WeakMap, so bytes go away with their event.
 */
import type { SchemaRegistry } from '../schema';
import { type Frozen, isFrozen } from '../util/frozen';

/** Shared by every server in the process: a pure memo keyed by frozen values, whose bytes cannot change. */
const memo = new WeakMap<object, Map<string, unknown>>();

export function encodeOnce<T extends object, B>(value: T, format: string, encode: (value: T) => B): B {
  if (!isFrozen(value)) return encode(value);
  let byFormat = memo.get(value);
  if (!byFormat) {
    byFormat = new Map();
    memo.set(value, byFormat);
  }
  if (byFormat.has(format)) return byFormat.get(format) as B;
  const bytes = encode(value);
  byFormat.set(format, bytes);
  return bytes;
}

/**
 * Let go of `value`'s memoised bytes (every format): the watch cache calls it once a cached
 * object is superseded, so that the history it keeps holds the object, not its encodings too.
 * A later encode of it (a watch replaying history) makes them again.
 */
export function forgetEncodings(value: object): void {
  memo.delete(value);
}

/** Values whose bytes `encodeRecent` keeps, per format. */
const RECENT_VALUES = 1024;
const recent = new Map<string, Map<object, unknown>>();

/**
 * `encodeOnce` for values shared for a short time: a watch event, which every watcher of the
 * change encodes within moments of the others and then rarely again. The bytes of the last
 * RECENT_VALUES values per format are kept, not those of every event the history holds; an
 * older one (a watch replaying history) is encoded again. A pure memo of immutable values, so
 * one table serves every server in the process.
 */
export function encodeRecent<T extends object, B>(value: T, format: string, encode: (value: T) => B): B {
  if (!isFrozen(value)) return encode(value);
  let byValue = recent.get(format);
  if (!byValue) recent.set(format, (byValue = new Map()));
  if (byValue.has(value)) return byValue.get(value) as B;
  const bytes = encode(value);
  byValue.set(value, bytes);
  if (byValue.size > RECENT_VALUES) byValue.delete(byValue.keys().next().value!);
  return bytes;
}

/** Shared by every server in the process: which frozen view was made from which frozen object, which never changes. */
const typeMetaSources = new WeakMap<object, object>();

/**
 * Record that the frozen `view` is the frozen `source` without its kind and apiVersion (a cached
 * object as a typed list's item): a door may cut the view's bytes from the source's instead of
 * encoding and keeping them a second time.
 */
export function viewWithoutTypeMeta(view: object, source: object): void {
  typeMetaSources.set(view, source);
}

/**
 * The object `view` was made from by `viewWithoutTypeMeta`, when it is a shared object whose
 * kind is served as the type named `typeName` (a list's item type), so that the view's encoding
 * is its source's without TypeMeta.
 */
export function typeMetaSource(view: object, registry: SchemaRegistry, typeName: string): Record<string, unknown> | undefined {
  const source = typeMetaSources.get(view);
  if (!source || !isShared(source)) return undefined;
  const { apiVersion, kind } = source as { apiVersion?: unknown; kind?: unknown };
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
  return registry.kind(apiVersion, kind)?.type.name === typeName ? (source as Record<string, unknown>) : undefined;
}

/** True when `encodeOnce` memoises this value: it is `Frozen` (a shared, immutable object from the cache). */
export function isShared<T extends object>(value: T): value is Frozen<T> {
  return isFrozen(value);
}

/**
 * `text` as UTF-8 in a buffer of its own: a small `Buffer.from` is a slice of a shared 8 KiB
 * pool, which a memoised slice would keep alive whole.
 */
export function ownBytes(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
  bytes.write(text, 'utf8');
  return bytes;
}
