/**
 * The backing store: a narrow, etcd-shaped interface over a revisioned key-value store.
 *
 * Every write bumps one global revision; every key remembers the revision that created it and
 * the revision that last modified it. The API server's resourceVersion is that revision. The
 * interface holds only the operations the API server needs (as kine recognises only the
 * transaction shapes kube-apiserver sends), so that a second backend (the embedded SQLite
 * store) can implement exactly the same semantics.
 */

export interface KeyValue {
  key: string;
  value: Uint8Array;
  /** Revision of the write that created this key (since its last deletion). */
  createRevision: number;
  /** Revision of the write that produced this value. */
  modRevision: number;
}

export interface GetOptions {
  /** Read as of this revision; unset means the latest. */
  revision?: number;
}

export interface GetResult {
  /** Absent when the key does not exist at that revision. */
  kv?: KeyValue;
  /** The revision the read was served at (the store's current revision for latest reads). */
  revision: number;
}

export interface ListOptions {
  /** Read as of this revision; unset means the latest. Pass the first page's revision to later pages. */
  revision?: number;
  /** At most this many keys; 0 or unset means no limit. */
  limit?: number;
  /** Start at this key (inclusive); must lie under the prefix. Used to continue a paged list. */
  startKey?: string;
}

export interface ListResult {
  /** In key order. */
  kvs: KeyValue[];
  /** The revision the whole range was read at. */
  revision: number;
  /** True when keys beyond `kvs` remain under the prefix. */
  more: boolean;
  /** Number of keys from `startKey` (or the prefix start) to the end of the prefix, `kvs` included. */
  count: number;
}

export type StoreEventType = 'put' | 'delete';

export interface StoreEvent {
  type: StoreEventType;
  /** For `put`, the new value; for `delete`, the key with an empty value and `modRevision` = the deletion's revision. */
  kv: KeyValue;
  /** The value before this event, when there was one. */
  prevKv?: KeyValue;
  /** Revision of this event (= kv.modRevision). */
  revision: number;
}

export interface WatchOptions {
  /**
   * Deliver events with revision >= startRevision (etcd semantics: inclusive), replaying
   * history first. Unset means "from now on". A start revision at or below the compacted
   * revision fails with a `compacted` StoreError delivered through `onError`.
   */
  startRevision?: number;
  /**
   * Whether events carry the key's previous value (default true). A watcher that keeps every
   * value itself (the watch cache) says false, sparing etcd a read of the old revision for each
   * update and delete it sends; the embedded store, which has them at hand, may still attach them.
   */
  prevKv?: boolean;
}

export interface WatchHandlers {
  /** Events arrive in revision order, each exactly once. Several events may share a revision (a txn). */
  onEvents(events: StoreEvent[]): void;
  /** Called once when the watch fails (compaction, store closed, connection lost); no events follow. */
  onError(err: StoreError): void;
}

export interface StoreWatch {
  /** Stop delivering events and release resources. Idempotent. */
  cancel(): void;
}

/** A closed set of storage failures, translated into API Status errors by the core. */
export type StoreErrorCode =
  /** create-if-absent found the key. */
  | 'exists'
  /** guarded update/delete: the key is absent. */
  | 'not-found'
  /** guarded update/delete: the key's modRevision differs from the expected one. */
  | 'conflict'
  /** the requested revision has been compacted away. */
  | 'compacted'
  /** the requested revision is newer than the store's current revision. */
  | 'future-revision'
  /** the store cannot be reached or was closed. */
  | 'unavailable';

export class StoreError extends Error {
  readonly code: StoreErrorCode;
  readonly key?: string;
  /** For `exists` and `conflict`: the key's current value, so callers can retry without a read. */
  readonly current?: KeyValue;
  /** For `compacted`: the store's compacted revision. For `future-revision`: its current revision. */
  readonly revision?: number;

  constructor(code: StoreErrorCode, message: string, extra: { key?: string; current?: KeyValue; revision?: number } = {}) {
    super(message);
    this.name = 'StoreError';
    this.code = code;
    this.key = extra.key;
    this.current = extra.current;
    this.revision = extra.revision;
  }

  static is(err: unknown, code?: StoreErrorCode): err is StoreError {
    return err instanceof StoreError && (code === undefined || err.code === code);
  }
}

export interface Store {
  /** Which backend this is, for logs and test names. */
  readonly kind: StoreKind;

  get(key: string, options?: GetOptions): Promise<GetResult>;

  /** Range over every key starting with `prefix`, in key order, all pages at one revision. */
  list(prefix: string, options?: ListOptions): Promise<ListResult>;

  /** Number of keys under a prefix at the latest revision. */
  count(prefix: string): Promise<number>;

  /** Create the key only if absent; fails with `exists` (carrying the current value) otherwise. */
  create(key: string, value: Uint8Array): Promise<KeyValue>;

  /**
   * Replace the value only if the key's modRevision equals `expectedModRevision`.
   * Fails with `not-found` when absent, `conflict` (carrying the current value) when it moved.
   */
  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue>;

  /**
   * Delete the key, guarded by `expectedModRevision` when given. Returns the deleted value and
   * the deletion's revision. Fails with `not-found` or `conflict` as `update` does.
   */
  delete(key: string, expectedModRevision?: number): Promise<{ prev: KeyValue; revision: number }>;

  /** Watch every key under `prefix`. */
  watch(prefix: string, options: WatchOptions, handlers: WatchHandlers): StoreWatch;

  /** The revision of the most recent write (0 for an empty new store). */
  currentRevision(): Promise<number>;

  /** The highest revision compacted so far (0 when never compacted). */
  compactedRevision(): Promise<number>;

  /** Forget history below `revision`: later reads and watches below it fail with `compacted`. */
  compact(revision: number): Promise<void>;

  /** Bytes the store takes on disk: etcd's database size, or the embedded file with its write-ahead log. */
  sizeBytes(): Promise<number>;

  close(): Promise<void>;
}

export type StoreKind = 'etcd' | 'embedded';
