/**
 * What the gateway serves, derived from the resource definitions: which groups, versions,
 * resources and subresources exist, and which verbs each one takes. Discovery and routing both
 * read this one index, so they cannot disagree.
 */
import type { ResourceDefinition } from '../core';
import { ResourceMap } from '../util/resource-map';

export interface ServedGroup {
  /** '' for the core group. */
  name: string;
  /** In order of preference. */
  versions: string[];
}

function key(group: string, version: string): string {
  return `${group}/${version}`;
}

export class ResourceIndex {
  private byGroupVersion = new Map<string, ResourceDefinition[]>();
  private byResource = new ResourceMap<ResourceDefinition>();
  private groupList: ServedGroup[] = [];
  private groupsByName = new Map<string, ServedGroup>();
  private served: readonly ResourceDefinition[] = [];
  /** Types given by `replace` and not indexed yet. */
  private pending?: readonly ResourceDefinition[];
  /** Grows by one whenever the served types change (custom resources come and go): what was derived from the index is derived again. */
  generation = 0;

  constructor(definitions: readonly ResourceDefinition[]) {
    this.replace(definitions);
  }

  get definitions(): readonly ResourceDefinition[] {
    this.sync();
    return this.served;
  }

  /**
   * Index another set of types (the catalog changed), on first use: definitions installed one
   * after another (1,000 CRDs applied at once) change the catalog once each, and indexing every
   * served type on each change, with no request in between to read it, was quadratic.
   */
  replace(definitions: readonly ResourceDefinition[]): void {
    this.pending = definitions;
    this.generation++;
  }

  private sync(): void {
    const definitions = this.pending;
    if (definitions === undefined) return;
    this.pending = undefined;
    const groupsByName = new Map<string, ServedGroup>();
    const byGroupVersion = new Map<string, ResourceDefinition[]>();
    const byResource = new ResourceMap<ResourceDefinition>();
    const groupList: ServedGroup[] = [];
    const custom = new Set<string>();
    for (const def of definitions) {
      const gv = key(def.group, def.version);
      let list = byGroupVersion.get(gv);
      if (!list) {
        list = [];
        byGroupVersion.set(gv, list);
        let group = groupsByName.get(def.group);
        if (!group) {
          group = { name: def.group, versions: [] };
          groupList.push(group);
          groupsByName.set(def.group, group);
        }
        group.versions.push(def.version);
      }
      if (def.custom) custom.add(def.group);
      list.push(def);
      byResource.set(def.group, def.version, def.resource, def);
    }
    // The core group first, then the built-in groups in definition order, then the custom
    // resources' groups by name (upstream's aggregator puts them after the built-in ones, all
    // of equal priority), their versions in Kubernetes' version order.
    const builtin = groupList.filter((g) => !custom.has(g.name));
    const customGroups = groupList.filter((g) => custom.has(g.name)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const g of customGroups) g.versions.sort(compareKubeVersions);
    builtin.sort((a, b) => (a.name === '' ? -1 : b.name === '' ? 1 : 0));
    this.byGroupVersion = byGroupVersion;
    this.byResource = byResource;
    this.groupList = [...builtin, ...customGroups];
    this.groupsByName = groupsByName;
    this.served = definitions;
  }

  lookup(group: string, version: string, resource: string): ResourceDefinition | undefined {
    this.sync();
    return this.byResource.get(group, version, resource);
  }

  hasGroupVersion(group: string, version: string): boolean {
    this.sync();
    return this.byGroupVersion.has(key(group, version));
  }

  group(name: string): ServedGroup | undefined {
    this.sync();
    return this.groupsByName.get(name);
  }

  /** All served groups, the core group ('') first. */
  groups(): readonly ServedGroup[] {
    this.sync();
    return this.groupList;
  }

  resourcesOf(group: string, version: string): readonly ResourceDefinition[] {
    this.sync();
    return this.byGroupVersion.get(key(group, version)) ?? [];
  }
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/**
 * Kubernetes' version priority (upstream's CompareKubeAwareVersionStrings), highest first: GA
 * before beta before alpha, larger numbers first; other names after those, by name.
 */
export function compareKubeVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (!ma || !mb) return ma ? -1 : mb ? 1 : a < b ? -1 : a > b ? 1 : 0;
  const rank = (m: RegExpExecArray) => (m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0);
  if (rank(ma) !== rank(mb)) return rank(mb) - rank(ma);
  if (ma[1] !== mb[1]) return Number(mb[1]) - Number(ma[1]);
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}
