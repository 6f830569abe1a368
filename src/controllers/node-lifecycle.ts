/**
 * Node health, as upstream's node lifecycle and taint eviction controllers (kube-controller-manager's
 * `nodelifecycle` and `taint-eviction-controller`). Ordinary API clients of the core.
 *
 * The node lifecycle controller looks at every node each `monitorPeriodMs` (5 s):
 *
 * - a node is heard from when its kubelet posts a new Ready condition (status or heartbeat time)
 *   or renews its Lease in the node-lease namespace, timed on the controller's clock; one not heard
 *   from for `gracePeriodMs` (`--node-monitor-grace-period`, 50 s) gets its Ready, MemoryPressure,
 *   DiskPressure and PIDPressure conditions set to Unknown (`NodeStatusUnknown`, "Kubelet stopped
 *   posting node status."); one that never posted Ready, `startupGracePeriodMs` (60 s) after it was
 *   created (`NodeStatusNeverUpdated`, "Kubelet never posted node status.");
 * - the node's taints follow its conditions: Ready False → `node.<key domain>/not-ready`, Unknown →
 *   `…/unreachable`, each NoSchedule and NoExecute (the latter with `timeAdded`); MemoryPressure,
 *   DiskPressure, PIDPressure and NetworkUnavailable True → `…/memory-pressure`, `…/disk-pressure`,
 *   `…/pid-pressure`, `…/network-unavailable` NoSchedule; `spec.unschedulable` →
 *   `…/unschedulable` NoSchedule. Other taints are left alone;
 * - while a node is not Ready, the pods bound to it are marked not Ready (their Ready condition
 *   False) with a `NodeNotReady` warning event; the node gets `NodeNotReady` and, once Ready again,
 *   `NodeReady` events.
 *
 * Upstream rate-limits its NoExecute tainting per zone (`--node-eviction-rate`); here a node is
 * tainted at once.
 *
 * The taint eviction controller deletes the pods bound to a node with NoExecute taints: at once
 * when the pod does not tolerate every one of them, else once the shortest `tolerationSeconds` of
 * the tolerations used has passed since it saw the taints (never when none sets one). A pod's
 * scheduled deletion is cancelled when the taints go. Before deleting it sets the pod's
 * `DisruptionTarget` condition (`DeletionByTaintManager`) and records `TaintManagerEviction`.
 */
import type { ApiObject, CoreApi, RequestContext, ResourceTarget, UserInfo } from '../core/api';
import { Informer, type InformerChange } from '../core/informer';
import type { Clock } from '../clock';
import { rfc3339 } from '../clock';
import type { Naming } from '../naming';
import { StatusError } from '../status';
import type { NodeCondition, Taint, Toleration } from '../core/resources/nodes';
import { withDisruptionTarget, type PodCondition } from '../core/resources/pods';
import { EventRecorder } from './events';
import { tolerates } from './scheduler';
import { WorkQueue } from './work-queue';

/** kube-controller-manager's defaults. */
export const NODE_MONITOR_PERIOD_MS = 5_000;
export const NODE_MONITOR_GRACE_PERIOD_MS = 50_000;
export const NODE_STARTUP_GRACE_PERIOD_MS = 60_000;

/** A node's or a pod's condition. */
type Condition = NodeCondition & PodCondition;

type NodeLike = ApiObject & { spec?: { unschedulable?: boolean; taints?: Taint[] }; status?: { conditions?: Condition[] } };
type PodLike = ApiObject & { spec?: { nodeName?: string; tolerations?: Toleration[] }; status?: { conditions?: Condition[] } };

const nodesTarget: ResourceTarget = { group: '', version: 'v1', resource: 'nodes' };
const podsTarget: ResourceTarget = { group: '', version: 'v1', resource: 'pods' };

const conditionsOf = (o: { status?: { conditions?: Condition[] } }) => o.status?.conditions ?? [];
const readyOf = (o: { status?: { conditions?: Condition[] } }) => conditionsOf(o).find((c) => c.type === 'Ready');
const podKey = (pod: ApiObject) => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;

/** Conditions the controller sets to Unknown beside Ready (upstream leaves NetworkUnavailable to the network). */
const REMAINING_CONDITIONS = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];

