/**
 * What kube-apiserver's apiextensions controllers do for every CustomResourceDefinition, in the
 * core: the naming controller (names checked against the group's other definitions:
 * `NamesAccepted`, `status.acceptedNames`), the establishing controller (`Established`), the
 * handler that starts serving an established definition's types and stops when it goes, and
 * the finalizer controller (a deleted definition's objects removed, then the
 * `customresourcecleanup` finalizer). It is a client of the core's own API, as upstream's
 * controllers are clients of theirs, and works one definition at a time.
 *
 * One difference: upstream's naming controller writes `Established=False, Installing` and its
 * establishing controller then `True`; here one status write carries both conditions, so a
 * definition is served after one write and one watch event rather than two.
 */
import type { ApiObject, CoreApi, RequestContext } from '../api';
import type { Naming } from '../../naming';
import { type Clock, pause } from '../../clock';
import { Informer } from '../informer';
import { StatusError } from '../../status';
import type { ResourceDefinition } from '../resources/definition';
import { jsonEqual } from '../../util/json-values';
import { type CrdCondition, type CrdNames, type CustomResourceDefinitionObject, crdCondition } from './crd';
import { customResourceTypes } from './definition';
import type { ServiceResolver } from '../services/resolver';

const SYSTEM: RequestContext = { user: { username: 'system:apiserver', groups: ['system:masters'] }, userAgent: 'keelson-apiserver' };

/** How long the finalizer waits before looking again at objects that are still there (finalizers of their own). */
const CLEANUP_RECHECK_MS = 1_000;
/** How long a failed step waits before it is tried again. */
const RETRY_MS = 1_000;

/** What the core lets the controller do: serve a definition's types, stop serving them. */
export interface CustomResourceHost {
  install(name: string, defs: readonly ResourceDefinition[]): Promise<void>;
  uninstall(name: string): void;
  /** The built-in types: a custom type that would shadow one is not served. */
  readonly builtins: readonly ResourceDefinition[];
}

export interface CustomResourceControllerOptions {
  api: CoreApi;
  naming: Naming;
  clock: Clock;
  /** Conversion webhooks' call timeout (default 30 s). */
  conversionTimeoutMs?: number;
  /** Where conversion webhooks' `service` references lead. */
  services?: ServiceResolver;
  host: CustomResourceHost;
  onError(what: string, err: unknown): void;
}

export class CustomResourceController {
  private informer?: Informer;
  private readonly queue = new Set<string>();
  private running = false;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  /** What each installed definition was installed from, so that a status write alone reinstalls nothing. */
  private readonly installed = new Map<string, string>();
  /**
   * The definitions' names by group, as the informer holds them: the naming controller
   * looks only at the group's own, so a change costs the size of its group, not of every
   * definition (1,000 definitions created one after another were quadratic).
   */
  private readonly byGroup = new Map<string, Set<string>>();

  constructor(private readonly options: CustomResourceControllerOptions) {}

  private get target() {
    return { group: this.options.naming.groups.apiextensions, version: 'v1', resource: 'customresourcedefinitions' };
  }

  start(): void {
    const { group, resource } = this.target;
    if (!this.options.host.builtins.some((d) => d.group === group && d.resource === resource)) return;
    this.informer = new Informer(
      this.options.api,
      this.target,
      SYSTEM,
      (change) => {
        if (!change) {
          this.byGroup.clear();
          for (const crd of this.definitions()) {
            this.grouped(crd, true);
            this.enqueue(crd.metadata?.name ?? '');
          }
        } else {
          if (change.previous) this.grouped(change.previous as CustomResourceDefinitionObject, false);
          this.grouped(change.object as CustomResourceDefinitionObject, change.type !== 'DELETED');
          this.changed(change.object as CustomResourceDefinitionObject, change.previous as CustomResourceDefinitionObject | undefined);
        }
      },
      this.options.clock,
    );
  }

