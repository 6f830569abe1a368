/**
 * Simulated nodes, in process (what kwok does for a real control plane): `count` Node objects
 * that register, heartbeat and run the pods bound to them, each acting as its own kubelet
 * (`system:node:<name>` in `system:nodes`). Per node:
 *
 * - registration: the Node with upstream's well-known labels, capacity (110 pods, as kubelet's
 *   default maxPods), a pod CIDR, an internal address and `Ready=True`; an existing Node of that
 *   name is taken over and its status refreshed;
 * - heartbeats: a Lease named after the node in the node-lease namespace, owned by the Node,
 *   renewed every 10 s with a 40 s duration (kubelet's defaults); the node status is reported
 *   again every 5 minutes (kubelet's nodeStatusReportFrequency), refreshing lastHeartbeatTime;
 * - pods: a bound pod moves to Running at once, with PodReadyToStartContainers, Initialized,
 *   ContainersReady and Ready conditions, a pod IP from the node's CIDR (the host's for
 *   hostNetwork pods), a start time and running container statuses (init containers completed);
 *   a pod marked for graceful deletion is removed (grace 0, uid precondition), as a kubelet does
 *   once its containers have stopped.
 */
import { type ApiObject, type RequestContext, type ResourceTarget, type UserInfo, followResource, type InformerChange, type InformerView } from '../core';
import { rfc3339, rfc3339Micro } from '../clock';
import { StatusError } from '../status';
import { WorkQueue } from './work-queue';
import type { ApiControllerOptions } from './options';

/** kubelet's defaults. */
export const NODE_LEASE_DURATION_SECONDS = 40;
const LEASE_RENEW_MS = 10_000;
const STATUS_REPORT_MS = 5 * 60_000;
export const SIMULATED_NODE_MAX_PODS = 110;
/** The largest `--simulated-nodes`: node addresses and pod CIDRs are numbered within 10.244.0.0/12-ish blocks. */
export const MAX_SIMULATED_NODES = 2000;
export const SIMULATED_KUBELET_VERSION = 'v1.32.0';

export interface SimulatedNodesOptions extends Pick<ApiControllerOptions, 'core' | 'informers' | 'naming' | 'clock' | 'log'> {
  count: number;
  /** Node names are `<prefix>-<index>`. */
  prefix?: string;
  /** Who the shared watch of all pods acts as (a node may list only its own). */
  watchAs: UserInfo;
}

interface PodSpecLike {
  nodeName?: string;
  hostNetwork?: boolean;
  containers?: Array<{ name: string; image?: string }>;
  initContainers?: Array<{ name: string; image?: string }>;
}

interface Condition {
  type: string;
  status: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
  lastHeartbeatTime?: string | null;
  reason?: string;
  message?: string;
}

interface PodStatusLike {
  phase?: string;
  conditions?: Condition[];
  podIP?: string;
  [field: string]: unknown;
}

/** One simulated node: its name, addresses and the pod IPs it has handed out. */
class SimulatedNode {
  readonly ctx: RequestContext;
  readonly hostIP: string;
  readonly podCIDR: string;
  private readonly cidrBase: string;
  readonly usedIPs = new Set<string>();
  uid?: string;

  constructor(
    readonly name: string,
    readonly index: number,
  ) {
    this.ctx = {
      user: { username: `system:node:${name}`, groups: ['system:nodes', 'system:authenticated'] },
      userAgent: `kubelet/${SIMULATED_KUBELET_VERSION} (linux/amd64) keelson`,
    };
    const host = index + 2;
    this.hostIP = `172.18.${host >> 8}.${host & 255}`;
    this.cidrBase = `10.${244 + (index >> 8)}.${index & 255}`;
    this.podCIDR = `${this.cidrBase}.0/24`;
  }

  /** The lowest free pod IP of the node's /24 (`.2` to `.254`), or undefined when all are taken. */
  allocateIP(): string | undefined {
    for (let host = 2; host < 255; host++) {
      const ip = `${this.cidrBase}.${host}`;
      if (!this.usedIPs.has(ip)) {
        this.usedIPs.add(ip);
        return ip;
      }
    }
    return undefined;
  }

