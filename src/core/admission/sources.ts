/**
 * What dynamic admission reads: the webhook configurations, policies and bindings, each kept in
 * memory by an informer over the core (so a change takes effect a moment after it is stored,
 * as upstream's informer-fed dispatchers do), and the parameter objects policies name.
 */
import type { ApiObject, CoreApi, RequestContext } from '../api';
import type { Clock } from '../../clock';
import { StatusError } from '../../status';
import { Informer } from '../informer';
import type { ResourceDefinition } from '../resources';
import type { MetaLabelSelector } from '../validation/selectors';
import { paramSelected } from './policy/plugin';
import type { PolicySource, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from './policy/types';
import type { WebhookConfiguration, WebhookConfigurationSource } from './webhook/types';

const SYSTEM: RequestContext = { user: { username: 'system:apiserver', groups: ['system:masters'] }, userAgent: 'keelson-apiserver' };

/** One informer's objects sorted by name, recomputed when they change. */
class Sorted<T extends ApiObject> {
  private informer?: Informer;
  private sorted: readonly T[] = [];
  /** The resourceVersion of the last change seen. */
  revision = 0;
  onRevision?: () => void;

  constructor(
    private readonly api: CoreApi,
    private readonly def: ResourceDefinition | undefined,
    private readonly clock: Clock,
  ) {}

  start(): void {
    const def = this.def;
    if (!def || this.informer) return;
    this.informer = new Informer(
      this.api,
      { group: def.group, version: def.version, resource: def.resource },
      SYSTEM,
      (change) => {
        this.refresh();
        const rv = Number(change?.object.metadata?.resourceVersion ?? 0);
        if (rv > this.revision) this.revision = rv;
        this.onRevision?.();
      },
      this.clock,
    );
  }

  private refresh(): void {
    const items = [...this.informer!.objects.values()] as T[];
    items.sort((x, y) => ((x.metadata?.name ?? '') < (y.metadata?.name ?? '') ? -1 : (x.metadata?.name ?? '') > (y.metadata?.name ?? '') ? 1 : 0));
    this.sorted = items;
  }

  get items(): readonly T[] {
    return this.sorted;
  }

  synced(): Promise<void> {
    return this.informer?.synced ?? Promise.resolve();
  }

  stop(): void {
    this.informer?.stop();
  }
}

export class DynamicAdmissionSources implements WebhookConfigurationSource, PolicySource {
  private readonly mutatingConfigs: Sorted<WebhookConfiguration>;
  private readonly validatingConfigs: Sorted<WebhookConfiguration>;
  private readonly policyObjects: Sorted<ValidatingAdmissionPolicy>;
  private readonly bindingObjects: Sorted<ValidatingAdmissionPolicyBinding>;

  constructor(
    private readonly api: CoreApi,
    /** The types served now (custom resources come and go). */
    private readonly resources: () => readonly ResourceDefinition[],
    admissionGroup: string,
    clock: Clock,
    watch: { webhooks: boolean; policies: boolean },
  ) {
    const def = (resource: string) => resources().find((d) => d.group === admissionGroup && d.version === 'v1' && d.resource === resource);
    this.mutatingConfigs = new Sorted(api, watch.webhooks ? def('mutatingwebhookconfigurations') : undefined, clock);
    this.validatingConfigs = new Sorted(api, watch.webhooks ? def('validatingwebhookconfigurations') : undefined, clock);
    this.policyObjects = new Sorted(api, watch.policies ? def('validatingadmissionpolicies') : undefined, clock);
    this.bindingObjects = new Sorted(api, watch.policies ? def('validatingadmissionpolicybindings') : undefined, clock);
  }

  mutating(): readonly WebhookConfiguration[] {
    return this.mutatingConfigs.items;
  }

  validating(): readonly WebhookConfiguration[] {
    return this.validatingConfigs.items;
  }

  policies(): readonly ValidatingAdmissionPolicy[] {
    return this.policyObjects.items;
  }

  bindings(): readonly ValidatingAdmissionPolicyBinding[] {
    return this.bindingObjects.items;
  }

  paramType(apiVersion: string, kind: string) {
    const def = this.resources().find((d) => (d.group ? `${d.group}/${d.version}` : d.version) === apiVersion && d.kind === kind && !d.notStored);
    return def ? { group: def.group, version: def.version, resource: def.resource, namespaced: def.namespaced } : undefined;
  }

  async params(
    type: { group: string; version: string; resource: string },
    namespace: string,
    pick: { name: string } | { selector: MetaLabelSelector },
  ): Promise<ApiObject[]> {
    const target = { ...type, ...(namespace ? { namespace } : {}) };
    if ('name' in pick) {
      try {
        return [await this.api.get({ ...target, name: pick.name }, { resourceVersion: '0' }, SYSTEM)];
      } catch (err) {
        if (StatusError.is(err, 'NotFound')) return [];
        throw err;
      }
    }
    const list = await this.api.list(target, { resourceVersion: '0' }, SYSTEM);
    return list.items.filter((o) => paramSelected(pick.selector, o));
  }

  private all() {
    return [this.mutatingConfigs, this.validatingConfigs, this.policyObjects, this.bindingObjects];
  }

  private waiters: Array<{ revision: number; resolve: () => void }> = [];

  /** Start the informers (once the core can serve lists and watches). */
  start(): void {
    for (const s of this.all()) {
      s.onRevision = () => this.wake();
      s.start();
    }
  }

  private seen(revision: number): boolean {
    return this.all().some((s) => s.revision >= revision);
  }

  private wake(): void {
    this.waiters = this.waiters.filter((w) => {
      if (!this.seen(w.revision)) return true;
      w.resolve();
      return false;
    });
  }

  /**
   * Resolves true once a change to a webhook configuration, policy or binding stored at
   * `revision` is in effect; false after `timeoutMs`.
   */
  async fresh(revision: number, timeoutMs: number, clock: Clock): Promise<boolean> {
    if (this.seen(revision)) return true;
    return new Promise<boolean>((resolve) => {
      const waiter = { revision, resolve: () => resolve(true) };
      this.waiters.push(waiter);
      clock.setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(this.seen(revision));
      }, timeoutMs);
    });
  }

  /** Resolves once every informer has its first list. */
  async synced(): Promise<void> {
    await Promise.all(this.all().map((s) => s.synced()));
  }

  stop(): void {
    for (const s of this.all()) s.stop();
  }
}
