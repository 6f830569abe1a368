/**
 * Objects the core has just written on behalf of a door, waiting for their watch event: the
 * watch cache takes such an object as it is (frozen) instead of decoding the bytes it was
 * written as, which it would otherwise do for every create and update (docs/ARCHITECTURE.md,
 * "Watch cache").
 *
 * Only a door's body qualifies (`handOver` in core/api.ts): its request answers with the object
 * and lets go of it, so freezing it takes nothing from anyone. An in-process caller gets its
 * object back to change and write again, so its writes are decoded from their bytes as before.
 *
 * An object is taken only when the event's bytes are the very bytes written from it, so a
 * concurrent writer of the same key is decoded instead. An event of another write of the key
 * leaves the entry waiting for its own: on etcd a create's event can come after its caller has
 * already sent the next write of the same object. Entries whose event never comes (the write
 * failed, or the cache relisted) are forgotten; at most MAX_PENDING are kept.
 */
import type { ApiObject } from '../api';
import type { KeyValue } from '../../store';

const MAX_PENDING = 4096;

/** A write's object, taken for its event. */
export interface WrittenObject {
  readonly object: ApiObject;
  /** Its encode found it plain JSON (json-order's sink `plain`): the cache need not walk it to know. */
  readonly plain: boolean;
}

interface Pending extends WrittenObject {
  readonly bytes: Uint8Array;
}

export class WrittenObjects {
  private pending = new Map<string, Pending>();

  /** `object` is about to be written to `key` as `bytes`; `plain` when its encode found it plain JSON. */
  expect(key: string, bytes: Uint8Array, object: ApiObject, plain = false): void {
    if (this.pending.size >= MAX_PENDING && !this.pending.has(key)) this.pending = new Map();
    this.pending.set(key, { bytes, object, plain });
  }

  /** The write of `object` failed: its event will not come. */
  forget(key: string, object: ApiObject): void {
    if (this.pending.get(key)?.object === object) this.pending.delete(key);
  }

  /** The object written as `kv`'s value, if it is one waiting here (and it is taken). */
  take(kv: KeyValue): WrittenObject | undefined {
    const entry = this.pending.get(kv.key);
    if (!entry || !sameBytes(entry.bytes, kv.value)) return undefined;
    this.pending.delete(kv.key);
    return entry;
  }

  /** The cache relisted: any event still awaited will not be applied one by one. */
  clear(): void {
    this.pending = new Map();
  }

  get size(): number {
    return this.pending.size;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  if (a.byteLength !== b.byteLength) return false;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}
