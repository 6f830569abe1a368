/**
 * etcd's CPU per update while one whole-keyspace store watch follows, asking for previous values
 * or not (the watch cache asks for none). Three rounds of 20,000 updates by 64 writers each way:
 *   node -r @swc-node/register tools/bench/watch-prevkv.ts
 */
import { startEtcd } from '../../test/support/etcd';
import { createStore } from '../../src/store';
import { findPid, processCpuUs } from './proc-stats';

async function round(store: ReturnType<typeof createStore>, etcdPid: number, prevKv: boolean, n: number, value: Uint8Array) {
  let seen = 0;
  const w = store.watch('/bench/', { prevKv }, { onEvents: (e) => (seen += e.length), onError: () => undefined });
  await new Promise((r) => setTimeout(r, 200));
  const keys = Array.from({ length: 64 }, (_, i) => `/bench/k${i}`);
  const revs = new Map<string, number>();
  for (const k of keys) revs.set(k, (await store.get(k)).kv?.modRevision ?? (await store.create(k, value)).modRevision);
  const before = processCpuUs(etcdPid)!;
  let done = 0;
  await Promise.all(
    keys.map(async (k) => {
      while (done < n) {
        done++;
        const kv = await store.update(k, value, revs.get(k)!);
        revs.set(k, kv.modRevision);
      }
    }),
  );
  await new Promise((r) => setTimeout(r, 300));
  const cpu = processCpuUs(etcdPid)! - before;
  w.cancel();
  return { prevKv, etcdCpuUsPerUpdate: Math.round(cpu / n), seen };
}

void (async () => {
  const etcd = await startEtcd();
  const store = createStore({ kind: 'etcd', endpoints: [etcd.endpoint] });
  const etcdPid = findPid(`--data-dir ${etcd.dataDir}`)!;
  const value = new Uint8Array(2800).fill(65);
  try {
    for (let i = 0; i < 3; i++) for (const p of [true, false]) console.log(JSON.stringify(await round(store, etcdPid, p, 20000, value)));
  } finally {
    await store.close();
    await etcd.stop();
  }
})();
