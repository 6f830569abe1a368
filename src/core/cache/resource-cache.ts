/**
 * The watch cache of one resource type: the latest state of every object (decoded once, in key
 * order), the window of recent changes, and the watchers to fan changes out to. It is fed by
 * the WatchCache (watch-cache.ts), which owns the one store watch and the global revision.
 */
import { type Status, internalError, resourceExpired, serviceUnavailable } from '../../status';
import { StoreError } from '../../store';
import type { ApiObject, WatchEvent } from '../api';
import type { ResourceDefinition } from '../resources/definition';
import type { Clock } from '../../clock';
import type { KeyValue, StoreEvent } from '../../store';
import type { Selection } from '../selectors';
import { selectableFieldsOf } from '../selectors';
import { tryDecodeFromStorage } from '../storage/object-codec';
import { CacheEvent, CachedObject, compareKeys, type SharedFieldSets } from './cached-object';
import { deepFreeze } from '../../util/frozen';
import { isPlainJson } from '../../util/json-values';
import type { PendingWrite, WrittenObjects } from './written-objects';
import { EventWindow } from './event-window';
import { CacheWatcher } from './cache-watcher';
import { SortedKeys } from './sorted-keys';
import { goStringsFastOrder } from '../../codecs/go-strings';

export interface ResourceCacheSettings {
  clock: Clock;
  /** History window (5 minutes by default; docs/API.md, "Watch"). */
  windowMs: number;
  /** At most this many changes kept per resource, whatever their age. */
  maxEvents: number;
  /** Events a watcher may fall behind before it is closed. */
  watcherBuffer: number;
  /** Annotation key of the bookmark that ends a streaming list's initial events. */
  initialEventsEndKey: string;
  /** The managedFields field sets the watch cache's objects share: its own, so one server's (cached-object.ts). */
  fieldSets: SharedFieldSets;
}

export interface WatchRequest {
  prefix: string;
  selection: Selection;
  /** Start after this revision with no synthetic events ("Start at Exact"); otherwise at the current state. */
  exactAfter?: number;
  sendState: boolean;
  markInitialEnd: boolean;
  bookmarks: boolean;
  timeoutMs?: number;
}

/**
 * The store's history of the changes under `prefix` after revision `after`, up to `until`: about
 * `max` of them at a time (whole revisions), and `through`, the revision read up to. Rejects
 * with the store's error (`compacted` once the store no longer has them).
 */
export type HistoryReader = (prefix: string, after: number, until: number, max: number) => Promise<{ events: StoreEvent[]; through: number }>;

/** Deletions whose states keep their encodings (supersede). */
const DELETED_ENCODINGS_KEPT = 256;

/** Changes read from the store's history per round, and how few a catching-up watcher may have waiting before the next. */
const HISTORY_ROUND = 2_000;
const HISTORY_LOW_WATER = 250;

/** Thrown by `watch` when the resume point left the window: 410 `too old resource version: X (Y)`. */
export class TooOldResourceVersion extends Error {
  constructor(
    readonly requested: number,
    readonly oldest: number,
  ) {
    super(`too old resource version: ${requested} (${oldest})`);
  }
}

/** A stored value the cache could not decode: reads of its key answer 500 until it is rewritten or removed. */
export interface CorruptEntry {
  key: string;
  revision: number;
  cause: string;
  /** The last state watchers were told of, so its removal can still be delivered. */
  lastGood?: CachedObject;
}

/** Decode a stored value for the cache, its field sets shared through `fieldSets`, or say why it cannot be. */
export function tryDecodeCached(kv: KeyValue, fieldSets: SharedFieldSets, def?: ResourceDefinition): CachedObject | CorruptEntry {
  const decoded = tryDecodeFromStorage(kv, fieldSets.parse);
  if (!decoded.ok) return { key: kv.key, revision: kv.modRevision, cause: decoded.cause };
  def?.readDefaults?.(decoded.object);
  return new CachedObject(kv.key, kv.modRevision, deepFreeze(fieldSets.share(decoded.object)), kv.value.byteLength);
}

