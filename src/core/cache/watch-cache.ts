/**
 * The watch caches of one API server process (upstream's cacher, one per type): one ResourceCache per
 * served type, all fed by a single store watch over the whole keyspace.
 *
 * Why one watch over everything rather than one per resource: a consistent ("Most recent") read
 * asks the store for its current revision and waits until the cache has seen it (upstream
 * 1.32's consistent reads from cache). Upstream learns that a quiet resource is caught up from
 * etcd progress notifications, which the store interface does not offer; a watch that sees
 * every revision (other resources' writes, the compactor's bookkeeping key) knows its exact
 * position instead. Keys outside the registry only advance the revision.
 *
 * Several API server processes on one etcd each keep their own WatchCache; they agree because
 * each follows the same revision sequence.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { SharedRevision } from './shared-revision';
import { WrittenObjects } from './written-objects';
import type { ResourceDefinition } from '../resources/definition';
import type { Naming } from '../../naming';
import { type Clock, pause, systemClock } from '../../clock';
import { StoreError, type Store, type StoreEvent, type StoreWatch } from '../../store';
import { REGISTRY_ROOT, storedResource, storedResourceOfKey } from '../storage/keys';
import { type Status, serviceUnavailable } from '../../status';

/** How long a store whose watch broke may take to answer before open watches are ended. */
const STORE_PROBE_TIMEOUT_MS = 2000;
import { CachedObject, SharedFieldSets } from './cached-object';
import { type CorruptEntry, ResourceCache, tryDecodeCached } from './resource-cache';

export interface WatchCacheOptions {
  store: Store;
  naming: Naming;
  clock?: Clock;
  /** History window per resource (5 minutes by default; docs/API.md, "Watch"). */
  windowMs?: number;
  /** At most this many changes kept per resource, whatever their age. */
  maxEventsPerResource?: number;
  /**
   * The estimated memory all resources' histories may hold together (`--watch-cache-max-bytes`);
   * past it the largest histories give up their oldest changes first. 0: no bound but the count.
   */
  maxHistoryBytes?: number;
  /** Events a watcher may fall behind before it is closed. */
  watcherBuffer?: number;
  /** How long a read waits for the cache to reach a revision: upstream's 3 seconds. */
  freshnessTimeoutMs?: number;
  /** Pause before retrying a failed list or watch. */
  retryMs?: number;
  /** Told when the store's watch breaks or a load fails (the cache retries on its own): for the log. */
  onError?: (what: string, err: Error) => void;
}

export const DEFAULT_WINDOW_MS = 5 * 60_000;
export const DEFAULT_MAX_EVENTS = 50_000;
/** docs/BENCHMARKS.md, "Memory under sustained writes": the whole server near 200 MB under 1,000 writes/s. */
export const DEFAULT_MAX_HISTORY_BYTES = 32 * 1024 * 1024;
/** Trimming goes this far below the budget, so that it runs once per many changes, not per change. */
const TRIM_HEADROOM = 1 / 16;
export const DEFAULT_WATCHER_BUFFER = 1_000;
export const DEFAULT_FRESHNESS_TIMEOUT_MS = 3_000;
const LIST_PAGE = 5_000;
/**
 * Objects decoded between two turns of the event loop while loading. Decoding a page takes the
 * thread for longer than the socket's buffers take to fill with the next one, after which etcd
 * waits to send; a turn now and then reads what arrived (and gives the window back), so etcd
 * goes on serving the next page while this one is decoded.
 */
const DECODED_PER_TURN = 1_000;

interface FreshWaiter {
  revision: number;
  resolve(fresh: boolean): void;
  cancel(): void;
}

