/**
 * The storage of one resource type, as the generic registry sees it (upstream's
 * `storage.Interface` for reads). Two implementations stack: `StoreStorage` reads the backing
 * store directly, and the watch cache's `CachedStorage` decorates it — serving what it can from
 * memory and handing the rest down — as upstream's cacher decorates etcd3 storage. The
 * registry holds only the interface, so no read chooses its source itself.
 *
 * Writes are not part of it: they go to the backing store's compare-and-swap operations, which
 * the cache would only pass through (upstream's cacher delegates them too).
 */
import type { ApiObject, WatchStream } from '../api';
import type { Selection } from '../selectors';

/** How fresh a read must be: "Most recent", "Any" (resourceVersion `0`) and "Not older than". */
export type Freshness = { kind: 'most-recent' } | { kind: 'any' } | { kind: 'not-older-than'; revision: number };

/** Which state a list reads. */
export type ListAt =
  /** The state at least this fresh; the cache serves it when it can. */
  | { kind: 'fresh'; freshness: Freshness }
  /** Exactly this revision ("Exact", and a legacy `limit` with a non-zero version). */
  | { kind: 'exact'; revision: number }
  /**
   * A continued list: from `startKey` at `revision` (undefined: the latest, for a token whose
   * snapshot was compacted). `tokenStart` is the token's key, named in its 410.
   */
  | { kind: 'continue'; revision: number | undefined; startKey: string; tokenStart: string };

export interface ListRequest {
  /** Key prefix of the collection (one namespace or all), ending with `/`. */
  prefix: string;
  selection: Selection;
  /** Items per chunk; 0: everything. */
  limit: number;
  at: ListAt;
}

/** One chunk of a list, before it becomes an ApiList. */
export interface Chunk {
  /** Shared between lists when from the watch cache (frozen): never changed in place. */
  items: readonly ApiObject[];
  revision: number;
  /** The key the next chunk starts at, when more keys remain. */
  nextKey?: string;
  /** Objects after this chunk; only counted when nothing is filtered (upstream's remainingItemCount). */
  remaining?: number;
}

/** Where a watch starts, planned from its ListOptions (upstream's watch and streaming-list rules). */
export interface WatchStart {
  /** "Start at Exact": every change after this revision, no synthetic events. */
  exactAfter?: number;
  /** Otherwise the stream starts at the current state, at least this fresh. */
  freshness: Freshness;
  /** A streaming list must start synced to its version (504 ERROR event otherwise); a legacy watch starts anyway. */
  strict: boolean;
  /** Synthetic ADDED events for the existing objects first ("Get State"). */
  sendState: boolean;
  /** End the initial state with a BOOKMARK annotated initial-events-end (streaming list). */
  markInitialEnd: boolean;
}

/** What a watch asks of the storage. */
export interface WatchRequest extends WatchStart {
  prefix: string;
  selection: Selection;
  bookmarks: boolean;
  timeoutMs?: number;
}

/** Reads any backing can answer. */
export interface ObjectStorage {
  /**
   * The object at `key`, at least as fresh as asked; undefined when absent. Answered within the
   * call where a cache holds what was asked for (any version: resourceVersion 0), failing then
   * by a throw; otherwise a promise.
   */
  get(key: string, freshness: Freshness): ApiObject | undefined | Promise<ApiObject | undefined>;
  list(request: ListRequest): Promise<Chunk>;
  /** The backing store's current revision (a consistent read waits for it). */
  currentRevision(): Promise<number>;
}

/** Object storage that also serves watches: what the registry reads through. */
export interface ResourceStorage extends ObjectStorage {
  watch(request: WatchRequest): Promise<WatchStream>;
  /** The object at `key` as a cache holds it now, if one does (no store read, no wait); undefined otherwise. */
  peek?(key: string): ApiObject | undefined;
}
