/**
 * The server as `npm start` runs it: the compiled tree tools/build.js keeps (built here when
 * the sources changed since the last build, ~10 s). For tests of what runs only compiled, such
 * as the etcd client's worker thread (a worker cannot load the TypeScript sources).
 */
import path from 'node:path';

const { ensureBuilt } = require('../../tools/build.js') as { ensureBuilt(): string };

let built: string | undefined;

/** The compiled counterpart of a source file, e.g. `src/store/etcd-client-worker` → `<build>/src/store/etcd-client-worker.js`. */
export function compiledFile(source: string): string {
  built ??= ensureBuilt();
  return path.join(built, `${source}.js`);
}

/** The compiled entry of the etcd client's worker thread (etcd-client-thread.ts). */
export const etcdClientWorker = (): string => compiledFile('src/store/etcd-client-worker');