/**
 * The object a door's write was made from, taken for the cache in place of decoding `kv`
 * (written-objects.ts): it gains the revision as its resourceVersion, as a decode would give
 * it, and is frozen; the write learns it was adopted. Undefined when it holds anything its JSON
 * would not give back (looked for here unless the write's encode already did).
 */
function adoptWritten(kv: KeyValue, written: PendingWrite, fieldSets: SharedFieldSets): CachedObject | undefined {
  const { object: obj, plain } = written;
  if (!(plain || isPlainJson(obj, true)) || typeof obj.metadata !== 'object' || obj.metadata === null || Array.isArray(obj.metadata)) return undefined;
  // Last among the metadata, where a decode of the stored value (which has none) puts it.
  delete obj.metadata.resourceVersion;
  obj.metadata.resourceVersion = String(kv.modRevision);
  const object = deepFreeze(fieldSets.share(obj));
  written.adoptedAs(object);
  return new CachedObject(kv.key, kv.modRevision, object, kv.value.byteLength);
}

export class ResourceCache {
  readonly apiVersion: string;
  private objects = new Map<string, CachedObject>();
  /** The last `all` selection, until the next change. */
  private lastAll?: { prefix: string; items: readonly ApiObject[] };
  private corrupt = new Map<string, CorruptEntry>();
  private readonly keys = new SortedKeys(compareKeys, goStringsFastOrder);
  private window: EventWindow;
  private readonly watchers = new Set<CacheWatcher>();
  private lastBookmark?: WatchEvent;
  /** The states of the latest deletions, whose encodings are let go in turn (supersede). */
  private readonly deletedStates: CachedObject[] = [];
  readonly fieldsOf: (obj: ApiObject) => Record<string, string>;

  constructor(
    readonly def: ResourceDefinition,
    private readonly settings: ResourceCacheSettings,
    /** The cache's revision: every change up to it has been applied (owned by the WatchCache). */
    private readonly revision: () => number,
    /** Objects doors' writes were made from, taken instead of decoding their events. */
    private readonly written?: WrittenObjects,
    /** The store's own history, for watches that resume from before the in-memory window. */
    private readonly history?: HistoryReader,
  ) {
    this.apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    this.window = new EventWindow(settings.windowMs, settings.maxEvents, 0);
    this.fieldsOf = (obj) => selectableFieldsOf(def, obj);
  }

  get size(): number {
    return this.objects.size;
  }

  /** Events kept for resuming watches. */
  get windowSize(): number {
    return this.window.size;
  }

  /** Their estimated memory (the watch cache's budget shares it out). */
  get windowBytes(): number {
    return this.window.bytes;
  }

  /** Drop the changes older than the window (the watch cache's timer: a quiet resource lets go of them too). */
  pruneHistory(): void {
    this.window.prune(this.settings.clock.now());
  }

  /** Drop the oldest changes until at most `bytes` are held; returns the bytes given back. */
  trimHistory(bytes: number): number {
    return this.window.trimTo(bytes);
  }

  get watcherCount(): number {
    return this.watchers.size;
  }

  /** Replace the whole state after a (re)list at `revision`; open watches end (their clients resume or relist). */
  replace(objects: CachedObject[], revision: number, corrupt: readonly CorruptEntry[] = []): void {
    this.lastAll = undefined;
    this.objects = new Map(objects.map((o) => [o.key, o]));
    this.corrupt = new Map(corrupt.map((c) => [c.key, c]));
    this.keys.reset(objects.map((o) => o.key).sort(compareKeys));
    this.window = new EventWindow(this.settings.windowMs, this.settings.maxEvents, revision);
    this.lastBookmark = undefined;
    for (const watcher of [...this.watchers]) watcher.end();
  }

