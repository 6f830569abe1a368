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
 * New NoExecute taints are rate-limited per zone (a node's `topology.<key domain>/region` and
 * `…/zone` labels, or the deprecated `failure-domain.beta.<key domain>/…` ones), as upstream's
 * tainting queues: each zone has a token bucket of one on the controller's clock, filled at
 * `--node-eviction-rate` (0.1 nodes a second) while its state is Normal. A zone with more than
 * two nodes not Ready and at least `--unhealthy-zone-threshold` (55%) of them is in
 * PartialDisruption: `--secondary-node-eviction-rate` (0.01) when it has more than
 * `--large-cluster-size-threshold` (50) nodes, else none. A zone with no Ready node is in
 * FullDisruption and taints at the normal rate, unless every zone is: then the controller
 * assumes the fault is its own (it cannot hear the nodes), removes the NoExecute taints it set
 * and taints nothing more until some node is Ready again, when every node's grace period starts
 * over. Swapping one NoExecute taint for the other (not-ready ↔ unreachable) and removing them
 * are not limited, nor are the NoSchedule taints.
 *
 * The taint eviction controller deletes the pods bound to a node with NoExecute taints: at once
 * when the pod does not tolerate every one of them, else once the shortest `tolerationSeconds` of
 * the tolerations used has passed since it saw the taints (never when none sets one). A pod's
 * scheduled deletion is cancelled when the taints go. Before deleting it sets the pod's
 * `DisruptionTarget` condition (`DeletionByTaintManager`) and records `TaintManagerEviction`.
 */
import {
  type ApiObject,
  type RequestContext,
  type ResourceTarget,
  followResource,
  type InformerChange,
  type InformerView,
  type NodeCondition,
  type Taint,
  type Toleration,
  withDisruptionTarget,
  type PodCondition,
} from '../core';
import { rfc3339 } from '../clock';
import { StatusError } from '../status';
import { EventRecorder } from './events';
import { tolerates } from './scheduler';
import { WorkQueue } from './work-queue';
import type { ApiControllerOptions } from './options';

/** kube-controller-manager's defaults. */
export const NODE_MONITOR_PERIOD_MS = 5_000;
export const NODE_MONITOR_GRACE_PERIOD_MS = 50_000;
export const NODE_STARTUP_GRACE_PERIOD_MS = 60_000;
export const NODE_EVICTION_RATE = 0.1;
export const SECONDARY_NODE_EVICTION_RATE = 0.01;
export const LARGE_CLUSTER_SIZE_THRESHOLD = 50;
export const UNHEALTHY_ZONE_THRESHOLD = 0.55;

type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

/** A token bucket holding at most one token, on the controller's clock: upstream's tainting limiter (burst 1). */
class ZoneLimiter {
  /** Tokens at `since`; rate 0 gives none. */
  private tokens = 1;
  private since: number;

  constructor(
    private qps: number,
    now: number,
  ) {
    this.since = now;
  }

  /** Takes the token if there is one. */
  tryAccept(now: number): boolean {
    const available = this.available(now);
    if (available < 1) return false;
    this.tokens = available - 1;
    this.since = now;
    return true;
  }

  /** Milliseconds until the next token (Infinity at rate 0). */
  wait(now: number): number {
    return this.qps > 0 ? Math.max(1, Math.ceil(((1 - this.available(now)) * 1000) / this.qps)) : Infinity;
  }

  /** A new rate; a bucket found empty stays empty, as upstream's SwapLimiter drains the new limiter then. */
  swap(qps: number, now: number): void {
    if (qps === this.qps) return;
    const empty = this.available(now) < 1;
    this.qps = qps;
    this.tokens = qps > 0 && !empty ? 1 : 0;
    this.since = now;
  }

  private available(now: number): number {
    if (this.qps <= 0) return 0;
    // Rounded to a millionth: ten 1 s steps at 0.1 a second make one token, not 0.9999999999999999.
    return Math.min(1, Math.round((this.tokens + ((now - this.since) / 1000) * this.qps) * 1e6) / 1e6);
  }
}

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

