/**
 * The disruption controller, as upstream's (kube-controller-manager's `disruption`): the status of
 * every PodDisruptionBudget, from the pods its selector picks in its namespace.
 *
 * - `expectedPods`: with an integer `minAvailable`, the number of those pods; otherwise (a
 *   percentage, or `maxUnavailable`) the sum of the scales of their controllers (here
 *   ReplicaSets), each pod needing one ("found no controllers for pod" otherwise);
 * - `desiredHealthy`: `minAvailable` (a percentage of `expectedPods`, rounded up), or
 *   `expectedPods` less `maxUnavailable` (likewise), at least 0;
 * - `currentHealthy`: the pods that are Ready and not being deleted, nor recently evicted;
 * - `disruptionsAllowed`: what `currentHealthy` has beyond `desiredHealthy` (0 without expected pods);
 * - the `DisruptionAllowed` condition (`SufficientPods` / `InsufficientPods`, or `SyncFailed`
 *   when the expected count cannot be worked out, with a `CalculateExpectedPodCountFailed`
 *   event), and `observedGeneration`.
 *
 * `disruptedPods` entries (written by evictions) are dropped once their pod is deleted or
 * being deleted, or two minutes after the eviction. An ordinary API client of the core.
 */
import {
  type ApiObject,
  type RequestContext,
  type ResourceTarget,
  followResource,
  type InformerChange,
  type InformerView,
  emptyBudgetStatus,
  withDisruptionAllowed,
  type PodDisruptionBudget,
  type PodDisruptionBudgetStatus,
  isPodReady,
  type PodCondition,
  labelSelectorMatches,
} from '../core';
import { jsonEqual } from '../util/json-values';
import { rfc3339 } from '../clock';
import { StatusError } from '../status';
import { EventRecorder } from './events';
import { WorkQueue } from './work-queue';
import type { ApiControllerOptions } from './options';

/** How long an eviction's entry in `disruptedPods` counts (upstream's DeletionTimeout). */
export const DISRUPTED_POD_TIMEOUT_MS = 2 * 60_000;

type PodLike = ApiObject & { status?: { conditions?: PodCondition[] } };
type ReplicaSetLike = ApiObject & { spec?: { replicas?: number } };

