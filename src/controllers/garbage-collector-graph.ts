/**
 * The garbage collector's view of the cluster: every object that can own or be owned, keyed by
 * uid, with its owner references and its dependents (upstream's GraphBuilder "uidToNode").
 * Informers (list, then watch from the list's resourceVersion, relist on any break) keep it
 * current; each change tells the collector which objects to look at again, as upstream's
 * processGraphChanges does.
 */
import {
  type ApiObject,
  type CoreApi,
  type OwnerReference,
  type RequestContext,
  type ResourceTarget,
  type WatchStream,
  type ResourceDefinition,
  FINALIZER_FOREGROUND,
  FINALIZER_ORPHAN,
} from '../core';

export interface GraphNode {
  readonly uid: string;
  def: ResourceDefinition;
  namespace: string | undefined;
  name: string;
  owners: readonly OwnerReference[];
  deletionTimestamp: string | undefined;
  finalizers: readonly string[];
  /**
   * uids of the objects that name this one as an owner, made with the first of them: most
   * objects own nothing, and an empty Set per object was ~40% of the graph's memory.
   */
  dependents: Set<string> | undefined;
  /** Seen through an informer (false: only known as somebody's owner). */
  observed: boolean;
}

/** The shared empty lists of a node without owners, finalizers or dependents. */
const NONE: readonly never[] = Object.freeze([]);
const NO_DEPENDENTS: ReadonlySet<string> = new Set();

/** A node's dependents (none: the shared empty set). */
export function dependentsOf(n: GraphNode): ReadonlySet<string> {
  return n.dependents ?? NO_DEPENDENTS;
}

/** What a graph change asks the collector to do. */
export type GraphWork = { action: 'delete' | 'orphan'; uid: string };

export function isDeletingDependents(n: { deletionTimestamp?: string; finalizers: readonly string[] }): boolean {
  return !!n.deletionTimestamp && n.finalizers.includes(FINALIZER_FOREGROUND);
}

export function isOrphaning(n: { deletionTimestamp?: string; finalizers: readonly string[] }): boolean {
  return !!n.deletionTimestamp && n.finalizers.includes(FINALIZER_ORPHAN);
}

export class Graph {
  readonly nodes = new Map<string, GraphNode>();

  constructor(private readonly enqueue: (work: GraphWork) => void) {}

  private node(uid: string, def: ResourceDefinition, namespace: string | undefined, name: string): GraphNode {
    let n = this.nodes.get(uid);
    if (!n) {
      n = { uid, def, namespace, name, owners: NONE, deletionTimestamp: undefined, finalizers: NONE, dependents: undefined, observed: false };
      this.nodes.set(uid, n);
    }
    return n;
  }

  /** An object was added or changed. */
  upsert(def: ResourceDefinition, obj: ApiObject): void {
    const meta = obj.metadata ?? {};
    if (!meta.uid || !meta.name) return;
    const n = this.node(meta.uid, def, meta.namespace, meta.name);
    const before = { observed: n.observed, deleting: isDeletingDependents(n), orphaning: isOrphaning(n), owners: n.owners };
    n.def = def;
    n.namespace = meta.namespace;
    n.name = meta.name;
    n.observed = true;
    n.owners = meta.ownerReferences?.length ? meta.ownerReferences : NONE;
    n.deletionTimestamp = meta.deletionTimestamp;
    n.finalizers = meta.finalizers?.length ? meta.finalizers : NONE;
    if (before.owners.length > 0 || n.owners.length > 0) this.ownersChanged(n, before.owners, meta.namespace, def);

    // An owner that starts deleting its dependents in the foreground: look at them all, and at it.
    if (isDeletingDependents(n) && !before.deleting) {
      for (const dep of dependentsOf(n)) this.enqueue({ action: 'delete', uid: dep });
      this.enqueue({ action: 'delete', uid: n.uid });
    }
    if (isOrphaning(n) && !before.orphaning) this.enqueue({ action: 'orphan', uid: n.uid });
  }

  /** `n`'s owner references went from `previous` to `n.owners`: link and unlink it. */
  private ownersChanged(n: GraphNode, previous: readonly OwnerReference[], namespace: string | undefined, def: ResourceDefinition): void {
    const oldOwners = new Map(previous.map((r) => [r.uid, r]));
    const newOwners = new Map(n.owners.map((r) => [r.uid, r]));
    for (const [uid] of oldOwners) {
      if (newOwners.has(uid)) continue;
      this.dropDependent(uid, n.uid);
    }
    for (const [uid, ref] of newOwners) {
      const owner = this.nodes.get(uid);
      if (!owner) {
        // Only known as an owner so far: the collector checks with the API whether it exists.
        this.nodes.set(uid, {
          uid,
          def,
          namespace,
          name: ref.name,
          owners: NONE,
          deletionTimestamp: undefined,
          finalizers: NONE,
          dependents: new Set([n.uid]),
          observed: false,
        });
        this.enqueue({ action: 'delete', uid: n.uid });
        continue;
      }
      (owner.dependents ??= new Set()).add(n.uid);
      const old = oldOwners.get(uid);
      if (!owner.observed && !old) this.enqueue({ action: 'delete', uid: n.uid });
      if (old && old.blockOwnerDeletion !== ref.blockOwnerDeletion) this.ownerChanged(uid);
    }
  }

