/**
 * The embedded backend: the Store interface on one SQLite file (store.ts), a kine-style log
 * (log.ts), its watchers (watch.ts) and the log's checkpoints on a worker thread
 * (wal-checkpointer.ts).
 */
export { EmbeddedStore, createEmbeddedStore, type EmbeddedStoreOptions } from './store';
export { DATABASE_FILE } from './log';
