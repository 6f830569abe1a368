/**
 * The top-level kinds Keelson encodes, with the type that defines each. Groups are vendor-neutral
 * keys; the registry turns them into group names through the naming profile.
 */
import type { GroupKey, KindDef } from './types';

function kinds(group: GroupKey, version: string, pkg: string, names: readonly string[]): KindDef[] {
  return names.map((kind) => ({ group, version, kind, type: `${pkg}.${kind}` }));
}

/**
 * Kinds served as resources (and their lists), subresources and reviews: every type that embeds
 * TypeMeta outside the meta package, named `<group key>.<version>.<Kind>`. A type declared in
 * the schema with `typeMeta` is a kind; there is no list to keep in step.
 */
export function resourceKindsOf(types: Iterable<{ readonly name: string; readonly typeMeta: boolean }>): KindDef[] {
  const out: KindDef[] = [];
  for (const t of types) {
    if (!t.typeMeta) continue;
    const [pkg, version, kind] = t.name.split('.') as [GroupKey | 'meta', string, string];
    if (pkg === 'meta') continue;
    out.push({ group: pkg, version, kind, type: t.name });
  }
  return out;
}

/**
 * meta/v1 kinds upstream registers in the core `v1` version (they travel as `apiVersion: v1`:
 * errors, discovery documents, delete options, watch events).
 */
export const UNVERSIONED_META_KINDS: readonly KindDef[] = kinds('core', 'v1', 'meta.v1', [
  'Status',
  'DeleteOptions',
  'WatchEvent',
  'APIVersions',
  'APIGroup',
  'APIGroupList',
  'APIResourceList',
]);

/** meta/v1 kinds of the `meta.<vendor>/v1` group itself. */
export const META_GROUP_KINDS: readonly KindDef[] = kinds('meta', 'v1', 'meta.v1', [
  'PartialObjectMetadata',
  'PartialObjectMetadataList',
  'Status',
  'DeleteOptions',
  'WatchEvent',
]);

/**
 * Kinds upstream adds to every group version it serves (metav1.AddToGroupVersion): a
 * `DeleteOptions` body or a `WatchEvent` may carry any served apiVersion.
 */
export const PER_GROUP_VERSION_KINDS: ReadonlySet<string> = new Set(['DeleteOptions', 'WatchEvent']);
