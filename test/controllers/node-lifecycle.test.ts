/**
 * The node lifecycle and taint eviction controllers against the in-process core (embedded store),
 * on a ManualClock: the test acts as the node's kubelet (its Lease and Ready condition), and the
 * controllers mark the node Unknown once it goes quiet, taint it, mark its pods not Ready and
 * evict them by their tolerations; a node heard from again loses its taints.
 */
import type { ApiObject, ResourceTarget } from '../../src/core';
import { NodeLifecycleController, TaintEvictionController } from '../../src/controllers';
import { createNaming } from '../../src/naming';
import { ManualClock, rfc3339, rfc3339Micro } from '../../src/clock';
import { type InformerView, SharedInformers } from '../../src/core/informer';
import { ctx, eventually, getOrUndefined, openCore, pods, type TestCore } from './support';
import { caughtUp } from '../support/informers';

const naming = createNaming('kubernetes');
const nodes = (name?: string, subresource?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'nodes', name, subresource });
const leases = (name?: string): ResourceTarget => ({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: 'kube-node-lease', name });
const coreEvents = (ns: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'events', namespace: ns });

type Condition = { type: string; status: string; reason?: string; message?: string; lastHeartbeatTime?: string; lastTransitionTime?: string };
type Taint = { key: string; effect: string; timeAdded?: string };
type NodeLike = ApiObject & { spec?: { taints?: Taint[] }; status?: { conditions?: Condition[] } };
type PodLike = ApiObject & { status?: { conditions?: Condition[] } };

const UNREACHABLE = 'node.kubernetes.io/unreachable';

