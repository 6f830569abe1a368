/**
 * The in-memory history of one resource: the recent changes in revision order, kept for a time
 * window (5 minutes by default, docs/API.md, "Watch"), up to a count, and within the bytes the
 * watch cache's budget gives it (watch-cache.ts). A watch resumes from it; a resume point older
 * than what it still holds is served from the store's own history (resource-cache.ts), or is
 * 410 Expired once the store has compacted it.
 *
 * Dropped changes leave the array at once (it is compacted whenever the dropped prefix is at
 * least half of it), so a quiet resource pruned by the cache's timer gives its memory back.
 */
import type { CacheEvent } from './cached-object';

export class EventWindow {
  private events: CacheEvent[] = [];
  private head = 0;
  private heldBytes = 0;
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

  /** The estimated memory of the changes held (CacheEvent.bytes). */
  get bytes(): number {
    return this.heldBytes;
  }

  /** The revision after which the window is complete (the `Y` of "too old resource version: X (Y)"). */
  get oldestResumable(): number {
    return this.completeAfter;
  }

  add(event: CacheEvent): void {
    this.events.push(event);
    this.heldBytes += event.bytes;
    this.prune(event.recordedAt);
  }

  /** Drop changes older than the window or beyond the count. */
  prune(now: number): void {
    const cutoff = now - this.windowMs;
    let head = this.head;
    while (head < this.events.length && (this.events.length - head > this.maxEvents || this.events[head]!.recordedAt <= cutoff)) head++;
    this.dropTo(head);
  }

  /** Drop the oldest changes until at most `bytes` are held; returns the bytes given back. */
  trimTo(bytes: number): number {
    const before = this.heldBytes;
    let head = this.head;
    let held = this.heldBytes;
    while (head < this.events.length && held > bytes) held -= this.events[head++]!.bytes;
    this.dropTo(head);
    return before - this.heldBytes;
  }

  private dropTo(head: number): void {
    if (head === this.head) return;
    for (let i = this.head; i < head; i++) this.heldBytes -= this.events[i]!.bytes;
    this.completeAfter = this.events[head - 1]!.revision;
    // Compact once the dropped prefix is half the array: what is dropped is let go at once, at
    // an amortised constant cost per change.
    if (head * 2 >= this.events.length) {
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
