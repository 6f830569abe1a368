/**
 * Discovery of the remote group versions: `/apis` lists the remote groups (from their
 * APIServices, upstream's group order), `/apis/<group>` of a group only extension servers
 * serve is answered from its APIServices, and aggregated discovery carries each remote version
 * with the resources of the APIResourceList its server answered the availability probe with
 * (upstream's fallback from aggregated to legacy discovery; the version is `Stale` until one
 * came). A group leaves discovery with its APIService.
 */
import type { APIService } from '../../core';
import type { APIGroupDiscovery, APIResourceDiscovery, APIVersionDiscovery } from '../discovery/aggregated';
import type { RemoteGroup } from './registrations';

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

/** What each remote APIService's server last told about its version (by APIService name). */
export class RemoteDiscovery {
  private readonly versions = new Map<string, APIVersionDiscovery>();
  generation = 0;

  /** Take the discovery document an availability check read (undefined: not available). */
  update(apiService: APIService, document: Buffer | undefined): void {
    const name = apiService.metadata?.name ?? '';
    const before = this.versions.get(name);
    let next: APIVersionDiscovery | undefined;
    if (document) {
      try {
        next = versionFromResourceList(apiService.spec?.version ?? '', JSON.parse(document.toString('utf8')));
      } catch {
        next = undefined;
      }
    }
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
