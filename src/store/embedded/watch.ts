/**
 * Watches on the embedded store: replay committed rows from the log, then switch to events the
 * store pushes right after each commit.
 *
 * Why no event is lost or repeated: everything runs on the one JS thread that also performs
 * the (synchronous) SQLite writes. A watcher replays in windows of ids, yielding between
 * windows so a long replay does not block writers; a write that lands meanwhile is already a
 * committed row that a later window will read, so a replaying watcher ignores pushed events.
 * When a window reaches the store's current revision the watcher goes live in that same
 * synchronous step, so no commit can slip between "read the last row" and "listen". Each
 * watcher keeps `nextRevision` and drops anything below it.
 */
import { prefixEndString } from '../keys';
import { StoreError, type StoreEvent, type StoreWatch, type WatchHandlers } from '../types';
import { rowEvent, type LogRow } from './log';

export interface ReplaySource {
  /** Rows with from <= id < to and a name in [start, end), in revision order. */
  window(from: number, to: number, start: string, end: string | undefined): LogRow[];
  currentRevision(): number;
  compactedRevision(): number;
}

export class WatchHub {
  private readonly watchers = new Set<EmbeddedWatch>();

  constructor(
    private readonly source: ReplaySource,
    /** Ids per replay window: bounds the work done between yields to the event loop. */
    private readonly replayWindow: number,
  ) {}

  watch(prefix: string, startRevision: number | undefined, handlers: WatchHandlers): StoreWatch {
    const watcher = new EmbeddedWatch(this, prefix, handlers);
    this.watchers.add(watcher);
    if (startRevision === undefined) {
      watcher.goLive(this.source.currentRevision() + 1);
    } else {
      watcher.nextRevision = startRevision;
      // Start on a later turn: the caller gets its handle before any event or error arrives.
      setImmediate(() => this.replayStep(watcher));
    }
    return watcher;
  }

  /** Called by the store right after a commit, in revision order. */
  publish(event: StoreEvent): void {
    for (const watcher of this.watchers) watcher.offer(event);
  }

  /** Fails every watch, e.g. when the store closes. */
  failAll(err: StoreError): void {
    for (const watcher of [...this.watchers]) watcher.fail(err);
  }

  forget(watcher: EmbeddedWatch): void {
    this.watchers.delete(watcher);
  }

  private replayStep(watcher: EmbeddedWatch): void {
    if (watcher.done) return;
    // Rows from nextRevision on must all still exist. The store contract (like etcd's) rejects
    // a start at or below the compacted revision; a compaction that overtakes a slow replay
    // ends it the same way, as etcd cancels an unsynced watcher that falls behind compaction.
    const compacted = this.source.compactedRevision();
    if (watcher.nextRevision <= compacted) {
      watcher.fail(
        new StoreError('compacted', `watch at revision ${watcher.nextRevision}: history up to ${compacted} has been compacted`, {
          revision: compacted,
        }),
      );
      return;
    }
    const current = this.source.currentRevision();
    const from = watcher.nextRevision;
    const to = Math.min(from + this.replayWindow, current + 1);
    if (from < to) {
      const rows = this.source.window(from, to, watcher.prefix, watcher.prefixEnd);
      if (rows.length > 0) watcher.deliver(rows.map(rowEvent));
      watcher.nextRevision = to;
    }
    if (watcher.nextRevision > current) {
      watcher.goLive(watcher.nextRevision);
    } else {
      setImmediate(() => this.replayStep(watcher));
    }
  }
}

class EmbeddedWatch implements StoreWatch {
  nextRevision = 0;
  done = false;
  readonly prefixEnd: string | undefined;
  private live = false;
  private pending: StoreEvent[] = [];
  private flushScheduled = false;

  constructor(
    private readonly hub: WatchHub,
    readonly prefix: string,
    private readonly handlers: WatchHandlers,
  ) {
    this.prefixEnd = prefixEndString(prefix);
  }

  goLive(nextRevision: number): void {
    this.nextRevision = Math.max(this.nextRevision, nextRevision);
    this.live = true;
  }

  /** A just-committed event: taken only once live (before that, replay reads it from the log). */
  offer(event: StoreEvent): void {
    if (!this.live || this.done || event.revision < this.nextRevision) return;
    if (!event.kv.key.startsWith(this.prefix)) return;
    this.nextRevision = event.revision + 1;
    this.deliver([event]);
  }

  /**
   * Queues events and hands them over on a microtask: batches the events of a burst of writes,
   * and keeps watcher callbacks out of the writer's call stack.
   */
  deliver(events: StoreEvent[]): void {
    for (const event of events) this.pending.push(event);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => {
      this.flushScheduled = false;
      if (this.done || this.pending.length === 0) return;
      const batch = this.pending;
      this.pending = [];
      this.handlers.onEvents(batch);
    });
  }

  fail(err: StoreError): void {
    if (this.done) return;
    this.done = true;
    this.pending = [];
    this.hub.forget(this);
    this.handlers.onError(err);
  }

  cancel(): void {
    if (this.done) return;
    this.done = true;
    this.pending = [];
    this.hub.forget(this);
  }
}
