/**
 * Object storage straight from the backing store (etcd or embedded): gets and chunked lists at
 * a revision, with storage errors translated to upstream's Status errors. The watch cache
 * decorates it (core/cache/cached-storage.ts); alone it serves what the cache hands down —
 * exact lists, continue tokens, and every read while the cache is loading.
 */
import type { ApiObject } from '../api';
import type { ResourceDefinition } from '../resources/definition';
import { StoreError, type KeyValue, type Store } from '../../store';
import { StatusError, resourceExpired, serviceUnavailable, tooLargeResourceVersion } from '../../status';
import { selectableFieldsOf } from '../selectors';
import { LIST_EXPIRED_MESSAGE, continueExpired } from './continue-token';
import { decodeFromStorage } from './object-codec';
import type { Chunk, Freshness, ListRequest, ObjectStorage } from './resource-storage';

/** A read's storage failure as a Status error: 503 while the store is unavailable. */
export function readError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  if (StoreError.is(err, 'unavailable')) return serviceUnavailable(`storage is unavailable: ${err.message}`);
  return StatusError.from(err);
}

export class StoreStorage implements ObjectStorage {
  constructor(
    private readonly def: ResourceDefinition,
    private readonly store: Store,
    /** The version continue tokens carry (`meta.<group domain>/v1`), named in their 410. */
    private readonly listVersion: string,
  ) {}

  /** A stored object as read: decoded, with the type's read defaults (a custom resource's schema defaults). */
  private decode(kv: KeyValue): ApiObject {
    const obj = decodeFromStorage(kv);
    this.def.readDefaults?.(obj);
    return obj;
  }

  async get(key: string, freshness: Freshness): Promise<ApiObject | undefined> {
    let result;
    try {
      result = await this.store.get(key);
    } catch (err) {
      throw readError(err);
    }
    if (freshness.kind === 'not-older-than' && result.revision < freshness.revision) {
      throw tooLargeResourceVersion(freshness.revision, result.revision, 1);
    }
    return result.kv ? this.decode(result.kv) : undefined;
  }

  async list(request: ListRequest): Promise<Chunk> {
    const { at } = request;
    switch (at.kind) {
      case 'continue':
        return this.listPages(request, at.revision, request.prefix + at.startKey, at.tokenStart);
      case 'exact':
        return this.listPages(request, at.revision);
      case 'fresh': {
        const chunk = await this.listPages(request, undefined);
        if (at.freshness.kind === 'not-older-than' && chunk.revision < at.freshness.revision) {
          throw tooLargeResourceVersion(at.freshness.revision, chunk.revision, 1);
        }
        return chunk;
      }
    }
  }

  async currentRevision(): Promise<number> {
    try {
      return await this.store.currentRevision();
    } catch (err) {
      throw readError(err);
    }
  }

  /**
   * Fill up to `limit` matching items across store pages, at `revision` (undefined: the latest)
   * from `startKey`. `tokenStart` marks a continued list, whose compaction answers upstream's
   * continue message.
   */
  private async listPages(request: ListRequest, revision: number | undefined, startKey?: string, tokenStart?: string): Promise<Chunk> {
    const { prefix, selection, limit } = request;
    const items: ApiObject[] = [];
    for (;;) {
      let page;
      try {
        page = await this.store.list(prefix, { revision, limit: limit || undefined, startKey });
      } catch (err) {
        if (StoreError.is(err, 'compacted')) {
          throw tokenStart !== undefined ? continueExpired(this.listVersion, tokenStart) : resourceExpired(LIST_EXPIRED_MESSAGE);
        }
        if (StoreError.is(err, 'future-revision') && revision !== undefined) {
          throw tooLargeResourceVersion(revision, err.revision ?? 0, 1);
        }
        throw readError(err);
      }
      revision = page.revision;
      let consumed = 0;
      for (const kv of page.kvs) {
        consumed++;
        const obj = this.def.custom ? this.decode(kv) : listItem(kv);
        if (!selection.empty && !selection.matches(obj.metadata?.labels, selectableFieldsOf(this.def, obj))) continue;
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
}

/** Items of a typed list carry no apiVersion/kind, as upstream serves them (a custom resource's list keeps them). */
function listItem(kv: KeyValue): ApiObject {
  const { apiVersion: _a, kind: _k, ...rest } = decodeFromStorage(kv);
  return rest;
}
