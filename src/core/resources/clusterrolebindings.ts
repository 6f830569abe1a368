/**
 * rbac/v1 ClusterRoleBinding: grants a ClusterRole cluster-wide; service-account subjects must
 * name their namespace; `roleRef` never changes.
 */
import { defineTyped } from './common';
import type { DefineResource } from './definition';
import { defaultBinding, RBAC_VERBS, RBAC_VERSION, validateBinding, validateRoleRefUnchanged, type RoleBindingLike } from './rbac-common';

export type ClusterRoleBinding = RoleBindingLike;

export const CLUSTER_ROLE_BINDING_REF_KINDS = ['ClusterRole'] as const;

export const defineClusterRoleBindings: DefineResource = (naming) => {
  const rbac = naming.groups.rbac;
  return defineTyped<ClusterRoleBinding>({
    group: rbac,
    version: RBAC_VERSION,
    kind: 'ClusterRoleBinding',
    resource: 'clusterrolebindings',
    singular: 'clusterrolebinding',
    namespaced: false,
    verbs: RBAC_VERBS,
    nameRule: 'pathSegment',
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,

    defaults: (binding) => defaultBinding(binding, rbac),
    validate: (binding) => validateBinding(binding, false, rbac, CLUSTER_ROLE_BINDING_REF_KINDS),
    validateUpdate: validateRoleRefUnchanged,
  });
};
