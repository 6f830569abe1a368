/**
 * Scale-out under faults: a real three-member etcd cluster and two Keelson processes behind it
 * (sharing their CA, as docs/DEPLOYING.md describes), with writers spread over both processes,
 * an informer-like watcher on each, and a ReplicaSet the leader-elected controllers keep at its
 * size. Faults, in rounds: kill and restart an etcd follower, another follower, the raft
 * leader, then `kill -9` one Keelson process and start it again. Afterwards:
 * - every acknowledged write is in etcd with its content; writes answered 5xx are wholly there
 *   or not at all;
 * - both processes list exactly what etcd holds;
 * - both watchers (resuming, relisting on 410) saw no change twice and hold what is listed;
 * - the ReplicaSet has exactly the pods it asks for (controllers ran once at a time).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Etcd3 } from 'etcd3';
import { startEtcdCluster, type EtcdCluster } from '../support/etcd';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { httpsRequest } from '../gateway/support/https-client';
import { FAULT_TIMEOUT_MS, FULL, Ledger, Watcher, call, runWriter, sleep, summary } from './support';
import { eventually } from '../support/eventually';

jest.setTimeout(FAULT_TIMEOUT_MS);

const ROUNDS = FULL ? 5 : 1;
const WRITERS = 4;
const NS = 'cluster';
const BASE = `/api/v1/namespaces/${NS}/configmaps`;
const RS_PATH = `/apis/apps/v1/namespaces/${NS}/replicasets`;

let cluster: EtcdCluster;
const progress = (line: string) => process.env.KEELSON_FAULTS_VERBOSE && process.stderr.write(`etcd-cluster: ${line}\n`);
let dir: string;
const servers: Array<ServerProcess | undefined> = [undefined, undefined];
/** Set when the writers must stop (also when the test fails, so nothing keeps running after it). */
let stopped = false;
/** The watchers, stopped after the test whether it passed or not. */
let watchers: Watcher[] = [];

function start(): Promise<ServerProcess> {
  return startServerProcess(
    [
      '--vendor',
      'kubernetes',
      '--etcd-servers',
      cluster.endpoints.join(','),
      '--simulated-nodes',
      '0',
      '--disable-admission-plugins',
      'ServiceAccount',
      '--request-timeout',
      '10s',
    ],
    { dataDir: dir },
  );
}

/** Any live process, for a client that may talk to either. */
function anyServer(): ServerProcess {
  const live = servers.filter((s): s is ServerProcess => !!s);
  return live[Math.floor(Math.random() * live.length)]!;
}

beforeAll(async () => {
  cluster = await startEtcdCluster(3);
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-cluster-'));
  servers[0] = await start();
  servers[1] = await start();
});