export interface NodeLifecycleOptions {
  core: CoreApi;
  naming: Naming;
  user: UserInfo;
  /**
   * Who the watches act as (default `user`): upstream's controllers share the controller manager's
   * informers, so the node controller's own role need not read Leases.
   */
  watchAs?: UserInfo;
  /** Whether Leases are served (`--runtime-config`); without them only the Ready condition is heard. Default true. */
  leases?: boolean;
  clock: Clock;
  monitorPeriodMs?: number;
  gracePeriodMs?: number;
  startupGracePeriodMs?: number;
  log?: (message: string) => void;
}

/** When the controller last heard from a node, and what it heard. */
interface Health {
  probe: number;
  readyStatus?: string;
  readyHeartbeat?: string | null;
  leaseRenew?: string;
}

export class NodeLifecycleController {
  private readonly nodes: Informer;
  private readonly leases: Informer | undefined;
  private readonly pods: Informer;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;
  private readonly events: EventRecorder;
  private readonly health = new Map<string, Health>();
  /** Nodes last seen Ready (for the NodeReady / NodeNotReady events). */
  private readonly wasReady = new Map<string, boolean>();
  /** The taint keys this controller sets and removes (`node.<key domain>/<name>`). */
  private readonly taintKey: (name: string) => string;
  private readonly managedTaints: ReadonlySet<string>;
  private cancelMonitor: (() => void) | undefined;

  constructor(private readonly options: NodeLifecycleOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/node-controller' };
    const watch: RequestContext = { ...this.ctx, user: options.watchAs ?? options.user };
    this.queue = new WorkQueue<string>((n) => n, (n) => this.sync(n));
    const onNode = (c?: InformerChange) => (c ? this.queue.add(c.object.metadata!.name!) : this.all());
    this.nodes = new Informer(options.core, nodesTarget, watch, onNode, options.clock);
    this.leases = options.leases === false ? undefined : new Informer(options.core, { group: options.naming.groups.coordination, version: 'v1', resource: 'leases', namespace: options.naming.namespaces.nodeLease }, watch, onNode, options.clock);
    this.pods = new Informer(options.core, podsTarget, watch, (c?: InformerChange) => {
      const node = (c?.object as PodLike | undefined)?.spec?.nodeName;
      if (!c) this.all();
      else if (node && c.type !== 'DELETED') this.queue.add(node);
    }, options.clock);
    this.events = new EventRecorder({ core: options.core, naming: options.naming, clock: options.clock, ctx: this.ctx, controller: 'node-controller', api: 'core', log: options.log });
    this.taintKey = (name) => options.naming.key(name, 'node');
    this.managedTaints = new Set(['not-ready', 'unreachable', 'memory-pressure', 'disk-pressure', 'pid-pressure', 'network-unavailable', 'unschedulable'].map(this.taintKey));
  }

  start(): void {
    const synced = Promise.all([this.nodes.synced, this.leases?.synced, this.pods.synced]);
    this.queue.startWhen(synced, (err) => this.options.log?.(`node-lifecycle-controller: informers failed to start: ${err.message}`));
    this.cancelMonitor = this.options.clock.setInterval(() => this.all(), this.options.monitorPeriodMs ?? NODE_MONITOR_PERIOD_MS);
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    this.cancelMonitor?.();
    this.queue.stop();
    this.nodes.stop();
    this.leases?.stop();
    this.pods.stop();
  }

  private all(): void {
    for (const node of this.nodes.objects.values()) this.queue.add(node.metadata!.name!);
  }

  private async sync(name: string): Promise<void> {
    const node = this.nodes.objects.get(`/${name}`) as NodeLike | undefined;
    if (!node) {
      this.health.delete(name);
      this.wasReady.delete(name);
      return;
    }
    const current = await this.updateHealth(node);
    if (!current) return; // Written: the informer brings the new version back.
    const ready = readyOf(current)?.status === 'True';
    const was = this.wasReady.get(name);
    this.wasReady.set(name, ready);
    if (was !== undefined && was !== ready) {
      const reason = ready ? 'NodeReady' : 'NodeNotReady';
      void this.events.record({ apiVersion: 'v1', kind: 'Node', object: current }, 'Normal', reason, reason, `Node ${name} status is now: ${reason}`);
    }
    if (!(await this.updateTaints(current))) return;
    if (!ready) await this.markPodsNotReady(current);
  }

