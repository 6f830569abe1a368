/**
 * How objects are kept in the store: JSON bytes of the full object, without
 * `metadata.resourceVersion` (the store's modRevision is the version, as upstream's etcd3
 * storage does it). Decoding sets resourceVersion from the revision.
 */
import type { ApiObject } from '../api';
import type { EquivalentVersion, ResourceDefinition } from '../resources/definition';
import { orderedJsonBeforeVersion, withResourceVersion } from '../../codecs/json-order';
import type { SchemaRegistry } from '../../schema';
import type { KeyValue } from '../../store';
import { type StatusError, internalError } from '../../status';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeForStorage(obj: ApiObject): Uint8Array {
  const meta = obj.metadata ?? {};
  // A create's object has none: encoded as it is, without copies.
  if (obj.metadata && meta.resourceVersion === undefined) return encoder.encode(JSON.stringify(obj));
  const { resourceVersion: _rv, ...rest } = meta;
  return encoder.encode(JSON.stringify({ ...obj, metadata: rest }));
}

/**
 * A created object's stored bytes in upstream's field order, and the JSON answer to its create
 * made from the same text: the version the store gave spliced in after the uid (json-order's
 * `orderedJsonBeforeVersion`), so the object is encoded once, not once to store and once to
 * answer. `plain`: the encode found nothing in the object that its JSON would not give back
 * (so the watch cache need not look again). Undefined where the kind's layout allows no
 * splice; those are stored with `encodeForStorage`.
 */
export function encodeCreatedForStorage(
  registry: SchemaRegistry,
  obj: ApiObject,
): { bytes: Uint8Array; plain: boolean; answer(version: number): Buffer } | undefined {
  const layout = orderedJsonBeforeVersion(registry, obj);
  if (!layout) return undefined;
  return {
    bytes: layout.bytes,
    plain: layout.plain,
    answer: (version) => withResourceVersion(layout.bytes, layout.at, String(version)),
  };
}

/** The 500 a read of an undecodable stored value answers, naming the key. */
export function undecodableObject(key: string, cause: string): StatusError {
  return internalError(`unable to decode an object stored at ${key}: ${cause}`);
}

export type StoredDecode = { ok: true; object: ApiObject } | { ok: false; cause: string };

/**
 * Decode a stored value, saying why when it cannot be (not JSON, or not an object). `parse`
 * stands in for JSON.parse where a caller has a faster one for its own use (the watch cache's).
 */
