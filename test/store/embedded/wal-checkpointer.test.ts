/**
 * The embedded store's write-ahead log is checkpointed on a thread of its own
 * (src/store/embedded/wal-checkpointer.ts): the log starts over instead of growing, what was written
 * stays readable, a failed thread hands checkpoints back to SQLite, and the data dir stays
 * owned by one process.
 */
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedStore } from '../../../src/store/embedded/store';
import { DATABASE_FILE } from '../../../src/store/embedded/log';
import { CHECKPOINT_AFTER_BYTES, WalCheckpointer } from '../../../src/store/embedded/wal-checkpointer';
import { eventually, type EventuallyOptions } from '../../support/eventually';

const ROOT = path.resolve(__dirname, '../../..');

/** The checkpoint thread answers by message: polled, with a generous deadline only against hanging. */
const THREAD: EventuallyOptions = { timeoutMs: 30_000, intervalMs: 5 };

describe('WAL checkpoints on their own thread', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keelson-wal-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  test('the log is checkpointed off the JS thread and starts over, and every write stays readable', async () => {
    const store = new EmbeddedStore({ dataDir });
    const value = Buffer.alloc(3000, 'x');
    let writes = 0;
    try {
      // Paced like a busy server (a group of 16 per timer turn): ~36 MB, and three rounds at least.
      while (writes < 12_000 || (store.checkpointStats()?.rounds ?? 0) < 3) {
        if (writes > 50_000) throw new Error(`no three rounds in ${writes} writes: ${JSON.stringify(store.checkpointStats())}`);
        await Promise.all(Array.from({ length: 16 }, (_, j) => store.create(`/registry/wal/k${writes + j}`, value)));
        writes += 16;
        await new Promise((resolve) => setTimeout(resolve, 1)); // the pacing is the point: a timer turn between groups, as a server's
      }
      const stats = store.checkpointStats()!;
      expect(stats.failed).toBeUndefined();
      expect(stats.workerCheckpoints).toBeGreaterThanOrEqual(stats.rounds);
      // Started over rather than grown: the log file stays a fraction of what was written.
      const wal = fs.statSync(path.join(dataDir, `${DATABASE_FILE}-wal`)).size;
      expect(wal).toBeLessThan((writes * value.length) / 2);
      expect(stats.rounds).toBeGreaterThanOrEqual(3);
      expect(wal).toBeLessThanOrEqual(4 * CHECKPOINT_AFTER_BYTES);
    } finally {
      await store.close();
    }
    // The store's connection closed last, so SQLite folded the log into the file and removed it.
    expect(fs.existsSync(path.join(dataDir, `${DATABASE_FILE}-wal`))).toBe(false);

    const reopened = new EmbeddedStore({ dataDir });
    try {
      const { kvs, revision } = await reopened.list('/registry/wal/', {});
      expect(revision).toBe(writes);
      expect(kvs).toHaveLength(writes);
      expect(kvs.every((kv) => Buffer.from(kv.value).equals(value))).toBe(true);
    } finally {
      await reopened.close();
    }
  });

  test('a round that ends while a write transaction is open is finished at its commit, and the log then starts over', async () => {
    const file = path.join(dataDir, 'db.sqlite');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    const checkpointer = new WalCheckpointer(db, file);
    try {
      db.exec('CREATE TABLE t (v BLOB)');
      const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
      const row = Buffer.alloc(3000, 'y');
      db.transaction(() => {
        for (let i = 0; i < 1500; i++) insert.run(row);
      })();
      checkpointer.committed(CHECKPOINT_AFTER_BYTES);
      // The worker checkpoints while this connection has a write transaction open.
      db.exec('BEGIN');
      insert.run(row);
      await eventually(() => checkpointer.stats().workerCheckpoints === 1, { ...THREAD, what: 'the worker to checkpoint' });
      expect(checkpointer.stats().rounds).toBe(0);
      db.exec('COMMIT');
      checkpointer.committed(4096);
      expect(checkpointer.stats().rounds).toBe(1);
      // The next write starts the log over: a checkpoint now finds only its own few frames.
      insert.run(row);
      const [{ log }] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>;
      expect(log).toBeGreaterThan(0);
      expect(log).toBeLessThan(20);
    } finally {
      await checkpointer.close();
      db.close();
    }
  });

  test('a checkpoint thread that cannot open the file hands checkpoints back to SQLite', async () => {
    const file = path.join(dataDir, 'db.sqlite');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    const warnings: string[] = [];
    const checkpointer = new WalCheckpointer(db, path.join(dataDir, 'missing', 'db.sqlite'), (message) => warnings.push(message));
    try {
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      // Halfway to a round the thread starts, and says at once that it cannot open the file.
      checkpointer.committed(CHECKPOINT_AFTER_BYTES / 2);
      await eventually(() => checkpointer.stats().failed !== undefined, { ...THREAD, what: 'the thread to fail' });
      expect(checkpointer.stats().failed).toMatch(/unable to open|directory/i);
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
      expect(warnings).toEqual([expect.stringMatching(/checkpoint thread failed .*SQLite checkpoints on the store's thread again/)]);
      // Later commits change nothing: SQLite checkpoints by itself again.
      checkpointer.committed(CHECKPOINT_AFTER_BYTES);
      expect(checkpointer.stats().workerCheckpoints).toBe(0);
    } finally {
      await checkpointer.close();
      db.close();
    }
  });

  test('close resolves in a process with nothing else to do once the thread is started', () => {
    // Unref'd for its life, the thread is held while it closes: otherwise such a process would
    // exit inside `await store.close()` and what follows it would never run.
    const script = `
      const { EmbeddedStore } = require('./src/store/embedded/store');
      (async () => {
        const store = new EmbeddedStore({ dataDir: ${JSON.stringify(dataDir)} });
        const value = Buffer.alloc(3000, 'x');
        for (let i = 0; i < 2000; i += 16) {
          await Promise.all(Array.from({ length: 16 }, (_, j) => store.create('/registry/c/k' + (i + j), value)));
        }
        await store.close();
        console.log('closed', store.checkpointStats() !== undefined);
      })();`;
    const child = spawnSync(process.execPath, ['-r', '@swc-node/register', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('closed true');
    expect(fs.existsSync(path.join(dataDir, `${DATABASE_FILE}-wal`))).toBe(false);
  });

  test('a second process cannot open a data dir that is open', async () => {
    const store = new EmbeddedStore({ dataDir });
    try {
      await store.create('/registry/a', Buffer.from('x'));
      const script = `require('./src/store').createStore({ kind: 'embedded', dataDir: ${JSON.stringify(dataDir)} })`;
      const other = spawnSync(process.execPath, ['-r', '@swc-node/register', '-e', script], { cwd: ROOT, encoding: 'utf8' });
      expect(other.status).not.toBe(0);
      expect(other.stderr).toMatch(/in use by another process/);
    } finally {
      await store.close();
    }
    // Closed: the next open, here, takes it.
    const again = new EmbeddedStore({ dataDir });
    try {
      expect((await again.get('/registry/a')).kv?.value).toEqual(Buffer.from('x'));
    } finally {
      await again.close();
    }
  });
});
