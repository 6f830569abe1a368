/**
 * The garbage collector (as upstream's controller-manager runs it), an ordinary API client of
 * the core: it list+watches every stored resource type into a graph of owners and dependents
 * (garbage-collector-graph.ts) and, through the API,
 *
 * - deletes a dependent whose owners are all gone (or all waiting for their dependents in the
 *   foreground), with the propagation its own finalizers ask for, and drops references to
 *   owners that are gone while another owner remains;
 * - finishes a foreground deletion: once no dependent that blocks its owner
 *   (`blockOwnerDeletion`) is left, removes the owner's `foregroundDeletion` finalizer;
 * - finishes an orphaning deletion: removes the owner from every dependent's
 *   `ownerReferences`, then removes the owner's `orphan` finalizer.
 *
 * Writes carry preconditions (uid, resourceVersion) so a concurrent change makes the work item
 * run again on fresh state instead of acting on a stale view.
 */
import {
  type ApiObject,
  type OwnerReference,
  type PropagationPolicy,
  type RequestContext,
  type ResourceTarget,
  type ResourceCatalog,
  type ResourceDefinition,
  verbsOf,
  FINALIZER_FOREGROUND,
  FINALIZER_ORPHAN,
} from '../core';
import { StatusError } from '../status';
import { Graph, type GraphNode, type GraphWork, Informer, dependentsOf, isDeletingDependents } from './garbage-collector-graph';
import { WorkQueue } from './work-queue';
import type { ApiControllerOptions } from './options';

export interface GarbageCollectorOptions extends Pick<ApiControllerOptions, 'core' | 'user' | 'log' | 'queueMetrics'> {
  resources: readonly ResourceDefinition[];
  /** The served types as custom resources come and go (the core's catalog): their objects are followed too. */
  catalog?: ResourceCatalog;
  /** Parallel work items (upstream's --concurrent-gc-syncs, default 20). */
  workers?: number;
}

const USER_AGENT = 'keelson-controller-manager/garbage-collector';

/**
 * Types the collector watches: stored types it can list, watch and delete; a version kept as
 * another is watched through that one (its objects are the same).
 */
function collectable(def: ResourceDefinition): boolean {
  if (def.storedAs) return false;
  const verbs = verbsOf(def);
  return (['list', 'watch', 'delete'] as const).every((v) => verbs.includes(v));
}

