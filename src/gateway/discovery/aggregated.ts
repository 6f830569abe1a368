/**
 * Aggregated discovery (apidiscovery v2, and v2beta1 of the same shape), which kubectl 1.32
 * asks for first on `/api` and `/apis`: every group, version and resource in one
 * APIGroupDiscoveryList. Shapes follow upstream's apidiscovery/v2 types; content follows
 * upstream's ConvertGroupVersionIntoToDiscovery (main resources carry an empty-group
 * responseKind, subresources their own).
 */
import type { Naming } from '../../naming';
import type { Conversion } from '../codecs';
import type { ResourceIndex } from '../resource-index';
import { subresourcesOf, verbsOf } from '../../core';
import { deepFreeze } from '../../util/frozen';

export const AGGREGATED_DISCOVERY_KIND = 'APIGroupDiscoveryList';
export const AGGREGATED_DISCOVERY_VERSIONS = ['v2', 'v2beta1'] as const;
export type AggregatedDiscoveryVersion = (typeof AGGREGATED_DISCOVERY_VERSIONS)[number];

export function isAggregatedDiscovery(convert: Conversion | undefined, naming: Naming): convert is Conversion & { version: AggregatedDiscoveryVersion } {
  return (
    convert !== undefined &&
    convert.group === naming.groups.apiDiscovery &&
    convert.kind === AGGREGATED_DISCOVERY_KIND &&
    (AGGREGATED_DISCOVERY_VERSIONS as readonly string[]).includes(convert.version)
  );
}

interface GVK {
  group: string;
  version: string;
  kind: string;
}

export interface APISubresourceDiscovery {
  subresource: string;
  responseKind?: GVK;
  verbs: string[];
}

export interface APIResourceDiscovery {
  resource: string;
  responseKind?: GVK;
  scope: 'Namespaced' | 'Cluster';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: APISubresourceDiscovery[];
}

export interface APIVersionDiscovery {
  version: string;
  resources?: APIResourceDiscovery[];
  freshness: 'Current' | 'Stale';
}

export interface APIGroupDiscovery {
  metadata: { name?: string; creationTimestamp: null };
  versions?: APIVersionDiscovery[];
}

function versionDiscovery(index: ResourceIndex, group: string, version: string): APIVersionDiscovery {
  const defs = [...index.resourcesOf(group, version)].sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
  const resources = defs.map((def): APIResourceDiscovery => {
    const r: APIResourceDiscovery = {
      resource: def.resource,
      responseKind: { group: '', version: '', kind: def.kind },
      scope: def.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: def.singular,
      verbs: [...verbsOf(def)],
    };
    if (def.shortNames?.length) r.shortNames = [...def.shortNames];
    if (def.categories?.length) r.categories = [...def.categories];
    const subs = subresourcesOf(def).map(
      (sub): APISubresourceDiscovery => ({
        subresource: sub.name,
        responseKind: sub.responseKind ? { ...sub.responseKind } : { group: '', version: '', kind: def.kind },
        verbs: [...sub.verbs],
      }),
    );
    if (subs.length) r.subresources = subs;
    return r;
  });
  const v: APIVersionDiscovery = { version, freshness: 'Current' };
  if (resources.length) v.resources = resources;
  return v;
}

/**
 * The list for `/api` (only the core group) or `/apis` (every named group), frozen: the handler
 * keeps it for as long as the index does not change, and a frozen document is encoded once per
 * format (codecs/encode-once.ts), not on every request (with 1,000 custom resource definitions
 * it is ~370 KB of JSON, ~10 ms to encode).
 */
export function aggregatedDiscovery(index: ResourceIndex, naming: Naming, root: 'api' | 'apis', version: AggregatedDiscoveryVersion) {
  const groups = index.groups().filter((g) => (root === 'api' ? g.name === '' : g.name !== ''));
  const items = groups.map((g): APIGroupDiscovery => {
    const metadata: APIGroupDiscovery['metadata'] = g.name ? { name: g.name, creationTimestamp: null } : { creationTimestamp: null };
    return { metadata, versions: g.versions.map((v) => versionDiscovery(index, g.name, v)) };
  });
  return deepFreeze({ kind: AGGREGATED_DISCOVERY_KIND, apiVersion: `${naming.groups.apiDiscovery}/${version}`, metadata: {}, items });
}

/** Upstream's Content-Type for a converted response: the media type with `;g=...;v=...;as=...`. */
export function aggregatedContentType(mediaType: string, naming: Naming, version: AggregatedDiscoveryVersion): string {
  return `${mediaType};g=${naming.groups.apiDiscovery};v=${version};as=${AGGREGATED_DISCOVERY_KIND}`;
}
