/**
 * A scheduler for pods whose `schedulerName` is `default-scheduler`, with upstream's default
 * filters and a spreading score: a pending pod (no node, not being deleted, no scheduling gates)
 * goes to the node that passes
 *
 * - NodeUnschedulable (`spec.unschedulable` nodes take no pods),
 * - TaintToleration (NoSchedule and NoExecute taints must be tolerated; a node that is not Ready
 *   carries the `node.<key domain>/not-ready` taint, an unknown one `…/unreachable`, as the node
 *   lifecycle controller would put there),
 * - NodeAffinity (`nodeSelector` and required node affinity over the node's labels and name),
 * - NodeResourcesFit (pods, cpu and memory requests against allocatable),
 *
 * and has the fewest pods (ties by name). It binds through `pods/<name>/binding` and records
 * `Scheduled`; a pod no node fits gets `PodScheduled=False` (reason Unschedulable, upstream's
 * "0/N nodes are available: …" message) and a `FailedScheduling` event, and is tried again when
 * a node or another pod changes.
 */
import {
  type ApiObject,
  type RequestContext,
  type ResourceTarget,
  type UserInfo,
  followResource,
  type InformerChange,
  type InformerView,
  type Taint,
  type Toleration,
} from '../core';
import { rfc3339 } from '../clock';
import { StatusError } from '../status';
import { readQuantity, scaledValue } from '../util/quantity';
import { EventRecorder } from './events';
import { WorkQueue } from './work-queue';
import type { ApiControllerOptions } from './options';

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

/** The scheduler acts as `SCHEDULER_USER`, so it is given no user. */
export type SchedulerOptions = Pick<ApiControllerOptions, 'core' | 'informers' | 'naming' | 'clock' | 'log'>;

interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

interface PodSpecLike {
  nodeName?: string;
  schedulerName?: string;
  schedulingGates?: unknown[];
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] } } };
  containers?: Array<{ resources?: { requests?: Record<string, string> } }>;
  initContainers?: Array<{ resources?: { requests?: Record<string, string> } }>;
  overhead?: Record<string, string>;
}

interface NodeLike extends ApiObject {
  spec?: { unschedulable?: boolean; taints?: Taint[] };
  status?: { allocatable?: Record<string, string>; conditions?: Array<{ type: string; status: string }> };
}

const spec = (pod: ApiObject) => (pod.spec ?? {}) as PodSpecLike;
const podKey = (pod: ApiObject) => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
const phase = (pod: ApiObject) => (pod.status as { phase?: string } | undefined)?.phase;
const finished = (pod: ApiObject) => phase(pod) === 'Succeeded' || phase(pod) === 'Failed';

/** What the pods counted on a node take of it. */
interface Usage {
  pods: number;
  cpu: bigint;
  memory: bigint;
}

/** What a pod asks of a node: cpu (millicores), memory (bytes), one pod slot. */
interface Request {
  cpu: bigint;
  memory: bigint;
}

/** Millicores for cpu, bytes for memory, a count for pods: upstream's MilliValue and Value. */
const RESOURCE_EXPONENT = { cpu: 3, memory: 0, pods: 0 } as const;

/**
 * The amount of `name` in a resource list, in the scheduler's units (`RESOURCE_EXPONENT`), exact
 * and rounded up as upstream's; undefined where absent or no quantity.
 */
function resourceAmount(list: Record<string, string | number> | undefined, name: keyof typeof RESOURCE_EXPONENT): bigint | undefined {
  const value = list?.[name];
  const amount = value === undefined ? undefined : readQuantity(value);
  return amount && scaledValue(amount, RESOURCE_EXPONENT[name]);
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);

/** upstream's effective request: the larger of the containers' sum and any init container, plus overhead. */
export function podRequest(pod: ApiObject): Request {
  const s = spec(pod);
  const read = (list: Record<string, string> | undefined, name: 'cpu' | 'memory') => resourceAmount(list, name) ?? 0n;
  const sum = { cpu: 0n, memory: 0n };
  for (const c of s.containers ?? []) {
    sum.cpu += read(c.resources?.requests, 'cpu');
    sum.memory += read(c.resources?.requests, 'memory');
  }
  for (const c of s.initContainers ?? []) {
    sum.cpu = max(sum.cpu, read(c.resources?.requests, 'cpu'));
    sum.memory = max(sum.memory, read(c.resources?.requests, 'memory'));
  }
  sum.cpu += read(s.overhead, 'cpu');
  sum.memory += read(s.overhead, 'memory');
  return sum;
}

