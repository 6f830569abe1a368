/**
 * The ReplicaSet controller, as upstream's: it keeps `spec.replicas` active pods matching a
 * ReplicaSet's selector and controlled by it. Pods and ReplicaSets come from informers; work is
 * a rate-limited queue of ReplicaSet keys. Per ReplicaSet it
 *
 * - claims pods: adopts orphans its selector matches (after a fresh read of the ReplicaSet, so
 *   one being deleted adopts nothing) and releases controlled pods it no longer matches;
 * - waits for the effects of its last creates and deletes to show in the informer
 *   (expectations, five minutes at most) before deciding again, so it never doubles them;
 * - creates missing pods from the template (`<rs>-<5 random chars>`, a controller owner reference
 *   with blockOwnerDeletion) in slow-start batches of 1, 2, 4, … that stop at the first failure,
 *   at most 500 per sync; deletes surplus pods ranked as upstream ranks them (unscheduled before
 *   scheduled, pending before running, not ready before ready, lower deletion cost, more
 *   restarts, newer first);
 * - records SuccessfulCreate, SuccessfulDelete and FailedCreate events (events v1), and writes
 *   status: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas (ready for
 *   minReadySeconds), observedGeneration and the ReplicaFailure condition; a ReplicaSet with a
 *   ready pod not yet available is synced again, on the clock, when the pod's minReadySeconds are up.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  type ApiObject,
  type RequestContext,
  type ResourceTarget,
  followResource,
  type InformerChange,
  type InformerView,
  labelSelectorMatches,
  type PodCondition,
  isPodReady,
  podReadyCondition,
} from '../core';
import type { Clock } from '../clock';
import { rfc3339 } from '../clock';
import type { Naming } from '../naming';
import { StatusError } from '../status';
import { WorkQueue } from './work-queue';
import { EventRecorder } from './events';
import type { ApiControllerOptions } from './options';

type MetaLabelSelector = Parameters<typeof labelSelectorMatches>[0];

const BURST_REPLICAS = 500;
const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;
const CONTROLLER_NAME = 'replicaset-controller';

export interface ReplicaSetControllerOptions extends ApiControllerOptions {
  /** The events' `source.host` and `reportingInstance`; upstream's controller leaves them empty. */
  instance?: string;
}

interface OwnerReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

