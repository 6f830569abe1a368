/**
 * Objects the core has just written on behalf of a door, waiting for their watch event: the
 * watch cache takes such an object as it is (frozen) instead of decoding the bytes it was
 * written as, which it would otherwise do for every create and update (docs/ARCHITECTURE.md,
 * "Watch cache").
 *
 * Only a write whose body a door handed over qualifies (`Owned` in core/api.ts, the request's
 * `handedOver`): its request only reads the answer and lets go of it, so freezing it takes
 * nothing from anyone. An in-process caller gets its object back to change and write again, so
 * its writes are decoded from their bytes as before.
 *
 * An object is taken only when the event's bytes are the very bytes written from it, so a
 * concurrent writer of the same key is decoded instead. An event of another write of the key
 * leaves the entry waiting for its own: on etcd a create's event can come after its caller has
 * already sent the next write of the same object. Entries whose event never comes (the write
 * failed, or the cache relisted) are forgotten; at most MAX_PENDING are kept.
 */
import type { ApiObject } from '../api';
import type { KeyValue } from '../../store';
import type { Frozen } from '../../util/frozen';

const MAX_PENDING = 4096;

/**
 * One write's object waiting for its event. Once the cache has adopted the object (frozen, with
 * the write's resourceVersion), `adopted` is it as the cache holds it: the writer answers with it.
 */
export class PendingWrite {
  private cached?: Frozen<ApiObject>;

  constructor(
    readonly key: string,
    readonly bytes: Uint8Array,
    /** The write's object, the core's until the cache adopts it. */
    readonly object: ApiObject,
    /** Its encode found it plain JSON (json-order's sink `plain`): the cache need not walk it to know. */
    readonly plain: boolean,
  ) {}

  get adopted(): Frozen<ApiObject> | undefined {
    return this.cached;
  }

  /** The cache made the object its own, as `object` (resource-cache.ts, adoptWritten). */
  adoptedAs(object: Frozen<ApiObject>): void {
    this.cached = object;
  }
}

export class WrittenObjects {
  private pending = new Map<string, PendingWrite>();

  /** `object` is about to be written to `key` as `bytes`; `plain` when its encode found it plain JSON. */
  expect(key: string, bytes: Uint8Array, object: ApiObject, plain = false): PendingWrite {
    if (this.pending.size >= MAX_PENDING && !this.pending.has(key)) this.pending = new Map();
    const write = new PendingWrite(key, bytes, object, plain);
    this.pending.set(key, write);
    return write;
  }

  /** The write failed: its event will not come. */
  forget(write: PendingWrite): void {
    if (this.pending.get(write.key) === write) this.pending.delete(write.key);
  }

  /** The write of `kv`'s value, if it is one waiting here (and it is taken). */
  take(kv: KeyValue): PendingWrite | undefined {
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
