/**
 * The pod garbage collector, as upstream's (kube-controller-manager's `podgc`). Every
 * `checkPeriodMs` (20 s) it force-deletes (grace period 0, uid precondition):
 *
 * - terminated pods (phase Succeeded or Failed) beyond `terminatedThreshold`
 *   (`--terminated-pod-gc-threshold`, 12,500; 0 disables), evicted ones first, then the oldest;
 * - terminating pods on a node that is not Ready and carries the
 *   `node.<key domain>/out-of-service` taint (non-graceful node shutdown);
 * - orphaned pods, bound to a node that no longer exists: the node must stay missing for
 *   `quarantineMs` (40 s) and a live read must confirm it, and the pod gets the `DisruptionTarget`
 *   condition (`DeletionByPodGC`, "PodGC: node no longer exists");
 * - terminating pods that were never scheduled.
 *
 * A pod not yet in a terminal phase is first marked Failed (with the condition, for orphans),
 * as upstream's markFailedAndDeletePodWithCondition does. An ordinary API client of the core.
 */
import {
  type ApiObject,
  type RequestContext,
  type ResourceTarget,
  followResource,
  type InformerView,
  type NodeCondition,
  type Taint,
  withDisruptionTarget,
  type PodCondition,
} from '../core';
import { rfc3339 } from '../clock';
import { StatusError } from '../status';
import type { ApiControllerOptions } from './options';

export const POD_GC_CHECK_PERIOD_MS = 20_000;
export const POD_GC_QUARANTINE_MS = 40_000;
export const TERMINATED_POD_GC_THRESHOLD = 12_500;

type PodLike = ApiObject & { spec?: { nodeName?: string }; status?: { phase?: string; reason?: string; conditions?: PodCondition[] } };
type NodeLike = ApiObject & { spec?: { taints?: Taint[] }; status?: { conditions?: NodeCondition[] } };

const nodesTarget: ResourceTarget = { group: '', version: 'v1', resource: 'nodes' };
const podsTarget: ResourceTarget = { group: '', version: 'v1', resource: 'pods' };

const terminal = (pod: PodLike) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

export interface PodGarbageCollectorOptions extends Omit<ApiControllerOptions, 'queueMetrics'> {
  terminatedThreshold?: number;
  checkPeriodMs?: number;
  quarantineMs?: number;
}

export class PodGarbageCollector {
  private readonly nodes: InformerView;
  private readonly pods: InformerView;
  private readonly ctx: RequestContext;
  /** Nodes pods are bound to that the informer does not hold, by when they were first found missing. */
  private readonly missing = new Map<string, number>();
  private cancelTimer: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private synced = false;
  private stopped = false;

  constructor(private readonly options: PodGarbageCollectorOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/pod-garbage-collector' };
    const watch: RequestContext = { ...this.ctx, user: options.watchAs ?? options.user };
    this.nodes = followResource(options, nodesTarget, watch, () => undefined);
    this.pods = followResource(options, podsTarget, watch, () => undefined);
  }

