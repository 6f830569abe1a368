/**
 * ab-updates.ts' child, run from a build (so `../../src` is that revision's server): a core on
 * etcd (`UPDATES_ETCD`, its client URL) or an in-memory embedded store, 200 pods, then rounds
 * of status updates as a kubelet sends them: each pod read from the watch cache
 * (`resourceVersion=0`) and its status replaced, 200 at once, ten times per round; a 409 is read
 * again and retried. Prints one JSON line: CPU per update and updates per second, per round
 * (the first round warms up and is left out).
 */
import { createCore } from '../../src/core';
import { createNaming } from '../../src/naming';
import { createStore } from '../../src/store';

const PODS = 200;
const ROUNDS = 4;
const ctx = { user: { username: 'admin', groups: ['system:masters'] }, userAgent: 'kubelet/v1.32.0' };
const pods = { group: '', version: 'v1', resource: 'pods', namespace: 'default' };

void (async () => {
  const endpoint = process.env.UPDATES_ETCD;
  const store = endpoint ? createStore({ kind: 'etcd', endpoints: [endpoint] }) : createStore({ kind: 'embedded', inMemory: true });
  const core = createCore({ store, naming: createNaming('kubernetes'), compactionIntervalMs: 0 });
  await core.ready();
  const run = Math.random().toString(36).slice(2, 8);
  for (let i = 0; i < PODS; i++) {
    await core.create(
      pods,
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: `u-${run}-${i}` }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx:1.27' }] } },
      {},
      ctx,
    );
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  let flip = 0;
  let conflicts = 0;
  const update = async (i: number): Promise<void> => {
    const target = { ...pods, name: `u-${run}-${i}` };
    for (;;) {
      const current = await core.get(target, { resourceVersion: '0' }, ctx);
      const ready = flip % 2 === 0 ? 'True' : 'False';
      const status = {
        phase: 'Running',
        podIP: '10.0.0.1',
        conditions: [{ type: 'Ready', status: ready, lastTransitionTime: '2026-11-29T12:00:00Z' }],
        containerStatuses: [
          {
            name: 'c',
            ready: ready === 'True',
            restartCount: 0,
            image: 'nginx:1.27',
            imageID: '',
            started: true,
            state: { running: { startedAt: '2026-11-29T12:00:00Z' } },
          },
        ],
      };
      try {
        await core.update({ ...target, subresource: 'status' }, { ...current, status }, {}, ctx);
        return;
      } catch (err) {
        if ((err as { status?: { code?: number } }).status?.code !== 409) throw err;
        conflicts++;
      }
    }
  };
  const round = async () => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let k = 0; k < 10; k++) {
      flip++;
      await Promise.all(Array.from({ length: PODS }, (_, i) => update(i)));
    }
    const used = process.cpuUsage(cpu);
    return { cpuUs: (used.user + used.system) / (10 * PODS), perSecond: (10 * PODS) / ((performance.now() - started) / 1000) };
  };
  await round();
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await round());
  await core.close();
  process.stdout.write(`${JSON.stringify({ rounds, conflicts })}\n`);
  process.exit(0);
})();
