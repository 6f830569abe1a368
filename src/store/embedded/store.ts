/**
 * The embedded backend: the Store interface on one SQLite file (better-sqlite3), with etcd's
 * semantics and errors, so that `npm start` needs no etcd. One process owns the file.
 *
 * better-sqlite3 is synchronous and this store has the only connection that writes (a second one
 * only checkpoints the log, on a thread of its own: wal-checkpointer.ts), so each operation runs
 * to completion on the JS thread: a guarded write's check and its INSERT cannot interleave with
 * another write. Writes are committed in groups: the first write of an event-loop turn opens a
 * transaction, the writes of that turn join it, and it commits once the turn's I/O is handled
 * (a commit costs several page writes to the WAL, a row in a shared transaction a fraction of
 * that). A write is acknowledged, and its event published to watchers, only after its group
 * committed; a failed commit fails the whole group and assigns nothing. Reads commit the open
 * group first, so nothing uncommitted is ever read. Revisions are assigned in order in memory.
 */
import { EmbeddedLog, rowEvent, rowKeyValue, type LogRow } from './log';
import { WatchHub } from './watch';
import type { CheckpointerStats } from './wal-checkpointer';
import { prefixEndString, rangeStart, requestedRevision } from '../keys';
import {
  StoreError,
  type GetOptions,
  type GetResult,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Store,
  type StoreWatch,
  type WatchHandlers,
  type WatchOptions,
} from '../types';

export interface EmbeddedStoreOptions {
  /** Directory holding the database file (created if missing); absent: the database lives in memory. */
  dataDir?: string;
  /** Revisions a replaying watch reads per event-loop turn. Default 1000. */
  replayWindow?: number;
}

/** Writes waiting for their group's commit. */
interface Group {
  writes: Array<{ row: LogRow; resolve: (kv: KeyValue) => void; reject: (err: unknown) => void }>;
  /** The revision the group's last write was given. */
  last: number;
}

export class EmbeddedStore implements Store {
  readonly kind = 'embedded' as const;
  private readonly log: EmbeddedLog;
  private readonly hub: WatchHub;
  /** The committed revision: what reads and watchers see. */
  private revision: number;
  private group?: Group;
  private compacted: number;
  private closed = false;

  constructor(options: EmbeddedStoreOptions) {
    this.log = new EmbeddedLog(options.dataDir);
    this.revision = this.log.lastRevision();
    this.compacted = this.log.compactedRevision();
    this.hub = new WatchHub(
      {
        window: (from, to, start, end) => this.log.window(from, to, start, end),
        currentRevision: () => this.revision,
        compactedRevision: () => this.compacted,
      },
      options.replayWindow ?? 1000,
    );
  }

  async get(key: string, options: GetOptions = {}): Promise<GetResult> {
    this.assertOpen();
    this.flush();
    const revision = this.readRevision(options.revision, key);
    const row = this.log.row(key, revision);
    return { kv: row && row.deleted === 0 ? rowKeyValue(row) : undefined, revision };
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    this.assertOpen();
    this.flush();
    const revision = this.readRevision(options.revision, prefix);
    const start = rangeStart(prefix, options.startKey);
    const end = prefixEndString(prefix);
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : 0;
    // One row past the limit tells whether more remain; count only when the page is cut.
    const rows = this.log.list(start, end, revision, limit > 0 ? limit + 1 : 0);
    const more = limit > 0 && rows.length > limit;
    if (more) rows.length = limit;
    return {
      kvs: rows.map(rowKeyValue),
      revision,
      more,
      count: more ? this.log.count(start, end, revision) : rows.length,
    };
  }

