/**
 * The keys of one resource's cache in key order, kept in chunks of at most MAX_CHUNK: inserting
 * or removing a key moves at most one chunk's entries, where one sorted array moved half the
 * keys (a create into a cache of 100,000 objects copied ~400 KB).
 *
 * Inserted keys wait, unsorted, until the order is next read (or MAX_PENDING of them wait), and
 * are then placed together, in order: a create's key placed on its own made a binary search
 * through chunks no longer in the processor's caches (~1.5% of a create's CPU on etcd, in its
 * profile), where keys placed in order walk the same few chunks one after another.
 */
const MAX_CHUNK = 1024;
const CHUNK = MAX_CHUNK / 2;
const MAX_PENDING = 256;

/**
 * A cheaper order that agrees with the set's own whenever one of the two keys compared is one
 * `accepts` takes: the set places such a key by it.
 */
export interface FastOrder {
  accepts(key: string): boolean;
  before(a: string, b: string): boolean;
}

export class SortedKeys {
  private chunks: string[][] = [];
  private count = 0;
  /** Inserted keys not yet placed (in any order, maybe repeated or already placed). */
  private pending: string[] = [];

  constructor(
    private readonly compare: (a: string, b: string) => number,
    private readonly fast?: FastOrder,
  ) {}

  /** Replace the contents with `sorted` (in key order, no repeats). */
  reset(sorted: readonly string[]): void {
    this.pending = [];
    this.chunks = [];
    for (let i = 0; i < sorted.length; i += CHUNK) this.chunks.push(sorted.slice(i, i + CHUNK));
    this.count = sorted.length;
  }

  /** `k` comes before `key` in the set's order: by the fast order when it holds for both. */
  private beforeKey(key: string): (k: string) => boolean {
    const fast = this.fast;
    if (fast?.accepts(key)) return (k) => fast.before(k, key);
    return (k) => this.compare(k, key) < 0;
  }

  get size(): number {
    this.place();
    return this.count;
  }

  insert(key: string): void {
    this.pending.push(key);
    if (this.pending.length >= MAX_PENDING) this.place();
  }

  /** The pending keys in their places, in key order. */
  private place(): void {
    const pending = this.pending;
    if (pending.length === 0) return;
    this.pending = [];
    const fast = this.fast;
    pending.sort(fast && pending.every((k) => fast.accepts(k)) ? (a, b) => (a === b ? 0 : fast.before(a, b) ? -1 : 1) : this.compare);
    for (let i = 0; i < pending.length; i++) if (pending[i] !== pending[i - 1]) this.placeOne(pending[i]!);
  }

  private placeOne(key: string): void {
    if (this.chunks.length === 0) {
      this.chunks.push([key]);
      this.count = 1;
      return;
    }
    const before = this.beforeKey(key);
    const c = Math.min(this.chunkOf(before), this.chunks.length - 1);
    const chunk = this.chunks[c]!;
    const at = lowerBound(chunk, before);
    if (chunk[at] === key) return;
    chunk.splice(at, 0, key);
    this.count++;
    if (chunk.length > MAX_CHUNK) this.chunks.splice(c + 1, 0, chunk.splice(CHUNK));
  }

  remove(key: string): void {
    this.place();
    const before = this.beforeKey(key);
    const c = this.chunkOf(before);
    const chunk = this.chunks[c];
    if (!chunk) return;
    const at = lowerBound(chunk, before);
    if (chunk[at] !== key) return;
    chunk.splice(at, 1);
    this.count--;
    if (chunk.length === 0) this.chunks.splice(c, 1);
  }

  /** The keys from the first one not `before` on, in order (`before` holds for a leading run of keys). */
  *from(before: (key: string) => boolean): Generator<string> {
    this.place();
    let c = this.chunkOf(before);
    if (c >= this.chunks.length) return;
    let i = lowerBound(this.chunks[c]!, before);
    for (; c < this.chunks.length; c++, i = 0) {
      const chunk = this.chunks[c]!;
      for (; i < chunk.length; i++) yield chunk[i]!;
    }
  }

  /** How many keys `before` holds for (a leading run of the keys). */
  rank(before: (key: string) => boolean): number {
    this.place();
    const c = this.chunkOf(before);
    let n = 0;
    for (let i = 0; i < c; i++) n += this.chunks[i]!.length;
    return c < this.chunks.length ? n + lowerBound(this.chunks[c]!, before) : n;
  }

  /** The first chunk whose last key is not `before` (every key before it is). */
  private chunkOf(before: (key: string) => boolean): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = this.chunks[mid]!;
      if (before(chunk[chunk.length - 1]!)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The first index whose key is not `before`. */
function lowerBound(keys: readonly string[], before: (key: string) => boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(keys[mid]!)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
