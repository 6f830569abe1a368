/**
 * The embedded store's on-disk layout, in the spirit of k3s' kine: one append-only log table in
 * which every row is one revision (`id` = revision). "The value of a key at revision R" is the
 * row with the highest id <= R for that name; a row with `deleted` set is a tombstone. Each row
 * also keeps the previous value (`old_value`, `prev_revision`), so a watch replays prevKv
 * without looking at older rows, which compaction may have removed.
 *
 * This module owns SQL only: prepared statements and row mapping. Store semantics (guards,
 * errors, revision checks) live in store.ts.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import type { KeyValue, StoreEvent } from '../types';
import { CHECKPOINT_AFTER_BYTES, WalCheckpointer, type CheckpointerStats } from './wal-checkpointer';

export interface LogRow {
  id: number;
  name: string;
  created: number;
  deleted: number;
  create_revision: number;
  prev_revision: number;
  value: Buffer | null;
  old_value: Buffer | null;
}

export const DATABASE_FILE = 'keelson.db';
/** Held locked while a store has the data dir open (see takeLock). */
export const LOCK_FILE = 'keelson.lock';

/** Per row, beyond its name and values: the row's header and its index entry's. */
const ROW_OVERHEAD_BYTES = 64;
/** Per commit: the table's and the index's pages it rewrites at least, and the WAL frame headers. */
const COMMIT_PAGES_BYTES = 2 * 4096;

/**
 * One process owns a data dir (watches are pushed in process, so a second writer would go
 * unseen): a small SQLite file next to the database is opened in exclusive locking mode and
 * written once, which keeps it locked until closed, or until the process is gone. A second open,
 * in this process or another, fails. The database itself is opened in normal locking mode, so
 * that the checkpoint thread's connection can open it too.
 */
function takeLock(dataDir: string): Database.Database {
  const lock = new Database(path.join(dataDir, LOCK_FILE), { timeout: 0 });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE; COMMIT');
    return lock;
  } catch (err) {
    lock.close();
    throw isBusy(err) ? inUse(dataDir) : err;
  }
}

/** SQLITE_BUSY, duck-typed: errors from the native addon need not share this realm's Error (e.g. in Jest). */
function isBusy(err: unknown): boolean {
  const { message, code } = (err ?? {}) as { message?: unknown; code?: unknown };
  return /database is locked|SQLITE_BUSY/i.test(`${String(message)} ${String(code)}`);
}

function inUse(dataDir: string | undefined): Error {
  return new Error(`embedded store ${dataDir} is in use by another process`);
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    created INTEGER NOT NULL,
    deleted INTEGER NOT NULL,
    create_revision INTEGER NOT NULL,
    prev_revision INTEGER NOT NULL,
    value BLOB,
    old_value BLOB
  );
  CREATE INDEX IF NOT EXISTS log_name_id ON log (name, id);
  CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
