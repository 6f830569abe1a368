/**
 * The top-level kinds Keelson encodes, with the type that defines each. Groups are vendor-neutral
 * keys; the registry turns them into group names through the naming profile.
 */
import type { GroupKey, KindDef } from './types';

function kinds(group: GroupKey, version: string, pkg: string, names: readonly string[]): KindDef[] {
  return names.map((kind) => ({ group, version, kind, type: `${pkg}.${kind}` }));
}

/** Kinds served as resources (and their lists) or subresources, one group version each. */
export const RESOURCE_KINDS: readonly KindDef[] = [
  ...kinds('core', 'v1', 'core.v1', [
    'Namespace', 'NamespaceList', 'Pod', 'PodList', 'Secret', 'SecretList',
    'ConfigMap', 'ConfigMapList', 'ServiceAccount', 'ServiceAccountList',
  ]),
  ...kinds('apps', 'v1', 'apps.v1', ['ReplicaSet', 'ReplicaSetList']),
  ...kinds('autoscaling', 'v1', 'autoscaling.v1', ['Scale']),
  ...kinds('rbac', 'v1', 'rbac.v1', [
    'Role', 'RoleList', 'RoleBinding', 'RoleBindingList',
    'ClusterRole', 'ClusterRoleList', 'ClusterRoleBinding', 'ClusterRoleBindingList',
  ]),
  ...kinds('events', 'v1', 'events.v1', ['Event', 'EventList']),
  ...kinds('authentication', 'v1', 'authentication.v1', ['SelfSubjectReview', 'TokenRequest', 'TokenReview']),
  ...kinds('authorization', 'v1', 'authorization.v1', [
    'LocalSubjectAccessReview', 'SelfSubjectAccessReview', 'SelfSubjectRulesReview', 'SubjectAccessReview',
  ]),
];

/**
 * meta/v1 kinds upstream registers in the core `v1` version (they travel as `apiVersion: v1`:
 * errors, discovery documents, delete options, watch events).
 */
export const UNVERSIONED_META_KINDS: readonly KindDef[] = kinds('core', 'v1', 'meta.v1', [
  'Status', 'DeleteOptions', 'WatchEvent', 'APIVersions', 'APIGroup', 'APIGroupList', 'APIResourceList',
]);

/** meta/v1 kinds of the `meta.<vendor>/v1` group itself. */
export const META_GROUP_KINDS: readonly KindDef[] = kinds('meta', 'v1', 'meta.v1', [
  'PartialObjectMetadata', 'PartialObjectMetadataList', 'Status', 'DeleteOptions', 'WatchEvent',
]);

/**
 * Kinds upstream adds to every group version it serves (metav1.AddToGroupVersion): a
 * `DeleteOptions` body or a `WatchEvent` may carry any served apiVersion.
 */
export const PER_GROUP_VERSION_KINDS: ReadonlySet<string> = new Set(['DeleteOptions', 'WatchEvent']);
