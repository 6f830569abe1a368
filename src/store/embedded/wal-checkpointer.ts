/**
 * Checkpoints of the embedded store's write-ahead log, run on a thread of their own.
 *
 * SQLite's automatic checkpoint runs inside the COMMIT that takes the log past 1,000 pages: it
 * syncs the log, copies its pages into the database file and syncs that, ~13 ms for 4 MB on
 * this project's machines. On the JS thread that is every request stalled for the time, and
 * about half of what the store's writes cost the thread (docs/BENCHMARKS.md, "What the
 * mechanisms save").
 *
 * Here the store's connection has automatic checkpoints off, and a worker thread with a second
 * connection to the same file runs passive checkpoints, which copy pages while the store keeps
 * committing. A checkpoint that has copied every page lets the next write transaction start the
 * log over from its beginning; one that ran while writes went on leaves the pages written
 * meanwhile. So a round repeats on the worker until few were (the checkpoints converge: they
 * copy pages far faster than requests write them), and the store's own connection copies the
 * last few between two of its transactions, which is what lets the log restart instead of
 * growing.
 *
 * Should the worker fail, the store's connection goes back to SQLite's automatic checkpoints.
 */
import type Database from 'better-sqlite3';
import { Worker } from 'node:worker_threads';

/** Bytes written to the log, roughly, before a round starts (SQLite's own default is 1,000 pages of 4 KiB). */
export const CHECKPOINT_AFTER_BYTES = 4 * 1024 * 1024;
/** A round repeats on the worker while more than this was written during its last checkpoint. */
const REPEAT_ABOVE_BYTES = 256 * 1024;
/** ... but at most this many times before the store's connection copies the rest itself. */
const MAX_WORKER_CHECKPOINTS = 4;
/** The log file's size kept once it starts over. */
const KEPT_LOG_BYTES = 4 * CHECKPOINT_AFTER_BYTES;
/** SQLite's default `wal_autocheckpoint`, restored if the worker fails. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

/**
 * The worker: plain JavaScript run from a string, so that it needs no TypeScript loader whether
 * the server runs from its sources or from the build; it only opens the file and checkpoints.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
let db;
try {
  db = new Database(workerData.file, { timeout: 0 });
  db.pragma('synchronous = NORMAL');
  // A checkpoint copies pages from the log to the file: it needs no page cache of its own.
  db.pragma('cache_size = -64');
} catch (err) {
  parentPort.postMessage({ error: String(err && err.message || err) });
}
parentPort.on('message', (message) => {
  if (message === 'close') {
    try { if (db) db.close(); } catch {}
    parentPort.close();
    return;
  }
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ log: result.log, checkpointed: result.checkpointed });
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err) });
  }
});
`;

interface WorkerAnswer {
  log?: number;
  checkpointed?: number;
  error?: string;
}

export interface CheckpointerStats {
  /** Checkpoints the worker ran. */
  readonly workerCheckpoints: number;
  /** Rounds finished by the store's own connection (each lets the log start over). */
  readonly rounds: number;
  /** Why the worker is no longer used, if it failed. */
  readonly failed?: string;
}

export class WalCheckpointer {
  private worker?: Worker;
  /** Bytes written since the current round started (or since the last one ended, when idle). */
  private written = 0;
  /** Bytes written since the worker's checkpoint in flight was asked for. */
  private writtenDuringCheckpoint = 0;
  private state: 'idle' | 'checkpointing' | 'finish-due' | 'failed' | 'closed' = 'idle';
  private checkpointsThisRound = 0;
  private workerCheckpoints = 0;
  private rounds = 0;
  private failure?: string;
  private exited?: Promise<void>;

