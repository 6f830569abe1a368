/**
 * A map keyed by group, version and resource, looked up without building a key string: the
 * gateway and the core each find a request's type this way, and joining the three parts (then
 * hashing the joined string) was a measurable part of a cached GET.
 */
export class ResourceMap<T> {
  private readonly groups = new Map<string, Map<string, Map<string, T>>>();

  get(group: string, version: string, resource: string): T | undefined {
    return this.groups.get(group)?.get(version)?.get(resource);
  }

  set(group: string, version: string, resource: string, value: T): void {
    let versions = this.groups.get(group);
    if (!versions) this.groups.set(group, (versions = new Map()));
    let resources = versions.get(version);
    if (!resources) versions.set(version, (resources = new Map()));
    resources.set(resource, value);
  }

  delete(group: string, version: string, resource: string): void {
    this.groups.get(group)?.get(version)?.delete(resource);
  }
}