  ownsIP(ip: string): boolean {
    return ip.startsWith(`${this.cidrBase}.`);
  }
}

const nodesTarget: ResourceTarget = { group: '', version: 'v1', resource: 'nodes' };

export class SimulatedNodes {
  private readonly nodes = new Map<string, SimulatedNode>();
  private readonly pods: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly timers: Array<() => void> = [];
  private stopped = false;

  constructor(private readonly options: SimulatedNodesOptions) {
    const prefix = options.prefix ?? 'keelson-node';
    for (let i = 0; i < options.count; i++) {
      const node = new SimulatedNode(`${prefix}-${i}`, i);
      this.nodes.set(node.name, node);
    }
    // One watch of all pods for every node (as kwok keeps), through the scheduler's identity; each
    // node writes as itself.
    const agentCtx: RequestContext = { user: options.watchAs, userAgent: `kubelet/${SIMULATED_KUBELET_VERSION} (linux/amd64) keelson` };
    this.queue = new WorkQueue<string>(
      (k) => k,
      (k) => this.syncPod(k),
      { workers: 2 },
    );
    this.pods = followResource(options, { group: '', version: 'v1', resource: 'pods' }, agentCtx, (c?: InformerChange) => this.onPod(c));
  }

  /** The names of the simulated nodes. */
  get names(): string[] {
    return [...this.nodes.keys()];
  }

  start(): void {
    void (async () => {
      for (const node of this.nodes.values()) await this.register(node);
      await this.pods.synced;
      if (this.stopped) return;
      this.queue.start();
      for (const node of this.nodes.values()) {
        this.every(node, LEASE_RENEW_MS, () => this.renewLease(node), true);
        // Registration has just reported the status.
        this.every(node, STATUS_REPORT_MS, () => this.reportStatus(node), false);
      }
    })().catch((err: unknown) => this.options.log?.(`simulated nodes: failed to start: ${(err as Error).message}`));
  }

  /** Resolves when every node has registered and every known pod has been handled. */
  async idle(): Promise<void> {
    await this.pods.synced;
    await this.queue.idle();
  }

  stop(): void {
    this.stopped = true;
    for (const cancel of this.timers) cancel();
    this.queue.stop();
    this.pods.stop();
  }

  /** Run `work` every `ms` on the injected clock (and at once when `now`), logging failures. */
  private every(node: SimulatedNode, ms: number, work: () => Promise<void>, now: boolean): void {
    const run = () => void work().catch((err: unknown) => this.options.log?.(`simulated node ${node.name}: ${(err as Error).message}`));
    this.timers.push(this.options.clock.setInterval(run, ms));
    if (now) run();
  }

