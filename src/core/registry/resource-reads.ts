/**
 * Reads of one resource type: get, list (chunked, at one revision, with selectors) and watch,
 * with the resourceVersion semantics of SPEC "List, chunking and consistency".
 *
 * Where each read is served, as upstream 1.32 does it: the watch cache serves gets, lists at
 * `0` (Any) and NotOlderThan, consistent ("Most recent") reads once it has caught up with the
 * store's current revision (falling back to the store if it cannot within the wait), and every
 * watch. Exact lists and continue tokens go to the store, which answers 410 once the revision
 * is compacted. While the cache is still loading, gets and lists go to the store.
 */
import type { ApiList, ApiObject, GetOptions, ListOptions, WatchStream } from '../api';
import type { ResourceDefinition } from '../resources/definition';
import type { Naming } from '../../naming';
import type { Clock } from '../../clock';
import type { KeyValue, Store } from '../../store';
import { StoreError } from '../../store';
import {
  type GroupKind,
  type GroupResource,
  StatusError,
  badRequest,
  notFound,
  resourceExpired,
  serviceUnavailable,
  tooLargeResourceVersion,
} from '../../status';
import { parseSelection, type Selection } from '../selectors';
import { errorWatch, TooOldResourceVersion, type ResourceCache, type WatchCache } from '../cache';
import { collectionPrefix, objectKey } from './keys';
import { decodeFromStorage } from './object-codec';
import {
  LIST_EXPIRED_MESSAGE,
  continueExpired,
  decodeContinue,
  encodeContinue,
  planGet,
  planList,
  planWatch,
  validateListOptions,
  type Freshness,
} from './list-options';

export interface RegistryDeps {
  store: Store;
  naming: Naming;
  clock: Clock;
  /** The process's watch cache (one per core). */
  cache: WatchCache;
}

/** One chunk of a list, before it becomes an ApiList. */
interface Chunk {
  items: ApiObject[];
  revision: number;
  /** The key the next chunk starts at, when more keys remain. */
  nextKey?: string;
  /** Objects after this chunk; only counted when nothing is filtered (SPEC: remainingItemCount). */
  remaining?: number;
}

export class ResourceReads {
  readonly apiVersion: string;
  readonly groupResource: GroupResource;
  readonly groupKind: GroupKind;
  private readonly cached: ResourceCache;

  constructor(
    readonly def: ResourceDefinition,
    protected readonly deps: RegistryDeps,
  ) {
    this.apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    this.groupResource = { group: def.group, resource: def.resource };
    this.groupKind = { group: def.group, kind: def.kind };
    this.cached = deps.cache.register(def);
  }

  /** The version in continue tokens and of ListOptions errors: `meta.<groupDomain>/v1`. */
  private get listVersion(): string {
    return `${this.deps.naming.groups.meta}/v1`;
  }

  /**
   * The cache, once it is at least as fresh as asked; undefined when the store must answer
   * (cache still loading, or a consistent read it could not catch up with in time). A
   * NotOlderThan version the cache does not reach in time is 504 `Too large resource version`.
   */
  private async freshCache(freshness: Freshness): Promise<ResourceCache | undefined> {
    const hub = this.deps.cache;
    if (!hub.isReady) return undefined;
    switch (freshness.kind) {
      case 'any':
        return this.cached;
      case 'most-recent': {
        const fresh = await hub.waitFresh(await this.currentRevision());
        return fresh && hub.isReady ? this.cached : undefined;
      }
      case 'not-older-than':
        if (await hub.waitFresh(freshness.revision)) return hub.isReady ? this.cached : undefined;
        if (!hub.isReady) return undefined;
        throw tooLargeResourceVersion(freshness.revision, hub.revision, 1);
    }
  }