  /** Apply one store event (already known to belong to this resource) and fan it out. */
  apply(event: StoreEvent): void {
    this.lastAll = undefined;
    const key = event.kv.key;
    const previous = this.objects.get(key);
    let change: CacheEvent;
    const now = this.settings.clock.now();
    const broken = this.corrupt.get(key);
    if (event.type === 'delete') {
      this.corrupt.delete(key);
      // An object removed while undecodable leaves as watchers last saw it.
      const last = previous ?? broken?.lastGood;
      if (!last) return;
      if (previous) {
        this.objects.delete(key);
        this.keys.remove(key);
      }
      change = new CacheEvent('DELETED', event.revision, last.atRevision(event.revision), last, now);
    } else {
      const written = this.written?.take(event.kv);
      const current = (written && adoptWritten(event.kv, written, this.settings.fieldSets)) || tryDecodeCached(event.kv, this.settings.fieldSets, this.def);
      if (!(current instanceof CachedObject)) {
        // Reads of the key now answer 500; watchers hear nothing until it is rewritten or removed.
        this.corrupt.set(key, { ...current, lastGood: previous ?? broken?.lastGood });
        if (previous) {
          this.objects.delete(key);
          this.keys.remove(key);
        }
        return;
      }
      this.corrupt.delete(key);
      const before = previous ?? broken?.lastGood;
      this.objects.set(key, current);
      if (!previous) this.keys.insert(key);
      change = new CacheEvent(before ? 'MODIFIED' : 'ADDED', event.revision, current, before, now);
    }
    this.window.add(change);
    for (const watcher of this.watchers) watcher.offer(change);
    this.supersede(previous, change);
  }

  /**
   * The state a change replaced is no longer served: its encodings go (the history keeps the
   * object, not its bytes too). A deletion's own state is never served by a get either; its
   * bytes go DELETED_ENCODINGS_KEPT deletions later, once its watchers have long been sent it.
   */
  private supersede(previous: CachedObject | undefined, change: CacheEvent): void {
    previous?.forgetEncodings();
    if (change.type !== 'DELETED') return;
    this.deletedStates.push(change.current);
    if (this.deletedStates.length > DELETED_ENCODINGS_KEPT) this.deletedStates.shift()!.forgetEncodings();
  }

  get(key: string): CachedObject | undefined {
    return this.objects.get(key);
  }

  /** The undecodable value stored at `key`, if that is what is there. */
  corruptAt(key: string): CorruptEntry | undefined {
    return this.corrupt.get(key);
  }

  /** The first undecodable value under `prefix`, in key order. */
  firstCorrupt(prefix: string): CorruptEntry | undefined {
    let first: CorruptEntry | undefined;
    for (const c of this.corrupt.values()) {
      if (c.key.startsWith(prefix) && (!first || compareKeys(c.key, first.key) < 0)) first = c;
    }
    return first;
  }

  /** Objects under `prefix` in key order, starting at `startKey` (inclusive) when given. */
  *range(prefix: string, startKey?: string): Generator<CachedObject> {
    const from = startKey !== undefined && compareKeys(startKey, prefix) > 0 ? startKey : prefix;
    for (const key of this.keys.from((k) => compareKeys(k, from) < 0)) {
      if (!key.startsWith(prefix)) return;
      yield this.objects.get(key)!;
    }
  }

  /** `range` as a loop: `visit` each object under `prefix` in key order until it returns false (a list's selection). */
  visitRange(prefix: string, visit: (obj: CachedObject) => boolean): void {
    const objects = this.objects;
    this.keys.visitFrom(
      (k) => compareKeys(k, prefix) < 0,
      (key) => key.startsWith(prefix) && visit(objects.get(key)!),
    );
  }

  /**
   * What a list holds of `obj`: the object without kind and apiVersion, as upstream's typed lists
   * serve items, or a custom resource's whole object, as its unstructured lists do.
   */
  listed(obj: CachedObject): ApiObject {
    return this.def.custom ? obj.object : obj.listItem;
  }