  /** Resolves once the definitions stored at start are served (a restart serves what was there). */
  async synced(): Promise<void> {
    if (!this.informer) return;
    await this.informer.synced;
    for (const crd of this.definitions()) this.enqueue(crd.metadata?.name ?? '');
    await this.idle();
  }

  stop(): void {
    this.stopped = true;
    this.informer?.stop();
    this.flushIdle();
  }

  private changed(crd: CustomResourceDefinitionObject, previous: CustomResourceDefinitionObject | undefined): void {
    const name = crd.metadata?.name ?? '';
    this.enqueue(name);
    // A definition that goes or changes its accepted names may free a name another one waits for.
    const names = (c?: CustomResourceDefinitionObject) => JSON.stringify(c?.status?.acceptedNames ?? null);
    if (!previous || names(previous) !== names(crd) || !this.definition(name)) {
      for (const other of this.inGroup(crd.spec?.group)) {
        if (other.metadata?.name !== name) this.enqueue(other.metadata?.name ?? '');
      }
    }
  }

  /** Every definition the informer holds (they are cluster-scoped). */
  private definitions(): Iterable<CustomResourceDefinitionObject> {
    return this.informer!.inNamespace('') as Iterable<CustomResourceDefinitionObject>;
  }

  /** Keep `byGroup` as the informer's definitions: `crd` there (`present`) or gone. */
  private grouped(crd: CustomResourceDefinitionObject, present: boolean): void {
    const group = crd.spec?.group ?? '';
    const name = crd.metadata?.name ?? '';
    let names = this.byGroup.get(group);
    if (present) {
      if (!names) this.byGroup.set(group, (names = new Set()));
      names.add(name);
    } else if (names?.delete(name) && names.size === 0) this.byGroup.delete(group);
  }

  /** The definitions of one group the informer holds. */
  private *inGroup(group: string | undefined): Iterable<CustomResourceDefinitionObject> {
    for (const name of this.byGroup.get(group ?? '') ?? []) {
      const crd = this.definition(name);
      if (crd) yield crd;
    }
  }

  private definition(name: string): CustomResourceDefinitionObject | undefined {
    // The informer keys objects `<namespace>/<name>`, a cluster-scoped one `/<name>`.
    return this.informer!.objects.get(`/${name}`) as CustomResourceDefinitionObject | undefined;
  }

  private enqueue(name: string): void {
    if (this.stopped) return;
    this.queue.add(name);
    if (!this.running) void this.drain();
  }

