/**
 * PodDisruptionBudget (policy/v1) over the in-process core (embedded store) and the disruption
 * controller on a ManualClock: upstream's validation, and the status it computes from the pods a
 * budget selects and their ReplicaSets' scale. Messages are upstream's.
 */
import type { ApiObject, ResourceTarget } from '../../src/core';
import { DisruptionController } from '../../src/controllers';
import { createNaming } from '../../src/naming';
import { ManualClock, rfc3339 } from '../../src/clock';
import { ctx, eventually, openCore, pods, rs, statusOf as refusal, type TestCore } from './support';

const naming = createNaming('kubernetes');
const pdbs = (name?: string): ResourceTarget => ({
  group: 'policy',
  version: 'v1',
  resource: 'poddisruptionbudgets',
  namespace: 'default',
  ...(name ? { name } : {}),
});
const pdb = (name: string, spec: Record<string, unknown>): ApiObject => ({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name },
  spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
});

type Status = {
  observedGeneration?: number;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  disruptedPods?: Record<string, string>;
  conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
};

/** A core on a ManualClock holding the `web` ReplicaSet, with the disruption controller running. */
interface Fixture {
  t: TestCore;
  clock: ManualClock;
  controller: DisruptionController;
  owner: ApiObject;
}

async function openFixture(replicas: number): Promise<Fixture> {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const t = await openCore({}, clock);
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } };
  const owner = (
    await t.core.create(
      rs('default'),
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, spec: { replicas, selector: { matchLabels: { app: 'web' } }, template } },
      {},
      ctx,
    )
  ).object;
  const controller = new DisruptionController({ core: t.core, naming, clock, user: ctx.user });
  return { t, clock, controller, owner };
}

/** A pod of the `web` ReplicaSet (or of none), in `phase`, Ready when Running and `ready`. */
async function webPod(f: Fixture, name: string, { phase = 'Running', ready = true, owned = true } = {}): Promise<void> {
  const metadata: Record<string, unknown> = { name, labels: { app: 'web' } };
  if (owned) metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: f.owner.metadata!.uid!, controller: true }];
  const created = await f.t.core.create(
    pods('default'),
    { apiVersion: 'v1', kind: 'Pod', metadata, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx:1.27' }] } },
    {},
    ctx,
  );
  const conditions = [
    { type: 'Ready', status: phase === 'Running' && ready ? 'True' : 'False', lastProbeTime: null, lastTransitionTime: rfc3339(f.clock.now()) },
  ];
  await f.t.core.update({ ...pods('default', name), subresource: 'status' }, { ...created.object, status: { phase, conditions } }, {}, ctx);
}

