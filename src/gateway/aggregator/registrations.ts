/**
 * The APIServices this server follows (an informer through `CoreApi`): which group versions
 * are handed to an extension server, and the groups those make, ordered as upstream's
 * aggregator orders them (group by the highest `groupPriorityMinimum`, then by name; versions
 * by `versionPriority`, then kube-aware version order).
 */
import type { Clock } from '../../clock';
import { type APIService, type CoreApi, Informer, type InformerView, type RequestContext, isLocalAPIService } from '../../core';
import type { Naming } from '../../naming';
import { compareKubeVersions } from '../resource-index';

export interface RemoteGroup {
  name: string;
  /** The remote versions, in order of preference. */
  versions: APIService[];
}

export class APIServiceRegistrations {
  private readonly view: InformerView;
  private byGroupVersion = new Map<string, APIService>();
  private groupList: RemoteGroup[] = [];
  private readonly listeners = new Set<() => void>();
  /** Grows on every change of the remote APIServices. */
  generation = 0;

  constructor(api: CoreApi, naming: Naming, clock: Clock, ctx: RequestContext) {
    const informer = new Informer(api, { group: naming.groups.apiregistration, version: 'v1', resource: 'apiservices' }, ctx, undefined, clock);
    this.view = informer.listen(() => this.rebuild());
  }

  get synced(): Promise<void> {
    return this.view.synced;
  }

  /** Every APIService, local ones included. */
  all(): Iterable<APIService> {
    return this.view.objects.values() as Iterable<APIService>;
  }

  /** The remote APIService serving `group`/`version`, if one does. */
  remote(group: string, version: string): APIService | undefined {
    return this.byGroupVersion.get(`${group}/${version}`);
  }

  /** Groups with at least one remote version, by upstream's group order. */
  remoteGroups(): readonly RemoteGroup[] {
    return this.groupList;
  }

  remoteGroup(name: string): RemoteGroup | undefined {
    return this.groupList.find((g) => g.name === name);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stop(): void {
    this.view.stop();
    this.listeners.clear();
  }

  private rebuild(): void {
    const byGroupVersion = new Map<string, APIService>();
    const groups = new Map<string, APIService[]>();
    for (const apiService of this.all()) {
      if (isLocalAPIService(apiService) || apiService.metadata?.deletionTimestamp) continue;
      const group = apiService.spec?.group ?? '';
      const version = apiService.spec?.version ?? '';
      byGroupVersion.set(`${group}/${version}`, apiService);
      let list = groups.get(group);
      if (!list) groups.set(group, (list = []));
      list.push(apiService);
    }
    const priority = (versions: APIService[]) => Math.max(...versions.map((a) => a.spec?.groupPriorityMinimum ?? 0));
    const groupList = [...groups].map(([name, versions]) => ({
      name,
      versions: versions.sort(
        (a, b) => (b.spec?.versionPriority ?? 0) - (a.spec?.versionPriority ?? 0) || compareKubeVersions(a.spec?.version ?? '', b.spec?.version ?? ''),
      ),
    }));
    groupList.sort((a, b) => priority(b.versions) - priority(a.versions) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.byGroupVersion = byGroupVersion;
    this.groupList = groupList;
    this.generation++;
    for (const listener of this.listeners) listener();
  }
}