`;

/**
 * Any TEXT sorts below any BLOB in SQLite, so an empty BLOB is an upper bound above every name:
 * it stands for "no end" in `name < ?` when the prefix has no successor (the empty prefix).
 */
const END_OF_KEYSPACE = Buffer.alloc(0);

const ROW_COLUMNS = 'id, name, created, deleted, create_revision, prev_revision, value, old_value';

export class EmbeddedLog {
  private readonly db: Database.Database;
  private readonly latestStmt: Database.Statement<[string], LogRow>;
  private readonly atRevisionStmt: Database.Statement<[string, number], LogRow>;
  private readonly insertStmt: Database.Statement<[number, string, number, number, number, number, Buffer | null, Buffer | null]>;
  private readonly listStmt: Database.Statement<[string, string | Buffer, number, number], LogRow>;
  private readonly countStmt: Database.Statement<[string, string | Buffer, number], number>;
  private readonly windowStmt: Database.Statement<[number, number, string, string | Buffer], LogRow>;
  private readonly beginStmt: Database.Statement<[]>;
  private readonly commitStmt: Database.Statement<[]>;
  private readonly rollbackStmt: Database.Statement<[]>;
  private readonly setMetaStmt: Database.Statement<[string, number]>;
  private readonly getMetaStmt: Database.Statement<[string], number>;
  private readonly compactTxn: (revision: number, previous: number) => void;
  /** The data dir's lock (see takeLock); none for an in-memory database. */
  private readonly lock?: Database.Database;
  /** Checkpoints the log off the JS thread (file databases only). */
  private readonly checkpointer?: WalCheckpointer;
  /** Roughly what the open transaction's appends add to the log, in bytes. */
  private appended = 0;

  /** `dataDir` undefined: an in-memory database (gone when closed), for servers embedded in tests. */
  constructor(dataDir: string | undefined) {
    if (dataDir !== undefined) {
      fs.mkdirSync(dataDir, { recursive: true });
      this.lock = takeLock(dataDir);
    }
    const file = dataDir === undefined ? ':memory:' : path.join(dataDir, DATABASE_FILE);
    this.db = new Database(file, { timeout: 0 });
    try {
      this.configure();
      if (dataDir !== undefined) this.checkpointer = new WalCheckpointer(this.db, file);
    } catch (err) {
      this.db.close();
      this.lock?.close();
      // A server of an older layout (no lock file, the database itself locked exclusively) has it.
      throw isBusy(err) ? inUse(dataDir) : err;
    }
    const db = this.db;
    this.latestStmt = db.prepare(`SELECT ${ROW_COLUMNS} FROM log WHERE name = ? ORDER BY id DESC LIMIT 1`);
    this.atRevisionStmt = db.prepare(`SELECT ${ROW_COLUMNS} FROM log WHERE name = ? AND id <= ? ORDER BY id DESC LIMIT 1`);
    this.insertStmt = db.prepare(`INSERT INTO log (${ROW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    // Live keys at a revision: walk the (name, id) index in name order and keep, per name, the
    // row that is its newest at or below the revision. The walk is already in ORDER BY order,
    // so LIMIT stops it early (no sort of the whole range, which paging would pay per page).
    this.listStmt = db.prepare(
      `SELECT ${ROW_COLUMNS.split(', ')
        .map((c) => `l.${c}`)
        .join(', ')} FROM log l
       WHERE l.name >= ? AND l.name < ? AND l.deleted = 0
         AND l.id = (SELECT MAX(id) FROM log WHERE name = l.name AND id <= ?)
       ORDER BY l.name LIMIT ?`,
    );
    const latestPerName = `SELECT MAX(id) AS id FROM log WHERE name >= ? AND name < ? AND id <= ? GROUP BY name`;
    this.countStmt = db
      .prepare<[string, string | Buffer, number], number>(`SELECT COUNT(*) FROM (${latestPerName}) m JOIN log l ON l.id = m.id WHERE l.deleted = 0`)
      .pluck();
    this.windowStmt = db.prepare(`SELECT ${ROW_COLUMNS} FROM log WHERE id >= ? AND id < ? AND name >= ? AND name < ? ORDER BY id`);
    this.beginStmt = db.prepare('BEGIN');
    this.commitStmt = db.prepare('COMMIT');
    this.rollbackStmt = db.prepare('ROLLBACK');
    this.setMetaStmt = db.prepare(`INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`);
    this.getMetaStmt = db.prepare<[string], number>(`SELECT value FROM meta WHERE name = ?`).pluck();
    const deleteSuperseded = db.prepare<[number, number]>(
      // A row is superseded at or below R when a later row for the same name, itself <= R,
      // points back at it. Only rows written since the previous compaction can newly supersede.
      `DELETE FROM log WHERE id IN (SELECT prev_revision FROM log WHERE id > ? AND id <= ? AND prev_revision > 0)`,
    );
    const deleteTombstones = db.prepare<[number, number]>(`DELETE FROM log WHERE id > ? AND id <= ? AND deleted = 1`);
    this.compactTxn = db.transaction((revision: number, previous: number) => {
      deleteSuperseded.run(previous, revision);
      // Tombstones go last: their prev_revision pointers were needed above. Without its
      // tombstone a key deleted at or below R simply has no row <= R, i.e. it is absent at R.
      deleteTombstones.run(previous, revision);
      this.setMetaStmt.run('compact_revision', revision);
    });
  }

  private configure(): void {
    const db = this.db;
    db.pragma('journal_mode = WAL');
    // synchronous = NORMAL: in WAL mode a commit is complete once its frames are written to the
    // WAL file, which happens before the write call returns; only the fsync is deferred to
    // checkpoints. A killed process (kill -9) loses nothing acknowledged, since the data is in
    // the OS page cache and the next open replays the WAL; only an OS crash or power loss can
    // drop the last commits (never corrupting the file). FULL would fsync the WAL on every
    // commit and survive power loss too, at a per-write disk flush: the embedded store is the
    // single-machine, try-it-now backend (production runs on etcd), so we take process-crash
    // durability and keep writes fast. See embedded-crash.test.ts.
    db.pragma('synchronous = NORMAL');
    db.exec(SCHEMA);
  }

  /** The newest row for `name` at or below `revision` (latest when undefined), tombstones included. */
  row(name: string, revision?: number): LogRow | undefined {
    return revision === undefined ? this.latestStmt.get(name) : this.atRevisionStmt.get(name, revision);
  }

  /** Open a transaction that the following appends join (the store's group commit). */
  begin(): void {
    this.beginStmt.run();
  }

  /** Make the open transaction's appends durable (see `configure` for how durable). */
  commit(): void {
    this.commitStmt.run();
    this.committed();
  }

  /** Drop the open transaction's appends, if it is still open (SQLite ends it itself on some errors). */
  rollback(): void {
    this.appended = 0;
    if (this.db.inTransaction) this.rollbackStmt.run();
  }

  /** Appends one row to the transaction `begin` opened (the store's group); `commit` makes it durable. */
  append(row: LogRow): void {
    this.insertStmt.run(row.id, row.name, row.created, row.deleted, row.create_revision, row.prev_revision, row.value, row.old_value);
    // The row's bytes and the index entry's, about; the pages a commit rewrites are added there.
    this.appended += ROW_OVERHEAD_BYTES + row.name.length * 2 + (row.value?.length ?? 0) + (row.old_value?.length ?? 0);
  }

  /** A transaction committed: tell the checkpointer about what it added to the log. */
  private committed(): void {
    const bytes = this.appended + COMMIT_PAGES_BYTES;
    this.appended = 0;
    this.checkpointer?.committed(bytes);
  }

  /** Live keys in [start, end) at `revision`, in name order; `end` undefined = to the end of the keyspace. */
  list(start: string, end: string | undefined, revision: number, limit: number): LogRow[] {
    return this.listStmt.all(start, end ?? END_OF_KEYSPACE, revision, limit > 0 ? limit : -1);
  }

  count(start: string, end: string | undefined, revision: number): number {
    return this.countStmt.get(start, end ?? END_OF_KEYSPACE, revision) ?? 0;
  }

  /** Rows with from <= id < to and a name in [start, end), in revision order. */
  window(from: number, to: number, start: string, end: string | undefined): LogRow[] {
    return this.windowStmt.all(from, to, start, end ?? END_OF_KEYSPACE);
  }

  /** The highest revision ever assigned (AUTOINCREMENT's counter survives deleting the newest row). */
  lastRevision(): number {
    const seq = this.db.prepare<[], number>(`SELECT seq FROM sqlite_sequence WHERE name = 'log'`).pluck().get();
    const max = this.db.prepare<[], number | null>(`SELECT MAX(id) FROM log`).pluck().get();
    return Math.max(seq ?? 0, max ?? 0);
  }

  compactedRevision(): number {
    return this.getMetaStmt.get('compact_revision') ?? 0;
  }

  /** Drops history below `revision` in one transaction and records it as compacted. */
  compact(revision: number, previous: number): void {
    this.compactTxn(revision, previous);
    // Deleting history rewrites pages all over the table and its index: checkpoint soon after.
    this.checkpointer?.committed(CHECKPOINT_AFTER_BYTES);
  }

  /** The database file with its write-ahead log (and shared-memory index), in bytes. */
  sizeBytes(): number {
    if (this.db.memory) return (this.db.pragma('page_count', { simple: true }) as number) * (this.db.pragma('page_size', { simple: true }) as number);
    let total = 0;
    for (const suffix of ['', '-wal', '-shm']) {
      try {
        total += fs.statSync(`${this.db.name}${suffix}`).size;
      } catch {
        // Not there (no WAL yet): nothing to count.
      }
    }
    return total;
  }

  /** The checkpoint thread ends first, so that this connection is the file's last and its close folds the WAL in. */
  async close(): Promise<void> {
    await this.checkpointer?.close();
    this.db.close();
    this.lock?.close();
  }

  /** How the log's checkpoints went (file databases only). */
  checkpointStats(): CheckpointerStats | undefined {
    return this.checkpointer?.stats();
  }
}

/** The key's value as stored by this row (a put). */
export function rowKeyValue(row: LogRow): KeyValue {
  return { key: row.name, value: row.value ?? EMPTY, createRevision: row.create_revision, modRevision: row.id };
}

const EMPTY = new Uint8Array(0);

/** The watch event a row records. */
export function rowEvent(row: LogRow): StoreEvent {
  const prevKv: KeyValue | undefined =
    row.created === 1 ? undefined : { key: row.name, value: row.old_value ?? EMPTY, createRevision: row.create_revision, modRevision: row.prev_revision };
  if (row.deleted === 1) {
    // As etcd reports a delete: the key, no value, create revision 0, the deletion's revision.
    return { type: 'delete', kv: { key: row.name, value: EMPTY, createRevision: 0, modRevision: row.id }, prevKv, revision: row.id };
  }
  return { type: 'put', kv: rowKeyValue(row), prevKv, revision: row.id };
}
