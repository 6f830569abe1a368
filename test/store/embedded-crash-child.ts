/**
 * Child process for embedded-crash.test.ts: opens the embedded store and writes until killed,
 * printing one line per acknowledged write (stdout to a pipe is synchronous on Linux, so a
 * printed line means the write had returned to its caller before the next one started).
 *
 *   node -r @swc-node/register embedded-crash-child.ts <dataDir> <firstIndex>
 *
 * Lines: `ready <revision>`, `create <index> <revision>`, `counter <index> <revision>`.
 */
import { createStore, type KeyValue } from '../../src/store';

async function main(): Promise<void> {
  const [dataDir, firstIndex] = process.argv.slice(2);
  const store = createStore({ kind: 'embedded', dataDir });
  const counterKey = '/registry/crash/counter';
  let counter: KeyValue | undefined = (await store.get(counterKey)).kv;
  process.stdout.write(`ready ${await store.currentRevision()}\n`);
  for (let i = Number(firstIndex); ; i++) {
    const kv = await store.create(`/registry/crash/k${i}`, Buffer.from(`v${i}`));
    process.stdout.write(`create ${i} ${kv.modRevision}\n`);
    counter = counter
      ? await store.update(counterKey, Buffer.from(String(i)), counter.modRevision)
      : await store.create(counterKey, Buffer.from(String(i)));
    process.stdout.write(`counter ${i} ${counter.modRevision}\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