const key = (o: ApiObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
function controllerOf(o: ApiObject): OwnerReference | undefined {
  const refs = o.metadata?.ownerReferences as OwnerReference[] | undefined;
  if (refs) for (const r of refs) if (r.controller === true) return r;
  return undefined;
}
const specOf = (o: ApiObject) =>
  (o.spec ?? {}) as {
    replicas?: number;
    minReadySeconds?: number;
    selector?: MetaLabelSelector;
    template?: { metadata?: ApiObject['metadata']; spec?: unknown };
  };
const podStatus = (p: ApiObject) => (p.status ?? {}) as { phase?: string; containerStatuses?: Array<{ restartCount?: number }> };

/** The pod carries every one of `labels`. */
function hasLabels(p: ApiObject, labels: Record<string, string>): boolean {
  const own = p.metadata?.labels;
  for (const k in labels) if (own?.[k] !== labels[k]) return false;
  return true;
}

/** Upstream's IsPodActive: not finished and not being deleted. */
export function isPodActive(p: ApiObject): boolean {
  const phase = podStatus(p).phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !p.metadata?.deletionTimestamp;
}

/**
 * When a ready pod, `ready` its True Ready condition, has been ready for minReadySeconds and so
 * counts as available (upstream's IsPodAvailable): at once without minReadySeconds, never
 * (NaN) without a transition time.
 */
function availableAt(ready: PodCondition, minReadySeconds: number): number {
  if (!minReadySeconds) return -Infinity;
  const since = ready.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : NaN;
  return since + minReadySeconds * 1000;
}

/** The annotation that makes a pod cheaper or dearer to delete: `controller.<key domain>/pod-deletion-cost`. */
export const podDeletionCostKey = (naming: Naming) => naming.key('pod-deletion-cost', 'controller');

/** Upstream's deletion order: the first pods of the result are deleted first. */
export function rankForDeletion(pods: readonly ApiObject[], deletionCostKey: string): ApiObject[] {
  const phaseRank: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
  const cost = (p: ApiObject) => Number(p.metadata?.annotations?.[deletionCostKey] ?? 0) || 0;
  const restarts = (p: ApiObject) => (podStatus(p).containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
  const created = (p: ApiObject) => Date.parse(p.metadata?.creationTimestamp ?? '') || 0;
  const nodeName = (p: ApiObject) => ((p.spec ?? {}) as { nodeName?: string }).nodeName ?? '';
  return [...pods].sort((a, b) => {
    const assigned = Number(nodeName(a) !== '') - Number(nodeName(b) !== '');
    if (assigned) return assigned;
    const phase = (phaseRank[podStatus(a).phase ?? ''] ?? 0) - (phaseRank[podStatus(b).phase ?? ''] ?? 0);
    if (phase) return phase;
    const ready = Number(isPodReady(a)) - Number(isPodReady(b));
    if (ready) return ready;
    const c = cost(a) - cost(b);
    if (c) return c;
    const r = restarts(b) - restarts(a);
    if (r) return r;
    return created(b) - created(a);
  });
}

/** What a ReplicaSet still waits to see: creates and deletes it made, not yet in the informer. */
class Expectations {
  private readonly pending = new Map<string, { adds: number; deletes: Set<string>; since: number }>();
  constructor(private readonly clock: Clock) {}

  satisfied(rs: string): boolean {
    const e = this.pending.get(rs);
    if (!e) return true;
    if ((e.adds <= 0 && e.deletes.size === 0) || this.clock.now() - e.since > EXPECTATIONS_TIMEOUT_MS) {
      this.pending.delete(rs);
      return true;
    }
    return false;
  }
  expect(rs: string, adds: number, deletes: readonly string[]): void {
    this.pending.set(rs, { adds, deletes: new Set(deletes), since: this.clock.now() });
  }
  created(rs: string, n = 1): void {
    const e = this.pending.get(rs);
    if (e) e.adds -= n;
  }
  deleted(rs: string, pod: string): void {
    this.pending.get(rs)?.deletes.delete(pod);
  }
  forget(rs: string): void {
    this.pending.delete(rs);
  }
}

export class ReplicaSetController {
  private readonly replicaSets: InformerView;
  private readonly pods: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly expectations: Expectations;
  private readonly ctx: RequestContext;
  private readonly appsGroup = 'apps';
  private readonly events: EventRecorder;

  constructor(private readonly options: ReplicaSetControllerOptions) {
    this.ctx = { user: options.user, userAgent: `keelson-controller-manager/${CONTROLLER_NAME}` };
    this.expectations = new Expectations(options.clock);
    // Core Events from client-go's legacy recorder, as upstream's ReplicaSet controller writes them.
    this.events = new EventRecorder({
      core: options.core,
      naming: options.naming,
      clock: options.clock,
      ctx: this.ctx,
      controller: CONTROLLER_NAME,
      instance: options.instance,
      api: 'core',
      log: options.log,
    });
    this.queue = new WorkQueue<string>(
      (k) => k,
      (k) => this.sync(k),
      { workers: 2, name: 'replicaset', metrics: options.queueMetrics, clock: options.clock },
    );
    this.replicaSets = followResource(options, { group: this.appsGroup, version: 'v1', resource: 'replicasets' }, this.ctx, (c) => this.onReplicaSet(c));
    this.pods = followResource(options, { group: '', version: 'v1', resource: 'pods' }, this.ctx, (c) => this.onPod(c));
  }

  start(): void {
    this.queue.startWhen(
      Promise.all([this.replicaSets.synced, this.pods.synced]),
      (err) => this.options.log?.(`${CONTROLLER_NAME}: informers failed to start: ${err.message}`),
      () => {
        for (const rs of this.replicaSets.objects.values()) this.queue.add(key(rs));
      },
    );
  }

  /** Resolves when both informers were listed and the queue has nothing left to do. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    this.queue.stop();
    this.replicaSets.stop();
    this.pods.stop();
  }

  private onReplicaSet(change?: InformerChange): void {
    if (!change) {
      for (const rs of this.replicaSets.objects.values()) this.queue.add(key(rs));
      return;
    }
    if (change.type === 'DELETED') this.expectations.forget(key(change.object));
    this.queue.add(key(change.object));
  }

  /** The ReplicaSets in the pod's namespace whose selector matches it (for orphans). */
  private matching(pod: ApiObject): string[] {
    const out: string[] = [];
    for (const rs of this.replicaSets.inNamespace(pod.metadata?.namespace ?? '')) {
      const selector = specOf(rs).selector;
      if (selector && Object.keys(selector).length > 0 && labelSelectorMatches(selector, pod.metadata?.labels)) out.push(key(rs));
    }
    return out;
  }

  /** The ReplicaSet a controller reference names, if it is the one the informer holds. */
  private owner(pod: ApiObject, ref: OwnerReference | undefined): string | undefined {
    if (ref?.kind !== 'ReplicaSet' || ref.apiVersion?.split('/')[0] !== this.appsGroup) return undefined;
    const k = `${pod.metadata?.namespace ?? ''}/${ref.name ?? ''}`;
    const rs = this.replicaSets.objects.get(k);
    return rs && rs.metadata?.uid === ref.uid ? k : undefined;
  }

  private onPod(change?: InformerChange): void {
    if (!change) {
      for (const rs of this.replicaSets.objects.values()) this.queue.add(key(rs));
      return;
    }
    const { object: pod, previous } = change;
    const ref = controllerOf(pod);
    const owner = this.owner(pod, ref);
    if (change.type === 'DELETED') {
      if (owner) {
        this.expectations.deleted(owner, key(pod));
        this.queue.add(owner);
      }
      return;
    }
    if (change.type === 'ADDED' || !previous) {
      if (owner) {
        if (pod.metadata?.deletionTimestamp) this.expectations.deleted(owner, key(pod));
        else this.expectations.created(owner);
        this.queue.add(owner);
      } else if (!ref) {
        for (const k of this.matching(pod)) this.queue.add(k);
      }
      return;
    }
    // An update: a pod being deleted counts as gone; the old and new owners both look again.
    if (pod.metadata?.deletionTimestamp && !previous.metadata?.deletionTimestamp && owner) this.expectations.deleted(owner, key(pod));
    const oldOwner = this.owner(previous, controllerOf(previous));
    if (oldOwner && oldOwner !== owner) this.queue.add(oldOwner);
    if (owner) this.queue.add(owner);
    else if (!ref || !isDeepStrictEqual(pod.metadata?.labels, previous.metadata?.labels)) {
      for (const k of this.matching(pod)) this.queue.add(k);
    }
  }

  private target(namespace: string, resource: string, name?: string, subresource?: string): ResourceTarget {
    const group = resource === 'replicasets' ? this.appsGroup : '';
    return { group, version: 'v1', resource, namespace, ...(name ? { name } : {}), ...(subresource ? { subresource } : {}) };
  }

  private async sync(rsKey: string): Promise<void> {
    const rs = this.replicaSets.objects.get(rsKey);
    if (!rs) {
      this.expectations.forget(rsKey);
      return;
    }
    const namespace = rs.metadata!.namespace!;
    const spec = specOf(rs);
    const selector = spec.selector;
    // An empty selector matches nothing here (validation forbids it; be safe).
    const selects = (p: ApiObject) => !!selector && Object.keys(selector).length > 0 && labelSelectorMatches(selector, p.metadata?.labels);
    const needsSync = this.expectations.satisfied(rsKey);

    // One pass over the namespace's pods (every sync makes it, as upstream's does): the ones this
    // ReplicaSet controls and still selects, and the few to release or adopt, written after it.
    const uid = rs.metadata?.uid;
    const deleting = !!rs.metadata?.deletionTimestamp;
    const owned: ApiObject[] = [];
    const release: ApiObject[] = [];
    const orphans: ApiObject[] = [];
    for (const pod of this.pods.inNamespace(namespace)) {
      const ref = controllerOf(pod);
      if (ref !== undefined && ref.uid === uid) {
        if (selects(pod)) owned.push(pod);
        else if (!deleting) release.push(pod);
        continue;
      }
      if (ref || deleting || pod.metadata?.deletionTimestamp || !selects(pod)) continue;
      orphans.push(pod);
    }
    for (const pod of release) await this.release(rs, pod);
    if (orphans.length > 0) {
      // Adopt only after a fresh read says the ReplicaSet is still there and not being deleted.
      const fresh = await this.options.core.get(this.target(namespace, 'replicasets', rs.metadata!.name!), {}, this.ctx).catch(() => undefined);
      if (fresh && fresh.metadata?.uid === uid && !fresh.metadata?.deletionTimestamp) {
        for (const pod of orphans) if (await this.adopt(rs, pod)) owned.push(pod);
      }
    }
    const active = owned.filter(isPodActive);

    let failure: string | undefined;
    if (needsSync && !rs.metadata?.deletionTimestamp) failure = await this.manage(rs, active);
    await this.updateStatus(rs, active, failure);
    // A failed create is retried by the queue, with its backoff.
    if (failure) throw new Error(failure);
  }

  private ownerReference(rs: ApiObject): OwnerReference {
    return {
      apiVersion: `${this.appsGroup}/v1`,
      kind: 'ReplicaSet',
      name: rs.metadata!.name!,
      uid: rs.metadata!.uid!,
      controller: true,
      blockOwnerDeletion: true,
    };
  }

  private async adopt(rs: ApiObject, pod: ApiObject): Promise<boolean> {
    const refs = [...((pod.metadata?.ownerReferences as OwnerReference[] | undefined) ?? []), this.ownerReference(rs)];
    const patch = { metadata: { ownerReferences: refs, uid: pod.metadata?.uid } };
    try {
      await this.options.core.patch(this.target(pod.metadata!.namespace!, 'pods', pod.metadata!.name!), { type: 'merge', body: patch }, {}, this.ctx);
      return true;
    } catch (err) {
      if (StatusError.is(err, 'NotFound') || StatusError.is(err, 'Conflict') || StatusError.is(err, 'Invalid')) return false;
      throw err;
    }
  }

  private async release(rs: ApiObject, pod: ApiObject): Promise<void> {
    const refs = ((pod.metadata?.ownerReferences as OwnerReference[] | undefined) ?? []).filter((r) => r.uid !== rs.metadata?.uid);
    try {
      await this.options.core.patch(
        this.target(pod.metadata!.namespace!, 'pods', pod.metadata!.name!),
        { type: 'merge', body: { metadata: { ownerReferences: refs.length ? refs : null, uid: pod.metadata?.uid } } },
        {},
        this.ctx,
      );
    } catch (err) {
      if (!StatusError.is(err, 'NotFound') && !StatusError.is(err, 'Conflict') && !StatusError.is(err, 'Invalid')) throw err;
    }
  }

  /** Create or delete toward spec.replicas; the first create error's message, if any. */
  private async manage(rs: ApiObject, active: readonly ApiObject[]): Promise<string | undefined> {
    const rsKey = key(rs);
    const namespace = rs.metadata!.namespace!;
    const want = specOf(rs).replicas ?? 1;
    const diff = active.length - want;
    if (diff < 0) {
      const count = Math.min(-diff, BURST_REPLICAS);
      this.expectations.expect(rsKey, count, []);
      let failure: string | undefined;
      let remaining = count;
      // Slow start: batches of 1, 2, 4, … that stop at the first batch with a failure.
      for (let batch = 1; remaining > 0; batch *= 2) {
        const size = Math.min(batch, remaining);
        const results = await Promise.all(Array.from({ length: size }, () => this.createPod(rs)));
        remaining -= size;
        const failed = results.filter((r) => r !== undefined);
        if (failed.length) {
          failure = failed[0];
          this.expectations.created(rsKey, failed.length + remaining);
          break;
        }
      }
      return failure;
    }
    if (diff > 0) {
      const victims = rankForDeletion(active, podDeletionCostKey(this.options.naming)).slice(0, Math.min(diff, BURST_REPLICAS));
      this.expectations.expect(rsKey, 0, victims.map(key));
      await Promise.all(
        victims.map(async (pod) => {
          try {
            await this.options.core.delete(this.target(namespace, 'pods', pod.metadata!.name!), {}, this.ctx);
            void this.event(rs, 'Normal', 'SuccessfulDelete', 'Delete', `Deleted pod: ${pod.metadata!.name!}`);
          } catch (err) {
            // Already gone counts as deleted; anything else is expected no more.
            this.expectations.deleted(rsKey, key(pod));
            if (!StatusError.is(err, 'NotFound')) {
              void this.event(rs, 'Warning', 'FailedDelete', 'Delete', `Error deleting: ${(err as Error).message}`);
            }
          }
        }),
      );
    }
    return undefined;
  }

  /** undefined on success, the error's message on failure. */
  private async createPod(rs: ApiObject): Promise<string | undefined> {
    const template = specOf(rs).template ?? {};
    const meta = template.metadata ?? {};
    const pod: ApiObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${rs.metadata!.name!}-`,
        namespace: rs.metadata!.namespace!,
        ...(meta.labels ? { labels: { ...meta.labels } } : {}),
        ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
        ...(meta.finalizers ? { finalizers: [...meta.finalizers] } : {}),
        ownerReferences: [this.ownerReference(rs) as Required<OwnerReference>],
      },
      // The template's own spec (the cache's, frozen): the core copies an in-process caller's body before it changes anything.
      spec: template.spec ?? {},
    };
    try {
      const created = await this.options.core.create(this.target(rs.metadata!.namespace!, 'pods'), pod, {}, this.ctx);
      void this.event(rs, 'Normal', 'SuccessfulCreate', 'Create', `Created pod: ${created.object.metadata?.name ?? ''}`);
      return undefined;
    } catch (err) {
      const message = (err as Error).message;
      void this.event(rs, 'Warning', 'FailedCreate', 'Create', `Error creating: ${message}`);
      return message;
    }
  }

  private async updateStatus(rs: ApiObject, active: readonly ApiObject[], failure: string | undefined): Promise<void> {
    const spec = specOf(rs);
    const now = this.options.clock.now();
    const templateLabels = spec.template?.metadata?.labels ?? {};
    const current = (rs.status ?? {}) as Record<string, unknown> & { conditions?: Array<Record<string, unknown>> };
    // One look at each pod's labels and Ready condition (the first Ready condition, as upstream reads it).
    let fullyLabeled = 0;
    let ready = 0;
    let available = 0;
    // The first moment a ready pod not yet available becomes so.
    let nextAvailable = Infinity;
    for (const p of active) {
      if (hasLabels(p, templateLabels)) fullyLabeled++;
      const condition = podReadyCondition(p);
      if (condition?.status !== 'True') continue;
      ready++;
      const at = availableAt(condition, spec.minReadySeconds ?? 0);
      if (at <= now) available++;
      else if (at < nextAvailable) nextAvailable = at;
    }
    // No pod event marks the moment a pod becomes available: look again then, whether or not
    // this sync writes the status (upstream's syncReplicaSet re-queues after minReadySeconds
    // while readyReplicas == replicas and availableReplicas != replicas; this also covers a
    // ReplicaSet whose other pods are not ready yet, and waits only as long as the first pod needs).
    if (nextAvailable !== Infinity) this.queue.addAfter(key(rs), nextAvailable - now);
    const status: Record<string, unknown> = {
      replicas: active.length,
      fullyLabeledReplicas: fullyLabeled,
      readyReplicas: ready,
      availableReplicas: available,
      observedGeneration: rs.metadata?.generation ?? 0,
    };
    // ReplicaFailure: set while creates fail, removed once they succeed (or nothing is missing).
    const others = (current.conditions ?? []).filter((c) => c.type !== 'ReplicaFailure');
    const had = (current.conditions ?? []).find((c) => c.type === 'ReplicaFailure');
    const want = spec.replicas ?? 1;
    // As upstream, an existing condition is kept as it is (its message names the first failure).
    if (failure) {
      status.conditions = had
        ? current.conditions
        : [...others, { type: 'ReplicaFailure', status: 'True', lastTransitionTime: rfc3339(now), reason: 'FailedCreate', message: failure }];
    } else if (had && active.length < want) {
      status.conditions = current.conditions;
    } else if (others.length) {
      status.conditions = others;
    }
    const same =
      ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration'].every((k) => (current[k] ?? 0) === status[k]) &&
      isDeepStrictEqual(current.conditions ?? [], status.conditions ?? []);
    if (same) return;
    try {
      await this.options.core.update(this.target(rs.metadata!.namespace!, 'replicasets', rs.metadata!.name!, 'status'), { ...rs, status }, {}, this.ctx);
    } catch (err) {
      // A newer version is on its way through the informer: it syncs again.
      if (!StatusError.is(err, 'Conflict') && !StatusError.is(err, 'NotFound')) throw err;
    }
  }

  /** An events v1 Event about the ReplicaSet. */
  private event(rs: ApiObject, type: 'Normal' | 'Warning', reason: string, action: string, note: string): Promise<void> {
    return this.events.record({ apiVersion: `${this.appsGroup}/v1`, kind: 'ReplicaSet', object: rs }, type, reason, action, note);
  }
}
