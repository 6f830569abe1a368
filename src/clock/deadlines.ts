/**
 * Deadlines for many short-lived things (the request timeout of every request in flight, the
 * deadline of every etcd call) on one clock timer. A timer per request costs more than it
 * seems: node makes a Timeout object, and an unref'd timer switches the timer handle's reference
 * on and off in native code each time the count of timers goes from none to one and back, which
 * a server answering one request at a time does on every request (an etcd call's timer was 5%
 * of a create, docs/BENCHMARKS.md, "What the mechanisms save"). Here an entry is a list node;
 * the one timer is set for the earliest deadline and is not cancelled when entries go: when it fires it expires
 * what is due and is set again for the earliest left, if any.
 */
import type { Clock } from './index';

export interface Deadline<T> {
  readonly at: number;
  /** What expires (handed to the `expire` the Deadlines was made with). */
  readonly item: T;
  prev: Deadline<T> | undefined;
  next: Deadline<T> | undefined;
  /** False once expired or cancelled. */
  live: boolean;
}

/** Deadlines for items of one kind, all expired by the same function (no closure per item). */
export class Deadlines<T> {
  private head: Deadline<T> | undefined;
  private tail: Deadline<T> | undefined;
  /** When the timer is set to fire, and how to cancel it; undefined when none is set. */
  private due: number | undefined;
  private cancelTimer: (() => void) | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly expire: (item: T) => void,
  ) {}

  /** Expire `item` once `ms` of the clock's time have passed, unless cancelled first. */
  add(ms: number, item: T): Deadline<T> {
    const at = this.clock.now() + ms;
    const entry: Deadline<T> = { at, item, prev: this.tail, next: undefined, live: true };
    if (this.tail) this.tail.next = entry;
    else this.head = entry;
    this.tail = entry;
    if (this.due === undefined || at < this.due) this.arm(at);
    return entry;
  }

  cancel(entry: Deadline<T>): void {
    if (!entry.live) return;
    entry.live = false;
    this.unlink(entry);
  }

  /** Drops every entry and the timer, expiring nothing: for an owner that is closing, so the timer holds it no longer. */
  clear(): void {
    for (let e = this.head; e; ) {
      const next = e.next;
      e.live = false;
      e.prev = e.next = undefined;
      e = next;
    }
    this.head = this.tail = undefined;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.due = undefined;
  }

  /** Entries waiting (the tests read it). */
  get size(): number {
    let n = 0;
    for (let e = this.head; e; e = e.next) n++;
    return n;
  }

  private arm(at: number): void {
    this.cancelTimer?.();
    this.due = at;
    this.cancelTimer = this.clock.setTimeout(this.fire, Math.max(0, at - this.clock.now()));
  }

  private readonly fire = (): void => {
    this.due = undefined;
    this.cancelTimer = undefined;
    const now = this.clock.now();
    const expired: Deadline<T>[] = [];
    let earliest: number | undefined;
    for (let e = this.head; e; e = e.next) {
      if (e.at <= now) expired.push(e);
      else if (earliest === undefined || e.at < earliest) earliest = e.at;
    }
    for (const e of expired) this.cancel(e);
    if (earliest !== undefined) this.arm(earliest);
    // Last: an expiry may add or cancel entries.
    for (const e of expired) this.expire(e.item);
  };

  private unlink(entry: Deadline<T>): void {
    if (entry.prev) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else this.tail = entry.prev;
    entry.prev = entry.next = undefined;
  }
}