  start(): void {
    Promise.all([this.nodes.synced, this.pods.synced]).then(
      () => {
        this.synced = true;
      },
      (err: Error) => this.options.log?.(`pod-garbage-collector: informers failed to start: ${err.message}`),
    );
    this.cancelTimer = this.options.clock.setInterval(() => void this.collect(), this.options.checkPeriodMs ?? POD_GC_CHECK_PERIOD_MS);
  }

  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.nodes.stop();
    this.pods.stop();
  }

  /** The pass under way, if any. */
  async idle(): Promise<void> {
    await this.running;
  }

  /** One pass (a pass still running is not started again); resolves when it is done. */
  collect(): Promise<void> {
    if (!this.synced || this.stopped) return Promise.resolve();
    this.running ??= this.pass()
      .catch((err: Error) => this.options.log?.(`pod-garbage-collector: ${err.message}`))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private async pass(): Promise<void> {
    const pods = [...this.pods.objects.values()] as PodLike[];
    const nodes = new Map([...this.nodes.objects.values()].map((n) => [n.metadata!.name!, n as NodeLike]));
    const threshold = this.options.terminatedThreshold ?? TERMINATED_POD_GC_THRESHOLD;
    if (threshold > 0) await this.gcTerminated(pods, threshold);
    await this.gcOutOfService(pods, nodes);
    await this.gcOrphaned(pods, nodes);
    for (const pod of pods) if (pod.metadata?.deletionTimestamp && !pod.spec?.nodeName) await this.markFailedAndDelete(pod);
  }

  private async gcTerminated(pods: readonly PodLike[], threshold: number): Promise<void> {
    const terminated = pods.filter(terminal);
    const excess = terminated.length - threshold;
    if (excess <= 0) return;
    // Evicted pods first, then the oldest (ties by namespace and name).
    const evicted = (p: PodLike) => (p.status?.reason === 'Evicted' ? 0 : 1);
    const created = (p: PodLike) => Date.parse(p.metadata?.creationTimestamp ?? '') || 0;
    terminated.sort((a, b) => evicted(a) - evicted(b) || created(a) - created(b) || key(a).localeCompare(key(b)));
    for (const pod of terminated.slice(0, excess)) await this.markFailedAndDelete(pod);
  }

  private async gcOutOfService(pods: readonly PodLike[], nodes: ReadonlyMap<string, NodeLike>): Promise<void> {
    const outOfService = this.options.naming.key('out-of-service', 'node');
    for (const pod of pods) {
      const node = pod.metadata?.deletionTimestamp && pod.spec?.nodeName ? nodes.get(pod.spec.nodeName) : undefined;
      if (!node) continue;
      const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      if (!ready && (node.spec?.taints ?? []).some((t) => t.key === outOfService)) await this.markFailedAndDelete(pod);
    }
  }

  private async gcOrphaned(pods: readonly PodLike[], nodes: ReadonlyMap<string, NodeLike>): Promise<void> {
    const now = this.options.clock.now();
    const wanted = new Set<string>();
    for (const pod of pods) {
      const name = pod.spec?.nodeName;
      if (!name || nodes.has(name)) continue;
      wanted.add(name);
      if (!this.missing.has(name)) this.missing.set(name, now);
    }
    const gone = new Set<string>();
    for (const [name, since] of this.missing) {
      if (!wanted.has(name)) {
        this.missing.delete(name);
        continue;
      }
      if (now - since < (this.options.quarantineMs ?? POD_GC_QUARANTINE_MS)) continue;
      // The informer may lag: only a live read that finds no node makes its pods orphans.
      try {
        await this.options.core.get({ ...nodesTarget, name }, {}, this.ctx);
        this.missing.delete(name);
      } catch (err) {
        if (!StatusError.is(err, 'NotFound')) throw err;
        gone.add(name);
      }
    }
    for (const pod of pods)
      if (gone.has(pod.spec?.nodeName ?? '')) await this.markFailedAndDelete(pod, { reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' });
  }

  /** upstream's markFailedAndDeletePodWithCondition: Failed (and DisruptionTarget for `disruption`) unless terminal already, then deleted at once. */
  private async markFailedAndDelete(pod: PodLike, disruption?: { reason: string; message: string }): Promise<void> {
    const meta = pod.metadata!;
    const target = { ...podsTarget, namespace: meta.namespace!, name: meta.name! };
    try {
      if (!terminal(pod)) {
        // A patch, as upstream's PatchPodStatus (the pod-garbage-collector role may patch pod status, not update it).
        const conditions = disruption && withDisruptionTarget(pod.status?.conditions, disruption.reason, disruption.message, rfc3339(this.options.clock.now()));
        const status = { phase: 'Failed', ...(conditions ? { conditions } : {}) };
        await this.options.core.patch({ ...target, subresource: 'status' }, { type: 'merge', body: { metadata: { uid: meta.uid }, status } }, {}, this.ctx);
      }
      await this.options.core.delete(target, { gracePeriodSeconds: 0, preconditions: { uid: meta.uid } }, this.ctx);
    } catch (err) {
      // Gone or changed since: the next pass looks again.
      if (StatusError.is(err, 'NotFound') || StatusError.is(err, 'Conflict')) return;
      throw err;
    }
  }
}

function key(pod: ApiObject): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}
