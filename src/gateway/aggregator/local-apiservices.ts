/**
 * Local APIServices (upstream's autoregister and crdregistration controllers): one for every
 * group version this server serves itself, built-in or custom, with upstream's priorities
 * (`apiVersionPriorities` of kube-apiserver's aggregator config; 1000/100 for custom resource
 * groups), created when the group version is served, kept, and deleted when it goes. They are
 * labelled as upstream's (`<kube>-aggregator.<key domain>/automanaged`: `onstart` for built-in
 * ones, `true` for custom ones); a local APIService without the label is left alone.
 */
import type { Clock } from '../../clock';
import { type APIService, type CoreApi, type RequestContext, apiServiceName, isLocalAPIService } from '../../core';
import type { Naming } from '../../naming';
import { StatusError } from '../../status';
import type { ResourceIndex } from '../resource-index';
import type { APIServiceRegistrations } from './registrations';

interface Priority {
  group: number;
  version: number;
}

/** Custom resource groups (upstream's crdregistration controller). */
export const CUSTOM_GROUP_PRIORITY: Priority = { group: 1000, version: 100 };

/**
 * Upstream 1.32's table of the served built-in group versions: group prefixes below the
 * vendor's group domain are named through the naming module.
 */
export function builtinPriorities(naming: Naming): ReadonlyMap<string, Priority> {
  const p = (group: number, version: number): Priority => ({ group, version });
  const entries: [string, string, Priority][] = [
    ['', 'v1', p(18000, 1)],
    [naming.group('events'), 'v1', p(17750, 15)],
    [naming.group('authentication'), 'v1', p(17700, 15)],
    [naming.group('authorization'), 'v1', p(17600, 15)],
    [naming.group('certificates'), 'v1', p(17300, 15)],
    [naming.group('rbac.authorization'), 'v1', p(17000, 15)],
    [naming.group('apiextensions'), 'v1', p(16700, 15)],
    [naming.group('admissionregistration'), 'v1', p(16700, 15)],
    [naming.group('coordination'), 'v1', p(16500, 15)],
    [naming.group('discovery'), 'v1', p(16200, 15)],
    [naming.group('flowcontrol.apiserver'), 'v1', p(16100, 21)],
    ['apps', 'v1', p(17800, 15)],
    ['autoscaling', 'v1', p(17500, 15)],
    ['autoscaling', 'v2', p(17500, 30)],
    ['batch', 'v1', p(17400, 15)],
    [naming.group('networking'), 'v1', p(17200, 15)],
    ['policy', 'v1', p(17100, 15)],
    [naming.group('storage'), 'v1', p(16800, 15)],
    [naming.group('scheduling'), 'v1', p(16600, 15)],
    [naming.group('node'), 'v1', p(16300, 15)],
  ];
  return new Map(entries.map(([group, version, priority]) => [`${group}/${version}`, priority]));
}

export function automanagedLabel(naming: Naming): string {
  return naming.labels.apiServiceAutomanaged;
}

/** The local APIServices the index asks for, by name. */
export function desiredLocalAPIServices(index: ResourceIndex, naming: Naming): Map<string, APIService> {
  const priorities = builtinPriorities(naming);
  const out = new Map<string, APIService>();
  for (const group of index.groups()) {
    // The aggregator's own group is served beside the others, with no APIService (as upstream).
    if (group.name === naming.groups.apiregistration) continue;
    for (const version of group.versions) {
      const custom = index.resourcesOf(group.name, version).some((d) => d.custom !== undefined);
      const priority = priorities.get(`${group.name}/${version}`) ?? (custom ? CUSTOM_GROUP_PRIORITY : undefined);
      // Upstream registers only the built-in group versions its table names.
      if (!priority) continue;
      const name = apiServiceName(group.name, version);
      out.set(name, {
        apiVersion: `${naming.groups.apiregistration}/v1`,
        kind: 'APIService',
        metadata: { name, labels: { [automanagedLabel(naming)]: custom ? 'true' : 'onstart' } },
        spec: { service: null, group: group.name, version, groupPriorityMinimum: priority.group, versionPriority: priority.version },
      });
    }
  }
  return out;
}

/** Keeps the local APIServices in step with the served group versions. */
export class LocalAPIServices {
  private scheduled = false;
  private running?: Promise<void>;
  private stopped = false;
  private readonly stopListening: () => void;

  constructor(
    private readonly options: {
      api: CoreApi;
      naming: Naming;
      clock: Clock;
      ctx: RequestContext;
      index: ResourceIndex;
      registrations: APIServiceRegistrations;
      log?: (message: string) => void;
    },
  ) {
    this.stopListening = options.registrations.onChange(() => this.schedule());
    void options.registrations.synced.then(() => this.schedule());
  }

  /** The served set changed (a custom resource's group came or went). */
  schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    this.options.clock.setTimeout(() => {
      this.scheduled = false;
      const previous = this.running ?? Promise.resolve();
      this.running = previous.then(() => this.sync()).catch((err: unknown) => this.options.log?.(`local APIServices: ${(err as Error).message}`));
    }, 0);
  }

  /** Resolves when the syncs asked for so far are done (tests). */
  async settled(): Promise<void> {
    while (this.scheduled || this.running) {
      const running = this.running;
      await (running ?? new Promise((r) => setImmediate(r)));
      if (this.running === running && !this.scheduled) break;
    }
  }

  stop(): void {
    this.stopped = true;
    this.stopListening();
  }

  private async sync(): Promise<void> {
    const { api, naming, ctx, index, registrations } = this.options;
    const target = (name?: string) => ({ group: naming.groups.apiregistration, version: 'v1', resource: 'apiservices', ...(name ? { name } : {}) });
    const desired = desiredLocalAPIServices(index, naming);
    const existing = new Map<string, APIService>();
    for (const apiService of registrations.all()) existing.set(apiService.metadata?.name ?? '', apiService);
    const ignoreConflicts = (err: unknown) => {
      if (!(err instanceof StatusError) || (err.status.code !== 409 && err.status.code !== 404)) throw err;
    };
    for (const [name, want] of desired) {
      const have = existing.get(name);
      if (!have) {
        await api.create(target(), want, {}, ctx).catch(ignoreConflicts);
        continue;
      }
      // A remote APIService for the same group version wins, as upstream's autoregister leaves
      // an APIService it did not make alone.
      if (!isLocalAPIService(have) || have.metadata?.labels?.[automanagedLabel(naming)] === undefined) continue;
      const spec = have.spec ?? {};
      if (spec.groupPriorityMinimum !== want.spec?.groupPriorityMinimum || spec.versionPriority !== want.spec?.versionPriority) {
        await api.update(target(name), { ...have, spec: { ...spec, ...want.spec } }, {}, ctx).catch(ignoreConflicts);
      }
    }
    for (const [name, have] of existing) {
      if (desired.has(name) || !isLocalAPIService(have) || have.metadata?.labels?.[automanagedLabel(naming)] === undefined) continue;
      await api.delete(target(name), {}, ctx).catch(ignoreConflicts);
    }
  }
}