export function tryDecodeFromStorage(kv: KeyValue, parse: (text: string) => unknown = JSON.parse): StoredDecode {
  let obj: ApiObject;
  try {
    obj = parse(decoder.decode(kv.value)) as ApiObject;
  } catch (err) {
    return { ok: false, cause: (err as Error).message };
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return { ok: false, cause: 'not an object' };
  // The parsed value is ours: set the version in place rather than copy metadata (stored
  // values carry none, so it lands last either way).
  const meta = obj.metadata;
  if (typeof meta === 'object' && meta !== null && !Array.isArray(meta)) meta.resourceVersion = String(kv.modRevision);
  else obj.metadata = { ...(meta ?? {}), resourceVersion: String(kv.modRevision) };
  return { ok: true, object: obj };
}

/** Decode a stored value; a value that cannot be decoded is an InternalError naming the key. */
export function decodeFromStorage(kv: KeyValue): ApiObject {
  const decoded = tryDecodeFromStorage(kv);
  if (!decoded.ok) throw undecodableObject(kv.key, decoded.cause);
  return decoded.object;
}

/** The object an update starts from, decoded from the store into the request's version. */
export interface CurrentObject {
  object: ApiObject;
  /**
   * The store holds it as an earlier storage version's (`status.storedVersions`): an update
   * that changes nothing still rewrites it in the storage version, as upstream's store writes
   * whenever the new encoding differs from the stored bytes (how stored objects are migrated).
   */
  earlier: boolean;
}

/**
 * How one served version's objects become stored values and back: as they are, or converted to
 * and from the version the store keeps them as (`ResourceDefinition.storedAs`), and, for the
 * storage version itself, converted from an earlier storage version's where the store still
 * holds such (`CustomResourceInfo.readsOthers`). Every write starts from the stored object
 * decoded into its own version, as upstream's store decodes through the converter before its
 * update function runs. A conversion that waits (a conversion webhook,
 * `EquivalentVersion.waits`) answers with promises.
 */
export interface ObjectForm {
  /** Whether the store keeps this version's objects as they are (their bytes may then be reused as an answer). */
  readonly asIs: boolean;
  /** Whether `encode` and `asRead` answer with promises (decoding may wait wherever a stored object is converted). */
  readonly waits: boolean;
  /** Whether an object as the store (or the watch cache) holds it is this version's as it is, so an update may start from it. */
  isOwn(stored: ApiObject): boolean;
  encode(obj: ApiObject): Uint8Array | Promise<Uint8Array>;
  /** A written object as a read of it returns it: itself, or converted there and back (a new object). */
  asRead(obj: ApiObject): ApiObject | Promise<ApiObject>;
  tryDecode(kv: KeyValue): StoredDecode | Promise<StoredDecode>;
  /** The stored object an update starts from; an undecodable value is an InternalError naming the key. */
  decodeCurrent(kv: KeyValue): CurrentObject | Promise<CurrentObject>;
}

const AS_IS: ObjectForm = {
  asIs: true,
  waits: false,
  isOwn: () => true,
  encode: encodeForStorage,
  asRead: (obj) => obj,
  tryDecode: (kv) => tryDecodeFromStorage(kv),
  decodeCurrent: (kv) => ({ object: decodeFromStorage(kv), earlier: false }),
};

/** Whether a stored object was written by another version than `apiVersion` (one without apiVersion is taken as that version's). */
function writtenByOther(obj: ApiObject, apiVersion: string): boolean {
  return obj.apiVersion !== undefined && obj.apiVersion !== apiVersion;
}

/** A decode that may wait, as `tryDecode` answers it. */
function decoded(object: ApiObject | Promise<ApiObject>): StoredDecode | Promise<StoredDecode> {
  return object instanceof Promise ? object.then((o) => ({ ok: true, object: o })) : { ok: true, object };
}

/** A stored object through a conversion that may wait: `stored` one way, `waits` (several at once) the other. */
function fromStored(stored: EquivalentVersion, obj: ApiObject): ApiObject | Promise<ApiObject> {
  return stored.waits ? stored.waits.fromThat([obj]).then((converted) => converted[0]!) : stored.fromThat(obj);
}

function convertedForm(stored: EquivalentVersion): ObjectForm {
  return {
    asIs: false,
    waits: false,
    isOwn: () => false,
    encode: (obj) => encodeForStorage(stored.toThat(obj)),
    asRead: (obj) => stored.fromThat(stored.toThat(obj)),
    tryDecode(kv) {
      const found = tryDecodeFromStorage(kv);
      return found.ok ? { ok: true, object: stored.fromThat(found.object) } : found;
    },
    decodeCurrent(kv) {
      const obj = decodeFromStorage(kv);
      return { earlier: writtenByOther(obj, stored.apiVersion), object: stored.fromThat(obj) };
    },
  };
}

/**
 * Through a conversion that waits: a write's object is converted once on its way to the store
 * (the stored form kept for its answer), and the stored one back for the answer, as upstream's
 * store encodes to the storage version and decodes the stored bytes to the request's.
 */
function waitingForm(stored: EquivalentVersion, waits: NonNullable<EquivalentVersion['waits']>): ObjectForm {
  const storedOf = new WeakMap<ApiObject, ApiObject>();
  const toStored = async (obj: ApiObject): Promise<ApiObject> => storedOf.get(obj) ?? (await waits.toThat([obj]))[0]!;
  return {
    asIs: false,
    waits: true,
    isOwn: () => false,
    async encode(obj) {
      const converted = await toStored(obj);
      storedOf.set(obj, converted);
      return encodeForStorage(converted);
    },
    asRead: async (obj) => (await waits.fromThat([await toStored(obj)]))[0]!,
    tryDecode(kv) {
      const found = tryDecodeFromStorage(kv);
      return found.ok ? decoded(fromStored(stored, found.object)) : found;
    },
    async decodeCurrent(kv) {
      const obj = decodeFromStorage(kv);
      return { earlier: writtenByOther(obj, stored.apiVersion), object: await fromStored(stored, obj) };
    },
  };
}

/**
 * The storage version's form where the store may also hold an earlier storage version's
 * objects: its own are kept and read as they are; the others are converted (`earlier`) before
 * a write starts from them, and written back in this version.
 */
function migratingForm(apiVersion: string, earlier: EquivalentVersion): ObjectForm {
  const isOwn = (obj: ApiObject): boolean => !writtenByOther(obj, apiVersion);
  const own = (obj: ApiObject): ApiObject | Promise<ApiObject> => (isOwn(obj) ? obj : fromStored(earlier, obj));
  return {
    ...AS_IS,
    isOwn,
    tryDecode(kv) {
      const found = tryDecodeFromStorage(kv);
      return found.ok ? decoded(own(found.object)) : found;
    },
    decodeCurrent(kv) {
      const obj = decodeFromStorage(kv);
      if (isOwn(obj)) return { object: obj, earlier: false };
      const converted = fromStored(earlier, obj);
      return converted instanceof Promise ? converted.then((object) => ({ object, earlier: true })) : { object: converted, earlier: true };
    },
  };
}

/** The form a definition's objects are stored in. */
export function objectForm(def: ResourceDefinition): ObjectForm {
  if (def.storedAs?.waits) return waitingForm(def.storedAs, def.storedAs.waits);
  if (def.storedAs) return convertedForm(def.storedAs);
  const earlier = def.custom?.readsOthers;
  return earlier ? migratingForm(def.group ? `${def.group}/${def.version}` : def.version, earlier) : AS_IS;
}