  /**
   * The first `size` objects under `prefix` in key order (at most as many as there are), as
   * listed, in an array made at its size; the last one's key, and how many there are in all.
   * Grown by pushes, one per list, such arrays were most of a flood of lists' garbage
   * (docs/BENCHMARKS.md).
   */
  firstUnder(prefix: string, size: number): { items: ApiObject[]; lastKey: string; count: number } {
    const count = this.countFrom(prefix, prefix);
    const items: ApiObject[] = new Array(Math.min(size, count));
    let taken = 0;
    let lastKey = '';
    if (items.length > 0) {
      this.visitRange(prefix, (obj) => {
        items[taken++] = this.listed(obj);
        lastKey = obj.key;
        return taken < items.length;
      });
    }
    return { items, lastKey, count };
  }

  /**
   * Every object under `prefix` in key order, as listed, in one frozen array. Lists of the same
   * collection share it until the resource next changes: a hundred clients listing the same
   * thousands of objects (informers relisting, a flood) select them once, not once each, and
   * leave one array, not one each, for the collector to copy while their responses stream
   * (docs/BENCHMARKS.md, "Priority and fairness under a flood").
   */
  all(prefix: string): readonly ApiObject[] {
    const last = this.lastAll;
    if (last?.prefix === prefix) return last.items;
    const items = Object.freeze(this.firstUnder(prefix, Number.POSITIVE_INFINITY).items);
    this.lastAll = { prefix, items };
    return items;
  }

  /** Number of objects under `prefix` at or after `startKey`. */
  countFrom(prefix: string, startKey: string): number {
    // Keys under a prefix are contiguous: the end is the first key past all of them.
    const end = this.keys.rank((k) => compareKeys(k, prefix) < 0 || k.startsWith(prefix));
    return Math.max(0, end - this.keys.rank((k) => compareKeys(k, startKey) < 0));
  }

  /** A BOOKMARK carries only the kind and metadata.resourceVersion; one shared object per revision. */
  bookmark(atLeast: number): WatchEvent {
    const revision = Math.max(this.revision(), atLeast);
    if (this.lastBookmark?.object.metadata?.resourceVersion !== String(revision)) {
      this.lastBookmark = Object.freeze({
        type: 'BOOKMARK' as const,
        object: deepFreeze({ apiVersion: this.apiVersion, kind: this.def.kind, metadata: { resourceVersion: String(revision) } }),
      });
    }
    return this.lastBookmark;
  }

  private initialEventsEnd(revision: number): WatchEvent {
    const metadata = { resourceVersion: String(revision), annotations: { [this.settings.initialEventsEndKey]: 'true' } };
    return deepFreeze({ type: 'BOOKMARK' as const, object: { apiVersion: this.apiVersion, kind: this.def.kind, metadata } });
  }

  /**
   * Start a watch, synchronously: the state (or the window's changes after `exactAfter`) and the
   * registration happen in one step, so no change can fall between them.
   */
  watch(request: WatchRequest): CacheWatcher {
    const revision = this.revision();
    if (request.exactAfter !== undefined) {
      const history = this.window.since(request.exactAfter, this.settings.clock.now());
      if (!history) {
        if (!this.history) throw new TooOldResourceVersion(request.exactAfter, this.window.oldestResumable);
        return this.watchFromStore(request, request.exactAfter);
      }
      const watcher = new CacheWatcher(this.watcherOptions(request, request.exactAfter, []));
      watcher.replay(history);
      return this.register(watcher, revision);
    }
    const initial: WatchEvent[] = [];
    if (request.sendState) {
      const { selection } = request;
      for (const obj of this.range(request.prefix)) {
        if (selection.empty || selection.matches(obj.labels, obj.fields(this.fieldsOf))) initial.push(obj.added);
      }
      if (request.markInitialEnd) initial.push(this.initialEventsEnd(revision));
    }
    return this.register(new CacheWatcher(this.watcherOptions(request, revision, initial)), revision);
  }

