/**
 * The keys of one resource's cache in key order, kept in chunks of at most MAX_CHUNK: inserting
 * or removing a key moves at most one chunk's entries, where one sorted array moved half the
 * keys (a create into a cache of 100,000 objects copied ~400 KB).
 */
const MAX_CHUNK = 1024;
const CHUNK = MAX_CHUNK / 2;

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

  constructor(
    private readonly compare: (a: string, b: string) => number,
    private readonly fast?: FastOrder,
  ) {}

  /** Replace the contents with `sorted` (in key order, no repeats). */
  reset(sorted: readonly string[]): void {
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
    return this.count;
  }

  insert(key: string): void {
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
    let c = this.chunkOf(before);
    if (c >= this.chunks.length) return;
    let i = lowerBound(this.chunks[c]!, before);
    for (; c < this.chunks.length; c++, i = 0) {
      const chunk = this.chunks[c]!;
      for (; i < chunk.length; i++) yield chunk[i]!;
    }
  }

  /**
   * `from` as a loop: `visit` each key from the first one not `before` on, in order, until it
   * returns false. A list of thousands of objects walks its keys without a generator's result
   * object per key.
   */
  visitFrom(before: (key: string) => boolean, visit: (key: string) => boolean): void {
    let c = this.chunkOf(before);
    if (c >= this.chunks.length) return;
    let i = lowerBound(this.chunks[c]!, before);
    for (; c < this.chunks.length; c++, i = 0) {
      const chunk = this.chunks[c]!;
      for (; i < chunk.length; i++) if (!visit(chunk[i]!)) return;
    }
  }

  /** How many keys `before` holds for (a leading run of the keys). */
  rank(before: (key: string) => boolean): number {
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