afterAll(async () => {
  stopped = true;
  for (const w of watchers) w.stop();
  for (const s of servers) await s?.stop().catch(() => undefined);
  await cluster?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** For a watcher that missed: where that server's watch cache stands, and what it logged. */
async function describeServer(index: number, server: ServerProcess): Promise<void> {
  const metrics = await httpsRequest(`${server.url}/metrics`, server.admin, { method: 'GET' }).catch((err: Error) => ({ status: 0, body: err.message }));
  const cache = metrics.body
    .split('\n')
    .filter((l) => l.startsWith('keelson_watch_cache_'))
    .join('\n');
  process.stderr.write(`server ${index} watch cache:\n${cache}\nserver ${index} output (last 4000 characters):\n${server.output().slice(-4000)}\n`);
}

async function podsOwnedBy(uid: string): Promise<number> {
  const r = await call(servers[0]!, 'GET', `/api/v1/namespaces/${NS}/pods`);
  if (r.status !== 200) return -1;
  return r.body.items.filter((p: any) => !p.metadata.deletionTimestamp && (p.metadata.ownerReferences ?? []).some((o: any) => o.uid === uid)).length;
}

test(`${ROUNDS} round(s) of etcd member, etcd leader and Keelson process failures lose nothing and run controllers once`, async () => {
  expect((await call(servers[0]!, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status).toBe(201);
  const rsBody = (replicas: number) => ({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'web' },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  });
  const rs = await call(servers[0]!, 'POST', RS_PATH, rsBody(5));
  expect(rs.status).toBe(201);

  const ledger = new Ledger();
  const writers = Array.from({ length: WRITERS }, (_, k) =>
    runWriter({ ledger, prefix: `w${k}-`, base: BASE, server: anyServer, onUnknown: 'continue', stopped: () => stopped }),
  );
  watchers = [new Watcher(BASE), new Watcher(BASE)];
  const watching = [watchers[0]!.run(() => servers[0]!), watchers[1]!.run(() => servers[1] ?? servers[0]!)];

  const faults: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const leader = await cluster.leader();
    progress(`round ${round}: leader ${leader}`);
    const followers = [0, 1, 2].filter((i) => i !== leader);
    for (const i of followers) {
      faults.push(`kill follower ${cluster.members[i]!.name}`);
      progress(faults[faults.length - 1]!);
      await cluster.members[i]!.kill();
      await sleep(1500); // the fault lasts this long while the writers go on
      await cluster.members[i]!.restart();
      await sleep(500); // and the next starts this soon after
    }
    const current = await cluster.leader();
    faults.push(`kill leader ${cluster.members[current]!.name}`);
    progress(faults[faults.length - 1]!);
    await cluster.members[current]!.kill();
    await sleep(2500); // long enough for a new election among the two left
    await cluster.members[current]!.restart();
    await sleep(500); // the next fault starts this soon after

    // Scale the ReplicaSet while a Keelson process is down: the survivor's controllers take over.
    faults.push('kill -9 Keelson process 2');
    progress(faults[faults.length - 1]!);
    const victim = servers[1]!;
    servers[1] = undefined;
    watchers[1]!.stop();
    await watching[1];
    await victim.kill();
    await eventually(
      async () => {
        const cur = await call(servers[0]!, 'GET', `${RS_PATH}/web`);
        return (await call(servers[0]!, 'PUT', `${RS_PATH}/web`, { ...cur.body, spec: { ...cur.body.spec, replicas: 5 + ((round + 1) % 4) } })).status === 200;
      },
      { what: 'the scale to be written', intervalMs: 200 },
    ).catch(() => undefined);
    await sleep(1000); // the process stays down this long while the survivor works
    servers[1] = await start();
    watching[1] = watchers[1]!.run(() => servers[1]!);
    await sleep(1000); // and the next round starts this soon after it is back
  }

  progress('faults done');
  stopped = true;
  await Promise.all(writers);
  progress('writers stopped');

  // Both processes and etcd itself agree, and hold every acknowledged write.
  const listA = await call(servers[0]!, 'GET', BASE);
  const listB = await call(servers[1]!, 'GET', BASE);
  expect(listA.status).toBe(200);
  expect(listB.status).toBe(200);
  // The root CA publisher's ConfigMap is not the writers'.
  ledger.checkAll(listA.body.items.filter((o: any) => /^w\d+-/.test(o.metadata.name)));
  const names = (items: any[]) => items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort();
  expect(names(listB.body.items)).toEqual(names(listA.body.items));
  const raw = new Etcd3({ hosts: cluster.endpoints });
  try {
    const kvs = await raw.getAll().prefix(`/registry/configmaps/${NS}/`).exec();
    const fromEtcd = kvs.kvs.map((kv) => `${kv.key.toString().split('/').pop()}@${kv.mod_revision}`).sort();
    expect(fromEtcd).toEqual(names(listA.body.items));
  } finally {
    raw.close();
  }
  for (const [i, w] of watchers.entries()) {
    const matched = await w.matches(listA.body.items);
    if (!matched) await describeServer(i, servers[i]!);
    expect(matched).toBe(true);
  }
  for (const w of watchers) w.stop();
  await Promise.all(watching);
  expect(watchers.map((w) => w.duplicates)).toEqual([0, 0]);

  // The controllers ran once at a time: exactly as many pods as asked for. A killed leader's
  // Lease must expire (15 s) before the other process's controllers act, and on a loaded
  // machine (the whole suite in parallel) their first sync can take as long again: up to 60 s.
  const final = await call(servers[0]!, 'GET', `${RS_PATH}/web`);
  const want = final.body.spec.replicas;
  let have = -1;
  await eventually(async () => (have = await podsOwnedBy(rs.body.metadata.uid)) === want, { timeoutMs: 60_000, intervalMs: 200 }).catch(() => undefined);
  expect(have).toBe(want);

  summary('etcd-cluster', {
    rounds: ROUNDS,
    faults: faults.length,
    acknowledgedWrites: ledger.acknowledged,
    unknownOutcomes: ledger.unknownOutcomes,
    unknownApplied: ledger.unknownApplied,
    objects: listA.body.items.length,
    watchEvents: watchers.map((w) => w.events),
    relists: watchers.map((w) => w.relists),
    pods: have,
  });
});