/** upstream's ToleratesTaint. */
export function tolerates(tolerations: readonly Toleration[], taint: Taint): boolean {
  return tolerations.some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (t.key && t.key !== taint.key) return false;
    if (!t.key && t.operator !== 'Exists') return false;
    return t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? '');
  });
}

function requirementMatches(req: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || values.length !== 1) return false;
      const [a, b] = [Number.parseInt(value, 10), Number.parseInt(values[0]!, 10)];
      if (Number.isNaN(a) || Number.isNaN(b)) return false;
      return req.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

/** nodeSelector and required node affinity (terms ORed, requirements ANDed; an empty term matches nothing). */
export function nodeMatches(pod: ApiObject, node: ApiObject): boolean {
  const labels = node.metadata?.labels ?? {};
  const s = spec(pod);
  for (const [k, v] of Object.entries(s.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const terms = s.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms) return true;
  return terms.some((term) => {
    const exprs = term.matchExpressions ?? [];
    const fields = term.matchFields ?? [];
    if (exprs.length === 0 && fields.length === 0) return false;
    return (
      exprs.every((r) => requirementMatches(r, labels[r.key])) && fields.every((r) => r.key === 'metadata.name' && requirementMatches(r, node.metadata?.name))
    );
  });
}

/** Who the scheduler (and its leader election) acts as: upstream's kube-scheduler user. */
export const SCHEDULER_USER: UserInfo = { username: 'system:kube-scheduler', groups: ['system:authenticated'] };

export class Scheduler {
  private readonly pods: InformerView;
  private readonly nodes: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;
  private readonly events: EventRecorder;
  /** Bound by us, not yet seen bound in the informer: pod key → node. */
  private readonly assumed = new Map<string, string>();
  /** Pods no node fitted, tried again when the cluster changes. */
  private readonly unschedulable = new Set<string>();
  /** Each pod's request, parsed once per informer object (a change brings a new object). */
  private readonly requests = new WeakMap<ApiObject, Request>();
  /** What each pod counts on its node: bound, or bound by us and not yet seen so, and not finished. */
  private readonly placed = new Map<string, { node: string; request: Request }>();
  /**
   * Pods per node and what they request: the sums of `placed`, kept as pods and our bindings
   * change (upstream's scheduler cache), so a scheduling decision does not count every pod.
   */
  private readonly used = new Map<string, Usage>();

  constructor(private readonly options: SchedulerOptions) {
    this.ctx = { user: SCHEDULER_USER, userAgent: `keelson-scheduler/${DEFAULT_SCHEDULER_NAME}` };
    this.events = new EventRecorder({
      core: options.core,
      naming: options.naming,
      clock: options.clock,
      ctx: this.ctx,
      controller: DEFAULT_SCHEDULER_NAME,
      instance: `${DEFAULT_SCHEDULER_NAME}-keelson`,
      log: options.log,
    });
    this.queue = new WorkQueue<string>(
      (k) => k,
      (k) => this.schedule(k),
      { workers: 1 },
    );
    this.pods = followResource(options, { group: '', version: 'v1', resource: 'pods' }, this.ctx, (c?: InformerChange) => this.onPod(c));
    this.nodes = followResource(options, { group: '', version: 'v1', resource: 'nodes' }, this.ctx, () => this.retryUnschedulable());
  }

  start(): void {
    this.queue.startWhen(Promise.all([this.pods.synced, this.nodes.synced]), (err) =>
      this.options.log?.(`scheduler: informers failed to start: ${err.message}`),
    );
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    this.queue.stop();
    this.pods.stop();
    this.nodes.stop();
  }

  private isPending(pod: ApiObject): boolean {
    const s = spec(pod);
    return (
      !s.nodeName &&
      (s.schedulerName ?? DEFAULT_SCHEDULER_NAME) === DEFAULT_SCHEDULER_NAME &&
      !pod.metadata?.deletionTimestamp &&
      (s.schedulingGates ?? []).length === 0 &&
      !finished(pod)
    );
  }

  private onPod(change?: InformerChange): void {
    if (!change) {
      this.placed.clear();
      this.used.clear();
      for (const key of this.pods.objects.keys()) this.place(key);
      for (const pod of this.pods.objects.values()) if (this.isPending(pod)) this.queue.add(podKey(pod));
      return;
    }
    const key = podKey(change.object);
    if (spec(change.object).nodeName || change.type === 'DELETED') this.assumed.delete(key);
    this.place(key);
    if (change.type === 'DELETED') this.unschedulable.delete(key);
    // A bound pod that went away or finished frees room on its node.
    const freed =
      change.previous && spec(change.previous).nodeName && (change.type === 'DELETED' || finished(change.object) || change.object.metadata?.deletionTimestamp);
    if (freed) this.retryUnschedulable();
    if (change.type !== 'DELETED' && this.isPending(change.object)) this.queue.add(key);
  }

  private retryUnschedulable(): void {
    // Cleared first: the queue may try a pod at once, and a pod that still fits nowhere is put back.
    const keys = [...this.unschedulable];
    this.unschedulable.clear();
    for (const key of keys) this.queue.add(key);
  }

  /** The taints a node carries for scheduling, with the lifecycle controller's readiness taints. */
  private taintsOf(node: NodeLike): Taint[] {
    const taints = [...(node.spec?.taints ?? [])];
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status !== 'True') {
      const key = this.options.naming.key(ready?.status === 'False' ? 'not-ready' : 'unreachable', 'node');
      if (!taints.some((t) => t.key === key)) taints.push({ key, effect: 'NoSchedule' });
    }
    return taints;
  }

  /** Count the pod of `key` on its node as it is now (in the informer, and in `assumed`), and no longer as it was. */
  private place(key: string): void {
    const old = this.placed.get(key);
    if (old) {
      this.placed.delete(key);
      this.addUse(old.node, old.request, -1);
    }
    const pod = this.pods.objects.get(key);
    if (!pod || finished(pod)) return;
    const node = spec(pod).nodeName ?? this.assumed.get(key);
    if (!node) return;
    const request = this.requestOf(pod);
    this.placed.set(key, { node, request });
    this.addUse(node, request, 1);
  }

  private addUse(node: string, request: Request, sign: 1 | -1): void {
    let u = this.used.get(node);
    if (!u) this.used.set(node, (u = { pods: 0, cpu: 0n, memory: 0n }));
    u.pods += sign;
    u.cpu += BigInt(sign) * request.cpu;
    u.memory += BigInt(sign) * request.memory;
    if (u.pods === 0) this.used.delete(node);
  }

  private requestOf(pod: ApiObject): Request {
    let r = this.requests.get(pod);
    if (!r) this.requests.set(pod, (r = podRequest(pod)));
    return r;
  }

  /** Why `node` cannot take `pod` (upstream's filter reasons), or undefined when it can. */
  private misfit(pod: ApiObject, node: NodeLike, used: Usage | undefined): string[] | undefined {
    if (node.spec?.unschedulable && !tolerates(spec(pod).tolerations ?? [], { key: this.options.naming.key('unschedulable', 'node'), effect: 'NoSchedule' })) {
      return ['node(s) were unschedulable'];
    }
    const untolerated = this.taintsOf(node).find((t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !tolerates(spec(pod).tolerations ?? [], t));
    if (untolerated) return [`node(s) had untolerated taint {${untolerated.key}: ${untolerated.value ?? ''}}`];
    if (!nodeMatches(pod, node)) return ["node(s) didn't match Pod's node affinity/selector"];
    const allocatable = node.status?.allocatable ?? {};
    const u = used ?? { pods: 0, cpu: 0n, memory: 0n };
    const want = this.requestOf(pod);
    const reasons: string[] = [];
    const pods = resourceAmount(allocatable, 'pods');
    if (pods !== undefined && BigInt(u.pods + 1) > pods) reasons.push('Too many pods');
    const cpu = resourceAmount(allocatable, 'cpu');
    if (want.cpu > 0n && cpu !== undefined && u.cpu + want.cpu > cpu) reasons.push('Insufficient cpu');
    const memory = resourceAmount(allocatable, 'memory');
    if (want.memory > 0n && memory !== undefined && u.memory + want.memory > memory) reasons.push('Insufficient memory');
    return reasons.length > 0 ? reasons : undefined;
  }

  private async schedule(key: string): Promise<void> {
    const pod = this.pods.objects.get(key);
    if (!pod || !this.isPending(pod) || this.assumed.has(key)) return;
    const nodes = [...this.nodes.objects.values()] as NodeLike[];
    const histogram = new Map<string, number>();
    let best: { node: NodeLike; pods: number } | undefined;
    for (const node of nodes) {
      const name = node.metadata!.name!;
      const reasons = this.misfit(pod, node, this.used.get(name));
      if (reasons) {
        for (const r of reasons) histogram.set(r, (histogram.get(r) ?? 0) + 1);
        continue;
      }
      const pods = this.used.get(name)?.pods ?? 0;
      if (!best || pods < best.pods || (pods === best.pods && name < best.node.metadata!.name!)) best = { node, pods };
    }
    if (!best) return this.failed(pod, nodes.length, histogram);
    await this.bind(pod, best.node.metadata!.name!);
  }

  private async bind(pod: ApiObject, nodeName: string): Promise<void> {
    const meta = pod.metadata!;
    const key = podKey(pod);
    this.assumed.set(key, nodeName);
    this.place(key);
    try {
      await this.options.core.create(
        { group: '', version: 'v1', resource: 'pods', namespace: meta.namespace, name: meta.name, subresource: 'binding' },
        {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name: meta.name, namespace: meta.namespace, uid: meta.uid },
          target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
        },
        {},
        this.ctx,
      );
    } catch (err) {
      this.assumed.delete(key);
      this.place(key);
      // Bound by someone else, deleted or replaced meanwhile: the informer brings what is true now.
      if (StatusError.is(err, 'Conflict') || StatusError.is(err, 'NotFound')) return;
      throw err;
    }
    this.unschedulable.delete(key);
    void this.events.record(
      { apiVersion: 'v1', kind: 'Pod', object: pod },
      'Normal',
      'Scheduled',
      'Binding',
      `Successfully assigned ${meta.namespace}/${meta.name} to ${nodeName}`,
    );
  }

  /** No node fits: PodScheduled=False with upstream's message, a FailedScheduling event, another try on the next change. */
  private async failed(pod: ApiObject, nodeCount: number, histogram: Map<string, number>): Promise<void> {
    const key = podKey(pod);
    this.unschedulable.add(key);
    const message = fitErrorMessage(nodeCount, histogram);
    const status = (pod.status ?? {}) as { conditions?: Array<Record<string, unknown>> };
    const current = status.conditions?.find((c) => c.type === 'PodScheduled');
    if (current?.status === 'False' && current.reason === 'Unschedulable' && current.message === message) return;
    const condition = {
      type: 'PodScheduled',
      status: 'False',
      lastProbeTime: null,
      lastTransitionTime: rfc3339(this.options.clock.now()),
      reason: 'Unschedulable',
      message,
    };
    const conditions = [...(status.conditions ?? []).filter((c) => c.type !== 'PodScheduled'), condition];
    const meta = pod.metadata!;
    const target: ResourceTarget = { group: '', version: 'v1', resource: 'pods', namespace: meta.namespace, name: meta.name, subresource: 'status' };
    try {
      await this.options.core.update(target, { ...pod, status: { ...status, conditions } }, {}, this.ctx);
    } catch (err) {
      if (!StatusError.is(err, 'Conflict') && !StatusError.is(err, 'NotFound')) throw err;
    }
    void this.events.record({ apiVersion: 'v1', kind: 'Pod', object: pod }, 'Warning', 'FailedScheduling', 'Scheduling', message);
  }
}

/** upstream's FitError message, with the preemption note its default PostFilter adds. */
export function fitErrorMessage(nodeCount: number, histogram: ReadonlyMap<string, number>): string {
  if (nodeCount === 0) return 'no nodes available to schedule pods';
  const reasons = [...histogram].map(([reason, n]) => `${n} ${reason}`).sort();
  const resourceBound = [...histogram.keys()].some((r) => r === 'Too many pods' || r.startsWith('Insufficient'));
  const preemption = resourceBound ? 'No preemption victims found for incoming pod' : 'Preemption is not helpful for scheduling';
  return `0/${nodeCount} nodes are available: ${reasons.join(', ')}. preemption: 0/${nodeCount} nodes are available: ${nodeCount} ${preemption}.`;
}