  /**
   * Time the node's heartbeats; past the grace period, set its conditions to Unknown. Returns the
   * node when nothing was written.
   */
  private async updateHealth(node: NodeLike): Promise<NodeLike | undefined> {
    const now = this.options.clock.now();
    const name = node.metadata!.name!;
    const ready = readyOf(node);
    const lease = this.leases?.objects.get(`${this.options.naming.namespaces.nodeLease}/${name}`);
    const renew = (lease?.spec as { renewTime?: string } | undefined)?.renewTime;
    let h = this.health.get(name);
    if (!h) {
      // A node first seen without a Ready condition is timed from its creation (the startup grace),
      // or from now when the creation is not in this clock's past.
      const created = Date.parse(node.metadata?.creationTimestamp ?? '');
      h = { probe: ready || Number.isNaN(created) ? now : Math.min(created, now), readyStatus: ready?.status, readyHeartbeat: ready?.lastHeartbeatTime, leaseRenew: renew };
      this.health.set(name, h);
    }
    if (ready && (ready.status !== h.readyStatus || ready.lastHeartbeatTime !== h.readyHeartbeat)) {
      // Our own Unknown is not news from the kubelet.
      if (ready.reason !== 'NodeStatusUnknown' && ready.reason !== 'NodeStatusNeverUpdated') h.probe = now;
      h.readyStatus = ready.status;
      h.readyHeartbeat = ready.lastHeartbeatTime;
    }
    if (renew !== undefined && renew !== h.leaseRenew) {
      h.probe = now;
      h.leaseRenew = renew;
    }
    const grace = ready ? this.options.gracePeriodMs ?? NODE_MONITOR_GRACE_PERIOD_MS : this.options.startupGracePeriodMs ?? NODE_STARTUP_GRACE_PERIOD_MS;
    if (now <= h.probe + grace) return node;
    const stamp = rfc3339(now);
    const never = !ready;
    const conditions = conditionsOf(node).map((c) => ({ ...c }));
    let changed = false;
    for (const type of ['Ready', ...REMAINING_CONDITIONS]) {
      const c = conditions.find((x) => x.type === type);
      if (!c) {
        conditions.push({ type, status: 'Unknown', lastHeartbeatTime: node.metadata?.creationTimestamp ?? null, lastTransitionTime: stamp, reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.' });
        changed = true;
      } else if (c.status !== 'Unknown') {
        Object.assign(c, { status: 'Unknown', lastTransitionTime: stamp, reason: never ? 'NodeStatusNeverUpdated' : 'NodeStatusUnknown', message: never ? 'Kubelet never posted node status.' : 'Kubelet stopped posting node status.' });
        changed = true;
      }
    }
    if (!changed) return node;
    await this.write(() => this.options.core.update({ ...nodesTarget, name, subresource: 'status' }, { ...node, status: { ...node.status, conditions } }, {}, this.ctx));
    return undefined;
  }

  /** The taints the node's conditions and spec call for, in place of the ones this controller manages. Returns whether nothing was written. */
  private async updateTaints(node: NodeLike): Promise<boolean> {
    const key = this.taintKey;
    const wanted: Taint[] = [];
    const status = (type: string) => conditionsOf(node).find((c) => c.type === type)?.status;
    const ready = status('Ready');
    if (ready === 'False' || ready === 'Unknown') {
      const k = key(ready === 'False' ? 'not-ready' : 'unreachable');
      wanted.push({ key: k, effect: 'NoSchedule' }, { key: k, effect: 'NoExecute' });
    }
    for (const [type, name] of [['MemoryPressure', 'memory-pressure'], ['DiskPressure', 'disk-pressure'], ['PIDPressure', 'pid-pressure'], ['NetworkUnavailable', 'network-unavailable']] as const) {
      if (status(type) === 'True') wanted.push({ key: key(name), effect: 'NoSchedule' });
    }
    if (node.spec?.unschedulable) wanted.push({ key: key('unschedulable'), effect: 'NoSchedule' });
    const taints = node.spec?.taints ?? [];
    const same = (a: Taint, b: Taint) => a.key === b.key && a.effect === b.effect;
    const kept = taints.filter((t) => !this.managedTaints.has(t.key) || wanted.some((w) => same(w, t)));
    const added = wanted.filter((w) => !taints.some((t) => same(w, t)));
    if (added.length === 0 && kept.length === taints.length) return true;
    const stamp = rfc3339(this.options.clock.now());
    const next = [...kept, ...added.map((t) => (t.effect === 'NoExecute' ? { ...t, timeAdded: stamp } : t))];
    const spec = { ...node.spec } as Record<string, unknown>;
    if (next.length) spec.taints = next;
    else delete spec.taints;
    await this.write(() => this.options.core.update({ ...nodesTarget, name: node.metadata!.name! }, { ...node, spec }, {}, this.ctx));
    return false;
  }

  /** upstream's MarkPodsNotReady: the Ready condition of each pod on the node becomes False. */
  private async markPodsNotReady(node: NodeLike): Promise<void> {
    const name = node.metadata!.name!;
    const stamp = rfc3339(this.options.clock.now());
    for (const pod of [...this.pods.objects.values()] as PodLike[]) {
      if (pod.spec?.nodeName !== name || pod.metadata?.deletionTimestamp) continue;
      const ready = readyOf(pod);
      if (!ready || ready.status === 'False') continue;
      const conditions = conditionsOf(pod).map((c) => (c.type === 'Ready' ? { ...c, status: 'False', lastTransitionTime: stamp } : c));
      const target = { ...podsTarget, namespace: pod.metadata!.namespace!, name: pod.metadata!.name!, subresource: 'status' };
      const written = await this.write(() => this.options.core.update(target, { ...pod, status: { ...pod.status, conditions } }, {}, this.ctx));
      if (written) void this.events.record({ apiVersion: 'v1', kind: 'Pod', object: pod }, 'Warning', 'NodeNotReady', 'NodeNotReady', 'Node is not ready');
    }
  }

  /** A write that a newer version (conflict) or a deletion made moot: the informer brings the next look. */
  private async write(op: () => Promise<unknown>): Promise<boolean> {
    try {
      await op();
      return true;
    } catch (err) {
      if (StatusError.is(err, 'Conflict') || StatusError.is(err, 'NotFound')) return false;
      throw err;
    }
  }
}

export interface TaintEvictionOptions {
  core: CoreApi;
  naming: Naming;
  user: UserInfo;
  /** Who the watches act as (default `user`), as NodeLifecycleOptions.watchAs. */
  watchAs?: UserInfo;
  clock: Clock;
  log?: (message: string) => void;
}

/** The pod's tolerations of every NoExecute taint, or undefined when one is not tolerated. */
function usedTolerations(taints: readonly Taint[], tolerations: readonly Toleration[]): Toleration[] | undefined {
  const used: Toleration[] = [];
  for (const taint of taints) {
    const matching = tolerations.filter((t) => tolerates([t], taint));
    if (matching.length === 0) return undefined;
    used.push(...matching);
  }
  return used;
}

/** upstream's getMinTolerationTime: the shortest tolerationSeconds (a negative one is 0), or undefined for forever. */
function minTolerationMs(tolerations: readonly Toleration[]): number | undefined {
  let min: number | undefined;
  for (const t of tolerations) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) continue;
    const ms = Math.max(0, t.tolerationSeconds) * 1000;
    if (min === undefined || ms < min) min = ms;
  }
  return min;
}

