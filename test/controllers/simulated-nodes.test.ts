/**
 * Simulated nodes and the scheduler against the in-process core on the embedded store: nodes
 * register and heartbeat, pending pods are bound and run, unschedulable pods say why, and
 * graceful deletion finishes.
 */
import type { ApiObject, ResourceTarget } from '../../src/core';
import { ReplicaSetController, Scheduler, SCHEDULER_USER, SimulatedNodes, fitErrorMessage, nodeMatches, podRequest, tolerates } from '../../src/controllers';
import { createNaming } from '../../src/naming';
import { ManualClock, systemClock } from '../../src/clock';
import { ctx, eventually, getOrUndefined, openCore, pods, replicaSet, rs, type TestCore } from './support';

const naming = createNaming('kubernetes');
const nodes = (name?: string, subresource?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'nodes', name, subresource });
const leases = (name?: string): ResourceTarget => ({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: 'kube-node-lease', name });
const events = (ns: string): ResourceTarget => ({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: ns });

type PodLike = ApiObject & {
  spec: { nodeName?: string };
  status: { phase?: string; podIP?: string; hostIP?: string; conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
};

function plainPod(name: string, spec: Record<string, unknown> = {}): ApiObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...spec } };
}

async function podsIn(core: TestCore['core'], ns: string): Promise<PodLike[]> {
  return (await core.list(pods(ns), {}, ctx)).items as PodLike[];
}