  /**
   * `db` is the store's connection to `file` (its automatic checkpoints are turned off here).
   * While it has a write transaction open it cannot checkpoint: the last step of a round then
   * waits for the next commit.
   */
  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
    /** Told why the thread is no longer used (default: a process warning). */
    private readonly warn: (message: string) => void = (message) => process.emitWarning(message),
  ) {
    db.pragma('wal_autocheckpoint = 0');
    // A log that started over keeps its file's size; one that grew past this while a round
    // converged is cut back to it then.
    db.pragma(`journal_size_limit = ${KEPT_LOG_BYTES}`);
  }

  /**
   * The store committed about `bytes` to the log, and has no transaction open: a round may
   * start, or the last step of one be taken now.
   */
  committed(bytes: number): void {
    this.written += bytes;
    this.writtenDuringCheckpoint += bytes;
    if (this.state === 'finish-due') this.finish();
    else if (this.state !== 'idle') return;
    else if (this.written >= CHECKPOINT_AFTER_BYTES) this.checkpointOnWorker();
    // The thread takes ~0.1 s to start: started halfway to the first round, it is there for it.
    else if (!this.worker && this.written >= CHECKPOINT_AFTER_BYTES / 2) this.startWorker();
  }

  stats(): CheckpointerStats {
    return { workerCheckpoints: this.workerCheckpoints, rounds: this.rounds, ...(this.failure ? { failed: this.failure } : {}) };
  }

  /** Ends the worker (its connection closed first); resolves once the thread is gone. */
  close(): Promise<void> {
    if (this.state !== 'failed') this.state = 'closed';
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    this.worker = undefined;
    // Held by the thread until it is gone: unref'd, a process with nothing else to do would exit
    // before the close resolved, and the caller's steps after it would never run.
    worker.ref();
    worker.postMessage('close');
    return this.exited ?? Promise.resolve();
  }

  private checkpointOnWorker(): void {
    const worker = this.worker ?? this.startWorker();
    if (!worker) return;
    if (this.state === 'idle') this.checkpointsThisRound = 0;
    this.state = 'checkpointing';
    this.writtenDuringCheckpoint = 0;
    this.checkpointsThisRound++;
    worker.postMessage('checkpoint');
  }

  private startWorker(): Worker | undefined {
    try {
      // No inherited `-r` loaders (the server's TypeScript register): the source is plain JS.
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        execArgv: [],
        // It runs a pragma now and then: a small heap is plenty (~13 MB of RSS with V8's defaults).
        resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
        workerData: { file: this.file, module: require.resolve('better-sqlite3') },
      });
      worker.unref();
      worker.on('message', (answer: WorkerAnswer) => this.answered(answer));
      worker.on('error', (err) => this.fail(err.message));
      this.exited = new Promise((resolve) =>
        worker.once('exit', (code) => {
          // Not asked to (close and fail let go of it first): the thread died.
          if (this.worker === worker) this.fail(`the checkpoint thread exited with code ${code}`);
          resolve();
        }),
      );
      this.worker = worker;
      return worker;
    } catch (err) {
      this.fail((err as Error).message);
      return undefined;
    }
  }

  private answered(answer: WorkerAnswer): void {
    // A failure to open is told as soon as the thread starts, before any round.
    if (answer.error !== undefined) return this.fail(answer.error);
    if (this.state !== 'checkpointing') return;
    this.workerCheckpoints++;
    if (this.writtenDuringCheckpoint > REPEAT_ABOVE_BYTES && this.checkpointsThisRound < MAX_WORKER_CHECKPOINTS) {
      this.checkpointOnWorker();
      return;
    }
    if (this.db.inTransaction) this.state = 'finish-due';
    else this.finish();
  }

  /** The store's connection copies what the worker's last checkpoint did not see; the next write starts the log over. */
  private finish(): void {
    this.state = 'idle';
    this.rounds++;
    this.written = 0;
    if (this.writtenDuringCheckpoint === 0) return;
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy or failing I/O: the next round tries again, and writes report I/O failures themselves.
    }
  }

  /** The worker is gone or failing: SQLite's own checkpoints take over on the store's connection. */
  private fail(reason: string): void {
    if (this.state === 'failed' || this.state === 'closed') return;
    this.state = 'failed';
    this.failure = reason;
    this.warn(`embedded store: the WAL checkpoint thread failed (${reason}); SQLite checkpoints on the store's thread again`);
    const worker = this.worker;
    this.worker = undefined;
    if (worker) void worker.terminate();
    try {
      if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    } catch {
      // The store's connection is closing; nothing to restore.
    }
  }
}