export class WatchCache {
  private readonly store: Store;
  private readonly clock: Clock;
  readonly freshnessTimeoutMs: number;
  private readonly retryMs: number;
  private readonly onError: (what: string, err: Error) => void;
  private readonly caches = new Map<string, ResourceCache>();
  /** Types being filled by `addType`, and the changes under their prefixes held meanwhile. */
  private readonly loading = new Map<string, StoreEvent[]>();
  private readonly adding = new Map<string, Promise<ResourceCache>>();
  /** Objects doors' writes were made from, awaiting their events (written-objects.ts). */
  readonly written = new WrittenObjects();
  private sharedRevision?: SharedRevision;
  private current = 0;
  private ready = false;
  /** Set while the store does not answer after its watch broke: why new watches are refused. */
  unavailable: Status | undefined;
  private closed = false;
  private started = false;
  private storeWatch?: StoreWatch;
  private cancelRetry?: () => void;
  private readyWaiters: Array<() => void> = [];
  private freshWaiters = new Set<FreshWaiter>();
  private readonly resourceSettings: ConstructorParameters<typeof ResourceCache>[1];
  private readonly maxHistoryBytes: number;
  private stopPruning?: () => void;

  constructor(options: WatchCacheOptions) {
    this.store = options.store;
    this.clock = options.clock ?? systemClock;
    this.freshnessTimeoutMs = options.freshnessTimeoutMs ?? DEFAULT_FRESHNESS_TIMEOUT_MS;
    this.retryMs = options.retryMs ?? 1_000;
    this.onError = options.onError ?? (() => undefined);
    this.maxHistoryBytes = options.maxHistoryBytes ?? DEFAULT_MAX_HISTORY_BYTES;
    this.resourceSettings = {
      clock: this.clock,
      windowMs: options.windowMs ?? DEFAULT_WINDOW_MS,
      maxEvents: options.maxEventsPerResource ?? DEFAULT_MAX_EVENTS,
      watcherBuffer: options.watcherBuffer ?? DEFAULT_WATCHER_BUFFER,
      initialEventsEndKey: `${options.naming.groupDomain}/initial-events-end`,
      fieldSets: new SharedFieldSets(),
    };
  }

  /** The cache of one type; register every built-in type before `start()` (a type added later: `addType`). */
  register(def: ResourceDefinition): ResourceCache {
    const stored = storedResource(def);
    let cache = this.caches.get(stored);
    if (!cache) {
      cache = this.newCache(def);
      this.caches.set(stored, cache);
    }
    return cache;
  }

  private newCache(def: ResourceDefinition): ResourceCache {
    return new ResourceCache(
      def,
      this.resourceSettings,
      () => this.current,
      this.written,
      (prefix, after, until, max) => this.readHistory(prefix, after, until, max),
    );
  }

  /**
   * The cache of a type that starts being served while the cache runs (a custom resource once
   * its definition is established): its objects are listed at the cache's revision, the
   * changes under its prefix that arrive meanwhile are held, then applied in order, so the type
   * joins the stream without a gap. Resolves once it is filled.
   */
  async addType(def: ResourceDefinition): Promise<ResourceCache> {
    const stored = storedResource(def);
    const existing = this.caches.get(stored);
    if (existing && !this.loading.has(stored)) return existing;
    const pending = this.adding.get(stored);
    if (pending) return pending;
    const adding = this.fill(def, stored);
    this.adding.set(stored, adding);
    try {
      return await adding;
    } finally {
      this.adding.delete(stored);
    }
  }

  private async fill(def: ResourceDefinition, stored: string): Promise<ResourceCache> {
    await this.whenReady();
    if (this.closed) throw new StoreError('unavailable', 'the watch cache is closed');
    const cache = this.newCache(def);
    const held: StoreEvent[] = [];
    this.loading.set(stored, held);
    this.caches.set(stored, cache);
    const prefix = `${REGISTRY_ROOT}${stored}/`;
    for (;;) {
      const revision = this.current;
      held.length = 0;
      try {
        const objects: CachedObject[] = [];
        const corrupt: CorruptEntry[] = [];
        let startKey: string | undefined;
        for (;;) {
          const page = await this.store.list(prefix, { revision, limit: LIST_PAGE, ...(startKey ? { startKey } : {}) });
          for (const kv of page.kvs) {
            const decoded = tryDecodeCached(kv, this.resourceSettings.fieldSets, def);
            if (decoded instanceof CachedObject) objects.push(decoded);
            else corrupt.push(decoded);
          }
          const last = page.kvs[page.kvs.length - 1];
          if (!page.more || !last) break;
          startKey = `${last.key}\u0000`;
        }
        if (this.caches.get(stored) !== cache) throw new StoreError('unavailable', 'the type was removed while it was loading');
        // A relist of the whole cache meanwhile (after a compaction) filled it already.
        if (this.loading.get(stored) !== held) return cache;
        cache.replace(objects, revision, corrupt);
        this.loading.delete(stored);
        for (const event of held) if (event.revision > revision) cache.apply(event);
        return cache;
      } catch (err) {
        if (this.closed || this.caches.get(stored) !== cache) {
          this.loading.delete(stored);
          throw err;
        }
        // The revision was compacted under the list, or the store blinked: list again.
        this.onError(`watch cache: loading ${stored}`, err as Error);
        await pause(this.clock, StoreError.is(err, 'compacted') ? 0 : this.retryMs).done;
      }
    }
  }