  /**
   * A watch resuming from before the in-memory window: its changes come from the store's
   * history, read a round at a time as the client takes them, until the cache's own history
   * covers where it has got to; then the rest comes from that history and the watcher joins the
   * live stream in one synchronous step (no gap, no repeat, nothing held back meanwhile). Only a
   * revision the store has compacted is 410 (as an ERROR event, the way a watch reports it).
   */
  private watchFromStore(request: WatchRequest, after: number): CacheWatcher {
    const watcher = new CacheWatcher(this.watcherOptions(request, after, []));
    watcher.beginCatchUp();
    void this.catchUp(watcher, request, after);
    return watcher;
  }

  private async catchUp(watcher: CacheWatcher, request: WatchRequest, after: number): Promise<void> {
    const read = this.history!;
    const selective = !request.selection.empty;
    let from = after;
    try {
      for (;;) {
        if (watcher.closed) return;
        const rest = this.window.since(from, this.settings.clock.now());
        if (rest) {
          watcher.caughtUp(rest);
          this.register(watcher, this.revision());
          return;
        }
        const until = this.revision();
        // Never the case (the window is complete after a revision at most the cache's), but a loop must not spin.
        if (until <= from) await new Promise<void>((resolve) => setImmediate(resolve));
        while (from < until) {
          await watcher.whenBelow(HISTORY_LOW_WATER);
          if (watcher.closed) return;
          const { events, through } = await read(request.prefix, from, until, HISTORY_ROUND);
          if (watcher.closed) return;
          const changes: CacheEvent[] = [];
          for (const e of events) {
            const change = this.historyEvent(e, selective);
            if (change) changes.push(change);
          }
          watcher.catchUp(changes);
          from = through;
        }
      }
    } catch (err) {
      if (StoreError.is(err, 'compacted'))
        watcher.fail(resourceExpired(new TooOldResourceVersion(after, err.revision ?? this.window.oldestResumable).message).status);
      else if (StoreError.is(err)) watcher.fail(serviceUnavailable(`storage is unavailable: ${err.message}`).status);
      else watcher.fail(internalError((err as Error).message).status);
    }
  }

  /**
   * A change from the store's history as the cache would have recorded it; undefined for one it
   * cannot decode. The previous state is decoded only where it is needed: a deletion's last
   * state, and the entering and leaving a selective watcher sees.
   */
  private historyEvent(event: StoreEvent, selective: boolean): CacheEvent | undefined {
    const now = this.settings.clock.now();
    const prev = event.prevKv && (selective || event.type === 'delete') ? tryDecodeCached(event.prevKv, this.settings.fieldSets, this.def) : undefined;
    const before = prev instanceof CachedObject ? prev : undefined;
    if (event.type === 'delete') return before && new CacheEvent('DELETED', event.revision, before.atRevision(event.revision), before, now);
    const current = tryDecodeCached(event.kv, this.settings.fieldSets, this.def);
    if (!(current instanceof CachedObject)) return undefined;
    // A key created at this revision is ADDED; written before, MODIFIED.
    return new CacheEvent(event.kv.createRevision === event.kv.modRevision ? 'ADDED' : 'MODIFIED', event.revision, current, before, now);
  }

  /** From here on the watcher takes live changes, which all come after `revision`. */
  private register(watcher: CacheWatcher, revision: number): CacheWatcher {
    watcher.advanceTo(revision);
    if (!watcher.closed) this.watchers.add(watcher);
    return watcher;
  }

  private watcherOptions(request: WatchRequest, after: number, initial: WatchEvent[]) {
    return {
      prefix: request.prefix,
      selection: request.selection,
      fieldsOf: this.fieldsOf,
      after,
      initial,
      bookmarks: request.bookmarks,
      timeoutMs: request.timeoutMs,
      bufferSize: this.settings.watcherBuffer,
      clock: this.settings.clock,
      bookmark: (atLeast: number) => this.bookmark(atLeast),
      onClose: (w: CacheWatcher) => this.watchers.delete(w),
    };
  }

  /** Ends every watch (shutdown). */
  endAll(): void {
    for (const watcher of [...this.watchers]) watcher.end();
  }

  /** End every watcher with an ERROR event carrying `status`. */
  failAll(status: Status): void {
    for (const watcher of [...this.watchers]) watcher.fail(status);
  }
}
