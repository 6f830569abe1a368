/**
 * rbac/v1 RoleBinding (docs/API.md, "RBAC kinds"): binds subjects to a Role in its namespace or to a
 * ClusterRole; `roleRef` is required and never changes.
 */
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, subjectsStrings, type TableDefinition } from '../table';
import { defineTyped } from './common';
import type { DefineResource } from './definition';
import { defaultBinding, RBAC_VERBS, RBAC_VERSION, validateBinding, validateRoleRefUnchanged, type RoleBindingLike } from './rbac-common';

export type RoleBinding = RoleBindingLike;

export const ROLE_BINDING_REF_KINDS = ['Role', 'ClusterRole'] as const;

/** upstream's RoleBinding printer. */
const ROLE_BINDING_TABLE: TableDefinition<RoleBinding> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column(
      'Role',
      'string',
      'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.',
    ),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
    column('Users', 'string', 'Users in the roleBinding', { priority: 1 }),
    column('Groups', 'string', 'Groups in the roleBinding', { priority: 1 }),
    column('ServiceAccounts', 'string', 'ServiceAccounts in the roleBinding', { priority: 1 }),
  ],
  row(binding, { now }) {
    const { users, groups, serviceAccounts } = subjectsStrings(binding.subjects);
    const roleRef = `${binding.roleRef?.kind ?? ''}/${binding.roleRef?.name ?? ''}`;
    return {
      cells: [
        binding.metadata?.name ?? '',
        roleRef,
        since(binding.metadata?.creationTimestamp, now),
        users.join(', '),
        groups.join(', '),
        serviceAccounts.join(', '),
      ],
    };
  },
};

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
    table: ROLE_BINDING_TABLE,
  });
};