export interface NodeLifecycleOptions extends ApiControllerOptions {
  /** Whether Leases are served (`--runtime-config`); without them only the Ready condition is heard. Default true. */
  leases?: boolean;
  monitorPeriodMs?: number;
  gracePeriodMs?: number;
  startupGracePeriodMs?: number;
  /** `--node-eviction-rate`, `--secondary-node-eviction-rate` (nodes a second), `--large-cluster-size-threshold`, `--unhealthy-zone-threshold`. */
  evictionRate?: number;
  secondaryEvictionRate?: number;
  largeClusterSizeThreshold?: number;
  unhealthyZoneThreshold?: number;
  /** Where the zone figures go (upstream's `node_collector_*` metrics); none: not kept. */
  metrics?: ZoneMetrics;
  log?: (message: string) => void;
}

/** upstream's node collector metrics, by zone key. */
export interface ZoneMetrics {
  /** A zone's registered nodes and how many of them are not Ready, on every pass. */
  zone(key: string, size: number, unhealthy: number): void;
  /** A zone without nodes any more. */
  forget(key: string): void;
  /** A node newly tainted NoExecute (its pods to be evicted). */
  evicted(key: string): void;
}

/** When the controller last heard from a node, and what it heard. */
interface Health {
  probe: number;
  readyStatus?: string;
  readyHeartbeat?: string | null;
  leaseRenew?: string;
}

export class NodeLifecycleController {
  private readonly nodes: InformerView;
  private readonly leases: InformerView | undefined;
  private readonly pods: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;
  private readonly events: EventRecorder;
  private readonly health = new Map<string, Health>();
  /** Nodes last seen Ready (for the NodeReady / NodeNotReady events). */
  private readonly wasReady = new Map<string, boolean>();
  /** The taint keys this controller sets and removes (`node.<key domain>/<name>`). */
  private readonly taintKey: (name: string) => string;
  private readonly managedTaints: ReadonlySet<string>;
  /** The two NoExecute taints this controller sets: `not-ready` and `unreachable`. */
  private readonly noExecuteKeys: ReadonlySet<string>;
  private cancelMonitor: (() => void) | undefined;
  /** Each zone's disruption state and tainting limiter. */
  private readonly zones = new Map<string, { state: ZoneState; limiter: ZoneLimiter }>();
  /** Nodes waiting for a token of their zone to be tainted NoExecute, with the retry set for them. */
  private readonly waiting = new Map<string, () => void>();
  /** Every zone is in FullDisruption: NoExecute tainting stopped. */
  private allFullyDisrupted = false;
  /** A node changed since the zones' states were last worked out. */
  private zonesStale = true;
  private readonly zoneLabels: ReadonlyArray<readonly [string, string]>;