describe('simulated nodes and the scheduler', () => {
  let t: TestCore;
  let sim: SimulatedNodes;
  let scheduler: Scheduler;

  beforeEach(async () => {
    t = await openCore();
    sim = new SimulatedNodes({ core: t.core, naming, clock: systemClock, count: 2, watchAs: SCHEDULER_USER });
    scheduler = new Scheduler({ core: t.core, naming, clock: systemClock });
    sim.start();
    scheduler.start();
    await eventually(async () => (await t.core.list(nodes(), {}, ctx)).items.length === 2);
  });

  afterEach(async () => {
    scheduler.stop();
    sim.stop();
    await t.close();
  });

  it('registers Ready nodes with upstream labels, capacity and a pod CIDR, each heartbeating through a Lease it owns', async () => {
    const node = await t.core.get(nodes('keelson-node-1'), {}, ctx);
    expect(node.metadata?.labels).toMatchObject({ 'kubernetes.io/hostname': 'keelson-node-1', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' });
    expect(node.spec).toMatchObject({ podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] });
    const status = node.status as {
      capacity: Record<string, string>;
      conditions: Array<{ type: string; status: string; reason: string }>;
      nodeInfo: { kubeletVersion: string };
    };
    expect(status.capacity.pods).toBe('110');
    expect(status.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    expect(status.nodeInfo.kubeletVersion).toBe('v1.32.0');
    await eventually(async () => (await getOrUndefined(t.core, leases('keelson-node-1'))) !== undefined);
    const lease = await t.core.get(leases('keelson-node-1'), {}, ctx);
    expect(lease.spec).toMatchObject({ holderIdentity: 'keelson-node-1', leaseDurationSeconds: 40 });
    expect(lease.metadata?.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Node', name: 'keelson-node-1', uid: node.metadata?.uid }]);
  });

  it('binds pending pods spread over the nodes and runs them: Running, Ready, IPs from the node CIDR, Scheduled events', async () => {
    for (const name of ['a', 'b', 'c', 'd']) await t.core.create(pods('default'), plainPod(name), {}, ctx);
    await eventually(async () => (await podsIn(t.core, 'default')).every((p) => p.status.phase === 'Running'));
    const all = await podsIn(t.core, 'default');
    const perNode = new Map<string, number>();
    for (const p of all) perNode.set(p.spec.nodeName!, (perNode.get(p.spec.nodeName!) ?? 0) + 1);
    expect(Object.fromEntries(perNode)).toEqual({ 'keelson-node-0': 2, 'keelson-node-1': 2 });
    for (const p of all) {
      const index = p.spec.nodeName!.endsWith('0') ? 0 : 1;
      expect(p.status.podIP).toMatch(new RegExp(`^10\\.244\\.${index}\\.\\d+$`));
      expect(
        p.status.conditions
          ?.filter((c) => c.status === 'True')
          .map((c) => c.type)
          .sort(),
      ).toEqual(['ContainersReady', 'Initialized', 'PodReadyToStartContainers', 'PodScheduled', 'Ready']);
    }
    expect(new Set(all.map((p) => p.status.podIP)).size).toBe(4);
    await eventually(async () => (await t.core.list(events('default'), {}, ctx)).items.filter((e) => e.reason === 'Scheduled').length === 4);
    const scheduled = (await t.core.list(events('default'), {}, ctx)).items.find((e) => (e.regarding as { name: string }).name === 'a')!;
    expect(scheduled).toMatchObject({
      type: 'Normal',
      reportingController: 'default-scheduler',
      note: `Successfully assigned default/a to ${all.find((p) => p.metadata?.name === 'a')!.spec.nodeName}`,
    });
  });

  it('leaves a pod no node fits Pending with upstream reason and message, and binds it once a node fits', async () => {
    await t.core.create(pods('default'), plainPod('picky', { nodeSelector: { disk: 'ssd' } }), {}, ctx);
    const message =
      "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
    await eventually(
      async () =>
        ((await t.core.get(pods('default', 'picky'), {}, ctx)) as PodLike).status.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False') ===
        true,
    );
    const pending = (await t.core.get(pods('default', 'picky'), {}, ctx)) as PodLike;
    expect(pending.status.phase).toBe('Pending');
    expect(pending.status.conditions?.find((c) => c.type === 'PodScheduled')).toMatchObject({ reason: 'Unschedulable', message });
    await eventually(async () =>
      (await t.core.list(events('default'), {}, ctx)).items.some((e) => e.reason === 'FailedScheduling' && e.note === message && e.type === 'Warning'),
    );
    await t.core.patch(nodes('keelson-node-1'), { type: 'merge', body: { metadata: { labels: { disk: 'ssd' } } } }, {}, ctx);
    await eventually(async () => ((await t.core.get(pods('default', 'picky'), {}, ctx)) as PodLike).status.phase === 'Running');
    expect(((await t.core.get(pods('default', 'picky'), {}, ctx)) as PodLike).spec.nodeName).toBe('keelson-node-1');
  });

  it('keeps pods off a cordoned node and off nodes with taints they do not tolerate', async () => {
    await t.core.patch(nodes('keelson-node-0'), { type: 'merge', body: { spec: { unschedulable: true } } }, {}, ctx);
    await t.core.patch(
      nodes('keelson-node-1'),
      { type: 'merge', body: { spec: { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] } } },
      {},
      ctx,
    );
    await t.core.create(pods('default'), plainPod('x'), {}, ctx);
    await t.core.create(
      pods('default'),
      plainPod('db', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }] }),
      {},
      ctx,
    );
    await eventually(async () => ((await t.core.get(pods('default', 'db'), {}, ctx)) as PodLike).spec.nodeName === 'keelson-node-1');
    await eventually(
      async () => ((await t.core.get(pods('default', 'x'), {}, ctx)) as PodLike).status.conditions?.some((c) => c.reason === 'Unschedulable') === true,
    );
    const x = (await t.core.get(pods('default', 'x'), {}, ctx)) as PodLike;
    expect(x.status.conditions?.find((c) => c.type === 'PodScheduled')?.message).toBe(
      '0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: db}, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
    );
  });

  it('counts what bound pods request of their node, and frees it when a pod finishes or goes', async () => {
    // Each node has 32 cpus: 20 fit once per node, and a third pod of 20 fits nowhere.
    const big = (name: string) => plainPod(name, { containers: [{ name: 'app', image: 'nginx:1.27', resources: { requests: { cpu: '20' } } }] });
    await t.core.create(pods('default'), big('big-a'), {}, ctx);
    await t.core.create(pods('default'), big('big-b'), {}, ctx);
    await eventually(async () => (await podsIn(t.core, 'default')).filter((p) => p.status.phase === 'Running').length === 2);
    expect(new Set((await podsIn(t.core, 'default')).map((p) => p.spec.nodeName)).size).toBe(2);
    await t.core.create(pods('default'), big('big-c'), {}, ctx);
    const unschedulable = async (name: string) =>
      ((await t.core.get(pods('default', name), {}, ctx)) as PodLike).status.conditions?.find((c) => c.type === 'PodScheduled');
    await eventually(async () => (await unschedulable('big-c'))?.reason === 'Unschedulable');
    expect((await unschedulable('big-c'))?.message).toBe(
      '0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.',
    );
    // big-a finishes: its node has room again, and big-c goes there.
    const a = (await t.core.get(pods('default', 'big-a'), {}, ctx)) as PodLike;
    await t.core.update({ ...pods('default', 'big-a'), subresource: 'status' }, { ...a, status: { ...a.status, phase: 'Succeeded' } }, {}, ctx);
    await eventually(async () => ((await t.core.get(pods('default', 'big-c'), {}, ctx)) as PodLike).spec.nodeName === a.spec.nodeName);
    // A fourth fits nowhere until big-b goes.
    await t.core.create(pods('default'), big('big-d'), {}, ctx);
    await eventually(async () => (await unschedulable('big-d'))?.reason === 'Unschedulable');
    const b = (await t.core.get(pods('default', 'big-b'), {}, ctx)) as PodLike;
    await t.core.delete(pods('default', 'big-b'), { gracePeriodSeconds: 0 }, ctx);
    await eventually(async () => ((await t.core.get(pods('default', 'big-d'), {}, ctx)) as PodLike).spec.nodeName === b.spec.nodeName);
  });

  it('finishes the graceful deletion of a running pod', async () => {
    await t.core.create(pods('default'), plainPod('web'), {}, ctx);
    await eventually(async () => ((await t.core.get(pods('default', 'web'), {}, ctx)) as PodLike).status.phase === 'Running');
    const deleted = await t.core.delete(pods('default', 'web'), {}, ctx);
    // Marked first (the pod is bound and running), then removed by its node.
    expect((deleted.object as ApiObject).metadata?.deletionTimestamp).toBeDefined();
    await eventually(async () => (await getOrUndefined(t.core, pods('default', 'web'))) === undefined);
  });

  it('runs a ReplicaSet to ready and available replicas, and replaces a deleted pod', async () => {
    const controller = new ReplicaSetController({ core: t.core, naming, user: ctx.user, clock: systemClock });
    controller.start();
    try {
      await t.core.create(rs('default'), { ...replicaSet('web'), spec: { ...(replicaSet('web').spec as object), replicas: 3 } }, {}, ctx);
      const statusOf = async () =>
        (await t.core.get(rs('default', 'web'), {}, ctx)).status as { replicas?: number; readyReplicas?: number; availableReplicas?: number };
      await eventually(async () => (await statusOf()).availableReplicas === 3);
      expect(await statusOf()).toMatchObject({ replicas: 3, readyReplicas: 3, availableReplicas: 3 });
      const victim = (await podsIn(t.core, 'default'))[0]!;
      await t.core.delete(pods('default', victim.metadata!.name!), {}, ctx);
      await eventually(async () => {
        const now = await podsIn(t.core, 'default');
        return now.length === 3 && !now.some((p) => p.metadata?.uid === victim.metadata?.uid) && now.every((p) => p.status.phase === 'Running');
      });
      await eventually(async () => (await statusOf()).readyReplicas === 3);
    } finally {
      controller.stop();
    }
  });
});