  async get(namespace: string | undefined, name: string, options: GetOptions): Promise<ApiObject> {
    const freshness = planGet(options.resourceVersion);
    const key = objectKey(this.def.resource, namespace, name);
    const cache = await this.freshCache(freshness);
    if (cache) {
      const obj = cache.get(key);
      if (!obj) throw notFound(this.groupResource, name);
      return obj.object;
    }
    let result;
    try {
      result = await this.deps.store.get(key);
    } catch (err) {
      throw this.readError(err);
    }
    if (freshness.kind === 'not-older-than' && result.revision < freshness.revision) {
      throw tooLargeResourceVersion(freshness.revision, result.revision, 1);
    }
    if (!result.kv) throw notFound(this.groupResource, name);
    return decodeFromStorage(result.kv);
  }

  /** A list as of one revision, chunked by `limit`/`continue` (SPEC list table, row by row). */
  async list(namespace: string | undefined, options: ListOptions): Promise<ApiList> {
    validateListOptions(options, false, this.deps.naming.groups.meta);
    const selection = parseSelection(this.def, options.labelSelector, options.fieldSelector);
    const prefix = collectionPrefix(this.def.resource, namespace);
    const limit = options.limit && options.limit > 0 ? options.limit : 0;
    const plan = planList(options);
    let chunk: Chunk;
    if (plan.source === 'continue') {
      const token = decodeContinue(plan.token, this.listVersion);
      if (options.resourceVersion && options.resourceVersion !== '0') {
        throw badRequest('specifying resource version is not allowed when using continue');
      }
      // A token from a compacted list continues at the latest revision (-1), as upstream's does.
      const revision = token.revision > 0 ? token.revision : undefined;
      chunk = await this.listFromStore(prefix, selection, limit, revision, prefix + token.start, token.start);
    } else if (plan.source === 'exact') {
      await this.awaitRevision(plan.revision);
      chunk = await this.listFromStore(prefix, selection, limit, plan.revision);
    } else {
      const cache = await this.freshCache(plan.freshness);
      if (cache) chunk = this.listFromCache(cache, prefix, selection, limit);
      else {
        chunk = await this.listFromStore(prefix, selection, limit, undefined);
        if (plan.freshness.kind === 'not-older-than' && chunk.revision < plan.freshness.revision) {
          throw tooLargeResourceVersion(plan.freshness.revision, chunk.revision, 1);
        }
      }
    }
    const metadata: ApiList['metadata'] = { resourceVersion: String(chunk.revision) };
    if (chunk.nextKey !== undefined) {
      metadata.continue = encodeContinue(this.listVersion, chunk.revision, chunk.nextKey.slice(prefix.length));
      if (chunk.remaining !== undefined && chunk.remaining > 0) metadata.remainingItemCount = chunk.remaining;
    }
    return { apiVersion: this.apiVersion, kind: `${this.def.kind}List`, metadata, items: chunk.items };
  }

  /**
   * An Exact read of a revision the store has not reached: wait briefly for it (the cache sees
   * every revision), then 504 `Too large resource version` (SPEC "Unrecognized versions").
   */
  private async awaitRevision(revision: number): Promise<void> {
    const hub = this.deps.cache;
    if (!hub.isReady || revision <= hub.revision) return;
    if (await hub.waitFresh(revision)) return;
    if (hub.isReady) throw tooLargeResourceVersion(revision, hub.revision, 1);
  }

  /** A chunk from the cache at its current revision, cut by `limit`; later chunks come from the store at that revision. */
  private listFromCache(cache: ResourceCache, prefix: string, selection: Selection, limit: number): Chunk {
    const revision = this.deps.cache.revision;
    const items: ApiObject[] = [];
    let nextKey: string | undefined;
    for (const obj of cache.range(prefix)) {
      if (nextKey !== undefined) break;
      if (!selection.empty && !selection.matches(obj.labels, obj.fields(cache.fieldsOf))) continue;
      items.push(obj.listItem);
      if (limit && items.length === limit) nextKey = `${obj.key}\u0000`;
    }
    if (nextKey === undefined) return { items, revision };
    const remaining = cache.countFrom(prefix, nextKey);
    if (remaining === 0) return { items, revision };
    return { items, revision, nextKey, remaining: selection.empty ? remaining : undefined };
  }