  constructor(private readonly options: NodeLifecycleOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/node-controller' };
    const watch: RequestContext = { ...this.ctx, user: options.watchAs ?? options.user };
    this.queue = new WorkQueue<string>(
      (n) => n,
      (n) => this.sync(n),
      { name: 'node_lifecycle_controller', metrics: options.queueMetrics },
    );
    const onNode = (c?: InformerChange) => (c ? this.queue.add(c.object.metadata!.name!) : this.all());
    this.nodes = followResource(options, nodesTarget, watch, (c?: InformerChange) => {
      this.zonesStale = true;
      onNode(c);
    });
    this.leases =
      options.leases === false
        ? undefined
        : followResource(
            options,
            { group: options.naming.groups.coordination, version: 'v1', resource: 'leases', namespace: options.naming.namespaces.nodeLease },
            watch,
            onNode,
          );
    this.pods = followResource(options, podsTarget, watch, (c?: InformerChange) => {
      const node = (c?.object as PodLike | undefined)?.spec?.nodeName;
      if (!c) this.all();
      else if (node && c.type !== 'DELETED') this.queue.add(node);
    });
    this.events = new EventRecorder({
      core: options.core,
      naming: options.naming,
      clock: options.clock,
      ctx: this.ctx,
      controller: 'node-controller',
      api: 'core',
      log: options.log,
    });
    this.taintKey = (name) => options.naming.key(name, 'node');
    this.managedTaints = new Set(
      ['not-ready', 'unreachable', 'memory-pressure', 'disk-pressure', 'pid-pressure', 'network-unavailable', 'unschedulable'].map(this.taintKey),
    );
    this.noExecuteKeys = new Set(['not-ready', 'unreachable'].map(this.taintKey));
    const { naming } = options;
    // Region and zone: the GA labels, else the deprecated beta ones (upstream's GetZoneKey).
    this.zoneLabels = [
      [naming.key('region', 'topology'), naming.key('region', 'failure-domain.beta')],
      [naming.key('zone', 'topology'), naming.key('zone', 'failure-domain.beta')],
    ];
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
    for (const cancel of this.waiting.values()) cancel();
    this.waiting.clear();
    this.queue.stop();
    this.nodes.stop();
    this.leases?.stop();
    this.pods.stop();
  }

  private all(): void {
    this.handleDisruption();
    for (const node of this.nodes.objects.values()) this.queue.add(node.metadata!.name!);
  }

  /** upstream's GetZoneKey: region and zone, empty when the node has neither. */
  private zoneOf(node: NodeLike): string {
    const labels = node.metadata?.labels ?? {};
    const [region, zone] = this.zoneLabels.map(([ga, beta]) => labels[ga] ?? labels[beta] ?? '');
    return region === '' && zone === '' ? '' : `${region}:\u0000:${zone}`;
  }

  private zone(key: string): { state: ZoneState; limiter: ZoneLimiter } {
    let zone = this.zones.get(key);
    if (!zone) {
      zone = { state: 'Initial', limiter: new ZoneLimiter(this.options.evictionRate ?? NODE_EVICTION_RATE, this.options.clock.now()) };
      this.zones.set(key, zone);
    }
    return zone;
  }

  /**
   * upstream's handleDisruption: each zone's state from its nodes' Ready conditions, and the
   * tainting rate it calls for. Worked out on every pass and before a NoExecute decision after
   * any node changed, so that a node found not Ready is judged with the others.
   */
  private handleDisruption(): void {
    this.zonesStale = false;
    const now = this.options.clock.now();
    const byZone = new Map<string, { ready: number; notReady: number }>();
    for (const node of this.nodes.objects.values() as IterableIterator<NodeLike>) {
      const key = this.zoneOf(node);
      const counts = byZone.get(key) ?? { ready: 0, notReady: 0 };
      if (readyOf(node)?.status === 'True') counts.ready++;
      else counts.notReady++;
      byZone.set(key, counts);
    }
    const threshold = this.options.unhealthyZoneThreshold ?? UNHEALTHY_ZONE_THRESHOLD;
    const next = new Map<string, ZoneState>();
    for (const [key, { ready, notReady }] of byZone) {
      next.set(
        key,
        ready === 0 && notReady > 0 ? 'FullDisruption' : notReady > 2 && notReady / (ready + notReady) >= threshold ? 'PartialDisruption' : 'Normal',
      );
      this.zone(key);
      this.options.metrics?.zone(key, ready + notReady, notReady);
    }
    for (const key of this.zones.keys()) {
      if (byZone.has(key)) continue;
      this.zones.delete(key);
      this.options.metrics?.forget(key);
    }
    const allAre = next.size > 0 && [...next.values()].every((s) => s === 'FullDisruption');
    const allWere = [...this.zones.values()].every((z) => z.state === 'FullDisruption');
    if (allAre && allWere) return;
    if (allAre) {
      // Every zone lost every node: more likely this controller cannot hear them than that they
      // all failed. Untaint them (sync drops the NoExecute taints) and taint nothing more.
      this.options.log?.('node-lifecycle-controller: all nodes are not Ready; entering master disruption mode');
      this.allFullyDisrupted = true;
      for (const zone of this.zones.values()) {
        zone.limiter.swap(0, now);
        zone.state = 'FullDisruption';
      }
      return;
    }
    if (allWere && this.allFullyDisrupted) {
      this.options.log?.('node-lifecycle-controller: some nodes are Ready; exiting master disruption mode');
      this.allFullyDisrupted = false;
      // Every node's grace period starts over.
      for (const h of this.health.values()) h.probe = now;
      for (const [key, zone] of this.zones) this.setZoneState(key, zone, next.get(key)!, byZone.get(key)!, now, true);
      return;
    }
    for (const [key, zone] of this.zones) this.setZoneState(key, zone, next.get(key)!, byZone.get(key)!, now, false);
  }

