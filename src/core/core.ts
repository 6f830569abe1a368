/**
 * The in-process core: resolves a request's target to its resource's generic store and runs
 * the pipeline (verb check → strategy/validation → admission → storage). Both doors call it
 * through `CoreApi` (docs/ARCHITECTURE.md, "The path of one create").
 */
import {
  type ApiList,
  type ApiObject,
  type CoreApi,
  type DeleteOptions,
  type DeleteResult,
  type GetOptions,
  type ListOptions,
  type Patch,
  type RequestContext,
  type ResourceTarget,
  type WatchStream,
  type WriteBody,
  type WriteOptions,
  type WriteResult,
  Owned,
  handOver,
  storeNotAnswering,
} from './api';
import type { ResourceDefinition, Verb } from './resources/definition';
import { type SignerAuthorizer, certificateApproval, certificateSigning, certificateSubjectRestriction } from './admission/certificates';
import { verbsAt } from './resources/endpoints';
import { builtinResources, SYSTEM_PRIORITY_CLASSES, type PriorityClass } from './resources';
import type { Naming } from '../naming';
import type { Store } from '../store';
import { type Clock, pause, systemClock } from '../clock';
import { StatusError, badRequest, invalid, methodNotSupported, notFound, pathNotFound } from '../status';
import { ResourceStore } from './registry/resource-store';
import type { WriteDeps } from './registry/resource-writes';
import { CustomResourceController, FollowedCatalog } from './customresources';
import { ResourceReads } from './registry/resource-reads';
import { type WriteSubresource, writeRequest } from './registry/write-request';
import { getScale, scaleFromBody } from './registry/scale';
import { Compactor, WatchCache, type WatchCacheOptions } from './cache';
import { CachedStorage } from './cache/cached-storage';
import { StoreStorage } from './storage/store-storage';
import { ConvertedStorage } from './storage/converted-storage';
import { DEFAULT_EVENT_TTL_MS, EventExpiry } from './event-ttl';
import type { ResourceStorage } from './storage/resource-storage';
import {
  Admission,
  type AdmissionMetrics,
  type AdmissionPlugin,
  DynamicAdmissionSources,
  type WebhookCredentialResolver,
  alwaysAdmit,
  alwaysDeny,
  cachedThenLive,
  GENERIC_APISERVER_PLUGINS,
  defaultTolerationSeconds,
  priorityAdmission,
  mutatingAdmissionWebhook,
  namespaceLifecycle,
  nodeRestriction,
  serviceAccountAdmission,
  validatingAdmissionPolicy,
  validatingAdmissionWebhook,
} from './admission';
import { type CreateHandler, selfSubjectReviewHandler } from './handlers';
import { podBindingHandler } from './registry/binding';
import { podEvictionHandler } from './registry/eviction';
import { checkDecodedLimits, withinLimits } from '../codecs/limits';
import { type FeatureGates, Features, defaultFeatureGates } from '../features';
import type { StateSource } from '../metrics';
import { validateUnsafeDeleteOptions } from './registry/deletion';
import { CreatedManagedFields } from './registry/managed-fields';
import { fieldErrors } from './validation/field-errors';
import { type TypeName, checkBodyFields } from './validation/field-validation';
import { ResourceMap } from '../util/resource-map';
import { deepCopy } from '../util/json-values';
import { KUBERNETES_SERVICE, ServiceAllocation, type ServiceOptions, type ServiceResolver, type ServingAddress, createServiceResolver } from './services';
import type { Service } from './resources/services';

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
  /** `--event-ttl` in milliseconds: how long an event lives after its last write; default 1 hour, 0 keeps them. */
  eventTtlMs?: number;
  /** Failures of the core's own background work (event expiry, the watch cache's store watch and loads), which it retries; only reported here. */
  onBackgroundError?: (what: string, err: unknown) => void;
  /** `--feature-gates`; default: release 1.32's defaults. */
  features?: FeatureGates;
  /**
   * The admission plugins to run, by upstream name, in upstream's order (resolve flags with
   * `resolveAdmissionPlugins`); default: the generic API server's set (GENERIC_APISERVER_PLUGINS).
   * The server passes kube-apiserver's defaults and flags.
   */
  admissionPlugins?: readonly string[];
  /** Further plugins (RBAC's escalation check), run after the in-tree ones and before the dynamic ones. */
  admission?: readonly AdmissionPlugin[];
  /** Where the chain reports each phase and plugin it ran (the server's `apiserver_admission_*` metrics). */
  admissionMetrics?: AdmissionMetrics;
  /**
   * The `signers` check of the CertificateApproval and CertificateSigning admission plugins
   * (the server's authorizers); absent, those plugins let every write through.
   */
  authorizeSigner?: SignerAuthorizer;
  /** Client credentials presented to admission webhooks, by host (`--admission-control-config-file`). */
  webhookCredentials?: WebhookCredentialResolver;
  /** Each custom resource conversion webhook call's timeout; default 30 s, as upstream. */
  conversionWebhookTimeoutMs?: number;
  /**
   * Handlers of types that are never stored, by resource name (e.g. `tokenreviews`). Such a
   * type is served only with a handler; SelfSubjectReview always has one.
   */
  handlers?: Readonly<Record<string, CreateHandler>>;
  /** Services: how a reference to one is reached (webhooks, conversion webhooks, the aggregator). */
  services?: ServiceOptions;
}