const pdbTarget: ResourceTarget = { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' };
const podsTarget: ResourceTarget = { group: '', version: 'v1', resource: 'pods' };

const keyOf = (o: ApiObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** upstream's GetScaledValueFromIntOrPercent, rounding up. */
function scaled(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  return Math.ceil((Number(value.slice(0, -1)) * total) / 100);
}

export type DisruptionControllerOptions = ApiControllerOptions;

export class DisruptionController {
  private readonly budgets: InformerView;
  private readonly pods: InformerView;
  private readonly replicaSets: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;
  private readonly events: EventRecorder;
  private readonly timers = new Map<string, () => void>();

  constructor(private readonly options: DisruptionControllerOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/disruption-controller' };
    const watch: RequestContext = { ...this.ctx, user: options.watchAs ?? options.user };
    this.queue = new WorkQueue<string>(
      (k) => k,
      (k) => this.sync(k),
      { name: 'disruption', metrics: options.queueMetrics },
    );
    this.budgets = followResource(options, pdbTarget, watch, (c?: InformerChange) => (c ? this.queue.add(keyOf(c.object)) : this.all()));
    // A pod or a ReplicaSet changing may change any budget of its namespace.
    const inNamespace = (c?: InformerChange) => (c ? this.inNamespace(c.object.metadata?.namespace ?? '') : this.all());
    this.pods = followResource(options, podsTarget, watch, inNamespace);
    this.replicaSets = followResource(options, { group: options.naming.apiGroups.apps, version: 'v1', resource: 'replicasets' }, watch, inNamespace);
    this.events = new EventRecorder({
      core: options.core,
      naming: options.naming,
      clock: options.clock,
      ctx: this.ctx,
      controller: 'controllermanager',
      api: 'core',
      log: options.log,
    });
  }

  start(): void {
    this.queue.startWhen(Promise.all([this.budgets.synced, this.pods.synced, this.replicaSets.synced]), (err) =>
      this.options.log?.(`disruption-controller: informers failed to start: ${err.message}`),
    );
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    this.queue.stop();
    this.budgets.stop();
    this.pods.stop();
    this.replicaSets.stop();
  }

  private all(): void {
    for (const pdb of this.budgets.objects.values()) this.queue.add(keyOf(pdb));
  }

  private inNamespace(namespace: string): void {
    for (const pdb of this.budgets.inNamespace(namespace)) this.queue.add(keyOf(pdb));
  }

  private async sync(key: string): Promise<void> {
    const pdb = this.budgets.objects.get(key) as PodDisruptionBudget | undefined;
    this.timers.get(key)?.();
    this.timers.delete(key);
    if (!pdb) return;
    const namespace = pdb.metadata?.namespace ?? '';
    const selector = pdb.spec?.selector;
    // A null selector picks no pods; an empty one, every pod of the namespace.
    const pods = selector ? ([...this.pods.inNamespace(namespace)] as PodLike[]).filter((p) => labelSelectorMatches(selector, p.metadata?.labels)) : [];
    const now = this.options.clock.now();
    const current = pdb.status ?? emptyBudgetStatus();
    const generation = pdb.metadata?.generation;
    const at = rfc3339(now);
    const disrupted = this.liveDisruptions(current.disruptedPods ?? {}, pods, now, key);
    let status: PodDisruptionBudgetStatus;
    try {
      const { expected, desired } = this.expectedCount(pdb, pods);
      const healthy = pods.filter((p) => !p.metadata?.deletionTimestamp && !((p.metadata?.name ?? '') in disrupted) && isPodReady(p)).length;
      const allowed = expected > 0 ? Math.max(0, healthy - desired) : 0;
      status = {
        observedGeneration: generation,
        ...(Object.keys(disrupted).length ? { disruptedPods: disrupted } : {}),
        disruptionsAllowed: allowed,
        currentHealthy: healthy,
        desiredHealthy: desired,
        expectedPods: expected,
        conditions: withDisruptionAllowed(
          current.conditions,
          allowed > 0 ? 'True' : 'False',
          allowed > 0 ? 'SufficientPods' : 'InsufficientPods',
          '',
          generation,
          at,
        ),
      };
      if (pods.length === 0)
        void this.events.record({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', object: pdb }, 'Normal', 'NoPods', 'NoPods', 'No matching pods found');
    } catch (err) {
      const message = (err as Error).message;
      void this.events.record(
        { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', object: pdb },
        'Warning',
        'CalculateExpectedPodCountFailed',
        'CalculateExpectedPodCountFailed',
        `Failed to calculate the number of expected pods: ${message}`,
      );
      status = {
        ...current,
        observedGeneration: generation,
        disruptionsAllowed: 0,
        conditions: withDisruptionAllowed(current.conditions, 'False', 'SyncFailed', message, generation, at),
      };
    }
    if (jsonEqual(status, current)) return;
    try {
      await this.options.core.update({ ...pdbTarget, namespace, name: pdb.metadata!.name!, subresource: 'status' }, { ...pdb, status }, {}, this.ctx);
    } catch (err) {
      if (!StatusError.is(err, 'Conflict') && !StatusError.is(err, 'NotFound')) throw err;
    }
  }

  /** The budget's `disruptedPods` still pending: the pod exists, is not being deleted, and the eviction is recent. */
  private liveDisruptions(entries: Record<string, string>, pods: readonly PodLike[], now: number, key: string): Record<string, string> {
    const live: Record<string, string> = {};
    let next: number | undefined;
    for (const [name, at] of Object.entries(entries)) {
      const pod = pods.find((p) => p.metadata?.name === name);
      const expires = Date.parse(at) + DISRUPTED_POD_TIMEOUT_MS;
      if (!pod || pod.metadata?.deletionTimestamp || !(expires > now)) continue;
      live[name] = at;
      next = next === undefined ? expires : Math.min(next, expires);
    }
    if (next !== undefined)
      this.timers.set(
        key,
        this.options.clock.setTimeout(() => this.queue.add(key), next - now),
      );
    return live;
  }

  /** upstream's getExpectedPodCount. */
  private expectedCount(pdb: PodDisruptionBudget, pods: readonly PodLike[]): { expected: number; desired: number } {
    const { minAvailable, maxUnavailable } = pdb.spec ?? {};
    if (maxUnavailable !== undefined) {
      const expected = this.expectedScale(pods);
      return { expected, desired: Math.max(0, expected - scaled(maxUnavailable, expected)) };
    }
    if (typeof minAvailable === 'number') return { expected: pods.length, desired: minAvailable };
    if (typeof minAvailable === 'string') {
      const expected = this.expectedScale(pods);
      return { expected, desired: scaled(minAvailable, expected) };
    }
    return { expected: 0, desired: 0 };
  }

  /** The sum of the scales of the pods' controllers (upstream's getExpectedScale, with the ReplicaSet finder). */
  private expectedScale(pods: readonly PodLike[]): number {
    const scales = new Map<string, number>();
    for (const pod of pods) {
      const ref = pod.metadata?.ownerReferences?.find((r) => r.controller);
      if (!ref) continue;
      if (scales.has(ref.uid)) continue;
      const rs =
        ref.kind === 'ReplicaSet' ? (this.replicaSets.objects.get(`${pod.metadata?.namespace ?? ''}/${ref.name}`) as ReplicaSetLike | undefined) : undefined;
      if (!rs || rs.metadata?.uid !== ref.uid) throw new Error(`found no controllers for pod "${pod.metadata?.name ?? ''}"`);
      scales.set(ref.uid, rs.spec?.replicas ?? 1);
    }
    let total = 0;
    for (const n of scales.values()) total += n;
    return total;
  }
}