export class TaintEvictionController {
  private readonly nodes: Informer;
  private readonly pods: Informer;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;
  private readonly events: EventRecorder;
  /** Scheduled deletions by pod key: when, and the cancel of the timer. */
  private readonly scheduled = new Map<string, { at: number; cancel: () => void }>();

  constructor(private readonly options: TaintEvictionOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/taint-eviction-controller' };
    const watch: RequestContext = { ...this.ctx, user: options.watchAs ?? options.user };
    this.queue = new WorkQueue<string>((k) => k, (k) => this.sync(k));
    this.nodes = new Informer(options.core, nodesTarget, watch, (c?: InformerChange) => (c ? this.podsOn(c.object.metadata!.name!) : this.all()), options.clock);
    this.pods = new Informer(options.core, podsTarget, watch, (c?: InformerChange) => (c ? this.queue.add(podKey(c.object)) : this.all()), options.clock);
    this.events = new EventRecorder({ core: options.core, naming: options.naming, clock: options.clock, ctx: this.ctx, controller: 'taint-eviction-controller', api: 'core', log: options.log });
  }

  start(): void {
    this.queue.startWhen(Promise.all([this.nodes.synced, this.pods.synced]), (err) => this.options.log?.(`taint-eviction-controller: informers failed to start: ${err.message}`));
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    for (const s of this.scheduled.values()) s.cancel();
    this.scheduled.clear();
    this.queue.stop();
    this.nodes.stop();
    this.pods.stop();
  }