  /** `dep` no longer names `owner`: forget owners only known through it, re-check owners waiting on it. */
  private dropDependent(ownerUid: string, dep: string): void {
    const owner = this.nodes.get(ownerUid);
    if (!owner) return;
    owner.dependents?.delete(dep);
    if (!owner.observed && !owner.dependents?.size) this.nodes.delete(ownerUid);
    else this.ownerChanged(ownerUid);
  }

  /** An owner waiting for its dependents may be done once one of them goes or stops blocking. */
  private ownerChanged(uid: string): void {
    const owner = this.nodes.get(uid);
    if (owner && isDeletingDependents(owner)) this.enqueue({ action: 'delete', uid });
  }

  /** An object was deleted. */
  remove(uid: string): void {
    const n = this.nodes.get(uid);
    if (!n) return;
    for (const ref of n.owners) this.dropDependent(ref.uid, uid);
    // Its dependents lost an owner: each is collected unless another owner still holds it.
    for (const dep of dependentsOf(n)) this.enqueue({ action: 'delete', uid: dep });
    if (n.dependents?.size) {
      n.observed = false;
      n.owners = NONE;
    } else {
      this.nodes.delete(uid);
    }
  }

  /** After a relist: objects of `def` that the list no longer holds were deleted meanwhile. */
  removeMissing(def: ResourceDefinition, present: ReadonlySet<string>): void {
    for (const n of [...this.nodes.values()]) {
      if (n.observed && n.def === def && !present.has(n.uid)) this.remove(n.uid);
    }
  }

  /** Once every informer has synced: objects whose owners were never seen, and deletions to finish. */
  initialWork(): void {
    for (const n of this.nodes.values()) {
      if (!n.observed) continue;
      if (n.owners.some((r) => !this.nodes.get(r.uid)?.observed)) this.enqueue({ action: 'delete', uid: n.uid });
      if (isDeletingDependents(n)) this.enqueue({ action: 'delete', uid: n.uid });
      if (isOrphaning(n)) this.enqueue({ action: 'orphan', uid: n.uid });
    }
  }
}

/**
 * List+watch one resource type into the graph until stopped: list, then watch from the list's
 * resourceVersion; any end or error of the watch relists (objects gone meanwhile are removed).
 */
export class Informer {
  private stream: WatchStream | undefined;
  private stopped = false;
  private syncedOnce = false;

  constructor(
    private readonly core: CoreApi,
    private readonly def: ResourceDefinition,
    private readonly graph: Graph,
    private readonly ctx: RequestContext,
    private readonly onSynced: () => void,
    private readonly log?: (message: string) => void,
  ) {}

  async run(): Promise<void> {
    const target: ResourceTarget = { group: this.def.group, version: this.def.version, resource: this.def.resource };
    while (!this.stopped) {
      try {
        const list = await this.core.list(target, {}, this.ctx);
        const present = new Set<string>();
        for (const item of list.items) {
          if (item.metadata?.uid) present.add(item.metadata.uid);
          this.graph.upsert(this.def, item);
        }
        this.graph.removeMissing(this.def, present);
        if (!this.syncedOnce) {
          this.syncedOnce = true;
          this.onSynced();
        }
        if (this.stopped) return;
        this.stream = await this.core.watch(target, { resourceVersion: list.metadata.resourceVersion }, this.ctx);
        for await (const event of this.stream) {
          if (this.stopped) return;
          if (event.type === 'ADDED' || event.type === 'MODIFIED') this.graph.upsert(this.def, event.object);
          else if (event.type === 'DELETED' && event.object.metadata?.uid) this.graph.remove(event.object.metadata.uid);
          else if (event.type === 'ERROR') break;
        }
      } catch (err) {
        if (!this.stopped) this.log?.(`garbage collector: ${this.def.resource}: ${(err as Error).message}`);
      }
      if (!this.stopped) await new Promise((r) => setTimeout(r, 200));
    }
  }

  stop(): void {
    this.stopped = true;
    this.stream?.close();
  }
}
