/**
 * The in-process core: resolves a request's target to its resource's generic store and runs
 * the pipeline (verb check → strategy/validation → admission → storage). Both doors call it
 * through `CoreApi` (DESIGN.md "Request path").
 */
import type {
  ApiList,
  ApiObject,
  CoreApi,
  DeleteOptions,
  DeleteResult,
  GetOptions,
  ListOptions,
  Patch,
  RequestContext,
  ResourceTarget,
  WatchStream,
  WriteOptions,
  WriteResult,
} from './api';
import { servedVerbs, type ResourceDefinition, type Verb } from './resources/definition';
import { builtinResources } from './resources';
import type { Naming } from '../naming';
import type { Store } from '../store';
import { type Clock, systemClock } from '../clock';
import { StatusError, badRequest, forbidden, invalid, methodNotSupported, notFound, pathNotFound } from '../status';
import { ResourceStore, type WriteScope } from './registry/resource-store';
import { getScale, scaleFromBody, type ScaleObject } from './registry/scale';
import { Compactor, WatchCache, type WatchCacheOptions } from './cache';
import { type FeatureGates, Features, defaultFeatureGates } from '../features';
import { validateUnsafeDeleteOptions } from './registry/deletion';
import { fieldErrors } from './validation/field-errors';
import { checkBodyFields } from './validation/field-validation';

export interface CoreOptions {
  store: Store;
  naming: Naming;
  clock?: Clock;
  /** The served types; defaults to every built-in type. */
  resources?: ResourceDefinition[];
  /** Watch cache settings (history window, watcher buffer, ...); the cache itself is always on. */
  watchCache?: Omit<WatchCacheOptions, 'store' | 'naming' | 'clock'>;
  /** `--etcd-compaction-interval` in milliseconds, for either backend; default 5 minutes, 0 disables. */
  compactionIntervalMs?: number;
  /** `--feature-gates`; default: release 1.32's defaults. */
  features?: FeatureGates;
}