/**
 * The types a core serves now: the built-in ones and the custom resources of every established
 * CustomResourceDefinition. Routes, discovery, OpenAPI and the controllers that walk every type
 * read it, and hear when it changes.
 */
export interface ResourceCatalog {
  /** The served types; a new array whenever the set changes. */
  readonly resources: readonly ResourceDefinition[];
  /** Grows by one on every change. */
  readonly generation: number;
  /** Called after every change of the set; returns the way to stop. */
  subscribe(listener: () => void): () => void;
}

/** A catalog that never changes (a controllers-only process, whose controllers walk the built-in types). */
export function staticCatalog(resources: readonly ResourceDefinition[]): ResourceCatalog {
  return { resources, generation: 0, subscribe: () => () => undefined };
}

/**
 * The catalog of a core reached through its API (a gateway in front of a remote core): the
 * built-in types, and the custom resources of the definitions the core has established,
 * followed through the core's API. `stop` ends the following.
 */
export function followCatalog(api: CoreApi, builtins: readonly ResourceDefinition[], naming: Naming, clock: Clock): ResourceCatalog & { stop(): void } {
  return new FollowedCatalog(api, builtins, naming, clock);
}

export interface Core extends CoreApi {
  readonly naming: Naming;
  /** The served types now (`catalog.resources`). */
  readonly resources: readonly ResourceDefinition[];
  readonly catalog: ResourceCatalog;
  /**
   * Create the system namespaces if missing; resolves when the core can serve. `serving` is this
   * server's own address once it listens (a secure port chosen at listen time is known only
   * then): the `kubernetes` Service's target port and where its port 443 leads.
   */
  ready(serving?: ServingAddress): Promise<void>;
  close(): Promise<void>;
  /**
   * Where Service references lead (core/services/resolver.ts), for the aggregator's proxy too;
   * an in-process core only (elsewhere, make one over the API with `createServiceResolver`).
   */
  readonly services?: ServiceResolver;
  /** What the metrics and health checks read about the store and the watch cache (an in-process core only). */
  state?(): CoreState;
}

/** The in-process core's store and watch cache, read by `/metrics` and `/readyz`. */
export interface CoreState extends StateSource {
  /** Resolves true once the watch cache has applied every change up to `revision`, false after `timeoutMs`. */
  cacheFresh(revision: number, timeoutMs: number): Promise<boolean>;
  /** Resolves true once the admissionregistration object written at `revision` is in effect for admission; false after `timeoutMs`. */
  admissionFresh(revision: number, timeoutMs: number): Promise<boolean>;
}

interface Resolved {
  store: ResourceStore;
  subresource: WriteSubresource;
}

class InProcessCore implements Core, ResourceCatalog {
  readonly naming: Naming;
  /** The built-in types this core was made with. */
  private readonly builtins: readonly ResourceDefinition[];
  /** The custom resources' types, by the name of the definition that made them. */
  private readonly custom = new Map<string, readonly ResourceDefinition[]>();
  private served: readonly ResourceDefinition[];
  generation = 0;
  private readonly catalogListeners = new Set<() => void>();
  private readonly deps: WriteDeps;
  private readonly customResources: CustomResourceController;
  readonly features: FeatureGates;
  private readonly stores = new ResourceMap<ResourceStore>();
  private readonly handled = new ResourceMap<{ def: ResourceDefinition; handler: CreateHandler }>();
  private readonly handlers: Readonly<Record<string, CreateHandler>>;
  private readonly namespaces: ResourceStore;
  private readonly cache: WatchCache;
  private readonly compactor: Compactor;
  private readonly eventExpiry?: EventExpiry;
  private closing = false;
  private dynamicAdmission!: DynamicAdmissionSources;
  /** Services' cluster IPs and node ports (core/services/allocation.ts). */
  private readonly serviceAllocation: ServiceAllocation;
  /** Where Service references lead: webhooks', conversion webhooks' and (through the door) the aggregator's. */
  readonly services: ServiceResolver;
  /** This server's own address (`ServiceOptions.loopback`, or what `ready` was told). */
  private serving?: ServingAddress;
  /** The allocation repair's timer, and the round running now. */
  private stopServiceRepair?: () => void;
  private repairing?: Promise<unknown>;

