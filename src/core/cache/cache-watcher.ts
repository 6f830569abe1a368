/**
 * One watch served from the cache: a bounded queue of shared events, filtered by the watch's
 * namespace and selectors, with bookmarks and a timeout driven by the injected clock.
 *
 * Memory per watcher is the queue of references to shared events (never copies), the selection
 * and two timers. A watcher whose consumer falls `bufferSize` events behind is closed (upstream
 * closes an unresponsive watcher; the client resumes or relists), so one slow client never
 * holds up the others or grows without bound.
 */
import type { ApiObject, WatchEvent, WatchStream } from '../api';
import type { Clock } from '../../clock';
import type { Status } from '../../status';
import type { Selection } from '../selectors';
import { AsyncQueue, type DirectConsumer } from '../../util/async-queue';
import type { CacheEvent, CachedObject } from './cached-object';

/** Upstream sends bookmarks roughly every minute... */
export const BOOKMARK_INTERVAL_MS = 60_000;
/** ...and once shortly before the watch's deadline. */
export const BOOKMARK_BEFORE_DEADLINE_MS = 2_000;

export interface WatcherOptions {
  /** Only keys under this prefix (a namespace, or the whole resource). */
  prefix: string;
  selection: Selection;
  fieldsOf: (obj: ApiObject) => Record<string, string>;
  /** Deliver changes with a revision above this one. */
  after: number;
  /** Events queued before any change (the synthetic state, the initial-events-end bookmark). */
  initial: readonly WatchEvent[];
  bookmarks: boolean;
  timeoutMs?: number;
  bufferSize: number;
  clock: Clock;
  /** A BOOKMARK at the cache's current revision (never below `after`), shared per revision. */
  bookmark: (atLeast: number) => WatchEvent;
  /** Called once when the watch ends, whichever side ends it. */
  onClose: (watcher: CacheWatcher) => void;
}

export class CacheWatcher implements WatchStream {
  private readonly queue: AsyncQueue<WatchEvent>;
  private readonly timers: Array<() => void> = [];
  private after: number;
  /** Still catching up from the store's history: not among the cache's watchers yet. */
  private catching = false;
  /** History after this revision is delivered while catching up. */
  private historyAfter: number;

  constructor(private readonly options: WatcherOptions) {
    this.after = options.after;
    this.historyAfter = options.after;
    this.queue = new AsyncQueue<WatchEvent>(options.bufferSize, () => {
      for (const cancel of this.timers) cancel();
      options.onClose(this);
    });
    this.queue.preload(options.initial);
    const { clock, timeoutMs } = options;
    if (options.bookmarks) this.timers.push(clock.setInterval(() => this.sendBookmark(), BOOKMARK_INTERVAL_MS));
    if (timeoutMs !== undefined && timeoutMs > 0) {
      if (options.bookmarks && timeoutMs > BOOKMARK_BEFORE_DEADLINE_MS) {
        this.timers.push(clock.setTimeout(() => this.sendBookmark(), timeoutMs - BOOKMARK_BEFORE_DEADLINE_MS));
      }
      this.timers.push(clock.setTimeout(() => this.end(), timeoutMs));
    }
  }

  get closed(): boolean {
    return this.queue.isClosed;
  }

  /** Events waiting for the consumer (for tests and metrics). */
  get backlog(): number {
    return this.queue.size;
  }

  /** Queue the history a resumed watch starts with; like the initial state it does not count against the buffer. */
  replay(events: readonly CacheEvent[]): void {
    const views: WatchEvent[] = [];
    for (const event of events) {
      if (event.revision <= this.after || !event.key.startsWith(this.options.prefix)) continue;
      const out = this.view(event);
      if (out) views.push(out);
    }
    this.queue.preload(views);
  }

  /**
   * Start from the store's history (`catchUp`), not registered with the cache (so no live
   * change), and with no bookmark, until `caughtUp`.
   */
  beginCatchUp(): void {
    this.catching = true;
  }

  /**
   * Queue changes read from the store's history, in order. They do not count against the buffer;
   * the reader paces itself with `whenBelow`.
   */
  catchUp(events: readonly CacheEvent[]): void {
    const views: WatchEvent[] = [];
    for (const event of events) {
      if (event.revision <= this.historyAfter || !event.key.startsWith(this.options.prefix)) continue;
      this.historyAfter = event.revision;
      const out = this.view(event);
      if (out) views.push(out);
    }
    this.queue.preload(views);
  }

  /** Resolves once at most `events` wait for the consumer, or the watch has ended. */
  whenBelow(events: number): Promise<void> {
    return this.queue.whenBelow(events);
  }

  /**
   * The store's history is delivered up to where the cache's history takes over: `rest`, the
   * cache's changes after it, follow (those already delivered are skipped), and the cache
   * registers the watcher for live ones in the same step.
   */
  caughtUp(rest: readonly CacheEvent[]): void {
    this.catchUp(rest);
    this.catching = false;
  }

  /** Changes at or below `revision` have been delivered (or were before the start): skip them from now on. */
  advanceTo(revision: number): void {
    this.after = Math.max(this.after, revision);
  }

  /** Offer one change; the watcher decides whether and how it sees it. */
  offer(event: CacheEvent): void {
    if (event.revision <= this.after || !event.key.startsWith(this.options.prefix)) return;
    const out = this.view(event);
    if (out) this.queue.push(out);
  }

  /**
   * What this watcher sees of a change: unfiltered watchers get the shared event; a filtered one
   * gets ADDED when the object enters its selection and DELETED when it leaves (upstream).
   */
  private view(event: CacheEvent): WatchEvent | undefined {
    const { selection } = this.options;
    if (selection.empty) return event.watchEvent;
    const now = event.type !== 'DELETED' && this.selects(event.current);
    const before = event.type === 'DELETED' ? this.selects(event.current) : event.previous !== undefined && this.selects(event.previous);
    if (event.type === 'DELETED') return before ? event.watchEvent : undefined;
    if (now && before) return event.watchEvent;
    if (now) return event.type === 'ADDED' ? event.watchEvent : event.entered;
    if (before) return event.left;
    return undefined;
  }

  private selects(obj: CachedObject): boolean {
    return this.options.selection.matches(obj.labels, obj.fields(this.options.fieldsOf));
  }

  sendBookmark(): void {
    // A bookmark at the cache's revision would overtake the history still to come.
    if (this.closed || this.catching) return;
    this.queue.push(this.options.bookmark(this.after));
  }

  /** End from the server side (timeout, cache relist, shutdown); queued events are still delivered. */
  end(): void {
    this.queue.close();
  }

  /** End from the server side with an ERROR event carrying `status` after what is queued (the store went away). */
  fail(status: Status): void {
    if (this.closed) return;
    this.catching = false;
    this.queue.push({ type: 'ERROR', object: status }, true);
    this.queue.close();
  }

  /** End from the consumer side. */
  close(): void {
    this.queue.close();
  }

  get direct(): DirectConsumer<WatchEvent> {
    return this.queue;
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    return this.queue[Symbol.asyncIterator]();
  }
}

/** A watch that delivers one ERROR event and ends: how upstream reports 410 and 504 on a watch. */
export function errorWatch(status: Status): WatchStream {
  const queue = new AsyncQueue<WatchEvent>();
  queue.push({ type: 'ERROR', object: status });
  queue.close();
  return queue;
}
