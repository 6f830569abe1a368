/**
 * The controller manager's timing flags reach the controllers `startControllers` runs
 * (`--node-monitor-period`, `--node-monitor-grace-period`, `--node-startup-grace-period`,
 * `--terminated-pod-gc-threshold`), on a ManualClock against the in-process core.
 */
import type { ApiObject, ResourceTarget } from '../../src/core';
import { type RunningControllers, startControllers } from '../../src/controllers';
import { ManualClock, rfc3339 } from '../../src/clock';
import { ctx, getOrUndefined, openCore, pods, type TestCore } from './support';

const nodes = (name?: string, subresource?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'nodes', name, subresource });
type NodeLike = ApiObject & { status?: { conditions?: Array<{ type: string; status: string; reason?: string }> } };

let t: TestCore;
let clock: ManualClock;
let running: RunningControllers | undefined;

beforeEach(async () => {
  clock = new ManualClock(Date.UTC(2026, 0, 1));
  t = await openCore({}, clock);
});

afterEach(async () => {
  await running?.stop();
  running = undefined;
  await t.close();
});

const readyStatus = async (name: string) => ((await t.core.get(nodes(name), {}, ctx)) as NodeLike).status?.conditions?.find((c) => c.type === 'Ready');

/**
 * Moves the clock `stepMs` at a time, waiting for the work each step started, until
 * `condition` holds; returns how far it moved (Infinity if not within `maxMs`).
 */
async function advanceUntil(condition: () => Promise<boolean>, stepMs: number, maxMs: number): Promise<number> {
  for (let moved = 0; moved <= maxMs; moved += stepMs) {
    await running!.idle!();
    if (await condition()) return moved;
    clock.advance(stepMs);
  }
  return Infinity;
}

it('a node silent past --node-monitor-grace-period, checked every --node-monitor-period, is Unknown; one that never posted, past --node-startup-grace-period', async () => {
  await t.core.create(nodes(), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'posted' } }, {}, ctx);
  const node = await t.core.get(nodes('posted'), {}, ctx);
  const stamp = rfc3339(clock.now());
  const conditions = [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: stamp, lastTransitionTime: stamp }];
  await t.core.update(nodes('posted', 'status'), { ...node, status: { conditions } }, {}, ctx);
  await t.core.create(nodes(), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'silent' } }, {}, ctx);
  running = startControllers(t.core, ['nodelifecycle'], undefined, {
    clock,
    nodeMonitorPeriodMs: 1_000,
    nodeMonitorGracePeriodMs: 8_000,
    nodeStartupGracePeriodMs: 20_000,
  });

  // With upstream's defaults (50 s once posted, 60 s before) neither could be Unknown before 50 s.
  const posted = await advanceUntil(async () => (await readyStatus('posted'))?.status === 'Unknown', 1_000, 49_000);
  expect(posted).toBeGreaterThanOrEqual(8_000);
  expect(posted).toBeLessThan(50_000);
  expect(await readyStatus('posted')).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown' });
  const silent = posted + (await advanceUntil(async () => (await readyStatus('silent'))?.status === 'Unknown', 1_000, 49_000 - posted));
  expect(silent).toBeGreaterThanOrEqual(20_000);
  expect(silent).toBeLessThan(50_000);
  expect(await readyStatus('silent')).toMatchObject({ status: 'Unknown', reason: 'NodeStatusNeverUpdated' });
});

it('terminated pods beyond --terminated-pod-gc-threshold are deleted, the oldest first', async () => {
  for (const name of ['first', 'second', 'third']) {
    const created = await t.core.create(
      pods('default'),
      { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } },
      {},
      ctx,
    );
    await t.core.update({ ...pods('default', name), subresource: 'status' }, { ...created.object, status: { phase: 'Succeeded' } }, {}, ctx);
    clock.advance(1_000);
  }
  running = startControllers(t.core, ['podgc'], undefined, { clock, terminatedPodGcThreshold: 1 });
  // Upstream's 12,500 would keep all three; passes run every 20 s.
  const gone = async () => (await getOrUndefined(t.core, pods('default', 'second'))) === undefined;
  expect(await advanceUntil(gone, 20_000, 100_000)).toBeLessThan(Infinity);
  expect(await getOrUndefined(t.core, pods('default', 'first'))).toBeUndefined();
  expect(await getOrUndefined(t.core, pods('default', 'third'))).toBeDefined();
});
