/**
 * The pod garbage collector against the in-process core (embedded store) on a ManualClock: pods
 * of a vanished node after the quarantine, terminating pods never scheduled or on an
 * out-of-service node, and terminated pods beyond the threshold.
 */
import type { ApiObject, ResourceTarget } from '../../src/core';
import { PodGarbageCollector } from '../../src/controllers';
import { createNaming } from '../../src/naming';
import { ManualClock } from '../../src/clock';
import { type InformerView, SharedInformers } from '../../src/core/informer';
import { ctx, getOrUndefined, openCore, pods, type TestCore } from './support';
import { caughtUp } from '../support/informers';

const naming = createNaming('kubernetes');
const nodes = (name?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'nodes', name });

type PodLike = ApiObject & { status?: { phase?: string; conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> } };

describe('pod garbage collector', () => {
  let t: TestCore;
  let clock: ManualClock;
  let gc: PodGarbageCollector;
  /** The informers the collector follows, as the test sees them. */
  let informers: SharedInformers;
  let views: Array<[InformerView, ResourceTarget]>;

  const pod = (name: string) => getOrUndefined(t.core, pods('default', name)) as Promise<PodLike | undefined>;

  async function createPod(name: string, spec: Record<string, unknown> = {}, finalizers?: string[]): Promise<ApiObject> {
    const metadata: Record<string, unknown> = { name };
    if (finalizers) metadata.finalizers = finalizers;
    return (
      await t.core.create(
        pods('default'),
        { apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }], ...spec } },
        {},
        ctx,
      )
    ).object;
  }

  async function setPhase(name: string, phase: string): Promise<void> {
    const current = await t.core.get(pods('default', name), {}, ctx);
    await t.core.update({ ...pods('default', name), subresource: 'status' }, { ...current, status: { ...(current.status as object), phase } }, {}, ctx);
  }

  /** Wait for the informers to hear every change made so far, then run the passes the clock's ticks start. */
  async function tick(ms: number): Promise<void> {
    for (const [view, target] of views) await caughtUp(view, t.core, target, ctx);
    clock.advance(ms);
    await gc.collect();
  }

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 1));
    t = await openCore({}, clock);
    views = [];
  });

  afterEach(async () => {
    gc.stop();
    for (const [view] of views) view.stop();
    await t.close();
  });

  function start(terminatedThreshold?: number): void {
    informers = new SharedInformers(t.core, ctx, clock);
    const targets: ResourceTarget[] = [nodes(), { group: '', version: 'v1', resource: 'pods' }];
    views = targets.map((target) => [informers.watch(target, () => undefined), target]);
    gc = new PodGarbageCollector({
      core: t.core,
      naming,
      clock,
      user: ctx.user,
      informers,
      ...(terminatedThreshold === undefined ? {} : { terminatedThreshold }),
    });
    gc.start();
  }

  it('deletes the pods of a node gone for the 40 s quarantine, marked Failed with upstream DisruptionTarget condition', async () => {
    await t.core.create(nodes(), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'alive' } }, {}, ctx);
    await createPod('orphan', { nodeName: 'gone' });
    // A finalizer keeps this one readable after its deletion.
    await createPod('held', { nodeName: 'gone' }, ['example.com/hold']);
    await createPod('kept', { nodeName: 'alive' });
    start();
    await tick(20_000); // found missing now
    await tick(20_000); // 20 s into the quarantine
    expect(await pod('orphan')).toBeDefined();
    await tick(20_000); // 40 s: a live read confirms, and the pods go
    expect(await pod('orphan')).toBeUndefined();
    expect(await pod('kept')).toBeDefined();
    const held = (await pod('held'))!;
    expect(held.metadata?.deletionTimestamp).toBeDefined();
    expect(held.metadata?.deletionGracePeriodSeconds).toBe(0);
    expect(held.status?.phase).toBe('Failed');
    expect(held.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'DeletionByPodGC',
      message: 'PodGC: node no longer exists',
    });
  });

  it('a node that comes back within the quarantine keeps its pods', async () => {
    await createPod('waiting', { nodeName: 'late' });
    start();
    await tick(20_000);
    await t.core.create(nodes(), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'late' } }, {}, ctx);
    await tick(20_000);
    await tick(20_000);
    expect((await pod('waiting'))?.metadata?.deletionTimestamp).toBeUndefined();
  });

  it('force-deletes terminating pods never scheduled, and terminating pods on a not-Ready node tainted out-of-service', async () => {
    await createPod('unscheduled', {}, ['example.com/hold']);
    await t.core.delete(pods('default', 'unscheduled'), {}, ctx);
    await t.core.create(
      nodes(),
      {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'down' },
        spec: { taints: [{ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' }] },
      },
      {},
      ctx,
    );
    await t.core.create(nodes(), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'up' } }, {}, ctx);
    await createPod('on-down', { nodeName: 'down' });
    await createPod('on-up', { nodeName: 'up' });
    await t.core.delete(pods('default', 'on-down'), {}, ctx);
    await t.core.delete(pods('default', 'on-up'), {}, ctx);
    expect((await pod('on-down'))?.metadata?.deletionTimestamp).toBeDefined();
    start();
    await tick(20_000);
    expect(await pod('on-down')).toBeUndefined();
    // Not tainted: the pod waits for its kubelet.
    expect((await pod('on-up'))?.metadata?.deletionGracePeriodSeconds).toBe(30);
    const unscheduled = (await pod('unscheduled'))!;
    expect(unscheduled.status?.phase).toBe('Failed');
    expect((unscheduled.status?.conditions ?? []).some((c) => c.type === 'DisruptionTarget')).toBe(false);
  });

  it('deletes terminated pods beyond the threshold, the oldest first', async () => {
    for (const name of ['first', 'second', 'third', 'running']) {
      await createPod(name);
      clock.advance(1_000);
    }
    await setPhase('first', 'Succeeded');
    await setPhase('second', 'Failed');
    await setPhase('third', 'Succeeded');
    start(2);
    await tick(20_000);
    expect(await pod('first')).toBeUndefined();
    for (const name of ['second', 'third', 'running']) expect(await pod(name)).toBeDefined();
  });
});