function targetOf(def: ResourceDefinition, namespace: string | undefined, name: string): ResourceTarget {
  return { group: def.group, version: def.version, resource: def.resource, namespace: def.namespaced ? namespace : undefined, name };
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

export class GarbageCollector {
  private readonly ctx: RequestContext;
  private readonly graph: Graph;
  private readonly queue: WorkQueue<GraphWork>;
  private readonly informers: Informer[] = [];
  private readonly defs: ResourceDefinition[];
  private pending: number;
  private syncedResolve!: () => void;
  /** Resolves once every informer has listed its type (work starts then). */
  readonly synced: Promise<void>;

  constructor(private readonly options: GarbageCollectorOptions) {
    this.ctx = { user: options.user, userAgent: USER_AGENT };
    this.queue = new WorkQueue<GraphWork>(
      (w) => `${w.action}/${w.uid}`,
      (w) => this.process(w),
      { workers: options.workers ?? 4, name: 'garbage_collector_attempt_to_delete', metrics: options.queueMetrics },
    );
    this.graph = new Graph((w) => this.queue.add(w));
    this.defs = options.resources.filter(collectable);
    this.pending = this.defs.length;
    this.synced = new Promise((resolve) => (this.syncedResolve = resolve));
  }

  start(): void {
    for (const def of this.defs) {
      const informer = new Informer(this.options.core, def, this.graph, this.ctx, () => this.informerSynced(), this.options.log);
      this.informers.push(informer);
      void informer.run();
    }
    if (this.defs.length === 0) this.informerSynced();
    const catalog = this.options.catalog;
    if (catalog) {
      this.stopFollowing = catalog.subscribe(() => this.followCatalog(catalog));
      this.followCatalog(catalog);
    }
  }

  private stopFollowing?: () => void;
  /** Informers of the types that came with the catalog (custom resources), by group/version/resource. */
  private readonly added = new Map<string, Informer>();

  /** Follow the objects of every type the catalog serves beyond the ones known at start; stop following those that went. */
  private followCatalog(catalog: ResourceCatalog): void {
    const key = (d: ResourceDefinition) => `${d.group}/${d.version}/${d.resource}`;
    const known = new Set(this.defs.map(key));
    const now = new Map(catalog.resources.filter((d) => collectable(d) && !known.has(key(d))).map((d) => [key(d), d] as const));
    for (const [k, informer] of this.added) {
      if (now.has(k)) continue;
      informer.stop();
      this.added.delete(k);
    }
    for (const [k, def] of now) {
      if (this.added.has(k)) continue;
      const informer = new Informer(this.options.core, def, this.graph, this.ctx, () => undefined, this.options.log);
      this.added.set(k, informer);
      void informer.run();
    }
  }

  private informerSynced(): void {
    if (--this.pending > 0) return;
    this.graph.initialWork();
    this.queue.start();
    this.syncedResolve();
  }

  stop(): void {
    this.stopFollowing?.();
    for (const i of this.informers) i.stop();
    for (const i of this.added.values()) i.stop();
    this.queue.stop();
  }

  /** Resolves when no work is queued or running (tests). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  private async process(work: GraphWork): Promise<void> {
    const node = this.graph.nodes.get(work.uid);
    if (!node?.observed) return;
    if (work.action === 'orphan') return this.orphanDependents(node);
    return this.attemptToDelete(node);
  }

  /** The object as the API has it now, or undefined when it is gone (or replaced by another uid). */
  private async latest(def: ResourceDefinition, namespace: string | undefined, name: string, uid?: string): Promise<ApiObject | undefined> {
    try {
      const obj = await this.options.core.get(targetOf(def, namespace, name), {}, this.ctx);
      return uid && obj.metadata?.uid !== uid ? undefined : obj;
    } catch (err) {
      if (StatusError.is(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  private defOf(ref: OwnerReference): ResourceDefinition | undefined {
    const group = groupOf(ref.apiVersion);
    return (this.options.catalog?.resources ?? this.options.resources).find((d) => d.group === group && d.kind === ref.kind && !d.storedAs);
  }

  /** Upstream's classifyReferences: owners that exist, are gone, or wait for their dependents. */
  private async classify(
    node: GraphNode,
    refs: readonly OwnerReference[],
  ): Promise<{ solid: OwnerReference[]; dangling: OwnerReference[]; waiting: OwnerReference[] }> {
    const out = { solid: [] as OwnerReference[], dangling: [] as OwnerReference[], waiting: [] as OwnerReference[] };
    for (const ref of refs) {
      const known = this.graph.nodes.get(ref.uid);
      let owner: { deletionTimestamp?: string; finalizers: readonly string[] } | undefined = known?.observed ? known : undefined;
      if (!owner) {
        const def = this.defOf(ref);
        if (!def) {
          // A kind this server does not serve: never collect on its account.
          out.solid.push(ref);
          continue;
        }
        const obj = await this.latest(def, node.namespace, ref.name, ref.uid);
        owner = obj ? { deletionTimestamp: obj.metadata?.deletionTimestamp, finalizers: obj.metadata?.finalizers ?? [] } : undefined;
      }
      if (!owner) out.dangling.push(ref);
      else if (isDeletingDependents(owner)) out.waiting.push(ref);
      else out.solid.push(ref);
    }
    return out;
  }

  private async attemptToDelete(node: GraphNode): Promise<void> {
    const latest = await this.latest(node.def, node.namespace, node.name, node.uid);
    if (!latest) return;
    const meta = latest.metadata!;
    if (isDeletingDependents({ deletionTimestamp: meta.deletionTimestamp, finalizers: meta.finalizers ?? [] })) return this.finishForeground(node, latest);
    const refs = meta.ownerReferences ?? [];
    if (refs.length === 0) return;
    const { solid, dangling, waiting } = await this.classify(node, refs);
    if (solid.length > 0) {
      // Still owned: only forget the owners that are gone or waiting on their dependents.
      const drop = [...dangling, ...waiting].map((r) => r.uid);
      if (drop.length) await this.removeOwnerReferences(node, latest, new Set(drop));
      return;
    }
    let policy: PropagationPolicy = 'Background';
    if (waiting.length > 0 && dependentsOf(node).size > 0) policy = 'Foreground';
    else if ((meta.finalizers ?? []).includes(FINALIZER_ORPHAN)) policy = 'Orphan';
    else if ((meta.finalizers ?? []).includes(FINALIZER_FOREGROUND)) policy = 'Foreground';
    if (meta.deletionTimestamp && policy !== 'Foreground') return;
    await this.options.core.delete(
      targetOf(node.def, node.namespace, node.name),
      {
        preconditions: { uid: node.uid, resourceVersion: meta.resourceVersion },
        propagationPolicy: policy,
      },
      this.ctx,
    );
  }

  /** An owner in foreground deletion: done once no blocking dependent is left; else push those on. */
  private async finishForeground(node: GraphNode, latest: ApiObject): Promise<void> {
    const blocking = [...dependentsOf(node)]
      .map((uid) => this.graph.nodes.get(uid))
      .filter((d): d is GraphNode => !!d && d.observed && d.owners.some((r) => r.uid === node.uid && r.blockOwnerDeletion === true));
    if (blocking.length === 0) return this.removeFinalizer(latest, FINALIZER_FOREGROUND, node);
    for (const dep of blocking) if (!isDeletingDependents(dep)) this.queue.add({ action: 'delete', uid: dep.uid });
  }

  /** Remove the owner from every dependent's ownerReferences, then its `orphan` finalizer. */
  private async orphanDependents(node: GraphNode): Promise<void> {
    for (const uid of [...dependentsOf(node)]) {
      const dep = this.graph.nodes.get(uid);
      if (!dep?.observed) continue;
      const latest = await this.latest(dep.def, dep.namespace, dep.name, dep.uid);
      if (latest) await this.removeOwnerReferences(dep, latest, new Set([node.uid]));
    }
    const owner = await this.latest(node.def, node.namespace, node.name, node.uid);
    if (owner) await this.removeFinalizer(owner, FINALIZER_ORPHAN, node);
  }

  /** A JSON patch that tests each reference it removes, so a concurrent change fails it (and it runs again). */
  private async removeOwnerReferences(node: GraphNode, latest: ApiObject, uids: ReadonlySet<string>): Promise<void> {
    const refs = latest.metadata?.ownerReferences ?? [];
    const indexes = refs.flatMap((r, i) => (uids.has(r.uid) ? [i] : []));
    if (indexes.length === 0) return;
    const ops: unknown[] = [{ op: 'test', path: '/metadata/uid', value: node.uid }];
    if (indexes.length === refs.length) {
      ops.push({ op: 'test', path: '/metadata/ownerReferences', value: refs }, { op: 'remove', path: '/metadata/ownerReferences' });
    } else {
      for (const i of indexes.reverse())
        ops.push({ op: 'test', path: `/metadata/ownerReferences/${i}/uid`, value: refs[i]!.uid }, { op: 'remove', path: `/metadata/ownerReferences/${i}` });
    }
    await this.patchIgnoringNotFound(node, { type: 'json', body: ops });
  }

  /** A merge patch of the finalizers, guarded by the resourceVersion it was computed from. */
  private async removeFinalizer(latest: ApiObject, finalizer: string, node: GraphNode): Promise<void> {
    const finalizers = (latest.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
    if (finalizers.length === (latest.metadata?.finalizers ?? []).length) return;
    const body = { metadata: { resourceVersion: latest.metadata!.resourceVersion, finalizers: finalizers.length ? finalizers : null } };
    await this.patchIgnoringNotFound(node, { type: 'merge', body });
  }

  private async patchIgnoringNotFound(node: GraphNode, patch: { type: 'json' | 'merge'; body: unknown }): Promise<void> {
    try {
      await this.options.core.patch(targetOf(node.def, node.namespace, node.name), patch, {}, this.ctx);
    } catch (err) {
      if (!StatusError.is(err, 'NotFound')) throw err;
    }
  }
}
