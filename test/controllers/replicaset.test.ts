/**
 * The ReplicaSet controller against a real core on the embedded store: scaling 0 → 100 → 10 → 0
 * converges with the right status, deleted pods are replaced, a template change leaves
 * existing pods alone, orphans are adopted and mislabelled pods released, failed creates show
 * as events and the ReplicaFailure condition, and surplus pods go in upstream's order. On a
 * ManualClock: with minReadySeconds, ready pods count as available once they have been ready
 * that long, with no other event to wake the controller.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ReplicaSetController, podDeletionCostKey, rankForDeletion } from '../../src/controllers';
import { createCore, type ApiObject, type Core, type RequestContext } from '../../src/core';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { ManualClock, rfc3339, systemClock } from '../../src/clock';
import type { AdmissionPlugin } from '../../src/core/admission';
import { StatusError, forbidden } from '../../src/status';
import { ctx as testCtx, eventually, openCore, pods as podsIn, rs as replicaSetsIn, type TestCore } from './support';

const naming = createNaming('kubernetes');
const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const NS = 'apps';
const rsTarget = (name?: string, subresource?: string) => ({
  group: 'apps',
  version: 'v1',
  resource: 'replicasets',
  namespace: NS,
  ...(name ? { name } : {}),
  ...(subresource ? { subresource } : {}),
});
const podTarget = (name?: string) => ({ group: '', version: 'v1', resource: 'pods', namespace: NS, ...(name ? { name } : {}) });

let dir: string;
let core: Core;
let controller: ReplicaSetController;

function replicaSet(name: string, replicas: number, image = 'nginx:1'): ApiObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name, tier: 'web' } }, spec: { containers: [{ name: 'c', image }] } },
    },
  };
}

async function podsOf(name: string): Promise<ApiObject[]> {
  const list = await core.list(podTarget(), { labelSelector: `app=${name}` }, admin);
  return list.items.filter((p) => !p.metadata?.deletionTimestamp);
}

async function scale(name: string, replicas: number): Promise<void> {
  const rs = await core.get(rsTarget(name), {}, admin);
  await core.update(rsTarget(name), { ...rs, spec: { ...(rs.spec as object), replicas } }, {}, admin);
}

async function converged(name: string, replicas: number): Promise<void> {
  await eventually(
    async () => {
      const rs = await core.get(rsTarget(name), {}, admin);
      const status = (rs.status ?? {}) as { replicas?: number; observedGeneration?: number };
      return (await podsOf(name)).length === replicas && (status.replicas ?? 0) === replicas && status.observedGeneration === rs.metadata?.generation;
    },
    { what: `${name} at ${replicas}`, timeoutMs: 20_000 },
  );
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-rs-controller-'));
  const refusePods: AdmissionPlugin = {
    name: 'RefuseLabelledPods',
    validate(a) {
      if (a.resource === 'pods' && a.operation === 'CREATE' && a.object?.metadata?.labels?.refuse === 'yes') {
        throw forbidden({ group: '', resource: 'pods' }, a.name, 'pods are refused here');
      }
    },
  };
  core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0, admission: [refusePods] });
  await core.ready();
  await core.create({ group: '', version: 'v1', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }, {}, admin);
  controller = new ReplicaSetController({ core, naming, user: admin.user, clock: systemClock });
  controller.start();
});

afterAll(async () => {
  controller.stop();
  await core.close();
  await fs.rm(dir, { recursive: true, force: true });
});

test('scales 0 → 100 → 10 → 0 with the right status, owner references and names', async () => {
  await core.create(rsTarget(), replicaSet('web', 0), {}, admin);
  await converged('web', 0);
  await scale('web', 100);
  await converged('web', 100);
  const pods = await podsOf('web');
  const rs = await core.get(rsTarget('web'), {}, admin);
  for (const p of pods) {
    expect(p.metadata?.name).toMatch(/^web-[a-z0-9]{5}$/);
    expect(p.metadata?.labels).toEqual({ app: 'web', tier: 'web' });
    expect(p.metadata?.ownerReferences).toEqual([
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: rs.metadata?.uid, controller: true, blockOwnerDeletion: true },
    ]);
  }
  expect(rs.status).toMatchObject({ replicas: 100, fullyLabeledReplicas: 100, observedGeneration: rs.metadata?.generation });
  // No pod is ready (no node runs them): ready and available are zero, and upstream leaves zero counts out.
  expect((rs.status as { readyReplicas?: number }).readyReplicas ?? 0).toBe(0);
  await scale('web', 10);
  await converged('web', 10);
  await scale('web', 0);
  await converged('web', 0);
});

test('a deleted pod is replaced; a template change leaves existing pods alone', async () => {
  await core.create(rsTarget(), replicaSet('api', 3), {}, admin);
  await converged('api', 3);
  const before = (await podsOf('api')).map((p) => p.metadata!.name!).sort();
  await core.delete(podTarget(before[0]), { gracePeriodSeconds: 0 }, admin);
  await eventually(
    async () => {
      const now = (await podsOf('api')).map((p) => p.metadata!.name!);
      return now.length === 3 && !now.includes(before[0]!);
    },
    { what: 'a replacement', timeoutMs: 20_000 },
  );
  // The controller is still writing the ReplicaSet's status after the replacement: change the
  // template as a client would, read and write again on a conflict (client-go's RetryOnConflict).
  for (let attempt = 1; ; attempt++) {
    const rs = structuredClone(await core.get(rsTarget('api'), {}, admin));
    const spec = rs.spec as { template: { spec: { containers: Array<{ image: string }> } } };
    spec.template.spec.containers[0]!.image = 'nginx:2';
    try {
      await core.update(rsTarget('api'), rs, {}, admin);
      break;
    } catch (err) {
      if (!StatusError.is(err, 'Conflict') || attempt === 5) throw err;
    }
  }
  await converged('api', 3);
  const images = (await podsOf('api')).map((p) => (p.spec as { containers: Array<{ image: string }> }).containers[0]!.image);
  expect(images).toEqual(['nginx:1', 'nginx:1', 'nginx:1']);
});

test('orphans matching the selector are adopted, pods relabelled away are released', async () => {
  const orphan = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'stray', namespace: NS, labels: { app: 'db' } },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  };
  await core.create(podTarget(), orphan, {}, admin);
  await core.create(rsTarget(), replicaSet('db', 2), {}, admin);
  await converged('db', 2);
  const rs = await core.get(rsTarget('db'), {}, admin);
  const stray = await core.get(podTarget('stray'), {}, admin);
  expect(stray.metadata?.ownerReferences).toEqual([expect.objectContaining({ uid: rs.metadata?.uid, controller: true })]);
  // Relabel one: it is released and replaced.
  await core.patch(podTarget('stray'), { type: 'merge', body: { metadata: { labels: { app: 'elsewhere' } } } }, {}, admin);
  await eventually(async () => !(await core.get(podTarget('stray'), {}, admin)).metadata?.ownerReferences, { what: 'the release', timeoutMs: 20_000 });
  await converged('db', 2);
});

test('failed creates show as FailedCreate events and the ReplicaFailure condition, cleared once creates succeed', async () => {
  // The test core's admission refuses pods labelled refuse=yes (as a quota would).
  const bad = replicaSet('broken', 2);
  (bad.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels.refuse = 'yes';
  await core.create(rsTarget(), bad, {}, admin);
  const condition = async () =>
    (
      (await core.get(rsTarget('broken'), {}, admin)).status as { conditions?: Array<{ type: string; reason?: string; message?: string }> } | undefined
    )?.conditions?.find((c) => c.type === 'ReplicaFailure');
  await eventually(async () => !!(await condition()), { what: 'ReplicaFailure', timeoutMs: 20_000 });
  expect(await condition()).toMatchObject({ type: 'ReplicaFailure', reason: 'FailedCreate', message: expect.stringContaining('pods are refused here') });
  const events = await core.list(
    { group: '', version: 'v1', resource: 'events', namespace: NS },
    { fieldSelector: 'involvedObject.name=broken,reason=FailedCreate' },
    admin,
  );
  expect(events.items).toHaveLength(1);
  expect(events.items[0]).toMatchObject({
    type: 'Warning',
    message: expect.stringMatching(/^Error creating: .*pods are refused here/),
    source: { component: 'replicaset-controller' },
  });
  // Slow start: the first batch of one failed, so no second was tried.
  expect(await podsOf('broken')).toHaveLength(0);
  // Fix the template: pods come, the condition goes.
  const rs = structuredClone(await core.get(rsTarget('broken'), {}, admin));
  delete (rs.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels.refuse;
  await core.update(rsTarget('broken'), rs, {}, admin);
  await converged('broken', 2);
  await eventually(async () => !(await condition()), { what: 'the condition cleared', timeoutMs: 20_000 });
});

test("creates and deletes are recorded as core Events, as client-go's legacy recorder writes them for upstream's controller", async () => {
  await core.create(rsTarget(), replicaSet('evented', 1), {}, admin);
  await converged('evented', 1);
  await scale('evented', 0);
  await converged('evented', 0);
  const ofEvented = async () =>
    (
      await core.list(
        { group: '', version: 'v1', resource: 'events', namespace: NS },
        { fieldSelector: 'involvedObject.kind=ReplicaSet,involvedObject.name=evented' },
        admin,
      )
    ).items;
  await eventually(
    async () => {
      const events = await ofEvented();
      return ['SuccessfulCreate', 'SuccessfulDelete'].every((r) => events.some((e) => e.reason === r));
    },
    { what: 'both events', timeoutMs: 20_000 },
  );
  const created = (await ofEvented()).find((e) => e.reason === 'SuccessfulCreate')!;
  expect(created).toMatchObject({
    type: 'Normal',
    message: expect.stringMatching(/^Created pod: evented-[a-z0-9]{5}$/),
    source: { component: 'replicaset-controller' },
    reportingComponent: 'replicaset-controller',
    reportingInstance: '',
    count: 1,
    eventTime: null,
    involvedObject: { apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: NS, name: 'evented' },
  });
  expect(created.firstTimestamp).toBe(created.lastTimestamp);
  expect(created).not.toHaveProperty('action');
});

test('deletion ranking: unscheduled, pending, not ready, cheaper, more restarts, newer go first', () => {
  const pod = (name: string, o: { node?: string; phase?: string; ready?: boolean; cost?: number; restarts?: number; created?: string }): ApiObject => ({
    metadata: {
      name,
      creationTimestamp: o.created ?? '2026-01-01T00:00:00Z',
      ...(o.cost !== undefined ? { annotations: { 'controller.kubernetes.io/pod-deletion-cost': String(o.cost) } } : {}),
    },
    spec: o.node ? { nodeName: o.node } : {},
    status: {
      phase: o.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: o.ready ? 'True' : 'False' }],
      containerStatuses: [{ restartCount: o.restarts ?? 0 }],
    },
  });
  const order = rankForDeletion(
    [
      pod('running-ready-old', { node: 'n', ready: true }),
      pod('running-ready-new', { node: 'n', ready: true, created: '2026-02-01T00:00:00Z' }),
      pod('running-ready-restarts', { node: 'n', ready: true, restarts: 3 }),
      pod('running-ready-costly', { node: 'n', ready: true, cost: 100 }),
      pod('running-notready', { node: 'n' }),
      pod('pending', { node: 'n', phase: 'Pending' }),
      pod('unscheduled', { phase: 'Pending' }),
    ],
    podDeletionCostKey(naming),
  ).map((p) => p.metadata!.name);
  expect(order).toEqual([
    'unscheduled',
    'pending',
    'running-notready',
    'running-ready-restarts',
    'running-ready-new',
    'running-ready-old',
    'running-ready-costly',
  ]);
});

test('a ReplicaSet asking for very many pods never starves the process: a timer fires while it works', async () => {
  // Found by the fuzzer: in process a sync of the controller completes in the microtask queue,
  // so one with endless work (replicas: 3000 here, 2^31-1 there) held off every request.
  await core.create(rsTarget(), replicaSet('many', 3000), {}, admin);
  // A 0 ms timer is the point, not a pause: it must get its turn while the controller works.
  const atTimer = await new Promise<number>((resolve) => setTimeout(() => void podsOf('many').then((p) => resolve(p.length)), 0));
  expect(atTimer).toBeLessThan(3000);
  await scale('many', 0);
  await converged('many', 0);
});

describe('minReadySeconds on a ManualClock', () => {
  let t: TestCore;
  let clock: ManualClock;
  let rsController: ReplicaSetController;
  type RsStatus = { readyReplicas?: number; availableReplicas?: number };

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 1));
    t = await openCore({}, clock);
    rsController = new ReplicaSetController({ core: t.core, naming, user: testCtx.user, clock });
    rsController.start();
  });

  afterEach(async () => {
    rsController.stop();
    await t.close();
  });

  async function createSlow(minReadySeconds: number): Promise<string[]> {
    const slow = replicaSet('slow', 2);
    slow.metadata = { name: 'slow' };
    (slow.spec as { minReadySeconds?: number }).minReadySeconds = minReadySeconds;
    await t.core.create(replicaSetsIn('default'), slow, {}, testCtx);
    let names: string[] = [];
    await eventually(async () => {
      names = (await t.core.list(podsIn('default'), { labelSelector: 'app=slow' }, testCtx)).items.map((p) => p.metadata!.name!);
      return names.length === 2;
    });
    return names;
  }

  /** The pod Running and Ready from the clock's now, as a kubelet reports it. */
  async function makeReady(name: string): Promise<void> {
    const current = await t.core.get(podsIn('default', name), {}, testCtx);
    const now = rfc3339(clock.now());
    const conditions = ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
      type,
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: now,
    }));
    await t.core.update({ ...podsIn('default', name), subresource: 'status' }, { ...current, status: { phase: 'Running', conditions } }, {}, testCtx);
  }

  const status = async () => ((await t.core.get(replicaSetsIn('default', 'slow'), {}, testCtx)).status ?? {}) as RsStatus;
  /** The status once the controller has seen `ready` ready pods and has nothing left to do. */
  async function settled(ready: number): Promise<RsStatus> {
    await eventually(async () => (await status()).readyReplicas === ready);
    await rsController.idle();
    return status();
  }

  test('pods ready together are unavailable for the first minReadySeconds, then both available', async () => {
    const names = await createSlow(6);
    for (const name of names) await makeReady(name);
    expect((await settled(2)).availableReplicas ?? 0).toBe(0);
    clock.advance(5_999);
    expect((await settled(2)).availableReplicas ?? 0).toBe(0);
    // No pod changes at minReadySeconds: the controller looks again on its own.
    clock.advance(1);
    await eventually(async () => (await status()).availableReplicas === 2);
  });

  test('each pod becomes available minReadySeconds after it became ready, the others ready or not', async () => {
    const [first, second] = await createSlow(6);
    await makeReady(first!);
    expect((await settled(1)).availableReplicas ?? 0).toBe(0);
    // The other pod is not ready: the first still counts once its time has come.
    clock.advance(6_000);
    await eventually(async () => (await status()).availableReplicas === 1);
    clock.advance(1_000);
    await makeReady(second!);
    expect((await settled(2)).availableReplicas).toBe(1);
    clock.advance(5_999);
    expect((await settled(2)).availableReplicas).toBe(1);
    clock.advance(1);
    await eventually(async () => (await status()).availableReplicas === 2);
  });
});
