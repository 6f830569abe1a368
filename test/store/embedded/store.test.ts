/**
 * Embedded-only behaviour beyond the conformance suite: one process owns the file, a
 * reopened store resumes its revision and compaction state exactly, and writes are committed
 * in groups (one transaction per event-loop turn) without anything uncommitted being seen.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createStore } from '../../../src/store';
import { DATABASE_FILE } from '../../../src/store/embedded/log';
import { dec, enc, storeError } from '../store-test-helpers';
import type { StoreEvent } from '../../../src/store';

describe('embedded store specifics', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-embedded-'));
  });
  afterEach(() => fs.rm(dataDir, { recursive: true, force: true }));

  test('a second open of the same data dir fails while the first is open', async () => {
    const first = createStore({ kind: 'embedded', dataDir });
    try {
      expect(() => createStore({ kind: 'embedded', dataDir })).toThrow(/in use by another process/);
    } finally {
      await first.close();
    }
    await createStore({ kind: 'embedded', dataDir }).close();
  });

  test('a database held by a server of the older layout (locked itself, no lock file) is reported in use', async () => {
    const holder = new Database(path.join(dataDir, DATABASE_FILE), { timeout: 0 });
    holder.pragma('locking_mode = EXCLUSIVE');
    holder.pragma('journal_mode = WAL');
    holder.exec('BEGIN IMMEDIATE; COMMIT');
    try {
      expect(() => createStore({ kind: 'embedded', dataDir })).toThrow(/in use by another process/);
    } finally {
      holder.close();
    }
    // The failed open let go of the lock file too.
    await createStore({ kind: 'embedded', dataDir }).close();
  });

  test('reopening resumes the revision even when compaction removed the newest row', async () => {
    const store = createStore({ kind: 'embedded', dataDir });
    const kv = await store.create('/registry/a', enc('x'));
    const { revision: deletedAt } = await store.delete(kv.key);
    // Compacting at the tombstone's revision removes that row, the newest in the log.
    await store.compact(deletedAt);
    await store.close();

    const reopened = createStore({ kind: 'embedded', dataDir });
    try {
      expect(await reopened.currentRevision()).toBe(deletedAt);
      expect(await reopened.compactedRevision()).toBe(deletedAt);
      expect((await storeError(reopened.get(kv.key, { revision: kv.modRevision }))).code).toBe('compacted');
      expect((await reopened.create(kv.key, enc('y'))).modRevision).toBe(deletedAt + 1);
    } finally {
      await reopened.close();
    }
  });

  test("one turn's writes commit together: in order, acknowledged and published only once committed", async () => {
    const store = createStore({ kind: 'embedded', dataDir });
    try {
      const start = await store.currentRevision();
      const events: StoreEvent[] = [];
      const watch = store.watch('/registry/', { startRevision: start + 1 }, { onEvents: (batch) => events.push(...batch), onError: () => {} });
      const writes = Array.from({ length: 50 }, (_, i) => store.create(`/registry/g${String(i).padStart(2, '0')}`, enc(`v${i}`)));
      let acknowledged = 0;
      for (const w of writes) void w.then(() => acknowledged++);
      // Nothing is acknowledged or published before the group commits.
      await Promise.resolve();
      expect(acknowledged).toBe(0);
      expect(events).toHaveLength(0);
      const kvs = await Promise.all(writes);
      expect(kvs.map((kv) => kv.modRevision)).toEqual(kvs.map((_, i) => start + 1 + i));
      await new Promise((r) => setImmediate(r));
      expect(events.map((e) => e.revision)).toEqual(kvs.map((kv) => kv.modRevision));
      watch.cancel();
    } finally {
      await store.close();
    }
  });

  test('a read commits the open group first, so a write is readable as soon as it was made', async () => {
    const store = createStore({ kind: 'embedded', dataDir });
    try {
      const created = store.create('/registry/r1', enc('one'));
      const updated = created.then((kv) => store.update(kv.key, enc('two'), kv.modRevision));
      const read = await store.get('/registry/r1');
      expect(dec(read.kv?.value)).toBe('one');
      await updated;
      expect(dec((await store.get('/registry/r1')).kv?.value)).toBe('two');
      // Guards see the group's own writes: a second create of the same key in the same turn fails.
      const again = [store.create('/registry/r2', enc('a')), store.create('/registry/r2', enc('b'))];
      expect((await storeError(again[1]!)).code).toBe('exists');
      expect(dec((await again[0]!).value)).toBe('a');
    } finally {
      await store.close();
    }
  });

  test('a group that cannot be written (disk full) fails whole: no revision used, nothing readable, nothing published', async () => {
    const store = createStore({ kind: 'embedded', dataDir });
    try {
      await store.create('/registry/before', enc('x'));
      const start = await store.currentRevision();
      const events: StoreEvent[] = [];
      const watch = store.watch('/registry/', { startRevision: start + 1 }, { onEvents: (batch) => events.push(...batch), onError: () => {} });
      // A real SQLITE_FULL: the database may not grow past the pages it has.
      const db = (store as unknown as { log: { db: { pragma(text: string, options?: object): unknown } } }).log.db;
      const pages = db.pragma('page_count', { simple: true }) as number;
      db.pragma(`max_page_count = ${pages}`);
      const big = Buffer.alloc(64 * 1024, 'x');
      const writes = Array.from({ length: 8 }, (_, i) => store.create(`/registry/full${i}`, big));
      const outcomes = await Promise.allSettled(writes);
      expect(outcomes.every((o) => o.status === 'rejected')).toBe(true);
      for (const o of outcomes) expect(((o as PromiseRejectedResult).reason as { code?: string }).code).toBe('unavailable');
      expect(await store.currentRevision()).toBe(start);
      expect((await store.list('/registry/full')).kvs).toHaveLength(0);
      db.pragma('max_page_count = 1073741823');
      const next = await store.create('/registry/after', enc('y'));
      expect(next.modRevision).toBe(start + 1);
      await new Promise((r) => setImmediate(r));
      expect(events.map((e) => e.kv.key)).toEqual(['/registry/after']);
      watch.cancel();
    } finally {
      await store.close();
    }
  });
});