  /**
   * A chunk from the store: at `revision` (undefined: the latest), from `startKey`, filling up to
   * `limit` matching items across store pages. `tokenStart` marks a continued list, whose
   * compaction answers upstream's continue message.
   */
  private async listFromStore(
    prefix: string,
    selection: Selection,
    limit: number,
    revision: number | undefined,
    startKey?: string,
    tokenStart?: string,
  ): Promise<Chunk> {
    const items: ApiObject[] = [];
    for (;;) {
      let page;
      try {
        page = await this.deps.store.list(prefix, { revision, limit: limit || undefined, startKey });
      } catch (err) {
        if (StoreError.is(err, 'compacted')) {
          throw tokenStart !== undefined ? continueExpired(this.listVersion, tokenStart) : resourceExpired(LIST_EXPIRED_MESSAGE);
        }
        if (StoreError.is(err, 'future-revision') && revision !== undefined) {
          throw tooLargeResourceVersion(revision, err.revision ?? 0, 1);
        }
        throw this.readError(err);
      }
      revision = page.revision;
      let consumed = 0;
      for (const kv of page.kvs) {
        consumed++;
        const obj = this.listItem(kv);
        if (!selection.empty && !selection.matches(obj.metadata?.labels, this.cached.fieldsOf(obj))) continue;
        items.push(obj);
        if (limit && items.length === limit) break;
      }
      const more = consumed < page.kvs.length || page.more;
      if (!more) return { items, revision };
      const nextKey = `${page.kvs[consumed - 1]!.key}\u0000`;
      if (limit && items.length === limit) {
        return { items, revision, nextKey, remaining: selection.empty ? page.count - consumed : undefined };
      }
      startKey = nextKey;
    }
  }

  /** Items of a typed list carry no apiVersion/kind, as upstream serves them. */
  private listItem(kv: KeyValue): ApiObject {
    const { apiVersion: _a, kind: _k, ...rest } = decodeFromStorage(kv);
    return rest;
  }

  protected async currentRevision(): Promise<number> {
    try {
      return await this.deps.store.currentRevision();
    } catch (err) {
      throw this.readError(err);
    }
  }

  protected readError(err: unknown): StatusError {
    if (err instanceof StatusError) return err;
    if (StoreError.is(err, 'unavailable')) return serviceUnavailable(`storage is unavailable: ${err.message}`);
    return StatusError.from(err);
  }

  /**
   * Watch, served by the cache: "Get State and Start at Most Recent/Any" (synthetic ADDED events)
   * for an unset or `0` resourceVersion, "Start at Exact" otherwise, streaming lists with
   * `sendInitialEvents`. Objects leaving the selection are DELETED for this watcher. A version
   * that left the history window is one ERROR event carrying 410 Expired, as upstream sends it.
   */
  async watch(namespace: string | undefined, options: ListOptions): Promise<WatchStream> {
    validateListOptions(options, true, this.deps.naming.groups.meta);
    const selection = parseSelection(this.def, options.labelSelector, options.fieldSelector);
    const plan = planWatch(options);
    const hub = this.deps.cache;
    await hub.whenReady();
    if (!hub.isReady) throw serviceUnavailable('the watch cache is closed');
    if (plan.exactAfter === undefined && plan.freshness.kind !== 'any') {
      const target = plan.freshness.kind === 'most-recent' ? await this.currentRevision() : plan.freshness.revision;
      const fresh = await hub.waitFresh(target);
      // A streaming list must start synced to its version: upstream sends 504 as an ERROR event.
      if (!fresh && plan.strict) return errorWatch(tooLargeResourceVersion(target, hub.revision, 1).status);
    }
    const timeoutMs = options.timeoutSeconds !== undefined && options.timeoutSeconds > 0 ? options.timeoutSeconds * 1000 : undefined;
    try {
      return this.cached.watch({
        prefix: collectionPrefix(this.def.resource, namespace),
        selection,
        exactAfter: plan.exactAfter,
        sendState: plan.sendState,
        markInitialEnd: plan.markInitialEnd,
        bookmarks: options.allowWatchBookmarks === true,
        timeoutMs,
      });
    } catch (err) {
      if (err instanceof TooOldResourceVersion) return errorWatch(resourceExpired(err.message).status);
      throw err;
    }
  }
}