  constructor(private readonly options: CoreOptions) {
    this.naming = options.naming;
    this.features = options.features ?? defaultFeatureGates();
    const { store, naming } = options;
    const clock = options.clock ?? systemClock;
    const pods = () => this.stores.get('', 'v1', 'pods')!.writes;
    const binding = podBindingHandler(pods, clock);
    const handlers: Record<string, CreateHandler> = {
      selfsubjectreviews: selfSubjectReviewHandler(clock),
      'pods/binding': binding,
      'pods/eviction': podEvictionHandler(() => this, clock),
      bindings: binding,
      ...options.handlers,
    };
    const all = options.resources ?? builtinResources(naming);
    // Types and create-only subresources are served only with their handler; a version kept as
    // another only with that one.
    this.builtins = all
      .filter((def) => !def.notStored || handlers[def.resource])
      .filter((def) => !def.storedAs || all.some((stored) => isStoredVersionOf(stored, def)))
      .map((def) =>
        def.createSubresources ? { ...def, createSubresources: def.createSubresources.filter((s) => handlers[`${def.resource}/${s.name}`]) } : def,
      );
    this.served = this.builtins;
    this.handlers = handlers;
    this.cache = new WatchCache({ onError: (what, err) => options.onBackgroundError?.(what, err), ...options.watchCache, store, naming, clock });
    const listVersion = `${naming.groups.meta}/v1`;
    // Every type is read through its watch cache decorating the backing store.
    const cached = (def: ResourceDefinition) => new CachedStorage(new StoreStorage(def, store, listVersion), this.cache, this.cache.register(def));
    // A version kept as another is read through that one's, converted.
    const storage = (def: ResourceDefinition): ResourceStorage => {
      if (!def.storedAs) return cached(def);
      const stored = this.resources.find((d) => isStoredVersionOf(d, def))!;
      return new ConvertedStorage(cached(stored), def.storedAs, apiVersionOf(def));
    };
    const nsDef = this.resources.find((d) => d.group === '' && d.resource === 'namespaces');
    if (!nsDef) throw new Error('the core needs the namespaces resource');
    this.services = createServiceResolver({
      read: async (resource, namespace, name) => this.objectReader.get({ group: '', version: 'v1', resource, namespace, name }),
      endpointRouting: options.services?.endpointRouting,
      loopback: () => this.serving && { ...this.serving, namespace: naming.namespaces.default },
    });
    this.serving = options.services?.loopback;
    const admission = this.admissionChain(options, nsDef, storage, clock);
    const deps: WriteDeps = {
      store,
      naming,
      clock,
      admission,
      written: this.cache.written,
      createdFields: new CreatedManagedFields(),
      cached: (resource: string, key: string) => (this.cache.isReady ? this.cache.resource(resource)?.get(key) : undefined),
    };
    this.deps = deps;
    this.serviceAllocation = new ServiceAllocation(store, options.services);
    for (const def of this.builtins) {
      if (def.notStored) this.handled.set(def.group, def.version, def.resource, { def, handler: handlers[def.resource]! });
      else {
        // Services take cluster IPs and node ports around their writes.
        const own = def.group === '' && def.resource === 'services' ? { ...deps, lifecycle: this.serviceAllocation } : deps;
        this.stores.set(def.group, def.version, def.resource, new ResourceStore(def, own, storage(def)));
      }
    }
    this.namespaces = this.stores.get('', 'v1', 'namespaces')!;
    this.cache.start();
    this.compactor = new Compactor({ store, clock, intervalMs: options.compactionIntervalMs });
    const events = this.resources.find((d) => d.resource === 'events' && !d.storedAs && !d.notStored);
    const ttlMs = options.eventTtlMs ?? DEFAULT_EVENT_TTL_MS;
    if (events && ttlMs > 0) {
      this.eventExpiry = new EventExpiry({ store, storage: cached(events), clock, ttlMs, onError: (err) => options.onBackgroundError?.('event expiry', err) });
    }
    this.dynamicAdmission.start();
    this.customResources = new CustomResourceController({
      api: this,
      naming,
      clock,
      conversionTimeoutMs: options.conversionWebhookTimeoutMs,
      services: this.services,
      host: { install: (name, defs) => this.install(name, defs), uninstall: (name) => this.uninstall(name), builtins: this.builtins },
      onError: (what, err) => options.onBackgroundError?.(what, err),
    });
    this.customResources.start();
  }

  get resources(): readonly ResourceDefinition[] {
    return this.served;
  }

  get catalog(): ResourceCatalog {
    return this;
  }

  subscribe(listener: () => void): () => void {
    this.catalogListeners.add(listener);
    return () => this.catalogListeners.delete(listener);
  }

