/**
 * rbac/v1 RoleBinding (SPEC "RoleBinding"): binds subjects to a Role in its namespace or to a
 * ClusterRole; `roleRef` is required and never changes.
 */
import { defineTyped } from './common';
import type { DefineResource } from './definition';
import { defaultBinding, RBAC_VERBS, RBAC_VERSION, validateBinding, validateRoleRefUnchanged, type RoleBindingLike } from './rbac-common';

export type RoleBinding = RoleBindingLike;

export const ROLE_BINDING_REF_KINDS = ['Role', 'ClusterRole'] as const;

export const defineRoleBindings: DefineResource = (naming) => {
  const rbac = naming.groups.rbac;
  return defineTyped<RoleBinding>({
    group: rbac,
    version: RBAC_VERSION,
    kind: 'RoleBinding',
    resource: 'rolebindings',
    singular: 'rolebinding',
    namespaced: true,
    verbs: RBAC_VERBS,
    nameRule: 'pathSegment',
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,

    defaults: (binding) => defaultBinding(binding, rbac),
    validate: (binding) => validateBinding(binding, true, rbac, ROLE_BINDING_REF_KINDS),
    validateUpdate: validateRoleRefUnchanged,
  });
};
