/**
 * Child process for crash.test.ts: opens the embedded store and writes until killed,
 * printing one line per acknowledged write. Lines go out with a blocking `writeSync` on fd 1,
 * not `process.stdout`: this loop never yields to the event loop, and a pipe write that
 * process.stdout had to queue (pipe full) would never be flushed. So a printed line means the
 * write had returned to its caller before the next one started.
 *
 *   node -r @swc-node/register crash-child.ts <dataDir> <firstIndex>
 *
 * Lines: `ready <revision>`, `create <index> <revision>`, `counter <index> <revision>`.
 */
import fs from 'node:fs';
import { createStore, type KeyValue } from '../../../src/store';

function print(line: string): void {
  const bytes = Buffer.from(`${line}\n`);
  for (let offset = 0; offset < bytes.length; ) {
    try {
      offset += fs.writeSync(1, bytes, offset);
    } catch (err) {
      // A non-blocking pipe that is full: wait for the reader (the test) to drain it.
      if ((err as { code?: string }).code !== 'EAGAIN') throw err;
    }
  }
}

async function main(): Promise<void> {
  const [dataDir, firstIndex] = process.argv.slice(2);
  const store = createStore({ kind: 'embedded', dataDir });
  const counterKey = '/registry/crash/counter';
  let counter: KeyValue | undefined = (await store.get(counterKey)).kv;
  print(`ready ${await store.currentRevision()}`);
  for (let i = Number(firstIndex); ; i++) {
    const kv = await store.create(`/registry/crash/k${i}`, Buffer.from(`v${i}`));
    print(`create ${i} ${kv.modRevision}`);
    counter = counter ? await store.update(counterKey, Buffer.from(String(i)), counter.modRevision) : await store.create(counterKey, Buffer.from(String(i)));
    print(`counter ${i} ${counter.modRevision}`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