  /** Stop caching a type no longer served: its watchers end. */
  removeType(def: ResourceDefinition): void {
    const stored = storedResource(def);
    const cache = this.caches.get(stored);
    if (!cache) return;
    this.caches.delete(stored);
    this.loading.delete(stored);
    cache.endAll();
  }

  /** Every registered type's cache. */
  all(): IterableIterator<ResourceCache> {
    return this.caches.values();
  }

  /** A type's cache by its stored resource (`storedResource`: `pods`, or `<group>/<plural>` for a custom resource). */
  resource(stored: string): ResourceCache | undefined {
    return this.loading.has(stored) ? undefined : this.caches.get(stored);
  }

  /**
   * The store's current revision for a consistent read, one request shared by the reads that
   * arrive while it is under way (shared-revision.ts). `read` is the storage's own call (all of
   * them ask the same store).
   */
  currentRevision(read: () => Promise<number>): Promise<number> {
    this.sharedRevision ??= new SharedRevision(read);
    return this.sharedRevision.get();
  }

  /** Every change up to this revision has been applied. */
  get revision(): number {
    return this.current;
  }

  /** Filled and following the store. Until then reads go to the store. */
  get isReady(): boolean {
    return this.ready && !this.closed;
  }

  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    // Histories age out on a timer too, not only when their resource changes again.
    const windowMs = this.resourceSettings.windowMs;
    this.stopPruning = this.clock.setInterval(() => this.pruneHistories(), Math.min(30_000, Math.max(1_000, windowMs / 10)));
    void this.load();
  }

  /**
   * The changes under `prefix` after `after` from the store's own history (a store watch from
   * that revision, with previous values), up to `until` and about `max` at a time.
   *
   * The store watch is over the whole keyspace, not `prefix`: `until` is a revision this cache
   * saw an event of, so a watch of every key is sure to reach it, and reaching it is how the read
   * knows it has every change under `prefix` up to there (the store interface has no progress
   * notifications). Other keys' events are skipped as they come.
   */
  readHistory(prefix: string, after: number, until: number, max: number): Promise<{ events: StoreEvent[]; through: number }> {
    return new Promise((resolve, reject) => {
      const events: StoreEvent[] = [];
      let done = false;
      const finish = (through: number) => {
        if (done) return;
        done = true;
        watch.cancel();
        resolve({ events, through });
      };
      const watch = this.store.watch(
        '',
        { startRevision: after + 1, prevKv: true },
        {
          onEvents: (batch) => {
            if (done) return;
            for (const event of batch) {
              if (event.revision > until) return finish(until);
              // A round ends between revisions, so a transaction's changes stay together.
              const last = events[events.length - 1];
              if (events.length >= max && last && event.revision !== last.revision) return finish(event.revision - 1);
              if (event.kv.key.startsWith(prefix)) events.push(event);
            }
            if (batch.length > 0 && batch[batch.length - 1]!.revision >= until) finish(until);
          },
          onError: (err) => {
            if (done) return;
            done = true;
            reject(err);
          },
        },
      );
      if (this.closed) {
        done = true;
        watch.cancel();
        reject(new StoreError('unavailable', 'the watch cache is closed'));
      }
    });
  }

  /** The estimated memory of every resource's history. */
  get historyBytes(): number {
    let total = 0;
    for (const cache of this.caches.values()) total += cache.windowBytes;
    return total;
  }

  /** Drop every history's changes older than the window. */
  pruneHistories(): void {
    for (const cache of this.caches.values()) cache.pruneHistory();
  }

  /**
   * Keep the histories within the budget, shared max-min fairly: a level is found such that
   * trimming every history above it down to it brings the total to the target, so the busiest
   * resources give up their oldest changes and a quiet one keeps its few.
   */
  private enforceHistoryBudget(): void {
    if (this.maxHistoryBytes <= 0) return;
    const total = this.historyBytes;
    if (total <= this.maxHistoryBytes) return;
    const target = this.maxHistoryBytes * (1 - TRIM_HEADROOM);
    const sizes = [...this.caches.values()].map((c) => c.windowBytes).sort((a, b) => a - b);
    let below = 0;
    let level = 0;
    for (let i = 0; i < sizes.length; i++) {
      // Histories i.. share what the smaller ones leave of the target.
      const share = (target - below) / (sizes.length - i);
      if (sizes[i]! >= share) {
        level = share;
        break;
      }
      below += sizes[i]!;
    }
    for (const cache of this.caches.values()) if (cache.windowBytes > level) cache.trimHistory(level);
  }

  whenReady(): Promise<void> {
    if (this.ready || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /**
   * Resolves true once the cache has applied `revision`, false after `timeoutMs` of the clock
   * (or when the cache closes). Upstream's waitUntilFreshAndBlock.
   */
  waitFresh(revision: number, timeoutMs = this.freshnessTimeoutMs): Promise<boolean> {
    if (this.current >= revision) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: FreshWaiter = {
        revision,
        resolve: (fresh) => {
          this.freshWaiters.delete(waiter);
          waiter.cancel();
          resolve(fresh);
        },
        cancel: () => undefined,
      };
      waiter.cancel = this.clock.setTimeout(() => waiter.resolve(false), timeoutMs);
      this.freshWaiters.add(waiter);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.ready = false;
    this.stopPruning?.();
    this.cancelRetry?.();
    this.storeWatch?.cancel();
    for (const cache of this.caches.values()) cache.endAll();
    for (const waiter of [...this.freshWaiters]) waiter.resolve(false);
    this.flushReadyWaiters();
  }

  /** List every registered type at one revision, then follow the store from the next one. */
  private async load(): Promise<void> {
    this.ready = false;
    try {
      const byResource = new Map<string, CachedObject[]>();
      // An undecodable value never stops the load: reads of its key answer 500 instead.
      const corruptByResource = new Map<string, CorruptEntry[]>();
      let revision: number;
      // The next page is asked for before this one is decoded, so the store's work on it
      // overlaps the decoding (etcd is another process).
      let pending = this.store.list(REGISTRY_ROOT, { limit: LIST_PAGE });
      for (;;) {
        const page = await pending;
        revision = page.revision;
        const last = page.kvs[page.kvs.length - 1];
        const more = page.more && last !== undefined;
        if (more) {
          pending = this.store.list(REGISTRY_ROOT, { revision, limit: LIST_PAGE, startKey: `${last.key}\u0000` });
          // A failure surfaces when it is awaited; until then it must not count as unhandled.
          pending.catch(() => undefined);
        }
        let decodedThisTurn = 0;
        for (const kv of page.kvs) {
          if (more && ++decodedThisTurn === DECODED_PER_TURN) {
            decodedThisTurn = 0;
            await nextTurn();
            if (this.closed) return;
          }
          const resource = this.resourceOf(kv.key);
          if (!resource) continue;
          const decoded = tryDecodeCached(kv, this.resourceSettings.fieldSets, this.caches.get(resource)!.def);
          if (decoded instanceof CachedObject) {
            const objects = byResource.get(resource) ?? [];
            objects.push(decoded);
            byResource.set(resource, objects);
          } else {
            const corrupt = corruptByResource.get(resource) ?? [];
            corrupt.push(decoded);
            corruptByResource.set(resource, corrupt);
          }
        }
        if (!more) break;
      }
      if (this.closed) return;
      this.written.clear();
      for (const [resource, cache] of this.caches) cache.replace(byResource.get(resource) ?? [], revision, corruptByResource.get(resource));
      // Types being added are filled by this relist too.
      this.loading.clear();
      this.current = revision;
      this.follow(revision + 1);
      this.ready = true;
      this.flushReadyWaiters();
      this.resolveFresh();
    } catch (err) {
      this.onError('watch cache load', err as Error);
      this.retry(() => void this.load());
    }
  }

  private follow(startRevision: number): void {
    if (this.closed) return;
    this.unavailable = undefined;
    // Previous values are not asked for: the cache holds every object's last version itself.
    this.storeWatch = this.store.watch(
      '',
      { startRevision, prevKv: false },
      {
        onEvents: (events) => this.onEvents(events),
        onError: (err) => this.onWatchError(err),
      },
    );
  }

  private onEvents(events: StoreEvent[]): void {
    if (this.closed || events.length === 0) return;
    for (const event of events) {
      if (event.revision <= this.current) continue;
      const resource = this.resourceOf(event.kv.key);
      if (!resource) continue;
      const held = this.loading.get(resource);
      if (held) held.push(event);
      else this.caches.get(resource)!.apply(event);
    }
    this.current = Math.max(this.current, events[events.length - 1]!.revision);
    this.enforceHistoryBudget();
    this.resolveFresh();
  }

  private onWatchError(err: StoreError): void {
    this.storeWatch = undefined;
    if (this.closed) return;
    this.onError(`watch cache: the store's watch ended at revision ${this.current}`, err);
    const cause = err.message;
    // Behind a compaction the history is gone: relist (open watches end, their clients resume).
    if (StoreError.is(err, 'compacted')) {
      this.retry(() => void this.load(), 0);
      return;
    }
    // One broken stream, or the store gone? A store that does not answer ends the open watches
    // with an ERROR event, so their clients know and relist once it is back, rather than
    // waiting in silence; new watches get the same answer until it is back. The cache itself
    // resumes from the next revision once the store answers again, losing nothing.
    // The probe's answer counts only while the cache is still waiting to resume: a resume that
    // found the store answering (and follows it again) outranks a probe that timed out earlier.
    void this.reachable().then((ok) => {
      if (ok || this.closed || this.storeWatch) return;
      this.unavailable = serviceUnavailable(`storage is unavailable: ${cause}`).status;
      for (const cache of this.caches.values()) cache.failAll(this.unavailable);
    });
    this.retry(() => void this.resume());
  }

  /** Follow the store again from the next revision once it answers. */
  private async resume(): Promise<void> {
    if (this.closed) return;
    if (!(await this.reachable())) {
      this.retry(() => void this.resume());
      return;
    }
    this.follow(this.current + 1);
  }

  /** Does the store answer within STORE_PROBE_TIMEOUT_MS? */
  private reachable(): Promise<boolean> {
    return new Promise((resolve) => {
      const cancel = this.clock.setTimeout(() => resolve(false), STORE_PROBE_TIMEOUT_MS);
      this.store.currentRevision().then(
        () => {
          cancel();
          resolve(true);
        },
        () => {
          cancel();
          resolve(false);
        },
      );
    });
  }

  private retry(fn: () => void, delayMs = this.retryMs): void {
    if (this.closed) return;
    if (delayMs === 0) {
      queueMicrotask(fn);
      return;
    }
    this.cancelRetry = this.clock.setTimeout(() => {
      this.cancelRetry = undefined;
      fn();
    }, delayMs);
  }

  private resourceOf(key: string): string | undefined {
    const resource = storedResourceOfKey(key);
    return resource !== undefined && this.caches.has(resource) ? resource : undefined;
  }

  private resolveFresh(): void {
    for (const waiter of [...this.freshWaiters]) if (waiter.revision <= this.current) waiter.resolve(true);
  }

  private flushReadyWaiters(): void {
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