describe('node heartbeats on the injected clock', () => {
  it('renews each node Lease every 10 s', async () => {
    const t = await openCore();
    const clock = new ManualClock(Date.UTC(2026, 10, 25, 9, 0, 0));
    const sim = new SimulatedNodes({ core: t.core, naming, clock, count: 1, watchAs: SCHEDULER_USER });
    try {
      sim.start();
      await eventually(async () => (await getOrUndefined(t.core, leases('keelson-node-0'))) !== undefined);
      const renewTime = async () => ((await t.core.get(leases('keelson-node-0'), {}, ctx)).spec as { renewTime: string }).renewTime;
      expect(await renewTime()).toBe('2026-11-25T09:00:00.000000Z');
      clock.advance(10_000);
      await eventually(async () => (await renewTime()) === '2026-11-25T09:00:10.000000Z');
    } finally {
      sim.stop();
      await t.close();
    }
  });
});

describe('scheduling rules', () => {
  it('matches tolerations as upstream: Exists with no key tolerates everything; Equal needs key and value', () => {
    const taint = { key: 'k', value: 'v', effect: 'NoSchedule' };
    expect(tolerates([{ operator: 'Exists' }], taint)).toBe(true);
    expect(tolerates([{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }], taint)).toBe(true);
    expect(tolerates([{ key: 'k', value: 'v' }], taint)).toBe(true);
    expect(tolerates([{ key: 'k', value: 'w' }], taint)).toBe(false);
    expect(tolerates([{ key: 'k', value: 'v', effect: 'NoExecute' }], taint)).toBe(false);
  });

  it('matches node selectors and required node affinity', () => {
    const node = { metadata: { name: 'n1', labels: { zone: 'a', size: '8' } } };
    const withAffinity = (terms: unknown[]) => ({
      spec: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } } },
    });
    expect(nodeMatches({ spec: { nodeSelector: { zone: 'a' } } }, node)).toBe(true);
    expect(nodeMatches({ spec: { nodeSelector: { zone: 'b' } } }, node)).toBe(false);
    expect(nodeMatches(withAffinity([{ matchExpressions: [{ key: 'size', operator: 'Gt', values: ['4'] }] }]), node)).toBe(true);
    expect(
      nodeMatches(
        withAffinity([
          { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] },
          { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
        ]),
        node,
      ),
    ).toBe(true);
    expect(nodeMatches(withAffinity([{}]), node)).toBe(false);
  });

  it('sums the requests of a pod exactly, in millicores and bytes rounded up as upstream, init containers and overhead included', () => {
    const requests = (cpu?: string, memory?: string) => ({ name: 'c', resources: { requests: { ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) } } });
    const pod = {
      spec: {
        containers: [requests('0.1', '1Gi'), requests('200m', '1'), requests('1u')],
        initContainers: [requests('250m', '9007199254740993'), requests('lots', 'more')],
        overhead: { cpu: '10m', memory: '1Ki' },
      },
    };
    // cpu: 100 + 200 + 1 (1u rounded up) = 301 > 250, plus 10; memory: the init container's 2^53 + 1 > 1Gi + 1, plus 1Ki.
    expect(podRequest(pod)).toEqual({ cpu: 311n, memory: 9007199254740993n + 1024n });
    expect(podRequest({ spec: { containers: [{ name: 'c' }] } })).toEqual({ cpu: 0n, memory: 0n });
  });

  it('words a fit error as upstream', () => {
    expect(fitErrorMessage(0, new Map())).toBe('no nodes available to schedule pods');
    expect(
      fitErrorMessage(
        3,
        new Map([
          ['Too many pods', 2],
          ['Insufficient cpu', 1],
        ]),
      ),
    ).toBe(
      '0/3 nodes are available: 1 Insufficient cpu, 2 Too many pods. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.',
    );
  });
});
