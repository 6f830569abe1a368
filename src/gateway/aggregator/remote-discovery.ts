/**
 * Discovery of the remote group versions: `/apis` lists the remote groups (from their
 * APIServices, upstream's group order), `/apis/<group>` of a group only extension servers
 * serve is answered from its APIServices, and aggregated discovery carries each remote version
 * with what its server says of it (RemoteDiscovery). A group leaves discovery with its
 * APIService.
 */
import type { APIService } from '../../core';
import type { APIGroupDiscovery, APIResourceDiscovery, APIVersionDiscovery } from '../discovery/aggregated';
import type { RemoteGroup } from './registrations';
import type { FetchedDocument } from './transport';

interface LegacyResource {
  name: string;
  singularName?: string;
  namespaced?: boolean;
  group?: string;
  version?: string;
  kind?: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
}

/** An APIResourceList as aggregated discovery's version entry (upstream's conversion of a legacy document). */
export function versionFromResourceList(version: string, list: { resources?: LegacyResource[] }): APIVersionDiscovery {
  const mains = new Map<string, APIResourceDiscovery>();
  const resources = list.resources ?? [];
  for (const r of resources) {
    if (r.name.includes('/')) continue;
    const entry: APIResourceDiscovery = {
      resource: r.name,
      responseKind: { group: r.group ?? '', version: r.version ?? '', kind: r.kind ?? '' },
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: r.singularName ?? '',
      verbs: [...(r.verbs ?? [])],
    };
    if (r.shortNames?.length) entry.shortNames = [...r.shortNames];
    if (r.categories?.length) entry.categories = [...r.categories];
    mains.set(r.name, entry);
  }
  for (const r of resources) {
    const [parent, sub] = r.name.split('/');
    const main = sub ? mains.get(parent!) : undefined;
    if (!main) continue;
    (main.subresources ??= []).push({
      subresource: sub!,
      responseKind: { group: r.group ?? '', version: r.version ?? '', kind: r.kind ?? '' },
      verbs: [...(r.verbs ?? [])],
    });
  }
  const out: APIVersionDiscovery = { version, freshness: 'Current' };
  const sorted = [...mains.values()].sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
  if (sorted.length) out.resources = sorted;
  return out;
}

/** Fetches a path from an APIService's extension server (fetchFromAPIService with the discovery manager's user and timeout). */
export type DiscoveryFetch = (apiService: APIService, path: string, accept: string) => Promise<FetchedDocument>;

interface AggregatedList {
  items?: { metadata?: { name?: string }; versions?: APIVersionDiscovery[] }[];
}

/**
 * What each remote APIService's server last told about its version (by APIService name),
 * fetched as upstream's discovery manager does: the aggregated document `/apis` first, and
 * when the server has none (404, 406, or an answer that is not aggregated) its legacy
 * APIResourceList `/apis/<group>/<version>`, converted. A version whose document could not be
 * had is listed `Stale` with no resources.
 */
export class RemoteDiscovery {
  private readonly versions = new Map<string, APIVersionDiscovery>();
  private readonly running = new Map<string, Promise<void>>();
  generation = 0;

  constructor(
    private readonly fetch: DiscoveryFetch,
    /** The Accept of the aggregated document (`application/json;g=<apidiscovery>;v=v2;as=APIGroupDiscoveryList,…`). */
    private readonly aggregatedAccept: string,
    private readonly log?: (message: string) => void,
  ) {}

  /** Fetch the APIService's version again (after an availability check); an unavailable one is dropped. */
  refresh(apiService: APIService, available: boolean): void {
    const name = apiService.metadata?.name ?? '';
    if (!available) {
      this.set(name, undefined);
      return;
    }
    if (this.running.has(name)) return;
    const run = this.fetchVersion(apiService)
      .then((version) => this.set(name, version))
      .catch((err: unknown) => {
        this.log?.(`discovery of APIService ${name}: ${(err as Error).message}`);
        this.set(name, undefined);
      })
      .finally(() => this.running.delete(name));
    this.running.set(name, run);
  }

  /** Resolves when every fetch under way has ended (tests). */
  async settled(): Promise<void> {
    while (this.running.size) await Promise.all(this.running.values());
  }

  private async fetchVersion(apiService: APIService): Promise<APIVersionDiscovery> {
    const group = apiService.spec?.group ?? '';
    const version = apiService.spec?.version ?? '';
    const aggregated = await this.fetch(apiService, '/apis', this.aggregatedAccept);
    if (aggregated.status === 200 && aggregated.contentType.includes('as=APIGroupDiscoveryList')) {
      const list = JSON.parse(aggregated.body.toString('utf8')) as AggregatedList;
      const found = list.items?.find((g) => g.metadata?.name === group)?.versions?.find((v) => v.version === version);
      // Listed by its server without this version: the version is there, with nothing known of it.
      return found ? { ...found, freshness: 'Current' } : { version, freshness: 'Current' };
    }
    if (aggregated.status !== 200 && aggregated.status !== 404 && aggregated.status !== 406) throw new Error(`/apis answered ${aggregated.status}`);
    const legacy = await this.fetch(apiService, `/apis/${group}/${version}`, 'application/json');
    if (legacy.status !== 200) throw new Error(`failed to download discovery for /apis/${group}/${version}: ${legacy.status}`);
    return versionFromResourceList(version, JSON.parse(legacy.body.toString('utf8')));
  }

  private set(name: string, next: APIVersionDiscovery | undefined): void {
    const before = this.versions.get(name);
    if (next) this.versions.set(name, next);
    else this.versions.delete(name);
    if (JSON.stringify(before) !== JSON.stringify(next)) this.generation++;
  }

  forget(names: ReadonlySet<string>): void {
    for (const name of [...this.versions.keys()]) {
      if (names.has(name)) continue;
      this.versions.delete(name);
      this.generation++;
    }
  }

  /** The aggregated discovery entries of the remote groups. */
  groups(remote: readonly RemoteGroup[]): APIGroupDiscovery[] {
    return remote.map((group) => ({
      metadata: { name: group.name, creationTimestamp: null },
      versions: group.versions.map(
        (apiService) => this.versions.get(apiService.metadata?.name ?? '') ?? { version: apiService.spec?.version ?? '', freshness: 'Stale' as const },
      ),
    }));
  }
}

/** The APIGroup document of a remote group (upstream's apiGroupHandler). */
export function remoteAPIGroup(group: RemoteGroup) {
  const versions = group.versions.map((a) => ({ groupVersion: `${group.name}/${a.spec?.version ?? ''}`, version: a.spec?.version ?? '' }));
  return { kind: 'APIGroup', apiVersion: 'v1', name: group.name, versions, preferredVersion: versions[0] };
}
