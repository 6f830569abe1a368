/**
 * etcd's own CPU for the two ways of writing a new key: a plain Put (the bench's raw reference)
 * and the guarded create every API server sends (a Txn: put if the key's create revision is 0),
 * with and without one store watch following the keys (an API server's watch cache has one).
 * Both through the etcd3 client, 64 writers, rounds taking turns; etcd's CPU from /proc:
 *
 *   node -r @swc-node/register tools/bench/etcd-create-cost.ts [--writes 20000] [--rounds 2]
 *
 * The etcd binary is `etcd` from PATH or `$ETCD_BIN` (test/support/etcd.ts), so two etcd
 * versions are compared by running it twice.
 */
import { Etcd3 } from 'etcd3';
import { startEtcd } from '../../test/support/etcd';
import { createStore } from '../../src/store';
import { findPid, processCpuUs } from './proc-stats';
import { toolArguments } from './ab';

type Shape = 'put' | 'guarded create';

async function round(client: Etcd3, endpoint: string, etcdPid: number, shape: Shape, watched: boolean, writes: number, value: Buffer, run: number) {
  const store = watched ? createStore({ kind: 'etcd', endpoints: [endpoint] }) : undefined;
  let seen = 0;
  const watch = store?.watch(`/cost/r${run}/`, { prevKv: false }, { onEvents: (e) => (seen += e.length), onError: () => undefined });
  await new Promise((r) => setTimeout(r, 200));
  const before = processCpuUs(etcdPid)!;
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < writes) {
        const key = `/cost/r${run}/k${next++}`;
        if (shape === 'put') await client.put(key).value(value);
        else await client.if(key, 'Create', '==', 0).then(client.put(key).value(value)).commit();
      }
    }),
  );
  const ms = performance.now() - started;
  // The watch's last events, sent after the last write answered, count too.
  await new Promise((r) => setTimeout(r, 300));
  const cpu = processCpuUs(etcdPid)! - before;
  watch?.cancel();
  await store?.close();
  return {
    shape,
    watched,
    writesPerSecond: Math.round(writes / (ms / 1000)),
    etcdCpuUsPerWrite: Math.round(cpu / writes),
    eventsSeen: watched ? seen : undefined,
  };
}

void (async () => {
  const { flag } = toolArguments();
  const writes = flag('--writes', 20_000);
  const rounds = flag('--rounds', 2);
  const etcd = await startEtcd();
  const client = new Etcd3({ hosts: etcd.endpoint });
  const etcdPid = findPid(`--data-dir ${etcd.dataDir}`)!;
  // The size of the stored ReplicaSet the create rows write.
  const value = Buffer.alloc(2845, 0x61);
  let run = 0;
  try {
    const version = await client.maintenance.status();
    process.stdout.write(`etcd ${version.version}\n`);
    for (let r = 0; r < rounds; r++) {
      for (const shape of ['put', 'guarded create'] as Shape[]) {
        for (const watched of [false, true])
          process.stdout.write(`${JSON.stringify(await round(client, etcd.endpoint, etcdPid, shape, watched, writes, value, ++run))}\n`);
      }
    }
  } finally {
    client.close();
    await etcd.stop();
  }
})();