  async count(prefix: string): Promise<number> {
    this.assertOpen();
    this.flush();
    return this.log.count(prefix, prefixEndString(prefix), this.revision);
  }

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    this.assertOpen();
    const current = this.log.row(key);
    if (current && current.deleted === 0) {
      throw new StoreError('exists', `key ${key} already exists`, { key, current: rowKeyValue(current) });
    }
    const id = this.lastAssigned() + 1;
    return this.commit({
      id,
      name: key,
      created: 1,
      deleted: 0,
      create_revision: id,
      prev_revision: current?.id ?? 0,
      value: toBuffer(value),
      old_value: null,
    });
  }

  async update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue> {
    this.assertOpen();
    const current = this.guard(key, expectedModRevision);
    return this.commit({
      id: this.lastAssigned() + 1,
      name: key,
      created: 0,
      deleted: 0,
      create_revision: current.create_revision,
      prev_revision: current.id,
      value: toBuffer(value),
      old_value: current.value,
    });
  }

  async delete(key: string, expectedModRevision?: number): Promise<{ prev: KeyValue; revision: number }> {
    this.assertOpen();
    const current = this.guard(key, expectedModRevision);
    const revision = this.lastAssigned() + 1;
    await this.commit({
      id: revision,
      name: key,
      created: 0,
      deleted: 1,
      create_revision: current.create_revision,
      prev_revision: current.id,
      value: null,
      old_value: current.value,
    });
    return { prev: rowKeyValue(current), revision };
  }

  watch(prefix: string, options: WatchOptions, handlers: WatchHandlers): StoreWatch {
    if (!this.closed) this.flush();
    const watch = this.hub.watch(prefix, requestedRevision(options.startRevision), handlers);
    if (this.closed) queueMicrotask(() => this.hub.failAll(new StoreError('unavailable', 'store is closed')));
    return watch;
  }

  async currentRevision(): Promise<number> {
    this.assertOpen();
    this.flush();
    return this.revision;
  }

  async compactedRevision(): Promise<number> {
    this.assertOpen();
    return this.compacted;
  }

  async sizeBytes(): Promise<number> {
    this.assertOpen();
    this.flush();
    return this.log.sizeBytes();
  }

  /**
   * Deletes every row superseded at or below `revision` plus tombstones at or below it, and
   * records the compacted revision. As on etcd, reads at `revision` itself still work. At or
   * below the already compacted revision it is a no-op (compaction is idempotent); above the
   * current revision it fails with `future-revision`.
   */
  async compact(revision: number): Promise<void> {
    this.assertOpen();
    this.flush();
    if (revision > this.revision) {
      throw new StoreError('future-revision', `cannot compact at ${revision}: current revision is ${this.revision}`, {
        revision: this.revision,
      });
    }
    if (revision <= this.compacted) return;
    this.log.compact(revision, this.compacted);
    this.compacted = revision;
  }

  /** How the write-ahead log's checkpoints went (wal-checkpointer.ts); undefined in memory. */
  checkpointStats(): CheckpointerStats | undefined {
    return this.log.checkpointStats();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.hub.failAll(new StoreError('unavailable', 'store is closed'));
    await this.log.close();
  }

  /** The revision of the last write, committed or in the open group. */
  private lastAssigned(): number {
    return this.group?.last ?? this.revision;
  }

  /** Appends the row to the open group (opening one); resolves once the group committed. */
  private commit(row: LogRow): Promise<KeyValue> {
    let group = this.group;
    if (!group) {
      try {
        this.log.begin();
      } catch (err) {
        return Promise.reject(storageFailure(err, row.name));
      }
      group = this.group = { writes: [], last: this.revision };
      setImmediate(() => this.flush());
    }
    try {
      this.log.append(row);
    } catch (err) {
      // A failed INSERT may have ended the transaction (disk full, I/O error): the group fails whole.
      this.abandon(group, err);
      return Promise.reject(storageFailure(err, row.name));
    }
    group.last = row.id;
    const joined = group;
    return new Promise<KeyValue>((resolve, reject) => joined.writes.push({ row, resolve, reject }));
  }

  /** Commit the open group: advance the revision, tell watchers, then acknowledge, in that order. */
  private flush(): void {
    const group = this.group;
    if (!group) return;
    try {
      this.log.commit();
    } catch (err) {
      this.abandon(group, err);
      return;
    }
    this.group = undefined;
    this.revision = group.last;
    for (const write of group.writes) this.hub.publish(rowEvent(write.row));
    for (const write of group.writes) write.resolve(rowKeyValue(write.row));
  }

  /** The group could not commit: nothing of it was written, and no revision was used. */
  private abandon(group: Group, err: unknown): void {
    this.group = undefined;
    try {
      this.log.rollback();
    } catch {
      // Already rolled back by SQLite.
    }
    for (const write of group.writes) write.reject(storageFailure(err, write.row.name));
  }

  /** The row a guarded update/delete acts on, or the not-found / conflict error etcd would give. */
  private guard(key: string, expectedModRevision: number | undefined): LogRow {
    const current = this.log.row(key);
    if (!current || current.deleted === 1) throw new StoreError('not-found', `key ${key} not found`, { key });
    if (expectedModRevision !== undefined && current.id !== expectedModRevision) {
      throw new StoreError('conflict', `key ${key} is at revision ${current.id}, not ${expectedModRevision}`, {
        key,
        current: rowKeyValue(current),
      });
    }
    return current;
  }

  /** The revision a read is served at, rejecting compacted and future ones as etcd does. */
  private readRevision(requested: number | undefined, key: string): number {
    const revision = requestedRevision(requested);
    if (revision === undefined) return this.revision;
    if (revision > this.revision) {
      throw new StoreError('future-revision', `revision ${revision} is newer than the current revision ${this.revision}`, {
        key,
        revision: this.revision,
      });
    }
    if (revision < this.compacted) {
      throw new StoreError('compacted', `revision ${revision} has been compacted (compacted revision ${this.compacted})`, {
        key,
        revision: this.compacted,
      });
    }
    return revision;
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError('unavailable', 'store is closed');
  }
}

/**
 * SQLite failures that mean "the storage cannot take writes now" (disk full, I/O error, file
 * locked or read-only) become `unavailable`, as a lost etcd would; anything else is a bug and
 * propagates as is.
 */
function storageFailure(err: unknown, key: string): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^SQLITE_(FULL|IOERR|BUSY|LOCKED|READONLY|CANTOPEN)/.test(code)) {
    return new StoreError('unavailable', `embedded store cannot write: ${(err as Error).message}`, { key });
  }
  return err;
}

function toBuffer(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

export function createEmbeddedStore(options: EmbeddedStoreOptions): Store {
  return new EmbeddedStore(options);
}
