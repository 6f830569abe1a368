/**
 * Storage keys follow upstream's layout: `/registry/<resource>/<namespace>/<name>`
 * for namespaced objects, `/registry/<resource>/<name>` for cluster-scoped ones. Upstream
 * keys a few types under a group-specific prefix; Keelson keys its built-in types by resource
 * name only, which is unique among them. A custom resource is keyed under its group, as
 * upstream keys them (`/registry/<group>/<resource>/...`): two CustomResourceDefinitions may
 * name the same plural in different groups, and a group always holds a dot, which no built-in
 * resource name does.
 */
export const REGISTRY_ROOT = '/registry/';

/** The path segment(s) a type's keys live under: its resource, or `<group>/<resource>` for a custom resource. */
export function storedResource(def: { readonly group: string; readonly resource: string; readonly custom?: unknown }): string {
  return def.custom ? `${def.group}/${def.resource}` : def.resource;
}

/** The stored resource a key belongs to (storedResource's value), or undefined outside the registry. */
export function storedResourceOfKey(key: string): string | undefined {
  if (!key.startsWith(REGISTRY_ROOT)) return undefined;
  const end = key.indexOf('/', REGISTRY_ROOT.length);
  if (end < 0) return undefined;
  const first = key.slice(REGISTRY_ROOT.length, end);
  if (!first.includes('.')) return first;
  const second = key.indexOf('/', end + 1);
  return second < 0 ? undefined : key.slice(REGISTRY_ROOT.length, second);
}

export function objectKey(resource: string, namespace: string | undefined, name: string): string {
  return namespace ? `${REGISTRY_ROOT}${resource}/${namespace}/${name}` : `${REGISTRY_ROOT}${resource}/${name}`;
}

/** Prefix of every object of a resource, or of one namespace's objects. Always ends with `/`. */
export function collectionPrefix(resource: string, namespace?: string): string {
  return namespace ? `${REGISTRY_ROOT}${resource}/${namespace}/` : `${REGISTRY_ROOT}${resource}/`;
}