  private all(): void {
    for (const pod of this.pods.objects.values()) this.queue.add(podKey(pod));
  }

  private podsOn(node: string): void {
    for (const pod of this.pods.objects.values() as IterableIterator<PodLike>) if (pod.spec?.nodeName === node) this.queue.add(podKey(pod));
  }

  private unschedule(key: string): void {
    this.scheduled.get(key)?.cancel();
    this.scheduled.delete(key);
  }

  private async sync(key: string): Promise<void> {
    const pod = this.pods.objects.get(key) as PodLike | undefined;
    const nodeName = pod?.spec?.nodeName;
    const node = nodeName ? (this.nodes.objects.get(`/${nodeName}`) as NodeLike | undefined) : undefined;
    const taints = (node?.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');
    if (!pod || pod.metadata?.deletionTimestamp || taints.length === 0) {
      if (pod && this.scheduled.has(key) && taints.length === 0) {
        void this.events.record({ apiVersion: 'v1', kind: 'Pod', object: pod }, 'Normal', 'TaintManagerEviction', 'TaintManagerEviction', `Cancelling deletion of Pod ${key}`);
      }
      this.unschedule(key);
      return;
    }
    const used = usedTolerations(taints, pod.spec?.tolerations ?? []);
    const now = this.options.clock.now();
    let at = now;
    if (used) {
      const wait = minTolerationMs(used);
      if (wait === undefined) return this.unschedule(key);
      // A deletion already scheduled keeps its time (upstream: from when the taint was first seen).
      at = this.scheduled.get(key)?.at ?? now + wait;
    }
    if (at > now) {
      if (!this.scheduled.has(key)) this.scheduled.set(key, { at, cancel: this.options.clock.setTimeout(() => this.queue.add(key), at - now) });
      return;
    }
    // Kept until the pod is deleted: a write that conflicts is tried again at the next look, not after another wait.
    if (!this.scheduled.has(key)) this.scheduled.set(key, { at, cancel: () => undefined });
    if (await this.evict(pod)) this.unschedule(key);
  }

  /** Set the DisruptionTarget condition, record the eviction and delete the pod (gracefully); false when the pod changed meanwhile. */
  private async evict(pod: PodLike): Promise<boolean> {
    const meta = pod.metadata!;
    const target = { ...podsTarget, namespace: meta.namespace!, name: meta.name! };
    const key = podKey(pod);
    void this.events.record({ apiVersion: 'v1', kind: 'Pod', object: pod }, 'Normal', 'TaintManagerEviction', 'TaintManagerEviction', `Marking for deletion Pod ${key}`);
    const conditions = withDisruptionTarget(pod.status?.conditions, 'DeletionByTaintManager', 'Taint manager: deleting due to NoExecute taint', rfc3339(this.options.clock.now()));
    try {
      await this.options.core.update({ ...target, subresource: 'status' }, { ...pod, status: { ...pod.status, conditions } }, {}, this.ctx);
      await this.options.core.delete(target, { preconditions: { uid: meta.uid } }, this.ctx);
      return true;
    } catch (err) {
      if (StatusError.is(err, 'NotFound')) return true;
      // Changed since: the informer brings the next look.
      if (StatusError.is(err, 'Conflict')) return false;
      throw err;
    }
  }
}
