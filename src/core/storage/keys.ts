/**
 * Storage keys follow upstream's layout: `/registry/<resource>/<namespace>/<name>`
 * for namespaced objects, `/registry/<resource>/<name>` for cluster-scoped ones. Upstream
 * keys a few types under a group-specific prefix; Keelson keys by resource name only, which
 * is unique among the types it serves.
 */
export const REGISTRY_ROOT = '/registry/';

export function objectKey(resource: string, namespace: string | undefined, name: string): string {
  return namespace ? `${REGISTRY_ROOT}${resource}/${namespace}/${name}` : `${REGISTRY_ROOT}${resource}/${name}`;
}

/** Prefix of every object of a resource, or of one namespace's objects. Always ends with `/`. */
export function collectionPrefix(resource: string, namespace?: string): string {
  return namespace ? `${REGISTRY_ROOT}${resource}/${namespace}/` : `${REGISTRY_ROOT}${resource}/`;
}
