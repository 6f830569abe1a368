/**
 * Upstream's unaggregated discovery documents, built from the resource index: `/api`
 * (APIVersions), `/apis` (APIGroupList), `/apis/{group}` (APIGroup) and `/api/v1`,
 * `/apis/{group}/{version}` (APIResourceList, main resources and `resource/subresource`
 * entries, sorted by name as upstream's installer sorts its paths).
 */
import { createHash } from 'node:crypto';
import { type ResourceDefinition, subresourcesOf, verbsOf } from '../../core';
import type { ResourceIndex, ServedGroup } from '../resource-index';

export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

export interface APIGroup {
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}

export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

/** Upstream discovery.StorageVersionHash: base64 of the first 8 bytes of sha256("<group>/<version>/<kind>"). */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

export function groupVersionString(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

export function apiVersions(index: ResourceIndex, serverAddress: string) {
  return {
    kind: 'APIVersions',
    versions: index.group('')?.versions ?? [],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupDocument(group: ServedGroup): APIGroup {
  const versions = group.versions.map((version) => ({ groupVersion: groupVersionString(group.name, version), version }));
  return { name: group.name, versions, preferredVersion: versions[0] };
}

export function apiGroupList(index: ResourceIndex) {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: index
      .groups()
      .filter((g) => g.name !== '')
      .map(groupDocument),
  };
}

export function apiGroup(group: ServedGroup) {
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupDocument(group) };
}

/** The APIResource entries of one definition: the resource, then its subresources. */
export function apiResourcesOf(def: ResourceDefinition): APIResource[] {
  const main: APIResource = {
    name: def.resource,
    singularName: def.singular,
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: [...verbsOf(def)],
  };
  if (def.shortNames?.length) main.shortNames = [...def.shortNames];
  if (def.categories?.length) main.categories = [...def.categories];
  main.storageVersionHash = storageVersionHash(def.group, def.version, def.kind);
  const subs = subresourcesOf(def).map((sub): APIResource => {
    const rk = sub.responseKind;
    const kind = rk ? { group: rk.group, version: rk.version, kind: rk.kind } : { kind: def.kind };
    return { name: `${def.resource}/${sub.name}`, singularName: '', namespaced: def.namespaced, ...kind, verbs: [...sub.verbs] };
  });
  return [main, ...subs];
}

export function apiResourceList(index: ResourceIndex, group: string, version: string) {
  const resources = index
    .resourcesOf(group, version)
    .flatMap(apiResourcesOf)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const groupVersion = groupVersionString(group, version);
  // The core group's list carries no apiVersion upstream; named groups' lists do.
  return group ? { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources } : { kind: 'APIResourceList', groupVersion, resources };
}