  private nodeObject(node: SimulatedNode): ApiObject {
    const { naming } = this.options;
    const resources = { cpu: '32', memory: '256Gi', 'ephemeral-storage': '1Ti', pods: String(SIMULATED_NODE_MAX_PODS) };
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: node.name,
        labels: {
          [naming.key('arch', 'beta')]: 'amd64',
          [naming.key('os', 'beta')]: 'linux',
          [naming.key('arch')]: 'amd64',
          [naming.key('hostname')]: node.name,
          [naming.key('os')]: 'linux',
          type: 'simulated',
        },
        annotations: { [naming.key('ttl', 'node.alpha')]: '0' },
      },
      spec: { podCIDR: node.podCIDR, podCIDRs: [node.podCIDR], providerID: `keelson://${node.name}` },
      status: {
        capacity: resources,
        allocatable: resources,
        conditions: this.conditions(undefined),
        addresses: [
          { type: 'InternalIP', address: node.hostIP },
          { type: 'Hostname', address: node.name },
        ],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: {
          machineID: '',
          systemUUID: '',
          bootID: '',
          kernelVersion: '',
          osImage: 'Keelson simulated node',
          containerRuntimeVersion: 'keelson://simulated',
          kubeletVersion: SIMULATED_KUBELET_VERSION,
          kubeProxyVersion: '',
          operatingSystem: 'linux',
          architecture: 'amd64',
        },
      },
    };
  }

  /** kubelet's node conditions: no pressure, and Ready; transition times kept from `previous`. */
  private conditions(previous: Condition[] | undefined): Condition[] {
    const now = rfc3339(this.options.clock.now());
    const make = (type: string, status: string, reason: string, message: string): Condition => {
      const before = previous?.find((c) => c.type === type);
      return {
        type,
        status,
        lastHeartbeatTime: now,
        lastTransitionTime: before?.status === status ? (before.lastTransitionTime ?? now) : now,
        reason,
        message,
      };
    };
    return [
      make('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      make('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      make('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      make('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
    ];
  }

  /** Create the Node, or take over the one of that name and report its status. */
  private async register(node: SimulatedNode): Promise<void> {
    const { core } = this.options;
    try {
      const created = await core.create(nodesTarget, this.nodeObject(node), {}, node.ctx);
      node.uid = created.object.metadata?.uid;
      this.options.log?.(`simulated node ${node.name} registered`);
    } catch (err) {
      if (!StatusError.is(err, 'AlreadyExists')) throw err;
      await this.reportStatus(node);
    }
  }

  /** Post the node status again (conditions with a fresh heartbeat), keeping what else the Node holds. */
  private async reportStatus(node: SimulatedNode): Promise<void> {
    const { core } = this.options;
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await core.get({ ...nodesTarget, name: node.name }, {}, node.ctx);
      node.uid = current.metadata?.uid;
      const wanted = this.nodeObject(node).status as Record<string, unknown>;
      const status = { ...((current.status ?? {}) as Record<string, unknown>), ...wanted };
      status.conditions = this.conditions((current.status as { conditions?: Condition[] } | undefined)?.conditions);
      try {
        await core.update({ ...nodesTarget, name: node.name, subresource: 'status' }, { ...current, status }, {}, node.ctx);
        return;
      } catch (err) {
        if (!StatusError.is(err, 'Conflict')) throw err;
      }
    }
  }

  /** Renew the node's Lease, creating it (owned by the Node) when absent. */
  private async renewLease(node: SimulatedNode): Promise<void> {
    const { core, naming, clock } = this.options;
    const target: ResourceTarget = {
      group: naming.groups.coordination,
      version: 'v1',
      resource: 'leases',
      namespace: naming.namespaces.nodeLease,
      name: node.name,
    };
    const spec = { holderIdentity: node.name, leaseDurationSeconds: NODE_LEASE_DURATION_SECONDS, renewTime: rfc3339Micro(clock.now()) };
    let current: ApiObject | undefined;
    try {
      current = await core.get(target, {}, node.ctx);
    } catch (err) {
      if (!StatusError.is(err, 'NotFound')) throw err;
    }
    if (!current) {
      const owner = node.uid ? [{ apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid }] : undefined;
      await core.create(
        { ...target, name: undefined },
        {
          apiVersion: `${naming.groups.coordination}/v1`,
          kind: 'Lease',
          metadata: { name: node.name, namespace: target.namespace, ...(owner ? { ownerReferences: owner } : {}) },
          spec,
        },
        {},
        node.ctx,
      );
      return;
    }
    await core.update(target, { ...current, spec: { ...(current.spec as object), ...spec } }, {}, node.ctx);
  }

  private onPod(change?: InformerChange): void {
    if (!change) {
      // A (re)list: rebuild the handed-out IPs, then look at every pod on our nodes.
      for (const node of this.nodes.values()) node.usedIPs.clear();
      for (const pod of this.pods.objects.values()) {
        const node = this.nodeOf(pod);
        if (!node) continue;
        const ip = (pod.status as PodStatusLike | undefined)?.podIP;
        if (ip && node.ownsIP(ip)) node.usedIPs.add(ip);
        this.queue.add(podKey(pod));
      }
      return;
    }
    const node = this.nodeOf(change.object) ?? (change.previous ? this.nodeOf(change.previous) : undefined);
    if (!node) return;
    if (change.type === 'DELETED') {
      const ip = (change.object.status as PodStatusLike | undefined)?.podIP;
      if (ip) node.usedIPs.delete(ip);
      return;
    }
    this.queue.add(podKey(change.object));
  }

  private nodeOf(pod: ApiObject): SimulatedNode | undefined {
    const name = (pod.spec as PodSpecLike | undefined)?.nodeName;
    return name ? this.nodes.get(name) : undefined;
  }

  private async syncPod(key: string): Promise<void> {
    const pod = this.pods.objects.get(key);
    if (!pod) return;
    const node = this.nodeOf(pod);
    if (!node) return;
    const meta = pod.metadata!;
    const target: ResourceTarget = { group: '', version: 'v1', resource: 'pods', namespace: meta.namespace, name: meta.name };
    try {
      if (meta.deletionTimestamp) {
        // The containers have stopped: finish the graceful deletion, for this very pod only.
        if (meta.deletionGracePeriodSeconds === 0) return;
        await this.options.core.delete(target, { gracePeriodSeconds: 0, preconditions: { uid: meta.uid } }, node.ctx);
        return;
      }
      const status = (pod.status ?? {}) as PodStatusLike;
      if (status.phase !== 'Pending' && status.phase !== undefined) return;
      const running = this.runningStatus(pod, node);
      try {
        await this.options.core.update({ ...target, subresource: 'status' }, { ...pod, status: running }, {}, node.ctx);
      } catch (err) {
        if (running.podIP !== status.podIP && running.podIP !== node.hostIP) node.usedIPs.delete(running.podIP!);
        throw err;
      }
    } catch (err) {
      // Gone, or changed since the informer saw it: the next event brings it back.
      if (StatusError.is(err, 'NotFound') || StatusError.is(err, 'Conflict')) return;
      throw err;
    }
  }

  /** What a kubelet reports once the pod's containers run. */
  private runningStatus(pod: ApiObject, node: SimulatedNode): PodStatusLike {
    const now = rfc3339(this.options.clock.now());
    const spec = (pod.spec ?? {}) as PodSpecLike;
    const previous = (pod.status ?? {}) as PodStatusLike;
    const ip = spec.hostNetwork ? node.hostIP : previous.podIP && node.ownsIP(previous.podIP) ? previous.podIP : node.allocateIP();
    if (!ip) throw new Error(`no free pod IP in ${node.podCIDR}`);
    const condition = (type: string): Condition => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: now });
    const scheduled = previous.conditions?.find((c) => c.type === 'PodScheduled') ?? condition('PodScheduled');
    const containerId = (name: string) => `keelson://${pod.metadata?.uid ?? ''}/${name}`;
    const status = (c: { name: string; image?: string }, state: Record<string, unknown>, started: boolean) => ({
      name: c.name,
      state,
      lastState: {},
      ready: true,
      restartCount: 0,
      image: c.image ?? '',
      imageID: '',
      containerID: containerId(c.name),
      started,
    });
    return {
      ...previous,
      phase: 'Running',
      conditions: [condition('PodReadyToStartContainers'), condition('Initialized'), condition('Ready'), condition('ContainersReady'), scheduled],
      hostIP: node.hostIP,
      hostIPs: [{ ip: node.hostIP }],
      podIP: ip,
      podIPs: [{ ip }],
      startTime: previous.startTime ?? now,
      ...(spec.initContainers?.length
        ? {
            initContainerStatuses: spec.initContainers.map((c) =>
              status(c, { terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now, containerID: containerId(c.name) } }, false),
            ),
          }
        : {}),
      containerStatuses: (spec.containers ?? []).map((c) => status(c, { running: { startedAt: now } }, true)),
    };
  }
}

function podKey(pod: ApiObject): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}
