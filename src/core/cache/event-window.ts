/**
 * The history of one resource: the recent changes in revision order, kept for a time window
 * (5 minutes by default, docs/API.md, "Watch") and up to a count. A watch
 * resumes from it; a resume point older than what it still holds is 410 Expired with
 * upstream's message `too old resource version: X (Y)`.
 */
import type { CacheEvent } from './cached-object';

export class EventWindow {
  private events: CacheEvent[] = [];
  private head = 0;
  /**
   * Every change after this revision is still held. Starts at the revision of the list that
   * filled the cache; moves to the revision of each change dropped from the window.
   */
  private completeAfter: number;

  constructor(
    private readonly windowMs: number,
    private readonly maxEvents: number,
    listRevision: number,
  ) {
    this.completeAfter = listRevision;
  }

  get size(): number {
    return this.events.length - this.head;
  }

  /** The revision after which the window is complete (the `Y` of "too old resource version: X (Y)"). */
  get oldestResumable(): number {
    return this.completeAfter;
  }

  add(event: CacheEvent): void {
    this.events.push(event);
    this.prune(event.recordedAt);
  }

  /** Drop changes older than the window or beyond the count. */
  prune(now: number): void {
    const cutoff = now - this.windowMs;
    let head = this.head;
    while (head < this.events.length && (this.events.length - head > this.maxEvents || this.events[head]!.recordedAt <= cutoff)) {
      this.completeAfter = this.events[head]!.revision;
      head++;
    }
    if (head === this.head) return;
    // Compact the array once the dropped prefix dominates, so memory follows the window.
    if (head > 1024 && head * 2 > this.events.length) {
      this.events = this.events.slice(head);
      head = 0;
    }
    this.head = head;
  }

  /**
   * The changes after `revision`, or undefined when some of them are no longer held. A revision
   * at or after the newest change gives an empty list.
   */
  since(revision: number, now: number): CacheEvent[] | undefined {
    this.prune(now);
    if (revision < this.completeAfter) return undefined;
    // Binary search for the first change after `revision`.
    let lo = this.head;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid]!.revision <= revision) lo = mid + 1;
      else hi = mid;
    }
    return this.events.slice(lo);
  }
}
