/**
 * Write turns: the share of the event loop that large streamed responses (lists of thousands of
 * objects) may take before the loop polls for I/O again (docs/ARCHITECTURE.md, "Write turns").
 *
 * Upstream serves each request on a goroutine of its own, and Go's scheduler preempts a long
 * list's encoding so that a get on another core, or later on the same one, is not held up by
 * it. Keelson has one thread: a streamed list whose socket keeps up would otherwise encode and
 * write all its megabytes in one pass, and a few dozen lists in flight (as many as their seats
 * allow) each take such a pass per turn of the loop, so a short request waits for all of them at
 * each of its steps. Priority and fairness bounds how many requests run, not how much of the
 * thread they take; this bounds the latter.
 *
 * A writer takes a turn before each batch of its body and gives it back once the batch is
 * written. Turns pass from one writer to the next within a slice of SLICE_MS; once the slice is
 * spent the next turn waits for `setImmediate`, after the loop's pending I/O. So however many
 * lists stream at once, a turn of the loop holds at most about a slice and one batch of their
 * work, writers are served in the order they asked (round-robin between lists), and a writer on
 * its own still loses nothing but a `setImmediate` per slice.
 *
 * One per gateway (a server's event loop is shared by its requests; several servers in one
 * process each pace their own).
 */

import { bulkWriting } from '../util/bulk-writes';

/** How long turns pass from writer to writer before the event loop polls for I/O again. */
export const SLICE_MS = 0.5;

/**
 * When lists contend for the turns (more than CONTENDED_WRITERS waiting as a slice ends: a
 * flood) and a short request (anything but a list or a watch) arrived within
 * SHORT_REQUEST_WINDOW_MS, a spent slice is followed by a pause of FLOOD_PAUSE_MS rather than
 * `setImmediate`: the process sleeps in its poll for I/O until the pause ends or I/O arrives, so
 * the short requests' I/O (a store read's answer, the next request) is handled the moment it
 * arrives, and the cores go to etcd and the clients, which on one machine the lists' readers
 * crowd out. While short requests keep coming, the lists get about a third of what they would
 * without the pause; once they stop for the window, the lists have the thread again.
 *
 * Scenario 16 (docs/BENCHMARKS.md, "Pausing floods"), 100 lists of 10,000 without pause: the other
 * user's get p99 went from 1.8–2.2× of its calm p99 with a pause of about a millisecond (a `0`
 * timer) to 1.2–1.7× with 2 ms, the flood's lists from ~2,200 to ~1,200 in 45 s. Lists alone, or
 * one or two beside steady small traffic, keep `setImmediate`: with the pause always, a list of
 * 10,000 to two clients ran at 0.43× of bare https instead of 0.98×.
 */
export const SHORT_REQUEST_WINDOW_MS = 10;
export const FLOOD_PAUSE_MS = 2;
export const CONTENDED_WRITERS = 2;

export class WriteTurns {
  private readonly waiting: Array<() => void> = [];
  /** A writer holds the turn, or a turn is being passed on (now or after `setImmediate`). */
  private busy = false;
  private sliceStart = Number.NEGATIVE_INFINITY;
  private lastShortRequest = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly sliceMs = SLICE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Resolves when the caller may write its next batch; it must `release` the turn after. */
  take(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      if (this.busy) return;
      this.busy = true;
      bulkWriting(true);
      this.passOn();
    });
  }

  /**
   * The batch has been written. The turn passes on at the next tick, after node's own tick that
   * uncorks the response's socket: the batch's TLS encryption and write count in the slice.
   */
  release(): void {
    process.nextTick(this.passOn);
  }

  /** A request that is not a list or a watch arrived (docs/ARCHITECTURE.md, "Write turns"). */
  shortRequestArrived(): void {
    this.lastShortRequest = this.now();
  }

  /** Writers waiting for a turn (for tests). */
  get queued(): number {
    return this.waiting.length;
  }

  private readonly passOn = (): void => {
    if (this.waiting.length === 0) return this.idle();
    if (this.now() - this.sliceStart < this.sliceMs) {
      this.waiting.shift()!();
      return;
    }
    if (this.waiting.length > CONTENDED_WRITERS && this.now() - this.lastShortRequest < SHORT_REQUEST_WINDOW_MS) setTimeout(this.startSlice, FLOOD_PAUSE_MS);
    else setImmediate(this.startSlice);
  };

  private readonly startSlice = (): void => {
    this.sliceStart = this.now();
    const next = this.waiting.shift();
    if (next) next();
    else this.idle();
  };

  private idle(): void {
    this.busy = false;
    bulkWriting(false);
  }
}