describe('PodDisruptionBudget and the disruption controller', () => {
  let f: Fixture;
  let t: TestCore;
  let clock: ManualClock;

  const status = async (name: string) => (await t.core.get(pdbs(name), {}, ctx)).status as Status;

  beforeEach(async () => {
    f = await openFixture(4);
    ({ t, clock } = f);
    for (const [name, ready] of [
      ['a', true],
      ['b', true],
      ['c', true],
      ['d', false],
    ] as const)
      await webPod(f, name, { ready });
    f.controller.start();
  });

  afterEach(async () => {
    f.controller.stop();
    await t.close();
  });

  it('validates as upstream: not both bounds, non-negative integers or percentages up to 100%, a valid selector', async () => {
    const both = await refusal(t.core.create(pdbs(), pdb('both', { minAvailable: 1, maxUnavailable: 1 }), {}, ctx));
    expect(both.status.details?.causes?.[0]).toMatchObject({
      field: 'spec',
      message: expect.stringMatching(/minAvailable and maxUnavailable cannot be both set$/),
    });
    const negative = await refusal(t.core.create(pdbs(), pdb('negative', { minAvailable: -1 }), {}, ctx));
    expect(negative.status.message).toBe(
      'PodDisruptionBudget.policy "negative" is invalid: spec.minAvailable: Invalid value: -1: must be greater than or equal to 0',
    );
    const percent = await refusal(t.core.create(pdbs(), pdb('percent', { maxUnavailable: '150%' }), {}, ctx));
    expect(percent.status.message).toBe(
      'PodDisruptionBudget.policy "percent" is invalid: spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
    );
    const word = await refusal(t.core.create(pdbs(), pdb('word', { minAvailable: 'half' }), {}, ctx));
    expect(word.status.details?.causes?.[0]?.message).toBe(
      `Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"half"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`,
    );
    const policy = await refusal(t.core.create(pdbs(), pdb('policy', { minAvailable: 1, unhealthyPodEvictionPolicy: 'Sometimes' }), {}, ctx));
    expect(policy.status.details?.causes?.[0]?.message).toBe('Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"');
    // A new budget starts with Go's empty status.
    const created = await t.core.create(pdbs(), pdb('fresh', { minAvailable: 1, selector: { matchLabels: { app: 'none' } } }), {}, ctx);
    expect(created.object.status).toEqual({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
    expect(created.object.metadata?.generation).toBe(1);
  });

  it('an integer minAvailable counts the selected pods; healthy is Ready and not being deleted', async () => {
    await t.core.create(pdbs(), pdb('min', { minAvailable: 2 }), {}, ctx);
    await eventually(async () => (await status('min')).expectedPods === 4);
    expect(await status('min')).toMatchObject({ observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 4 });
    expect((await status('min')).conditions).toEqual([
      { type: 'DisruptionAllowed', status: 'True', observedGeneration: 1, lastTransitionTime: rfc3339(clock.now()), reason: 'SufficientPods', message: '' },
    ]);
    await t.core.delete(pods('default', 'a'), {}, ctx);
    await eventually(async () => (await status('min')).currentHealthy === 2);
    expect(await status('min')).toMatchObject({ disruptionsAllowed: 0 });
    expect((await status('min')).conditions?.[0]).toMatchObject({ status: 'False', reason: 'InsufficientPods' });
  });

  it('a percentage or maxUnavailable counts the ReplicaSet scale; a pod whose controller is missing is SyncFailed', async () => {
    await t.core.create(pdbs(), pdb('max', { maxUnavailable: '50%' }), {}, ctx);
    await t.core.create(pdbs(), pdb('pct', { minAvailable: '80%' }), {}, ctx);
    await eventually(async () => (await status('max')).expectedPods === 4 && (await status('pct')).expectedPods === 4);
    expect(await status('max')).toMatchObject({ desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });
    // 80% of 4, rounded up.
    expect(await status('pct')).toMatchObject({ desiredHealthy: 4, currentHealthy: 3, disruptionsAllowed: 0 });
    // Scaling the ReplicaSet changes what is expected.
    const web = await t.core.get(rs('default', 'web'), {}, ctx);
    await t.core.update(rs('default', 'web'), { ...web, spec: { ...(web.spec as object), replicas: 6 } }, {}, ctx);
    await eventually(async () => (await status('max')).expectedPods === 6);
    expect(await status('max')).toMatchObject({ desiredHealthy: 3, disruptionsAllowed: 0 });

    await t.core.create(pdbs(), pdb('orphans', { maxUnavailable: 1, selector: { matchLabels: { app: 'lost' } } }), {}, ctx);
    await t.core.create(
      pods('default'),
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'lost',
          labels: { app: 'lost' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'gone', uid: 'd1b8ee25-0000-4000-8000-000000000000', controller: true }],
        },
        spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] },
      },
      {},
      ctx,
    );
    await eventually(async () => (await status('orphans')).conditions?.[0]?.reason === 'SyncFailed');
    expect((await status('orphans')).conditions?.[0]).toMatchObject({ status: 'False', message: 'found no controllers for pod "lost"' });
    expect((await status('orphans')).disruptionsAllowed).toBe(0);
  });

  it('a pod just evicted does not count as healthy for two minutes, unless it is gone first', async () => {
    const created = await t.core.create(pdbs(), pdb('min', { minAvailable: 1 }), {}, ctx);
    await eventually(async () => (await status('min')).expectedPods === 4);
    const current = await t.core.get(pdbs('min'), {}, ctx);
    const evicted = { ...(current.status as Status), disruptedPods: { b: rfc3339(clock.now()) } };
    await t.core.update({ ...pdbs('min'), subresource: 'status' }, { ...current, status: evicted }, {}, ctx);
    await eventually(async () => (await status('min')).currentHealthy === 2);
    expect((await status('min')).disruptedPods).toEqual({ b: rfc3339(clock.now()) });
    clock.advance(120_000);
    await eventually(async () => (await status('min')).currentHealthy === 3);
    expect(await status('min')).not.toHaveProperty('disruptedPods');
    expect(created.object.metadata?.name).toBe('min');
  });
});

