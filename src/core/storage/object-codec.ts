/**
 * How objects are kept in the store: JSON bytes of the full object, without
 * `metadata.resourceVersion` (the store's modRevision is the version, as upstream's etcd3
 * storage does it). Decoding sets resourceVersion from the revision.
 */
import type { ApiObject } from '../api';
import type { KeyValue } from '../../store';
import { internalError } from '../../status';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeForStorage(obj: ApiObject): Uint8Array {
  const meta = obj.metadata ?? {};
  const { resourceVersion: _rv, ...rest } = meta;
  return encoder.encode(JSON.stringify({ ...obj, metadata: rest }));
}

/** Decode a stored value; a value that cannot be decoded is an InternalError naming the key. */
export function decodeFromStorage(kv: KeyValue): ApiObject {
  let obj: ApiObject;
  try {
    obj = JSON.parse(decoder.decode(kv.value)) as ApiObject;
  } catch (err) {
    throw internalError(`unable to decode an object stored at ${kv.key}: ${(err as Error).message}`);
  }
  obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: String(kv.modRevision) };
  return obj;
}

