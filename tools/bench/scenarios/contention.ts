/**
 * Scenario 4: 16 writers updating one ReplicaSet, each re-reading and retrying on 409 Conflict,
 * side by side with 16 raw etcd3 writers doing the same with mod-revision-guarded transactions.
 */
import type { Context } from '../context';
import { storedBytes } from '../context';
import { replicaSet, replicaSetsPath } from '../fixtures';
import { type Cell, type Sample, cpuPerOp, etcdRpcsPerOp, perSecond, sideBySide } from '../measure';
import { micros, ms, rate, ratio } from '../report';
import type { Served } from './served';

const WRITERS = 16;
const NAMESPACE = 'bench-contend';

const conflictRate = (s: Sample) => (s.counters.conflicts ?? 0) / Math.max(1, s.counters.attempts ?? 0);

export async function runContention(ctx: Context, served: Served): Promise<void> {
  ctx.log(`4. ${WRITERS} writers on one object`);
  await served.api.namespace(NAMESPACE);
  await served.api.expect('POST', replicaSetsPath(NAMESPACE), replicaSet('contended', NAMESPACE), [201, 409]);
  const server = served.server;
  const keelson: Cell = {
    worker: ctx.worker,
    open: { kind: 'https', target: server.target, connections: WRITERS },
    spec: () => ({ op: 'contend', path: `${replicaSetsPath(NAMESPACE)}/contended` }),
    serverCpu: async () => (await server.stats()).cpuUs,
    etcdPid: served.store.kind === 'etcd' ? served.etcd.pid : undefined,
    etcdEndpoint: served.store.kind === 'etcd' ? served.etcd.endpoint : undefined,
  };
  let run = 0;
  const raw: Cell = {
    worker: ctx.worker,
    open: { kind: 'etcd', endpoint: served.etcd.endpoint },
    spec: () => ({ op: 'contend', writers: WRITERS, key: `/bench-contend-raw/${++run}`, value: storedBytes(ctx.template!) }),
    etcdPid: served.etcd.pid,
  };
  const [k, r] = await sideBySide([keelson, raw], ctx.timing);
  const other = Object.entries(k.outcomes).filter(([label]) => label !== '200' && label !== '409');
  ctx.rows.push({
    scenario: 4,
    name: `${WRITERS} writers updating one object, retry on conflict`,
    keelson: `${rate(perSecond(k))} updates, ${(conflictRate(k) * 100).toFixed(0)}% conflicts`,
    reference: `${rate(perSecond(r))} updates, ${(conflictRate(r) * 100).toFixed(0)}% conflicts raw etcd3 txn`,
    ratio: ratio(perSecond(k), perSecond(r)),
    cpu: `${micros(cpuPerOp(k))} / ${micros(cpuPerOp(r))}`,
    latency: `${ms(k.latency.percentile(50))} / ${ms(k.latency.percentile(99))} per attempt`,
    note: `CPU per successful update (Keelson's includes serving the re-reads)${k.etcdRpcs ? `; etcd RPCs per update ${etcdRpcsPerOp(k)}` : ''}${other.length ? `; other: ${other.map(([l, n]) => `${l}×${n}`).join(', ')}` : ''}`,
  });
}