describe('the pods/eviction subresource', () => {
  let f: Fixture;
  let t: TestCore;
  let clock: ManualClock;
  let controller: DisruptionController;

  const eviction = (name: string, extra: Record<string, unknown> = {}): ApiObject => ({
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name },
    ...extra,
  });
  const evict = (name: string, extra: Record<string, unknown> = {}) =>
    t.core.create({ ...pods('default', name), subresource: 'eviction' }, eviction(name, extra), {}, ctx);
  const pod = (name: string) =>
    t.core.get(pods('default', name), {}, ctx) as Promise<ApiObject & { status?: { conditions?: Array<{ type: string; reason?: string; message?: string }> } }>;
  const status = async (name: string) => (await t.core.get(pdbs(name), {}, ctx)).status as Status;

  beforeEach(async () => {
    f = await openFixture(3);
    ({ t, clock, controller } = f);
    for (const name of ['a', 'b', 'c']) await webPod(f, name);
    controller.start();
  });

  afterEach(async () => {
    controller.stop();
    await t.close();
  });

  it('without a budget the pod is deleted, marked DisruptionTarget (EvictionByEvictionAPI); the answer is a bare Success', async () => {
    const answer = await evict('a', { deleteOptions: { gracePeriodSeconds: 5 } });
    expect(answer.object).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' });
    const evicted = await pod('a');
    expect(evicted.metadata?.deletionTimestamp).toBeDefined();
    expect(evicted.metadata?.deletionGracePeriodSeconds).toBe(5);
    expect(evicted.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      reason: 'EvictionByEvictionAPI',
      message: 'Eviction API: evicting',
    });
    // A precondition the pod fails is upstream's 409, and nothing is written to the pod.
    const before = await pod('b');
    const wrongUid = await refusal(evict('b', { deleteOptions: { preconditions: { uid: 'd1b8ee25-0000-4000-8000-000000000000' } } }));
    expect(wrongUid.status).toMatchObject({
      code: 409,
      message: `Operation cannot be fulfilled on Pod "b": the UID in the precondition (d1b8ee25-0000-4000-8000-000000000000) does not match the UID in record (${before.metadata?.uid}). The object might have been deleted and then recreated`,
    });
    expect((await pod('b')).metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
    const mismatch = await refusal(t.core.create({ ...pods('default', 'b'), subresource: 'eviction' }, eviction('c'), {}, ctx));
    expect(mismatch.status).toMatchObject({ code: 400, message: 'name in URL does not match name in Eviction object' });
  });

  it('a budget allows as many evictions as its status says, then answers 429 with a DisruptionBudget cause', async () => {
    await t.core.create(pdbs(), pdb('web', { minAvailable: 2 }), {}, ctx);
    await eventually(async () => (await status('web')).disruptionsAllowed === 1);
    // A dry run takes nothing.
    await t.core.create({ ...pods('default', 'a'), subresource: 'eviction' }, eviction('a'), { dryRun: ['All'] }, ctx);
    expect((await status('web')).disruptionsAllowed).toBe(1);
    expect((await pod('a')).metadata?.deletionTimestamp).toBeUndefined();
    // With the controller stopped, the eviction's own status write is what the budget shows.
    controller.stop();
    await evict('a');
    expect(await status('web')).toMatchObject({ disruptionsAllowed: 0, disruptedPods: { a: rfc3339(clock.now()) } });
    expect((await status('web')).conditions?.[0]).toMatchObject({ type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods' });
    const refused = await refusal(evict('b'));
    expect(refused.status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      reason: 'TooManyRequests',
      details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 2 healthy pods and has 3 currently' }] },
      code: 429,
    });
    expect((await pod('b')).metadata?.deletionTimestamp).toBeUndefined();
  });

  it('a pending pod ignores budgets; a budget not yet observed is 429 with retry after 10 s; two budgets are 500', async () => {
    await t.core.create(pdbs(), pdb('none', { minAvailable: 3 }), {}, ctx);
    await eventually(async () => (await status('none')).expectedPods === 3);
    await webPod(f, 'pending', { phase: 'Pending' });
    await evict('pending');
    expect((await pod('pending')).metadata?.deletionTimestamp).toBeDefined();

    controller.stop();
    const current = await t.core.get(pdbs('none'), {}, ctx);
    await t.core.update(pdbs('none'), { ...current, spec: { ...(current.spec as object), minAvailable: 1 } }, {}, ctx);
    const stale = await refusal(evict('a'));
    expect(stale.status.details).toEqual({
      retryAfterSeconds: 10,
      causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget none is still being processed by the server.' }],
    });

    await t.core.create(pdbs(), pdb('second', { maxUnavailable: 1 }), {}, ctx);
    const two = await refusal(evict('a'));
    expect(two.status).toMatchObject({
      code: 500,
      message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    });
  });
});
