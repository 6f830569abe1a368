/**
 * The arithmetic of shares and borrowing, as upstream's configuration controller does it
 * (`apf_controller.go`, `conc_alloc.go`):
 *
 * - a level's nominal concurrency limit is `ceil(serverCL * shares / sum of all shares)`, the
 *   server's limit being `--max-requests-inflight` + `--max-mutating-requests-inflight`;
 * - it may lend `round(nominal * lendablePercent / 100)` seats and borrow
 *   `round(nominal * borrowingLimitPercent / 100)` (no limit when unset: the server's limit);
 * - every 10 s the current limits are shared out again: each level's target is its smoothed seat
 *   demand, its floor the larger of its unlendable seats and the lesser of its nominal limit and
 *   its demand's high-water mark, its ceiling nominal plus borrowable; one fair proportion of the
 *   targets that sums to the nominal limits' sum is found, bounded per level (the allocation).
 */

/** A level's fixed limits, from its configuration and everyone's shares. */
export interface LevelLimits {
  nominal: number;
  /** Nominal less what it may lend. */
  min: number;
  /** Nominal plus what it may borrow. */
  max: number;
  /** What it may lend. */
  lendable: number;
}

export interface ShareConfig {
  nominalConcurrencyShares: number;
  lendablePercent?: number | undefined;
  /** Undefined: no limit. */
  borrowingLimitPercent?: number | undefined;
}

/** One level's limits given the server's limit and the sum of every level's shares. */
export function levelLimits(serverLimit: number, shareSum: number, config: ShareConfig): LevelLimits {
  const nominal = shareSum > 0 ? Math.ceil((serverLimit * config.nominalConcurrencyShares) / shareSum) : 0;
  const lendable = config.lendablePercent !== undefined ? goRound((nominal * config.lendablePercent) / 100) : 0;
  const borrowing = config.borrowingLimitPercent !== undefined ? goRound((nominal * config.borrowingLimitPercent) / 100) : serverLimit;
  return { nominal, min: nominal - lendable, max: nominal + borrowing, lendable };
}

/**
 * Upstream's largest width a request's estimate may have at a queuing level:
 * `max(1, min(ceil(0.15 * nominal), nominal / handSize))`, then capped at 10 by the estimator.
 */
export function maxSeatsOf(nominal: number, handSize: number): number {
  return Math.max(1, Math.min(Math.ceil(nominal * 0.15), Math.trunc(nominal / handSize)));
}

/** Go's math.Round: halves away from zero (JavaScript's Math.round rounds -0.5 up). */
export function goRound(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/** One class of the allocation problem. */
export interface AllocationItem {
  target: number;
  lowerBound: number;
  upperBound: number;
}

export interface Allocation {
  allocs: number[];
  /** The fair proportion of targets every unbounded class gets. */
  fairProp: number;
}

/** Targets below this count as this, so that no division is by zero. */
const MIN_TARGET = 0.001;
const EPSILON = 0.0000001;

/**
 * Allocations summing to `requiredSum`, each within its bounds and, where no bound holds it, the
 * same proportion of its target as every other such class (upstream's
 * computeConcurrencyAllocation). Throws when the bounds make that impossible.
 */
export function computeAllocation(requiredSum: number, classes: readonly AllocationItem[]): Allocation {
  if (requiredSum < 0) throw new Error('negative sums are not supported');
  let lowSum = 0;
  let highSum = 0;
  let targetSum = 0;
  let lbMin = Number.MAX_VALUE;
  let lbMax = -Number.MAX_VALUE;
  let ubMin = Number.MAX_VALUE;
  let ubMax = -Number.MAX_VALUE;
  const targets: number[] = [];
  // Each class's bounds as proportions of its target: [value, class index, is lower].
  const bounds: Array<{ value: number; index: number; lower: boolean }> = [];
  classes.forEach((item, index) => {
    if (item.lowerBound < 0) throw new Error(`lower bound ${index} is ${item.lowerBound} but negative lower bounds are not allowed`);
    if (item.target < item.lowerBound) throw new Error(`target ${index} is ${item.target}, which is below its lower bound of ${item.lowerBound}`);
    if (item.upperBound < item.lowerBound)
      throw new Error(`upper bound ${index} is ${item.upperBound} but should not be less than the lower bound ${item.lowerBound}`);
    const target = Math.max(item.target, MIN_TARGET);
    lowSum += item.lowerBound;
    highSum += item.upperBound;
    targetSum += target;
    targets.push(target);
    const lower = item.lowerBound / target;
    const upper = item.upperBound / target;
    lbMin = Math.min(lbMin, lower);
    lbMax = Math.max(lbMax, lower);
    ubMin = Math.min(ubMin, upper);
    ubMax = Math.max(ubMax, upper);
    bounds.push({ value: lower, index, lower: true }, { value: upper, index, lower: false });
  });
  if (lbMax > 1) throw new Error(`a lower bound is above its target (${lbMax})`);
  if (lowSum - requiredSum > EPSILON) throw new Error(`lower bounds sum to ${lowSum}, which is higher than the required sum of ${requiredSum}`);
  if (requiredSum - highSum > EPSILON) throw new Error(`upper bounds sum to ${highSum}, which is lower than the required sum of ${requiredSum}`);
  const allocs = new Array<number>(classes.length).fill(0);
  if (requiredSum === 0) return { allocs, fairProp: 0 };
  if (lowSum - requiredSum > -EPSILON) return { allocs: classes.map((c) => c.lowerBound), fairProp: lbMin };
  if (requiredSum - highSum > -EPSILON) return { allocs: classes.map((c) => c.upperBound), fairProp: ubMax };
  let fairProp = requiredSum / targetSum;
  if (lbMax <= fairProp && fairProp <= ubMin) return { allocs: targets.map((t) => t * fairProp), fairProp };
  // Some bounds hold: raise the proportion from the lowest bound, passing bounds in order, until
  // the allocations reach the sum. Between two bounds only the classes whose lower bound was
  // passed and whose upper bound was not grow with it.
  bounds.sort((a, b) => a.value - b.value);
  let sumSoFar = lowSum;
  fairProp = lbMin;
  let sensitiveTargetSum = 0;
  let deltaTargetSum = 0;
  let sensitiveClasses = 0;
  let deltaClasses = 0;
  let next = 0;
  while (sumSoFar < requiredSum) {
    let nextBound = 0;
    for (;;) {
      sensitiveTargetSum += deltaTargetSum;
      sensitiveClasses += deltaClasses;
      if (next >= bounds.length) throw new Error('impossible: ran out of bounds to consider in bound-constrained problem');
      const bound = bounds[next]!;
      nextBound = bound.value;
      deltaTargetSum = bound.lower ? targets[bound.index]! : -targets[bound.index]!;
      deltaClasses = bound.lower ? 1 : -1;
      next++;
      if (nextBound > fairProp) break;
    }
    if (sensitiveClasses === 0) {
      fairProp = nextBound;
      continue;
    }
    const reach = fairProp + (requiredSum - sumSoFar) / sensitiveTargetSum;
    if (reach <= nextBound) {
      fairProp = reach;
      break;
    }
    sumSoFar += (nextBound - fairProp) * sensitiveTargetSum;
    fairProp = nextBound;
  }
  return { allocs: classes.map((c, i) => Math.max(c.lowerBound, Math.min(c.upperBound, fairProp * targets[i]!))), fairProp };
}