  /**
   * Serve the types one CustomResourceDefinition makes (or its new shape): each version is
   * read through a cache of its own, filled before the type is routed, so its first request
   * is served from memory like any other.
   */
  private async install(name: string, defs: readonly ResourceDefinition[]): Promise<void> {
    const before = this.custom.get(name);
    // A changed definition gets caches of its own (its selectable fields may differ): the old
    // ones' watches end and their clients watch again, as upstream ends a changed CRD's watches.
    for (const def of before ?? []) if (!def.storedAs) this.cache.removeType(def);
    const caches = await Promise.all(defs.map((def) => (def.storedAs ? undefined : this.cache.addType(def))));
    if (this.closing) return;
    const storage = (def: ResourceDefinition, i: number): ResourceStorage => {
      if (!def.storedAs) {
        const own = new CachedStorage(new StoreStorage(def, this.options.store, `${this.naming.groups.meta}/v1`), this.cache, caches[i]!);
        // Objects an earlier storage version wrote read as this version's.
        return def.custom?.readsOthers ? new ConvertedStorage(own, def.custom.readsOthers, apiVersionOf(def), true) : own;
      }
      const at = defs.findIndex((d) => isStoredVersionOf(d, def));
      return new ConvertedStorage(
        new CachedStorage(new StoreStorage(defs[at]!, this.options.store, `${this.naming.groups.meta}/v1`), this.cache, caches[at]!),
        def.storedAs,
        apiVersionOf(def),
      );
    };
    for (const def of before ?? [])
      if (!defs.some((d) => d.group === def.group && d.version === def.version && d.resource === def.resource))
        this.stores.delete(def.group, def.version, def.resource);
    defs.forEach((def, i) => this.stores.set(def.group, def.version, def.resource, new ResourceStore(def, this.deps, storage(def, i))));
    this.custom.set(name, defs);
    this.catalogChanged();
  }

  /** Stop serving one CustomResourceDefinition's types: their paths answer 404, their watches end. */
  private uninstall(name: string): void {
    const defs = this.custom.get(name);
    if (!defs) return;
    this.custom.delete(name);
    for (const def of defs) {
      this.stores.delete(def.group, def.version, def.resource);
      if (!def.storedAs) this.cache.removeType(def);
    }
    this.catalogChanged();
  }

  private catalogChanged(): void {
    this.served = [...this.builtins, ...[...this.custom.values()].flat()];
    this.generation++;
    for (const listener of [...this.catalogListeners]) listener();
  }

  /** Reads of other objects by admission plugins and the Service resolver: the watch cache first, then live. */
  private readonly objectReader = cachedThenLive(async (loc, live) => {
    const store = this.stores.get(loc.group, loc.version, loc.resource);
    if (!store) throw notFound({ group: loc.group, resource: loc.resource }, loc.name);
    return store.reads.get(loc.namespace, loc.name, live ? {} : { resourceVersion: '0' });
  });

  /**
   * The admission chain of `options.admissionPlugins`, each plugin reading what it needs from
   * this core (cache first, then live), RBAC's escalation check before the dynamic plugins.
   */
  private admissionChain(options: CoreOptions, nsDef: ResourceDefinition, storage: (def: ResourceDefinition) => ResourceStorage, clock: Clock): Admission {
    const { naming } = options;
    const ns = naming.namespaces;
    const names = options.admissionPlugins ?? GENERIC_APISERVER_PLUGINS;
    const reader = this.objectReader;
    this.dynamicAdmission = new DynamicAdmissionSources(this, () => this.resources, naming.group('admissionregistration'), clock, {
      webhooks: names.includes('MutatingAdmissionWebhook') || names.includes('ValidatingAdmissionWebhook'),
      policies: names.includes('ValidatingAdmissionPolicy'),
    });
    const source = this.dynamicAdmission;
    const build: Record<string, () => AdmissionPlugin> = {
      AlwaysAdmit: () => alwaysAdmit,
      NamespaceLifecycle: () =>
        namespaceLifecycle({ namespaces: new ResourceReads(nsDef, storage(nsDef), naming), immortal: [ns.default, ns.system, ns.public] }),
      ServiceAccount: () => serviceAccountAdmission({ naming, reader }),
      NodeRestriction: () => nodeRestriction({ naming, reader }),
      Priority: () =>
        priorityAdmission({
          naming,
          reader,
          classes: async () => {
            const store = this.stores.get(naming.groups.scheduling, 'v1', 'priorityclasses');
            return store ? ((await store.reads.list(undefined, { resourceVersion: '0' })).items as PriorityClass[]) : [];
          },
        }),
      DefaultTolerationSeconds: () => defaultTolerationSeconds(naming),
      CertificateApproval: () => certificateApproval(naming, options.authorizeSigner),
      CertificateSigning: () => certificateSigning(naming, options.authorizeSigner),
      CertificateSubjectRestriction: () => certificateSubjectRestriction(naming),
      MutatingAdmissionWebhook: () =>
        mutatingAdmissionWebhook({
          naming,
          source,
          reader,
          credentials: options.webhookCredentials,
          clock,
          metrics: options.admissionMetrics,
          services: this.services,
        }),
      ValidatingAdmissionPolicy: () => validatingAdmissionPolicy({ naming, source, reader, metrics: options.admissionMetrics }),
      ValidatingAdmissionWebhook: () =>
        validatingAdmissionWebhook({
          naming,
          source,
          reader,
          credentials: options.webhookCredentials,
          clock,
          metrics: options.admissionMetrics,
          services: this.services,
        }),
      AlwaysDeny: () => alwaysDeny,
    };
    const plugins: AdmissionPlugin[] = [];
    let extrasAdded = false;
    for (const name of names) {
      const make = build[name];
      if (!make) throw new Error(`admission plugin "${name}" is not available in this server`);
      if (
        !extrasAdded &&
        (name === 'MutatingAdmissionWebhook' || name === 'ValidatingAdmissionPolicy' || name === 'ValidatingAdmissionWebhook' || name === 'AlwaysDeny')
      ) {
        plugins.push(...(options.admission ?? []));
        extrasAdded = true;
      }
      plugins.push(make());
    }
    if (!extrasAdded) plugins.push(...(options.admission ?? []));
    return new Admission(plugins, options.admissionMetrics);
  }

