/**
 * Several Keelson processes on one real etcd: the controllers, the scheduler and the simulated
 * nodes run once (leader election through Leases), a stopped leader hands over, and a server
 * killed mid-scale converges after restart with no extra pods.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEtcd, type EtcdInstance } from '../support/etcd';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { kubectlFor } from './support/kubectl';
import { createReplicaSet } from './support/replicasets';
import { eventually, type EventuallyOptions } from '../support/eventually';

/** kubectl calls against a real server take a while: look less often, for longer. */
const POLL: EventuallyOptions = { timeoutMs: 60_000, intervalMs: 250 };

let etcd: EtcdInstance;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  etcd = await startEtcd();
});

afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => undefined);
  await etcd?.stop();
});

async function start(dataDir?: string): Promise<ServerProcess> {
  const server = await startServerProcess(['--vendor', 'kubernetes', '--etcd-servers', etcd.endpoint], dataDir ? { dataDir } : {});
  servers.push(server);
  return server;
}

const podCount = async (kubectl: (...args: string[]) => Promise<string>, app: string) =>
  (await kubectl('get', 'pods', '-n', 'default', '-l', `app=${app}`, '-o', 'name')).split('\n').filter((l) => l.trim()).length;

test('two servers on one etcd run one active controller, scheduler and node; a stopped leader hands over', async () => {
  const a = await start();
  const b = await start();
  const viaA = kubectlFor(() => a);
  const viaB = kubectlFor(() => b);
  await createReplicaSet(viaA, a.dataDir, 'shared', 6);
  await viaA('wait', 'rs/shared', '--for=jsonpath={.status.readyReplicas}=6', '--timeout=60s');
  // Two active controllers would both create: the count stays exact, and so do the creates recorded.
  await new Promise((r) => setTimeout(r, 2000)); // the pause is the point: time for a second active set to show itself
  expect(await podCount(viaB, 'shared')).toBe(6);
  const creates = (await viaB('get', 'events', '-n', 'default', '-o', 'jsonpath={range .items[*]}{.reason}{"\\n"}{end}'))
    .split('\n')
    .filter((r) => r === 'SuccessfulCreate');
  expect(creates).toHaveLength(6);
  const holders = await viaB('get', 'leases', '-n', 'kube-system', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.spec.holderIdentity}{"\\n"}{end}');
  expect(holders).toMatch(/^kube-controller-manager=\S+_[0-9a-f-]{36}$/m);
  expect(holders).toMatch(/^kube-scheduler=\S+_[0-9a-f-]{36}$/m);

  await a.stop();
  await viaB('scale', 'rs/shared', '--replicas=8');
  await viaB('wait', 'rs/shared', '--for=jsonpath={.status.readyReplicas}=8', '--timeout=60s');
  expect(await podCount(viaB, 'shared')).toBe(8);
  await b.stop();
});

test('a server killed mid-scale converges after restart, with no extra pods', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-crash-'));
  try {
    const first = await start(dir);
    const kubectl1 = kubectlFor(() => first);
    await createReplicaSet(kubectl1, dir, 'crash', 0);
    await kubectl1('scale', 'rs/crash', '--replicas=60');
    await eventually(async () => (await podCount(kubectl1, 'crash')) >= 5, { ...POLL, timeoutMs: 30_000 });
    process.kill(first.pid, 'SIGKILL');
    await first.stop();

    const second = await start(dir);
    const kubectl2 = kubectlFor(() => second);
    // The dead process's Leases expire first (15 s), then the new leader finishes the job.
    await kubectl2('wait', 'rs/crash', '--for=jsonpath={.status.readyReplicas}=60', '--timeout=90s');
    expect(await podCount(kubectl2, 'crash')).toBe(60);
    await new Promise((r) => setTimeout(r, 2000)); // the pause is the point: no extra pod may come after convergence
    expect(await podCount(kubectl2, 'crash')).toBe(60);
    await second.stop();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