  private idle(): Promise<void> {
    if (!this.running && this.queue.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private flushIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.size > 0 && !this.stopped) {
        const name = this.queue.values().next().value as string;
        this.queue.delete(name);
        try {
          await this.sync(name);
        } catch (err) {
          if (this.stopped) break;
          this.options.onError(`custom resource definition ${name}`, err);
          const retry = pause(this.options.clock, RETRY_MS);
          void retry.done.then(() => this.enqueue(name));
        }
      }
    } finally {
      this.running = false;
      if (this.queue.size === 0 || this.stopped) this.flushIdle();
    }
  }

  private async sync(name: string): Promise<void> {
    const crd = this.definition(name);
    if (!crd) {
      this.installed.delete(name);
      this.options.host.uninstall(name);
      return;
    }
    if (!crd.metadata?.deletionTimestamp) {
      const status = this.nextStatus(crd);
      if (status) {
        await this.writeStatus(crd, status);
        return;
      }
    }
    if (crdCondition(crd, 'Established')?.status === 'True') await this.serve(name, crd);
    if (crd.metadata?.deletionTimestamp && (crd.metadata.finalizers ?? []).includes(this.finalizer)) await this.finalize(crd);
  }

  private get finalizer(): string {
    return this.options.naming.finalizers.customResourceCleanup;
  }

  /** Serve the definition's types as they are now, unless that is what is served already. */
  private async serve(name: string, crd: CustomResourceDefinitionObject): Promise<void> {
    // The stored versions too: the storage version reads an earlier one's objects once it was stored.
    const served = JSON.stringify([crd.metadata?.uid, crd.spec, crd.status?.acceptedNames, crd.status?.storedVersions, !!crd.metadata?.deletionTimestamp]);
    if (this.installed.get(name) === served) return;
    const { builtins } = this.options.host;
    const defs = customResourceTypes(crd, {
      naming: this.options.naming,
      clock: this.options.clock,
      conversionTimeoutMs: this.options.conversionTimeoutMs,
      services: this.options.services,
    }).filter((def) => !builtins.some((b) => b.group === def.group && b.version === def.version && (b.resource === def.resource || b.kind === def.kind)));
    await this.options.host.install(name, defs);
    this.installed.set(name, served);
  }

  /** The names the group's other definitions have taken. */
  private namesTaken(crd: CustomResourceDefinitionObject): { resources: Set<string>; kinds: Set<string> } {
    const resources = new Set<string>();
    const kinds = new Set<string>();
    for (const other of this.inGroup(crd.spec.group)) {
      if (other.metadata?.name === crd.metadata?.name) continue;
      const accepted = other.status?.acceptedNames;
      if (!accepted) continue;
      for (const n of [accepted.plural, accepted.singular, ...(accepted.shortNames ?? [])]) if (n) resources.add(n);
      for (const k of [accepted.kind, accepted.listKind]) if (k) kinds.add(k);
    }
    return { resources, kinds };
  }

  /**
   * The status the naming and establishing controllers would write, or undefined when the
   * stored one is it already (upstream's calculateNamesAndConditions, then Established).
   */
  private nextStatus(crd: CustomResourceDefinitionObject): CustomResourceDefinitionObject['status'] | undefined {
    const status = crd.status ?? {};
    const requested = crd.spec.names;
    const accepted: Partial<CrdNames> = status.acceptedNames ?? {};
    let namesAccepted: CrdCondition | undefined;
    const conflict = (reason: string, message: string) => {
      namesAccepted = { type: 'NamesAccepted', status: 'False', reason, message };
    };
    const next: Partial<CrdNames> = { ...accepted };
    if (!jsonEqual(requested, accepted)) {
      const { resources, kinds } = this.namesTaken(crd);
      const fresh = (want: string | undefined, have: string | undefined, used: Set<string>) =>
        want === have || !want || !used.has(want) ? undefined : `${JSON.stringify(want)} is already in use`;
      const check = (field: 'plural' | 'singular' | 'kind' | 'listKind', used: Set<string>, reason: string) => {
        const error = fresh(requested[field], accepted[field], used);
        if (error) conflict(reason, error);
        else if (requested[field] !== undefined) next[field] = requested[field];
        else delete next[field];
      };
      check('plural', resources, 'PluralConflict');
      check('singular', resources, 'SingularConflict');
      if (!jsonEqual(requested.shortNames ?? [], accepted.shortNames ?? [])) {
        const own = new Set(accepted.shortNames ?? []);
        const errors = (requested.shortNames ?? []).filter((s) => !own.has(s)).flatMap((s) => fresh(s, '', resources) ?? []);
        if (errors.length) conflict('ShortNamesConflict', errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`);
        else if (requested.shortNames) next.shortNames = requested.shortNames;
        else delete next.shortNames;
      }
      check('kind', kinds, 'KindConflict');
      check('listKind', kinds, 'ListKindConflict');
      if (requested.categories) next.categories = requested.categories;
      else delete next.categories;
    }
    namesAccepted ??= { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };
    const established: CrdCondition =
      crdCondition(crd, 'Established')?.status === 'True'
        ? crdCondition(crd, 'Established')!
        : namesAccepted.status === 'True'
          ? { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }
          : (crdCondition(crd, 'Established') ?? { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' });
    const storage = crd.spec.versions.find((v) => v.storage)?.name;
    const storedVersions = status.storedVersions ?? [];
    const conditions = this.withConditions(status.conditions ?? [], [namesAccepted, established]);
    const names = next as CrdNames;
    const nextStored = storage && !storedVersions.includes(storage) ? [...storedVersions, storage] : storedVersions;
    if (jsonEqual(conditions, status.conditions ?? []) && jsonEqual(names, status.acceptedNames ?? {}) && nextStored === storedVersions) return undefined;
    return { ...status, conditions, acceptedNames: names, storedVersions: nextStored };
  }

  /** Conditions set as upstream's SetCRDCondition: the transition time moves only when the status does. */
  private withConditions(current: readonly CrdCondition[], set: readonly CrdCondition[]): CrdCondition[] {
    const out = current.map((c) => ({ ...c }));
    const now = new Date(this.options.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    for (const condition of set) {
      const at = out.findIndex((c) => c.type === condition.type);
      if (at < 0) {
        out.push({ ...condition, lastTransitionTime: now });
        continue;
      }
      const old = out[at]!;
      if (old.status === condition.status && old.reason === condition.reason && old.message === condition.message) continue;
      out[at] = { ...condition, lastTransitionTime: old.status === condition.status ? old.lastTransitionTime : now };
    }
    return out;
  }

  private async writeStatus(crd: CustomResourceDefinitionObject, status: CustomResourceDefinitionObject['status']): Promise<void> {
    try {
      await this.options.api.update({ ...this.target, name: crd.metadata!.name!, subresource: 'status' }, { ...crd, status } as ApiObject, {}, SYSTEM);
    } catch (err) {
      // Changed or gone meanwhile: the informer brings the next version.
      if (StatusError.is(err, 'Conflict') || StatusError.is(err, 'NotFound')) return;
      throw err;
    }
  }

  /**
   * One step of upstream's CRD finalizer, each taken when the definition changes: `Terminating`
   * (InstanceDeletionInProgress) written; every object of the definition deleted, and looked
   * at again a second later while some are left (they may hold finalizers of their own); then
   * the finalizer removed, after which the store removes the definition.
   */
  private async finalize(crd: CustomResourceDefinitionObject): Promise<void> {
    const name = crd.metadata!.name!;
    const terminating: CrdCondition = {
      type: 'Terminating',
      status: 'True',
      reason: 'InstanceDeletionInProgress',
      message: 'CustomResource deletion is in progress',
    };
    const current = crdCondition(crd, 'Terminating');
    if (current?.reason !== 'InstanceDeletionInProgress' && current?.reason !== 'InstanceDeletionCheck') {
      await this.writeStatus(crd, { ...crd.status, conditions: this.withConditions(crd.status?.conditions ?? [], [terminating]) });
      return;
    }
    const storage = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0];
    const names = crd.status?.acceptedNames ?? crd.spec.names;
    const target = { group: crd.spec.group, version: storage!.name, resource: names.plural };
    let left = 0;
    if (this.installed.has(name)) {
      await this.options.api.deleteCollection(target, {}, {}, SYSTEM);
      left = (await this.options.api.list(target, {}, SYSTEM)).items.length;
    }
    if (left > 0) {
      const message = `could not confirm zero CustomResources remaining: ${left} remaining`;
      const conditions = this.withConditions(crd.status?.conditions ?? [], [{ ...terminating, reason: 'InstanceDeletionCheck', message }]);
      if (!jsonEqual(conditions, crd.status?.conditions ?? [])) await this.writeStatus(crd, { ...crd.status, conditions });
      void pause(this.options.clock, CLEANUP_RECHECK_MS).done.then(() => this.enqueue(name));
      return;
    }
    const conditions = this.withConditions(crd.status?.conditions ?? [], [
      { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' },
    ]);
    const finalizers = (crd.metadata?.finalizers ?? []).filter((f) => f !== this.finalizer);
    try {
      await this.options.api.update(
        { ...this.target, name, subresource: 'status' },
        { ...crd, metadata: { ...crd.metadata, finalizers }, status: { ...crd.status, conditions } } as ApiObject,
        {},
        SYSTEM,
      );
    } catch (err) {
      if (!StatusError.is(err, 'Conflict') && !StatusError.is(err, 'NotFound')) throw err;
    }
  }
}
