/**
 * upstream's bitmap RangeAllocation kept in the store (`/registry/ranges/serviceips`,
 * `/registry/ranges/servicenodeports`): one object per range whose `data` is the bitmap of taken
 * offsets (bit i of a big-endian integer, as Go's big.Int writes it). Every change is a guarded
 * write of that one key, retried on conflict, so several servers on one store never hand out
 * the same offset. Dynamic picks prefer the upper band, leaving the lower `offset` offsets for
 * addresses asked for by value (upstream's static subrange, on since 1.26).
 */
import { type Store, StoreError } from '../../store';

export class RangeFullError extends Error {
  constructor() {
    super('range is full');
  }
}

interface StoredRange {
  kind: 'RangeAllocation';
  apiVersion: 'v1';
  metadata: { creationTimestamp: null };
  range: string;
  data: string;
}

/** A set of taken offsets, read from and written to the stored bitmap. */
class Bitmap {
  constructor(readonly bits: Set<number>) {}

  static decode(data: string): Bitmap {
    const bytes = Buffer.from(data, 'base64');
    const bits = new Set<number>();
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[bytes.length - 1 - i]!;
      for (let b = 0; b < 8; b++) if (byte & (1 << b)) bits.add(i * 8 + b);
    }
    return new Bitmap(bits);
  }

  encode(): string {
    if (this.bits.size === 0) return '';
    const top = Math.max(...this.bits);
    const bytes = Buffer.alloc(Math.floor(top / 8) + 1);
    for (const bit of this.bits) bytes[bytes.length - 1 - Math.floor(bit / 8)]! |= 1 << (bit % 8);
    return bytes.toString('base64');
  }
}

export interface RangeAllocatorOptions {
  store: Store;
  /** `/registry/ranges/serviceips`. */
  key: string;
  /** The range as upstream writes it in the object (`10.0.0.0/24`, `30000-2767`). */
  range: string;
  size: number;
  /** The size of the lower band that dynamic picks use only once the upper band is full. */
  offset: number;
  random?: (n: number) => number;
}

/** The taken offsets as read at one revision of the stored bitmap (0: none stored yet). */
export interface RangeSnapshot {
  readonly revision: number;
  readonly taken: ReadonlySet<number>;
}

function decodeStored(value: Uint8Array): Bitmap {
  return Bitmap.decode((JSON.parse(Buffer.from(value).toString('utf8')) as StoredRange).data);
}

export class RangeAllocator {
  private readonly random: (n: number) => number;

  constructor(private readonly options: RangeAllocatorOptions) {
    this.random = options.random ?? ((n) => Math.floor(Math.random() * n));
  }

  get size(): number {
    return this.options.size;
  }

  /** The taken offsets now. */
  async taken(): Promise<ReadonlySet<number>> {
    return (await this.snapshot()).taken;
  }

  /** Take `offset`; false when it is taken already. `dryRun` only looks. */
  async allocate(offset: number, dryRun = false): Promise<boolean> {
    return this.change((bits) => {
      if (bits.has(offset)) return { result: false, changed: false };
      bits.add(offset);
      return { result: true, changed: !dryRun };
    });
  }

  /** Take a free offset, the upper band first; RangeFullError when none is left. */
  async allocateNext(dryRun = false): Promise<number> {
    return this.change((bits) => {
      const found = this.pickFree(bits);
      if (found === undefined) throw new RangeFullError();
      bits.add(found);
      return { result: found, changed: !dryRun };
    });
  }

  async release(offsets: readonly number[]): Promise<void> {
    if (offsets.length === 0) return;
    await this.change((bits) => {
      let changed = false;
      for (const o of offsets) changed = bits.delete(o) || changed;
      return { result: undefined, changed };
    });
  }

  /** The taken offsets and the revision they were read at: where a repair starts. */
  async snapshot(): Promise<RangeSnapshot> {
    const { kv } = await this.options.store.get(this.options.key);
    return { revision: kv?.modRevision ?? 0, taken: kv ? decodeStored(kv.value).bits : new Set() };
  }

  /**
   * Write `next` as the taken offsets if the bitmap is still the one `from` read (the repair
   * controller's write, guarded by the snapshot's revision as upstream's CreateOrUpdate is);
   * false when it changed meanwhile: the repair gives up its round rather than undo a change
   * made after it listed the Services.
   */
  async replace(from: RangeSnapshot, next: ReadonlySet<number>): Promise<boolean> {
    const same = next.size === from.taken.size && [...next].every((b) => from.taken.has(b));
    if (same) return true;
    const { store, key } = this.options;
    const bytes = this.encodeStored(new Bitmap(new Set(next)));
    try {
      if (from.revision > 0) await store.update(key, bytes, from.revision);
      else await store.create(key, bytes);
      return true;
    } catch (err) {
      if (StoreError.is(err, 'conflict') || StoreError.is(err, 'exists') || StoreError.is(err, 'not-found')) return false;
      throw err;
    }
  }

  private pickFree(bits: Set<number>): number | undefined {
    const { size, offset } = this.options;
    const scan = (from: number, to: number): number | undefined => {
      const n = to - from;
      if (n <= 0) return undefined;
      const start = this.random(n);
      for (let i = 0; i < n; i++) {
        const o = from + ((start + i) % n);
        if (!bits.has(o)) return o;
      }
      return undefined;
    };
    return scan(offset, size) ?? scan(0, offset);
  }

  private encodeStored(bitmap: Bitmap): Buffer {
    const stored: StoredRange = {
      kind: 'RangeAllocation',
      apiVersion: 'v1',
      metadata: { creationTimestamp: null },
      range: this.options.range,
      data: bitmap.encode(),
    };
    return Buffer.from(JSON.stringify(stored));
  }

  /** One guarded read-change-write of the stored bitmap, retried on conflict. */
  private async change<T>(apply: (bits: Set<number>) => { result: T; changed: boolean }): Promise<T> {
    const { store, key } = this.options;
    let { kv } = await store.get(key);
    for (;;) {
      const bitmap = kv ? decodeStored(kv.value) : new Bitmap(new Set());
      const { result, changed } = apply(bitmap.bits);
      if (!changed) return result;
      const bytes = this.encodeStored(bitmap);
      try {
        if (kv) await store.update(key, bytes, kv.modRevision);
        else await store.create(key, bytes);
        return result;
      } catch (err) {
        if (StoreError.is(err, 'conflict') || StoreError.is(err, 'exists')) {
          kv = err.current ?? (await store.get(key)).kv;
          continue;
        }
        if (StoreError.is(err, 'not-found')) {
          kv = undefined;
          continue;
        }
        throw err;
      }
    }
  }
}

/** upstream's calculateRangeOffset: min(max(min, size/step), max), none for small ranges. */
export function staticBand(size: number, min: number, step: number, max: number): number {
  if (size <= min) return 0;
  return Math.min(Math.max(min, Math.floor(size / step)), max);
}