export interface Core extends CoreApi {
  readonly naming: Naming;
  readonly resources: readonly ResourceDefinition[];
  /** Create the system namespaces if missing; resolves when the core can serve. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

interface Resolved {
  store: ResourceStore;
  subresource: '' | 'status' | 'scale' | 'finalize';
}

function resourceKey(group: string, version: string, resource: string): string {
  return `${group}/${version}/${resource}`;
}

class InProcessCore implements Core {
  readonly naming: Naming;
  readonly resources: readonly ResourceDefinition[];
  readonly features: FeatureGates;
  private readonly stores = new Map<string, ResourceStore>();
  private readonly namespaces: ResourceStore;
  private readonly cache: WatchCache;
  private readonly compactor: Compactor;

  constructor(private readonly options: CoreOptions) {
    this.naming = options.naming;
    this.resources = options.resources ?? builtinResources(options.naming);
    this.features = options.features ?? defaultFeatureGates();
    const clock = options.clock ?? systemClock;
    this.cache = new WatchCache({ ...options.watchCache, store: options.store, naming: options.naming, clock });
    const deps = { store: options.store, naming: options.naming, clock, cache: this.cache };
    for (const def of this.resources) {
      this.stores.set(resourceKey(def.group, def.version, def.resource), new ResourceStore(def, deps, (ns, d, name) => this.admitNamespace(ns, d, name)));
    }
    this.cache.start();
    this.compactor = new Compactor({ store: options.store, clock, intervalMs: options.compactionIntervalMs });
    const namespaces = this.stores.get(resourceKey('', 'v1', 'namespaces'));
    if (!namespaces) throw new Error('the core needs the namespaces resource');
    this.namespaces = namespaces;
  }

  /** NamespaceLifecycle admission: the namespace must exist and not be terminating. */
  private async admitNamespace(namespace: string, def: ResourceDefinition, name: string): Promise<void> {
    // Like upstream's NamespaceLifecycle: read the watch cache ("Any"), and only on a miss ask
    // for the most recent state, so a namespace created a moment ago is still found.
    let ns: ApiObject;
    try {
      ns = await this.namespaces.get(undefined, namespace, { resourceVersion: '0' });
    } catch (err) {
      if (!StatusError.is(err, 'NotFound')) throw err;
      try {
        ns = await this.namespaces.get(undefined, namespace, {});
      } catch (again) {
        if (StatusError.is(again, 'NotFound')) throw notFound({ group: '', resource: 'namespaces' }, namespace);
        throw again;
      }
    }
    if (ns.metadata?.deletionTimestamp) {
      const err = forbidden(
        { group: def.group, resource: def.resource },
        name,
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      );
      err.status.details!.causes = [
        { reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' },
      ];
      throw err;
    }
  }

  private resolve(target: ResourceTarget, verb: Verb): Resolved {
    const store = this.stores.get(resourceKey(target.group, target.version, target.resource));
    if (!store) throw pathNotFound();
    const def = store.def;
    const sub = target.subresource ?? '';
    const served = sub === '' || (sub === 'status' && def.status) || (sub === 'scale' && def.scale) || (sub === 'finalize' && def.finalize);
    if (!served) throw pathNotFound();
    if (def.namespaced && target.name !== undefined && !target.namespace) throw pathNotFound();
    const gr = store.groupResource;
    if (sub === '') {
      if (!servedVerbs(def).includes(verb)) {
        throw methodNotSupported(gr, verb);
      }
    } else if (!(sub === 'finalize' ? ['update'] : ['get', 'update', 'patch']).includes(verb)) {
      throw methodNotSupported(gr, verb);
    }
    return { store, subresource: sub as Resolved['subresource'] };
  }

  private requireName(target: ResourceTarget): string {
    if (!target.name) throw badRequest('name is required');
    return target.name;
  }

  async get(target: ResourceTarget, options: GetOptions, _ctx: RequestContext): Promise<ApiObject> {
    const { store, subresource } = this.resolve(target, 'get');
    const obj = await store.get(target.namespace, this.requireName(target), options);
    return subresource === 'scale' ? getScale(store, obj) : obj;
  }

  async list(target: ResourceTarget, options: ListOptions, _ctx: RequestContext): Promise<ApiList> {
    const { store } = this.resolve(target, 'list');
    return store.list(target.namespace, options);
  }

  async watch(target: ResourceTarget, options: ListOptions, _ctx: RequestContext): Promise<WatchStream> {
    const { store } = this.resolve(target, 'watch');
    if (target.name) {
      // A watch on one object is a watch on its collection with a name field selector (upstream does the same).
      const byName = `metadata.name=${target.name}`;
      options = { ...options, fieldSelector: options.fieldSelector ? `${options.fieldSelector},${byName}` : byName };
    }
    return store.watch(target.namespace, options);
  }

  async create(target: ResourceTarget, object: ApiObject, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    const { store } = this.resolve(target, 'create');
    if (target.name !== undefined) throw methodNotSupported(store.groupResource, 'create');
    // Decode-time checks first, as upstream's create handler: type mismatches, then unknown and repeated fields.
    checkBodyFields(this.naming, store.def, object, options.fieldValidation, ctx);
    return store.create(target.namespace, object, options, ctx);
  }

  async update(target: ResourceTarget, object: ApiObject, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    const { store, subresource } = this.resolve(target, 'update');
    const name = this.requireName(target);
    // fieldValidation: decode-time checks of the body, as for create.
    checkBodyFields(this.naming, store.def, object, options.fieldValidation, ctx);
    if (subresource === 'scale') {
      const scale = scaleFromBody(object, name, target.namespace);
      return this.writeScale(store, target, scale, options, ctx);
    }
    return store.update(target.namespace, name, object, options, ctx, subresource || 'main');
  }

  async patch(target: ResourceTarget, patch: Patch, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    const { store, subresource } = this.resolve(target, 'patch');
    const name = this.requireName(target);
    if (subresource === 'scale') return store.writeScale(target.namespace, name, { kind: 'patch', patch }, options, ctx);
    const scope: WriteScope = subresource || 'main';
    return store.patch(target.namespace, name, patch, options, ctx, scope);
  }

  /** PUT of `/scale`: the checked Scale becomes the object's replicas (the store tracks ownership). */
  private async writeScale(store: ResourceStore, target: ResourceTarget, scale: ScaleObject, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    return store.writeScale(target.namespace, scale.metadata.name, { kind: 'put', body: scale }, options, ctx);
  }

  async delete(target: ResourceTarget, options: DeleteOptions, _ctx: RequestContext): Promise<DeleteResult> {
    const { store } = this.resolve(target, 'delete');
    if (target.subresource) throw methodNotSupported(store.groupResource, 'delete');
    const name = this.requireName(target);
    const { options: checked, gate } = this.unsafeDeleteOptions(options);
    const unsafe = checked.ignoreStoreReadErrorWithClusterBreakingPotential === true;
    return store.delete(target.namespace, name, checked, { unsafeDeletionGate: gate, unsafe });
  }

  /**
   * `ignoreStoreReadErrorWithClusterBreakingPotential` (SPEC "Modifying requests" 8): dropped
   * while the `AllowUnsafeMalformedObjectDeletion` gate is off, as upstream does; with the gate
   * on, it takes no other option (422 DeleteOptions).
   */
  private unsafeDeleteOptions(options: DeleteOptions): { options: DeleteOptions; gate: boolean } {
    const gate = this.features.enabled(Features.AllowUnsafeMalformedObjectDeletion);
    if (!gate) {
      const { ignoreStoreReadErrorWithClusterBreakingPotential: _dropped, ...rest } = options;
      return { options: rest, gate };
    }
    const errs = validateUnsafeDeleteOptions(options);
    if (errs.length) throw invalid({ group: this.naming.groups.meta, kind: 'DeleteOptions' }, '', errs);
    return { options, gate };
  }

  /**
   * Delete every object the list options select (upstream's DeleteCollection): one delete per
   * listed object with the same options (objects gone meanwhile are skipped), answering with the
   * list as it was read. With `limit`, one page and its continue token.
   */
  async deleteCollection(target: ResourceTarget, listOptions: ListOptions, deleteOptions: DeleteOptions, _ctx: RequestContext): Promise<ApiList> {
    const { store } = this.resolve(target, 'deletecollection');
    const { options, gate } = this.unsafeDeleteOptions(deleteOptions);
    if (options.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
      throw invalid({ group: this.naming.groups.meta, kind: 'DeleteOptions' }, '', [
        fieldErrors.invalid('ignoreStoreReadErrorWithClusterBreakingPotential', true, 'is not allowed with DELETECOLLECTION, try again after removing the option'),
      ]);
    }
    const listed = await store.list(target.namespace, listOptions.limit ? listOptions : { ...listOptions, continue: undefined });
    for (const item of listed.items) {
      try {
        await store.delete(item.metadata?.namespace, item.metadata!.name!, options, { unsafeDeletionGate: gate });
      } catch (err) {
        if (!StatusError.is(err, 'NotFound')) throw err;
      }
    }
    return listed;
  }

  async ready(): Promise<void> {
    const ns = this.naming.namespaces;
    const system = { user: { username: 'system:apiserver', groups: ['system:masters'] }, userAgent: 'keelson-apiserver' };
    for (const name of [ns.default, ns.system, ns.public, ns.nodeLease]) {
      try {
        await this.namespaces.create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, {}, system);
      } catch (err) {
        if (!StatusError.is(err, 'AlreadyExists')) throw err;
      }
    }
    await this.cache.whenReady();
  }

  async close(): Promise<void> {
    this.compactor.stop();
    await this.cache.close();
    await this.options.store.close();
  }
}

export function createCore(options: CoreOptions): Core {
  return new InProcessCore(options);
}
