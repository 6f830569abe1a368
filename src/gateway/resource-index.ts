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
  private readonly byGroupVersion = new Map<string, ResourceDefinition[]>();
  private readonly byResource = new ResourceMap<ResourceDefinition>();
  private readonly groupList: ServedGroup[] = [];
  private groupsByName?: Map<string, ServedGroup>;

  constructor(readonly definitions: readonly ResourceDefinition[]) {
    for (const def of definitions) {
      const gv = key(def.group, def.version);
      let list = this.byGroupVersion.get(gv);
      if (!list) {
        list = [];
        this.byGroupVersion.set(gv, list);
        let group = this.groupList.find((g) => g.name === def.group);
        if (!group) {
          group = { name: def.group, versions: [] };
          this.groupList.push(group);
        }
        group.versions.push(def.version);
      }
      list.push(def);
      this.byResource.set(def.group, def.version, def.resource, def);
    }
    // The core group first, then the named groups in definition order.
    this.groupList.sort((a, b) => (a.name === '' ? -1 : b.name === '' ? 1 : 0));
  }

  lookup(group: string, version: string, resource: string): ResourceDefinition | undefined {
    return this.byResource.get(group, version, resource);
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.byGroupVersion.has(key(group, version));
  }

  group(name: string): ServedGroup | undefined {
    this.groupsByName ??= new Map(this.groupList.map((g) => [g.name, g]));
    return this.groupsByName.get(name);
  }

  /** All served groups, the core group ('') first. */
  groups(): readonly ServedGroup[] {
    return this.groupList;
  }

  resourcesOf(group: string, version: string): readonly ResourceDefinition[] {
    return this.byGroupVersion.get(key(group, version)) ?? [];
  }
}