  /** upstream's setLimiterInZone, when the state changed (or `always`). */
  private setZoneState(
    key: string,
    zone: { state: ZoneState; limiter: ZoneLimiter },
    state: ZoneState,
    counts: { ready: number; notReady: number },
    now: number,
    always: boolean,
  ): void {
    if (!always && zone.state === state) return;
    const size = counts.ready + counts.notReady;
    const rate =
      state === 'PartialDisruption'
        ? size > (this.options.largeClusterSizeThreshold ?? LARGE_CLUSTER_SIZE_THRESHOLD)
          ? (this.options.secondaryEvictionRate ?? SECONDARY_NODE_EVICTION_RATE)
          : 0
        : (this.options.evictionRate ?? NODE_EVICTION_RATE);
    if (zone.state !== 'Initial') this.options.log?.(`node-lifecycle-controller: zone ${JSON.stringify(key)} is now ${state}`);
    zone.state = state;
    zone.limiter.swap(rate, now);
  }

  private async sync(name: string): Promise<void> {
    const node = this.nodes.objects.get(`/${name}`) as NodeLike | undefined;
    if (!node) {
      this.health.delete(name);
      this.wasReady.delete(name);
      this.stopWaiting(name);
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
      h = {
        probe: ready || Number.isNaN(created) ? now : Math.min(created, now),
        readyStatus: ready?.status,
        readyHeartbeat: ready?.lastHeartbeatTime,
        leaseRenew: renew,
      };
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
    const grace = ready ? (this.options.gracePeriodMs ?? NODE_MONITOR_GRACE_PERIOD_MS) : (this.options.startupGracePeriodMs ?? NODE_STARTUP_GRACE_PERIOD_MS);
    if (now <= h.probe + grace) return node;
    const stamp = rfc3339(now);
    const never = !ready;
    const conditions = conditionsOf(node).map((c) => ({ ...c }));
    let changed = false;
    for (const type of ['Ready', ...REMAINING_CONDITIONS]) {
      const c = conditions.find((x) => x.type === type);
      if (!c) {
        conditions.push({
          type,
          status: 'Unknown',
          lastHeartbeatTime: node.metadata?.creationTimestamp ?? null,
          lastTransitionTime: stamp,
          reason: 'NodeStatusNeverUpdated',
          message: 'Kubelet never posted node status.',
        });
        changed = true;
      } else if (c.status !== 'Unknown') {
        Object.assign(c, {
          status: 'Unknown',
          lastTransitionTime: stamp,
          reason: never ? 'NodeStatusNeverUpdated' : 'NodeStatusUnknown',
          message: never ? 'Kubelet never posted node status.' : 'Kubelet stopped posting node status.',
        });
        changed = true;
      }
    }
    if (!changed) return node;
    await this.write(() =>
      this.options.core.update({ ...nodesTarget, name, subresource: 'status' }, { ...node, status: { ...node.status, conditions } }, {}, this.ctx),
    );
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
      wanted.push({ key: k, effect: 'NoSchedule' });
      if (this.noExecute(node, k)) wanted.push({ key: k, effect: 'NoExecute' });
    } else this.stopWaiting(node.metadata!.name!);
    for (const [type, name] of [
      ['MemoryPressure', 'memory-pressure'],
      ['DiskPressure', 'disk-pressure'],
      ['PIDPressure', 'pid-pressure'],
      ['NetworkUnavailable', 'network-unavailable'],
    ] as const) {
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

  /**
   * Whether the node is to carry the NoExecute taint `k` now: it does already; or it carries the
   * other one, which is swapped at once; or its zone's limiter gives a token. Otherwise it waits
   * for the next token (none in master disruption mode, where the taints come off).
   */
  private noExecute(node: NodeLike, _k: string): boolean {
    const name = node.metadata!.name!;
    if (this.zonesStale) this.handleDisruption();
    if (this.allFullyDisrupted) {
      this.stopWaiting(name);
      return false;
    }
    if ((node.spec?.taints ?? []).some((t) => t.effect === 'NoExecute' && this.noExecuteKeys.has(t.key))) {
      this.stopWaiting(name);
      return true;
    }
    const now = this.options.clock.now();
    const key = this.zoneOf(node);
    const { limiter } = this.zone(key);
    if (limiter.tryAccept(now)) {
      this.stopWaiting(name);
      this.options.metrics?.evicted(key);
      return true;
    }
    const wait = limiter.wait(now);
    if (!this.waiting.has(name) && Number.isFinite(wait)) {
      this.waiting.set(
        name,
        this.options.clock.setTimeout(() => {
          this.waiting.delete(name);
          this.queue.add(name);
        }, wait),
      );
    }
    return false;
  }

  private stopWaiting(name: string): void {
    this.waiting.get(name)?.();
    this.waiting.delete(name);
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

export type TaintEvictionOptions = ApiControllerOptions;

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
  private readonly nodes: InformerView;
  private readonly pods: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;
  private readonly events: EventRecorder;
  /** Scheduled deletions by pod key: when, and the cancel of the timer. */
  private readonly scheduled = new Map<string, { at: number; cancel: () => void }>();

  constructor(private readonly options: TaintEvictionOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/taint-eviction-controller' };
    const watch: RequestContext = { ...this.ctx, user: options.watchAs ?? options.user };
    this.queue = new WorkQueue<string>(
      (k) => k,
      (k) => this.sync(k),
      { name: 'noexec_taint_pod', metrics: options.queueMetrics },
    );
    this.nodes = followResource(options, nodesTarget, watch, (c?: InformerChange) => (c ? this.podsOn(c.object.metadata!.name!) : this.all()));
    this.pods = followResource(options, podsTarget, watch, (c?: InformerChange) => (c ? this.queue.add(podKey(c.object)) : this.all()));
    this.events = new EventRecorder({
      core: options.core,
      naming: options.naming,
      clock: options.clock,
      ctx: this.ctx,
      controller: 'taint-eviction-controller',
      api: 'core',
      log: options.log,
    });
  }

  start(): void {
    this.queue.startWhen(Promise.all([this.nodes.synced, this.pods.synced]), (err) =>
      this.options.log?.(`taint-eviction-controller: informers failed to start: ${err.message}`),
    );
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
        void this.events.record(
          { apiVersion: 'v1', kind: 'Pod', object: pod },
          'Normal',
          'TaintManagerEviction',
          'TaintManagerEviction',
          `Cancelling deletion of Pod ${key}`,
        );
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
    void this.events.record(
      { apiVersion: 'v1', kind: 'Pod', object: pod },
      'Normal',
      'TaintManagerEviction',
      'TaintManagerEviction',
      `Marking for deletion Pod ${key}`,
    );
    const conditions = withDisruptionTarget(
      pod.status?.conditions,
      'DeletionByTaintManager',
      'Taint manager: deleting due to NoExecute taint',
      rfc3339(this.options.clock.now()),
    );
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