  /** The target's store, after the one verb table (core/resources/endpoints.ts) allowed the verb there: 404 / 405 otherwise. */
  private resolve(target: ResourceTarget, verb: Verb): Resolved {
    const store = this.stores.get(target.group, target.version, target.resource);
    if (!store) {
      // A type that is never stored serves create alone.
      const handled = this.handled.get(target.group, target.version, target.resource);
      if (handled) throw methodNotSupported({ group: handled.def.group, resource: handled.def.resource }, verb);
      throw pathNotFound();
    }
    const def = store.def;
    const sub = target.subresource ?? '';
    const verbs = verbsAt(def, sub);
    if (!verbs) throw pathNotFound();
    if (def.namespaced && target.name !== undefined && !target.namespace) throw pathNotFound();
    if (!verbs.includes(verb)) throw methodNotSupported(store.groupResource, verb);
    return { store, subresource: sub as WriteSubresource };
  }

  /**
   * A create of a type that is never stored: the path and body are checked as for any create
   * (404 / 405, kind and version, fieldValidation), then the handler answers.
   */
  private async createHandled(
    def: ResourceDefinition,
    handler: CreateHandler,
    target: ResourceTarget,
    body: Owned<ApiObject>,
    options: WriteOptions,
    ctx: RequestContext,
  ): Promise<WriteResult> {
    const object = body.value;
    if (target.subresource || target.name !== undefined || !!target.namespace !== def.namespaced) throw pathNotFound();
    if (object === null || typeof object !== 'object' || Array.isArray(object))
      throw badRequest(`the object provided is unrecognized (must be of type ${def.kind})`);
    const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    if (object.apiVersion && object.apiVersion !== apiVersion) {
      throw badRequest(`the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${apiVersion})`);
    }
    if (object.kind && object.kind !== def.kind) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${def.kind}): no kind "${String(object.kind)}" is registered for version "${apiVersion}"`,
      );
    }
    checkBodyFields(this.naming, def, body, options.fieldValidation, ctx);
    const ownNamespace = object.metadata?.namespace;
    if (!def.namespaced && ownNamespace) throw badRequest(`namespace is not allowed on this type: ${ownNamespace}`);
    if (def.namespaced && ownNamespace && ownNamespace !== target.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const review: ApiObject = { ...object, apiVersion, kind: def.kind };
    if (def.namespaced) review.metadata = { ...(object.metadata ?? {}), namespace: target.namespace };
    const answer = await handler.create(review, options, ctx);
    return { object: answer, created: true };
  }

  /** A create of a create-only subresource (serviceaccounts/token): its handler answers, given the parent object. */
  private async createSubresource(target: ResourceTarget, body: Owned<ApiObject>, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    const object = body.value;
    const { store } = this.resolve(target, 'create');
    const sub = store.def.createSubresources!.find((s) => s.name === target.subresource)!;
    const handler = this.handlers[`${store.def.resource}/${sub.name}`]!;
    const parent = await store.reads.get(target.namespace, this.requireName(target), {});
    const apiVersion = sub.kind.group ? `${sub.kind.group}/${sub.kind.version}` : sub.kind.version;
    if (object === null || typeof object !== 'object' || Array.isArray(object))
      throw badRequest(`the object provided is unrecognized (must be of type ${sub.kind.kind})`);
    if ((object.apiVersion && object.apiVersion !== apiVersion) || (object.kind && object.kind !== sub.kind.kind)) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${sub.kind.kind}): no kind "${String(object.kind)}" is registered for version "${apiVersion}"`,
      );
    }
    checkBodyFields(this.naming, sub.kind, body, options.fieldValidation, ctx);
    const answer = await handler.create({ ...object, apiVersion, kind: sub.kind.kind }, options, ctx, parent);
    return { object: answer, created: true };
  }

  private requireName(target: ResourceTarget): string {
    if (!target.name) throw badRequest('name is required');
    return target.name;
  }

  async get(target: ResourceTarget, options: GetOptions, ctx: RequestContext): Promise<ApiObject> {
    return this.getNow(target, options, ctx);
  }

  getNow(target: ResourceTarget, options: GetOptions, _ctx: RequestContext): ApiObject | Promise<ApiObject> {
    const { store, subresource } = this.resolve(target, 'get');
    const found = store.reads.getNow(target.namespace, this.requireName(target), options);
    if (found instanceof Promise) return found.then((obj) => (subresource === 'scale' ? getScale(store.def, obj) : obj));
    return subresource === 'scale' ? getScale(store.def, found) : found;
  }

  async list(target: ResourceTarget, options: ListOptions, _ctx: RequestContext): Promise<ApiList> {
    const { store } = this.resolve(target, 'list');
    return store.reads.list(target.namespace, options);
  }

  async watch(target: ResourceTarget, options: ListOptions, _ctx: RequestContext): Promise<WatchStream> {
    const { store } = this.resolve(target, 'watch');
    if (target.name) {
      // A watch on one object is a watch on its collection with a name field selector (upstream does the same).
      const byName = `metadata.name=${target.name}`;
      options = { ...options, fieldSelector: options.fieldSelector ? `${options.fieldSelector},${byName}` : byName };
    }
    return store.reads.watch(target.namespace, options);
  }

  async create(target: ResourceTarget, object: WriteBody<ApiObject>, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    const body = ownBody(object);
    const handled = this.handled.get(target.group, target.version, target.resource);
    if (handled) return this.createHandled(handled.def, handled.handler, target, body, options, ctx);
    if (target.subresource) return this.createSubresource(target, body, options, ctx);
    const { store } = this.resolve(target, 'create');
    if (target.name !== undefined) throw methodNotSupported(store.groupResource, 'create');
    // Decode-time checks first, as upstream's create handler: type mismatches, then unknown and repeated fields.
    checkBodyFields(this.naming, store.def, body, options.fieldValidation, ctx);
    return store.writes.create(writeRequest({ namespace: target.namespace, options, ctx, handedOver: object instanceof Owned }), body);
  }

  async update(target: ResourceTarget, object: WriteBody<ApiObject>, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    const body = ownBody(object);
    const { store, subresource } = this.resolve(target, 'update');
    const name = this.requireName(target);
    // fieldValidation: decode-time checks of the body, as for create; a PUT of /scale sends a Scale.
    const bodyType: TypeName = subresource === 'scale' ? { group: this.naming.apiGroups.autoscaling, version: 'v1', kind: 'Scale' } : store.def;
    checkBodyFields(this.naming, bodyType, body, options.fieldValidation, ctx);
    const req = writeRequest({
      namespace: target.namespace,
      name,
      subresource,
      options,
      ctx,
      requireResourceVersion: true,
      handedOver: object instanceof Owned,
    });
    if (subresource === 'scale') {
      // The checked Scale becomes the object's replicas (the store tracks ownership).
      return store.writeScale({ ...req, requireResourceVersion: false }, { kind: 'put', body: scaleFromBody(body.value, name, target.namespace) });
    }
    if (object instanceof Owned) return store.writes.update(req, body);
    // A later round of the update starts again from the caller's object, copied and checked afresh
    // (its warnings are not given twice).
    return store.writes.update(req, body, () => {
      const again = handOver(deepCopy(object));
      checkBodyFields(this.naming, bodyType, again, options.fieldValidation, ctx);
      return again;
    });
  }

  async patch(target: ResourceTarget, body: WriteBody<Patch>, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    // The core only reads a patch: an in-process caller's is taken as it is, not copied.
    const patch = body instanceof Owned ? body.value : body;
    if (!(body instanceof Owned && body.withinLimits)) withinLimits(() => checkDecodedLimits(patch.body));
    const { store, subresource } = this.resolve(target, 'patch');
    const req = writeRequest({ namespace: target.namespace, name: this.requireName(target), subresource, options, ctx, handedOver: body instanceof Owned });
    if (subresource === 'scale') return store.writeScale(req, { kind: 'patch', patch });
    return store.patch(req, patch);
  }

  async delete(target: ResourceTarget, options: DeleteOptions, ctx: RequestContext): Promise<DeleteResult> {
    const { store } = this.resolve(target, 'delete');
    const name = this.requireName(target);
    const { options: checked, gate } = this.unsafeDeleteOptions(options);
    const unsafe = checked.ignoreStoreReadErrorWithClusterBreakingPotential === true;
    return store.writes.delete({ namespace: target.namespace, name, ctx }, checked, { unsafeDeletionGate: gate, unsafe });
  }

  /**
   * `ignoreStoreReadErrorWithClusterBreakingPotential` (docs/API.md, "Object deletion" 5): dropped
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
  async deleteCollection(target: ResourceTarget, listOptions: ListOptions, deleteOptions: DeleteOptions, ctx: RequestContext): Promise<ApiList> {
    const { store } = this.resolve(target, 'deletecollection');
    const { options, gate } = this.unsafeDeleteOptions(deleteOptions);
    if (options.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
      throw invalid({ group: this.naming.groups.meta, kind: 'DeleteOptions' }, '', [
        fieldErrors.invalid(
          'ignoreStoreReadErrorWithClusterBreakingPotential',
          true,
          'is not allowed with DELETECOLLECTION, try again after removing the option',
        ),
      ]);
    }
    const listed = await store.reads.list(target.namespace, listOptions.limit ? listOptions : { ...listOptions, continue: undefined });
    for (const item of listed.items) {
      try {
        await store.writes.delete({ namespace: item.metadata?.namespace, name: item.metadata!.name!, ctx }, options, { unsafeDeletionGate: gate });
      } catch (err) {
        if (!StatusError.is(err, 'NotFound')) throw err;
      }
    }
    return listed;
  }

  /**
   * Creates the system namespaces, asking again each second while the store does not answer (a
   * server started before its etcd becomes ready once etcd is up, its /readyz failing meanwhile).
   */
  async ready(serving?: ServingAddress): Promise<void> {
    if (serving) this.serving = serving;
    const ns = this.naming.namespaces;
    const system = { user: { username: 'system:apiserver', groups: ['system:masters'] }, userAgent: 'keelson-apiserver' };
    const clock = this.options.clock ?? systemClock;
    for (const name of [ns.default, ns.system, ns.public, ns.nodeLease]) {
      for (;;) {
        try {
          await this.namespaces.writes.create(
            writeRequest({ namespace: undefined, options: {}, ctx: system }),
            handOver({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
          );
          break;
        } catch (err) {
          if (StatusError.is(err, 'AlreadyExists')) break;
          if (!storeNotAnswering(err) || this.closing) throw err;
          await pause(clock, STORE_RETRY_MS).done;
        }
      }
    }
    await this.bootstrapPriorityClasses(system);
    await this.cache.whenReady();
    // Closed while loading: nothing more to start (the store is gone).
    if (this.closing) return;
    // Upstream's repair post-start hook runs one round until it succeeds, then one every 3 minutes.
    for (let round = 0; !this.closing && !(await this.repairServiceAllocations()) && round < STORE_RACE_ROUNDS; round++);
    if (!this.closing && !this.stopServiceRepair) this.stopServiceRepair = clock.setInterval(() => this.repairRound(), SERVICE_REPAIR_INTERVAL_MS);
    await this.ensureKubernetesService(system);
    await this.dynamicAdmission.synced();
    await this.customResources.synced();
  }

  /**
   * One round of upstream's repair controllers: the allocation bitmaps agree with the stored
   * Services (core/services/allocation.ts); false when a write to a bitmap meanwhile made the
   * round give up.
   */
  private async repairServiceAllocations(): Promise<boolean> {
    const services = this.stores.get('', 'v1', 'services');
    if (!services) return true;
    // A consistent list: at least as new as the bitmaps the round read first.
    return this.serviceAllocation.repair(async () => (await services.reads.list(undefined, {})).items as Service[]);
  }

  /** A timed repair round; one still running (a slow store) is not overlapped. */
  private repairRound(): void {
    if (this.repairing || this.closing) return;
    this.repairing = this.repairServiceAllocations()
      .catch((err: unknown) => this.options.onBackgroundError?.('service allocation repair', err))
      .finally(() => (this.repairing = undefined));
  }

  /**
   * upstream's kubernetes-service controller: the `kubernetes` Service in the default namespace,
   * the first address of the range, port `https` 443 to this server's secure port; one whose
   * ports or type differ is set right. (Its Endpoints are the endpoint reconciler's.)
   */
  private async ensureKubernetesService(ctx: RequestContext): Promise<void> {
    const store = this.stores.get('', 'v1', 'services');
    const port = this.serving?.port;
    if (!store || port === undefined) return;
    const namespace = this.naming.namespaces.default;
    const ports = [{ name: 'https', protocol: 'TCP', port: 443, targetPort: port }];
    const ip = this.serviceAllocation.firstIP;
    const wanted: Service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: KUBERNETES_SERVICE, namespace, labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: { type: 'ClusterIP', clusterIP: ip, clusterIPs: [ip], ports, sessionAffinity: 'None' },
    };
    let current: Service | undefined;
    try {
      current = (await store.reads.get(namespace, KUBERNETES_SERVICE, {})) as Service;
    } catch (err) {
      if (!StatusError.is(err, 'NotFound')) throw err;
    }
    if (!current) {
      try {
        await store.writes.create(writeRequest({ namespace, options: {}, ctx }), handOver<ApiObject>(wanted));
      } catch (err) {
        // Another server on the same store made it first.
        if (!StatusError.is(err, 'AlreadyExists')) throw err;
      }
      return;
    }
    const spec = current.spec ?? {};
    const same =
      spec.type === 'ClusterIP' &&
      JSON.stringify(spec.ports?.map((p) => [p.name, p.protocol, p.port, p.targetPort])) ===
        JSON.stringify(ports.map((p) => [p.name, p.protocol, p.port, p.targetPort]));
    if (same) return;
    const next = deepCopy(current);
    next.spec = { ...spec, type: 'ClusterIP', ports };
    await this.update({ group: '', version: 'v1', resource: 'services', namespace, name: KUBERNETES_SERVICE }, next, {}, ctx).catch((err: unknown) => {
      if (!StatusError.is(err, 'Conflict')) throw err;
    });
  }

  /** The system PriorityClasses, when served (upstream's scheduling/bootstrap-system-priority-classes hook); one that exists is left as it is. */
  private async bootstrapPriorityClasses(ctx: RequestContext): Promise<void> {
    const group = this.naming.groups.scheduling;
    const store = this.stores.get(group, 'v1', 'priorityclasses');
    if (!store) return;
    for (const { name, value, description } of SYSTEM_PRIORITY_CLASSES) {
      const pc: PriorityClass = { apiVersion: `${group}/v1`, kind: 'PriorityClass', metadata: { name }, value, description };
      try {
        await store.writes.create(writeRequest({ namespace: undefined, options: {}, ctx }), handOver<ApiObject>(pc));
      } catch (err) {
        if (!StatusError.is(err, 'AlreadyExists')) throw err;
      }
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    this.customResources.stop();
    this.dynamicAdmission.stop();
    this.compactor.stop();
    this.stopServiceRepair?.();
    await this.repairing;
    this.eventExpiry?.stop();
    await this.cache.close();
    await this.eventExpiry?.closed();
    await this.options.store.close();
  }

  state(): CoreState {
    const { store } = this.options;
    return {
      resources: () =>
        [...this.cache.all()].map((c) => ({
          resource: c.def.group ? `${c.def.resource}.${c.def.group}` : c.def.resource,
          objects: c.size,
          cachedEvents: c.windowSize,
          cachedEventBytes: c.windowBytes,
        })),
      store: async () => ({
        revision: await store.currentRevision(),
        compactedRevision: await store.compactedRevision(),
        sizeBytes: await store.sizeBytes(),
        cacheRevision: this.cache.revision,
        ...(this.compactor.lastCompactionMs !== undefined ? { lastCompactionMs: this.compactor.lastCompactionMs } : {}),
      }),
      cacheFresh: (revision, timeoutMs) => this.cache.waitFresh(revision, timeoutMs),
      admissionFresh: (revision, timeoutMs) => this.dynamicAdmission.fresh(revision, timeoutMs, this.options.clock ?? systemClock),
    };
  }
}

/** A definition's `group/version` (`v1` for the core group). */
function apiVersionOf(def: Pick<ResourceDefinition, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

/** How long `ready` waits before asking a store that did not answer again. */
const STORE_RETRY_MS = 1_000;
/** upstream's interval of the cluster IP and node port repair controllers. */
const SERVICE_REPAIR_INTERVAL_MS = 3 * 60_000;
/** Rounds of the start's repair before it leaves the rest to the timed ones (each lost only to a concurrent allocation). */
const STORE_RACE_ROUNDS = 5;

/** Whether `stored` is the version `view` is kept as (`ResourceDefinition.storedAs`). */
function isStoredVersionOf(stored: ResourceDefinition, view: ResourceDefinition): boolean {
  return !stored.storedAs && !stored.notStored && apiVersionOf(stored) === view.storedAs!.apiVersion && stored.resource === view.resource;
}

/**
 * A write's body as the core's own (docs/ARCHITECTURE.md, "Ownership"), checked against the
 * decode limits unless the door that decoded it did: a door's handed-over body as it is, an
 * in-process caller's copied first, so that nothing the write does (the field checks' pruning
 * included) changes the caller's object.
 */
function ownBody(body: WriteBody<ApiObject>): Owned<ApiObject> {
  if (body instanceof Owned) {
    if (!body.withinLimits) withinLimits(() => checkDecodedLimits(body.value));
    return body;
  }
  withinLimits(() => checkDecodedLimits(body));
  return handOver(deepCopy(body));
}

export function createCore(options: CoreOptions): Core {
  return new InProcessCore(options);
}
