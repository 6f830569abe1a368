/**
 * The watch cache as a decorator over a resource's storage, as upstream's cacher decorates etcd3
 * storage: it serves gets, lists at `0` (Any) and NotOlderThan, consistent ("Most recent") reads
 * once it has caught up with the store's current revision, and every watch; it hands exact
 * lists, continue tokens and — while it is still loading, or when a consistent read cannot catch
 * up within the wait — everything else down to the storage it wraps.
 */
import type { ApiObject, WatchStream } from '../api';
import { resourceExpired, serviceUnavailable, tooLargeResourceVersion } from '../../status';
import type { Chunk, Freshness, ListRequest, ObjectStorage, ResourceStorage, WatchRequest } from '../storage/resource-storage';
import { errorWatch } from './cache-watcher';
import { undecodableObject } from '../storage/object-codec';
import { type ResourceCache, TooOldResourceVersion } from './resource-cache';
import type { WatchCache } from './watch-cache';

export class CachedStorage implements ResourceStorage {
  constructor(
    private readonly inner: ObjectStorage,
    private readonly hub: WatchCache,
    private readonly cache: ResourceCache,
  ) {}

  get(key: string, freshness: Freshness): ApiObject | undefined | Promise<ApiObject | undefined> {
    // A read of any version from a cache in place is answered within the call, without a
    // promise (the watch cache's gets at resourceVersion=0).
    if (freshness.kind === 'any' && this.hub.isReady) return this.fromCache(key);
    return this.getWhenFresh(key, freshness);
  }

  peek(key: string): ApiObject | undefined {
    if (!this.hub.isReady || this.cache.corruptAt(key)) return undefined;
    return this.cache.get(key)?.object;
  }

  private async getWhenFresh(key: string, freshness: Freshness): Promise<ApiObject | undefined> {
    if (!(await this.fresh(freshness))) return this.inner.get(key, freshness);
    return this.fromCache(key);
  }

  private fromCache(key: string): ApiObject | undefined {
    const corrupt = this.cache.corruptAt(key);
    if (corrupt) throw undecodableObject(key, corrupt.cause);
    return this.cache.get(key)?.object;
  }

  async list(request: ListRequest): Promise<Chunk> {
    const { at } = request;
    if (at.kind === 'exact') await this.awaitRevision(at.revision);
    if (at.kind !== 'fresh' || !(await this.fresh(at.freshness))) return this.inner.list(request);
    return this.listFromCache(request);
  }

  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }

  async watch(request: WatchRequest): Promise<WatchStream> {
    const hub = this.hub;
    await hub.whenReady();
    if (!hub.isReady) throw serviceUnavailable('the watch cache is closed');
    // The store went away: a new watch would wait in silence (docs/RELIABILITY.md, "etcd down").
    if (hub.unavailable) return errorWatch(hub.unavailable);
    if (request.exactAfter === undefined && request.freshness.kind !== 'any') {
      const target = request.freshness.kind === 'most-recent' ? await this.hub.currentRevision(() => this.inner.currentRevision()) : request.freshness.revision;
      const fresh = await hub.waitFresh(target);
      // A streaming list must start synced to its version: upstream sends 504 as an ERROR event.
      if (!fresh && request.strict) return errorWatch(tooLargeResourceVersion(target, hub.revision, 1).status);
    }
    try {
      return this.cache.watch({
        prefix: request.prefix,
        selection: request.selection,
        exactAfter: request.exactAfter,
        sendState: request.sendState,
        markInitialEnd: request.markInitialEnd,
        bookmarks: request.bookmarks,
        timeoutMs: request.timeoutMs,
      });
    } catch (err) {
      if (err instanceof TooOldResourceVersion) return errorWatch(resourceExpired(err.message).status);
      throw err;
    }
  }

  /**
   * Can the cache answer a read this fresh? False hands the read down (cache still loading, or a
   * consistent read it could not catch up with in time). A NotOlderThan version the cache does
   * not reach in time is 504 `Too large resource version`.
   */
  private async fresh(freshness: Freshness): Promise<boolean> {
    const hub = this.hub;
    if (!hub.isReady) return false;
    switch (freshness.kind) {
      case 'any':
        return true;
      case 'most-recent':
        return (await hub.waitFresh(await hub.currentRevision(() => this.inner.currentRevision()))) && hub.isReady;
      case 'not-older-than':
        if (await hub.waitFresh(freshness.revision)) return hub.isReady;
        if (!hub.isReady) return false;
        throw tooLargeResourceVersion(freshness.revision, hub.revision, 1);
    }
  }

  /**
   * An Exact read of a revision the store has not reached: wait briefly for it (the cache sees
   * every revision), then 504 `Too large resource version`, as upstream answers.
   */
  private async awaitRevision(revision: number): Promise<void> {
    const hub = this.hub;
    if (!hub.isReady || revision <= hub.revision) return;
    if (await hub.waitFresh(revision)) return;
    if (hub.isReady) throw tooLargeResourceVersion(revision, hub.revision, 1);
  }

  /** A chunk from the cache at its current revision, cut by `limit`; later chunks come from the store at that revision. */
  private listFromCache(request: ListRequest): Chunk {
    const { prefix, selection, limit } = request;
    const cache = this.cache;
    // As a list from the store: one undecodable value fails it, naming its key.
    const corrupt = cache.firstCorrupt(prefix);
    if (corrupt) throw undecodableObject(corrupt.key, corrupt.cause);
    const revision = this.hub.revision;
    if (selection.empty) return this.allFromCache(prefix, limit, revision);
    const items: ApiObject[] = [];
    let nextKey: string | undefined;
    cache.visitRange(prefix, (obj) => {
      if (!selection.matches(obj.labels, obj.fields(cache.fieldsOf))) return true;
      items.push(cache.listed(obj));
      if (limit && items.length === limit) {
        nextKey = `${obj.key}\u0000`;
        return false;
      }
      return true;
    });
    if (nextKey === undefined) return { items, revision };
    const remaining = cache.countFrom(prefix, nextKey);
    if (remaining === 0) return { items, revision };
    return { items, revision, nextKey };
  }

  /**
   * `listFromCache` without a selector: the cache's shared selection (`ResourceCache.all`), or a
   * page of it made at its size.
   */
  private allFromCache(prefix: string, limit: number | undefined, revision: number): Chunk {
    if (!limit) return { items: this.cache.all(prefix), revision };
    const { items, lastKey, count } = this.cache.firstUnder(prefix, limit);
    if (items.length === count) return { items, revision };
    return { items, revision, nextKey: `${lastKey}\u0000`, remaining: count - items.length };
  }
}
