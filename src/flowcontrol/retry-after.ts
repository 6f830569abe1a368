/**
 * The `Retry-After` a refused request is told, per priority level, as upstream's
 * DroppedRequestsTracker: 1 s to start; when the last `retryAfter` seconds saw at least three
 * times that many refusals it doubles (at most once per `retryAfter` seconds, up to 32 s), and
 * when they saw fewer than `retryAfter` it comes down by one. Looked at when a second with
 * refusals begins.
 */
import type { Clock } from '../clock';

const MAX_RETRY_AFTER = 32;

class LevelDrops {
  retryAfter = 1;
  private lastIncrease = 0;
  private currentSecond = 0;
  private currentCount = 0;
  private history: Array<{ second: number; count: number }> = [];

  record(second: number): void {
    if (second === this.currentSecond) {
      this.currentCount++;
      return;
    }
    this.history.push({ second: this.currentSecond, count: this.currentCount });
    while (this.history.length > 0 && second - this.history[0]!.second > MAX_RETRY_AFTER) this.history.shift();
    this.currentSecond = second;
    this.currentCount = 1;
    let dropped = 0;
    for (let i = this.history.length - 1; i >= 0; i--) {
      const h = this.history[i]!;
      if (second - h.second > this.retryAfter) break;
      if (h.second < second) dropped += h.count;
    }
    if (second - this.lastIncrease >= this.retryAfter && dropped >= 3 * this.retryAfter) {
      this.retryAfter = Math.min(MAX_RETRY_AFTER, this.retryAfter * 2);
      this.lastIncrease = second;
    } else if (dropped < this.retryAfter && this.retryAfter > 1) {
      this.retryAfter--;
    }
  }
}

export class RetryAfter {
  private readonly levels = new Map<string, LevelDrops>();

  constructor(private readonly clock: Clock) {}

  /** A request of `level` was refused. */
  dropped(level: string): void {
    let drops = this.levels.get(level);
    if (!drops) {
      drops = new LevelDrops();
      this.levels.set(level, drops);
    }
    drops.record(Math.floor(this.clock.now() / 1000));
  }

  /** Seconds to tell the next refused request of `level`. */
  seconds(level: string): number {
    return this.levels.get(level)?.retryAfter ?? 1;
  }
}
