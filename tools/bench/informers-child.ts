/**
 * ab-informers.ts' child, run from a build (so `../../src` is that revision's server): a core on
 * an in-memory embedded store holding `INFORMER_PODS` pods over ten namespaces, then the
 * controllers that follow pods started as `npm start` starts them (one group, no leader
 * election); prints one JSON line of what following the pods cost:
 *
 * - heapPerPod: heap and external bytes after a full GC, with the controllers' informers
 *   synced, less before they started, per pod;
 * - startCpuMs: the process's CPU over the three seconds after the start (their lists and the
 *   first pass of their queues);
 * - cpuPerCreateUs: CPU per pod created afterwards, 64 in flight, while they follow.
 *
 * Needs `--expose-gc`.
 */
import { createCore } from '../../src/core';
import { startControllers } from '../../src/controllers';
import { createNaming } from '../../src/naming';
import { createStore } from '../../src/store';

const NAMESPACES = 10;
const LATER_PODS = 5_000;
const admin = { user: { username: 'admin', groups: ['system:masters'] }, userAgent: 'bench' };
const podsIn = (i: number) => ({ group: '', version: 'v1', resource: 'pods', namespace: `ns-${i % NAMESPACES}` });
const pod = (i: number) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `p-${i}`, labels: { app: 'bench' } },
  spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] },
});

function heldBytes(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  gc();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

const cpuUs = (since: NodeJS.CpuUsage) => {
  const { user, system } = process.cpuUsage(since);
  return user + system;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function createPods(core: ReturnType<typeof createCore>, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i += 64) {
    await Promise.all(Array.from({ length: Math.min(64, from + count - i) }, (_, k) => core.create(podsIn(i + k), pod(i + k), {}, admin)));
  }
}

void (async () => {
  const pods = Number(process.env.INFORMER_PODS ?? 20_000);
  const core = createCore({ store: createStore({ kind: 'embedded', inMemory: true }), naming: createNaming('kubernetes'), compactionIntervalMs: 0 });
  await core.ready();
  for (let n = 0; n < NAMESPACES; n++) await core.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: `ns-${n}` } }, {}, admin);
  await createPods(core, 0, pods);
  await sleep(500);
  const before = heldBytes();
  const started = process.cpuUsage();
  const controllers = startControllers(core, ['replicaset', 'disruption', 'nodelifecycle', 'taint-eviction-controller', 'podgc'], undefined, {
    leaderElect: false,
    simulatedNodes: 0,
  });
  await sleep(3_000);
  const startCpuMs = cpuUs(started) / 1000;
  const heapPerPod = (heldBytes() - before) / pods;
  const later = process.cpuUsage();
  await createPods(core, pods, LATER_PODS);
  await sleep(500);
  const cpuPerCreateUs = cpuUs(later) / LATER_PODS;
  await controllers.stop();
  await core.close();
  process.stdout.write(`${JSON.stringify({ heapPerPod, startCpuMs, cpuPerCreateUs })}\n`);
  process.exit(0);
})();