describe('node lifecycle and taint eviction', () => {
  let t: TestCore;
  let clock: ManualClock;
  let lifecycle: NodeLifecycleController;
  let eviction: TaintEvictionController;
  /** The Leases as the controllers' shared informer holds them. */
  let leaseView: InformerView;

  const node = async (name: string) => (await t.core.get(nodes(name), {}, ctx)) as NodeLike;
  const ready = (n: NodeLike) => n.status?.conditions?.find((c) => c.type === 'Ready');
  const podReady = (p: PodLike) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status;

  /** What the node's kubelet does: post Ready with a fresh heartbeat, and renew its Lease. */
  async function postReady(name: string): Promise<void> {
    const current = await node(name);
    const stamp = rfc3339(clock.now());
    const conditions: Condition[] = [
      {
        type: 'MemoryPressure',
        status: 'False',
        reason: 'KubeletHasSufficientMemory',
        message: 'kubelet has sufficient memory available',
        lastHeartbeatTime: stamp,
        lastTransitionTime: stamp,
      },
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'kubelet is posting ready status',
        lastHeartbeatTime: stamp,
        lastTransitionTime: stamp,
      },
    ];
    await t.core.update(nodes(name, 'status'), { ...current, status: { ...current.status, conditions } }, {}, ctx);
  }

  async function renewLease(name: string): Promise<void> {
    const spec = { holderIdentity: name, leaseDurationSeconds: 40, renewTime: rfc3339Micro(clock.now()) };
    const current = await getOrUndefined(t.core, leases(name));
    if (current) await t.core.update(leases(name), { ...current, spec }, {}, ctx);
    else
      await t.core.create(leases(), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: 'kube-node-lease' }, spec }, {}, ctx);
  }

  async function runningPod(name: string, tolerations?: unknown[]): Promise<void> {
    const spec: Record<string, unknown> = { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx:1.27' }] };
    if (tolerations) spec.tolerations = tolerations;
    const created = await t.core.create(pods('default'), { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec }, {}, ctx);
    const stamp = rfc3339(clock.now());
    const conditions = ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
      type,
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: stamp,
    }));
    await t.core.update({ ...pods('default', name), subresource: 'status' }, { ...created.object, status: { phase: 'Running', conditions } }, {}, ctx);
  }

  const pod = (name: string) => getOrUndefined(t.core, pods('default', name)) as Promise<PodLike | undefined>;
  const settle = async () => {
    await lifecycle.idle();
    await eviction.idle();
  };
  const noExecute = async (name: string) => ((await node(name)).spec?.taints ?? []).filter((x) => x.effect === 'NoExecute');

  /**
   * Nodes whose kubelet the test plays through every step of the clock: n2 by default, so that
   * n1 going quiet is one node of two and not the whole cluster (which upstream's controller
   * takes for its own fault and taints nothing: master disruption mode).
   */
  let alive: Set<string>;

  /** The clock moves `ms`; the live nodes renew their Leases, which the controllers hear; they settle. */
  async function step(ms: number): Promise<void> {
    clock.advance(ms);
    for (const name of alive) await renewLease(name);
    await caughtUp(leaseView, t.core, leases(), ctx);
    await settle();
  }

  /** The clock moves `ms` in steps of at most 20 s, so that the live nodes stay Ready. */
  async function pass(ms: number): Promise<void> {
    for (let left = ms; left > 0; left -= 20_000) await step(Math.min(left, 20_000));
  }

  /** Steps of `stepMs` until `condition` holds (checked before each step; at most `maxMs`). */
  async function passUntil(condition: () => Promise<boolean>, stepMs: number, maxMs = 600_000): Promise<void> {
    for (let moved = 0; !(await condition()); moved += stepMs) {
      if (moved >= maxMs) throw new Error(`condition not met within ${maxMs} ms of the clock`);
      await step(stepMs);
    }
  }

  /** The zone figures the controller reported (upstream's node_collector metrics), by zone key. */
  const zones = new Map<string, { size: number; unhealthy: number }>();
  const evicted = new Map<string, number>();

  beforeEach(async () => {
    t = await openCore();
    clock = new ManualClock(Date.UTC(2026, 0, 1));
    await t.core.create(nodes(), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }, {}, ctx);
    await postReady('n1');
    await renewLease('n1');
    await t.core.create(nodes(), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } }, {}, ctx);
    await postReady('n2');
    await renewLease('n2');
    alive = new Set(['n2']);
    // A pod that does not wait, one with the 300 s the DefaultTolerationSeconds plugin gives, one that tolerates forever.
    await runningPod('at-once', [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 }]);
    await runningPod('default-toleration', [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }]);
    await runningPod('forever', [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute' }]);
    const informers = new SharedInformers(t.core, ctx, clock);
    leaseView = informers.watch(leases(), () => undefined);
    const options = { core: t.core, naming, clock, user: ctx.user, informers };
    zones.clear();
    evicted.clear();
    lifecycle = new NodeLifecycleController({
      ...options,
      metrics: {
        zone: (key, size, unhealthy) => void zones.set(key, { size, unhealthy }),
        forget: (key) => void zones.delete(key),
        evicted: (key) => void evicted.set(key, (evicted.get(key) ?? 0) + 1),
      },
    });
    eviction = new TaintEvictionController(options);
    lifecycle.start();
    eviction.start();
    await settle();
  });

  afterEach(async () => {
    lifecycle.stop();
    eviction.stop();
    leaseView.stop();
    await t.close();
  });

  it('a node heard from through its Lease stays Ready; one quiet for 50 s is Unknown, tainted, its pods not Ready, and evicted by their tolerations', async () => {
    // The Lease alone keeps the node Ready, as the kubelet's heartbeat between status reports
    // (the controller hears of the renewal at 30 s, or at the latest at its look at 55 s).
    await pass(30_000);
    await renewLease('n1');
    await pass(25_000);
    expect(ready(await node('n1'))).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    expect((await node('n1')).spec?.taints).toBeUndefined();

    await passUntil(async () => ((await node('n1')).spec?.taints ?? []).length === 2, 5_000);
    const quiet = await node('n1');
    expect(ready(quiet)).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' });
    expect(quiet.status?.conditions?.find((c) => c.type === 'MemoryPressure')).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown' });
    const taints = (await node('n1')).spec!.taints!;
    expect(taints.map(({ key, effect }) => ({ key, effect }))).toEqual([
      { key: UNREACHABLE, effect: 'NoSchedule' },
      { key: UNREACHABLE, effect: 'NoExecute' },
    ]);
    expect(taints[1]!.timeAdded).toBe(rfc3339(clock.now()));

    // Pods on it are not Ready; the one that does not wait is evicted now, with upstream's condition.
    await eventually(async () => podReady((await pod('forever'))!) === 'False' && podReady((await pod('default-toleration'))!) === 'False');
    await eventually(async () => (await pod('at-once'))?.metadata?.deletionTimestamp !== undefined);
    expect((await pod('at-once'))!.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'DeletionByTaintManager',
      message: 'Taint manager: deleting due to NoExecute taint',
    });
    await settle();
    expect((await pod('default-toleration'))?.metadata?.deletionTimestamp).toBeUndefined();

    // The 300 s toleration runs out; the one without tolerationSeconds stays.
    await pass(299_000);
    expect((await pod('default-toleration'))?.metadata?.deletionTimestamp).toBeUndefined();
    await pass(1_000);
    await eventually(async () => (await pod('default-toleration'))?.metadata?.deletionTimestamp !== undefined);
    await settle();
    expect((await pod('forever'))?.metadata?.deletionTimestamp).toBeUndefined();

    const events = (await t.core.list(coreEvents('default'), {}, ctx)).items as Array<
      ApiObject & { reason?: string; message?: string; involvedObject?: { kind?: string; name?: string } }
    >;
    expect(events.find((e) => e.involvedObject?.kind === 'Node' && e.reason === 'NodeNotReady')?.message).toBe('Node n1 status is now: NodeNotReady');
    expect(events.find((e) => e.involvedObject?.name === 'forever' && e.reason === 'NodeNotReady')?.message).toBe('Node is not ready');
    expect(events.find((e) => e.involvedObject?.name === 'at-once' && e.reason === 'TaintManagerEviction')?.message).toBe(
      'Marking for deletion Pod default/at-once',
    );
  });

  it('a node that reports again loses its taints, and a scheduled eviction is cancelled', async () => {
    await passUntil(async () => ((await node('n1')).spec?.taints ?? []).length === 2, 5_000);
    await pass(100_000);
    await postReady('n1');
    await renewLease('n1');
    await eventually(async () => (await node('n1')).spec?.taints === undefined);
    expect(ready(await node('n1'))?.status).toBe('True');
    // Past the 300 s the pod would have had: it stays.
    await pass(250_000);
    expect((await pod('default-toleration'))?.metadata?.deletionTimestamp).toBeUndefined();
    const events = (await t.core.list(coreEvents('default'), {}, ctx)).items as Array<ApiObject & { reason?: string; message?: string }>;
    expect(events.some((e) => e.reason === 'NodeReady' && e.message === 'Node n1 status is now: NodeReady')).toBe(true);
    expect(events.some((e) => e.reason === 'TaintManagerEviction' && e.message === 'Cancelling deletion of Pod default/default-toleration')).toBe(true);
  });

  it('a lone node that goes quiet is not tainted NoExecute: every zone lost, the controller blames itself (master disruption mode)', async () => {
    await t.core.delete(nodes('n2'), {}, ctx);
    alive = new Set();
    await passUntil(async () => ready(await node('n1'))?.status === 'Unknown', 5_000);
    await pass(60_000);
    expect((await node('n1')).spec?.taints).toEqual([{ key: UNREACHABLE, effect: 'NoSchedule' }]);
    expect((await pod('at-once'))?.metadata?.deletionTimestamp).toBeUndefined();
    // Back: tainting resumes for the next node that goes quiet, its grace period started over.
    await postReady('n1');
    await renewLease('n1');
    await eventually(async () => (await node('n1')).spec?.taints === undefined);
  });

  it('new NoExecute taints in a zone come at --node-eviction-rate, 0.1 a second', async () => {
    const zone = { 'topology.kubernetes.io/zone': 'a' };
    for (const name of ['z1', 'z2', 'z3', 'z4']) {
      await t.core.create(nodes(), { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: zone } }, {}, ctx);
      await postReady(name);
      await renewLease(name);
    }
    // z1 and z2 go quiet together: two of four, the zone stays Normal.
    alive = new Set(['n1', 'n2', 'z3', 'z4']);
    await passUntil(async () => (await noExecute('z1')).length + (await noExecute('z2')).length > 0, 1_000);
    const first = clock.now();
    const [early, late] = (await noExecute('z1')).length > 0 ? ['z1', 'z2'] : ['z2', 'z1'];
    expect(await noExecute(early)).toEqual([{ key: UNREACHABLE, effect: 'NoExecute', timeAdded: rfc3339(first) }]);
    expect(ready(await node(late))?.status).toBe('Unknown');
    await passUntil(async () => (await noExecute(late)).length > 0, 1_000, 30_000);
    expect(clock.now() - first).toBe(10_000);
    expect((await noExecute(late))[0]!.timeAdded).toBe(rfc3339(first + 10_000));
    // The node collector's figures: zone `a` (no region) has four nodes, two not Ready, two tainted.
    await pass(5_000);
    expect(zones.get(':\u0000:a')).toEqual({ size: 4, unhealthy: 2 });
    expect(evicted.get(':\u0000:a')).toBe(2);
    expect(zones.get('')).toEqual({ size: 2, unhealthy: 0 });
  });

  it('a small zone that has lost most of its nodes (PartialDisruption) taints none of them NoExecute', async () => {
    const zone = { 'topology.kubernetes.io/zone': 'b' };
    await t.core.create(nodes(), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'y1', labels: zone } }, {}, ctx);
    await postReady('y1');
    await renewLease('y1');
    // Three of four never post Ready: more than two and over 55%, in a zone of at most 50 nodes.
    for (const name of ['y2', 'y3', 'y4']) await t.core.create(nodes(), { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: zone } }, {}, ctx);
    alive = new Set(['n1', 'n2', 'y1']);
    await passUntil(async () => (await Promise.all(['y2', 'y3', 'y4'].map(node))).every((n) => ready(n)?.status === 'Unknown'), 5_000);
    await pass(120_000);
    for (const name of ['y2', 'y3', 'y4']) expect((await node(name)).spec?.taints).toEqual([{ key: UNREACHABLE, effect: 'NoSchedule' }]);
  });

  it('a node that never posts Ready is Unknown 60 s after it was created (NodeStatusNeverUpdated)', async () => {
    await t.core.create(nodes(), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'silent' } }, {}, ctx);
    clock.advance(55_000);
    await renewLease('n1');
    await settle();
    expect(ready(await node('silent'))).toBeUndefined();
    clock.advance(70_000);
    await eventually(async () => ready(await node('silent'))?.status === 'Unknown');
    expect(ready(await node('silent'))).toMatchObject({ reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.' });
  });
});
