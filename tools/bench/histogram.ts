/**
 * A log-bucket latency recorder in the spirit of HdrHistogram: values (µs) fall into buckets
 * 1/64 of a power of two wide, so any percentile is within ~1.1% of the true value, memory is
 * fixed (~1,800 counters up to 10^8 µs) whatever the number of samples, and two recorders
 * (from different processes, sent as plain arrays) merge by adding counts.
 */

const SUB_BUCKETS = 64;
/** 2^27 µs ≈ 134 s: anything slower is clamped into the last bucket. */
const MAX_EXPONENT = 27;
const BUCKETS = MAX_EXPONENT * SUB_BUCKETS + 1;

function bucketOf(valueUs: number): number {
  if (!(valueUs >= 1)) return 0;
  return Math.min(BUCKETS - 1, 1 + Math.floor(Math.log2(valueUs) * SUB_BUCKETS));
}

/** The upper edge of a bucket, reported for percentiles (as HdrHistogram reports the highest equivalent value). */
function bucketValue(bucket: number): number {
  return bucket === 0 ? 1 : 2 ** (bucket / SUB_BUCKETS);
}

export interface HistogramSnapshot {
  counts: number[];
  total: number;
  min: number;
  max: number;
  sum: number;
}

export class Histogram {
  private counts = new Float64Array(BUCKETS);
  total = 0;
  min = Infinity;
  max = 0;
  sum = 0;

  record(valueUs: number): void {
    this.counts[bucketOf(valueUs)]++;
    this.total++;
    this.sum += valueUs;
    if (valueUs < this.min) this.min = valueUs;
    if (valueUs > this.max) this.max = valueUs;
  }

  /** The value at or below which `p` percent of the samples lie (p in 0..100). */
  percentile(p: number): number {
    if (this.total === 0) return NaN;
    const rank = Math.max(1, Math.ceil((p / 100) * this.total));
    let seen = 0;
    for (let b = 0; b < BUCKETS; b++) {
      seen += this.counts[b];
      if (seen >= rank) return Math.min(bucketValue(b), this.max);
    }
    return this.max;
  }

  mean(): number {
    return this.total === 0 ? NaN : this.sum / this.total;
  }

  merge(other: Histogram | HistogramSnapshot): this {
    const counts = other instanceof Histogram ? other.counts : other.counts;
    for (let b = 0; b < BUCKETS; b++) this.counts[b] += counts[b] ?? 0;
    this.total += other.total;
    this.sum += other.sum;
    if (other.total > 0) {
      this.min = Math.min(this.min, other.min);
      this.max = Math.max(this.max, other.max);
    }
    return this;
  }

  /** A plain, structured-clone-friendly copy (for IPC between the bench's processes). */
  snapshot(): HistogramSnapshot {
    return { counts: Array.from(this.counts), total: this.total, min: this.total ? this.min : 0, max: this.max, sum: this.sum };
  }

  static from(snapshot: HistogramSnapshot): Histogram {
    return new Histogram().merge(snapshot);
  }
}
