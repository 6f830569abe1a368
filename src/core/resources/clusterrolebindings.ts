/**
 * rbac/v1 ClusterRoleBinding: grants a ClusterRole cluster-wide; service-account subjects must
 * name their namespace; `roleRef` never changes.
 */
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, subjectsStrings, type TableDefinition } from '../table';
import { defineTyped } from './common';
import type { DefineResource } from './definition';
import { defaultBinding, RBAC_VERBS, RBAC_VERSION, validateBinding, validateRoleRefUnchanged, type RoleBindingLike } from './rbac-common';

export type ClusterRoleBinding = RoleBindingLike;

export const CLUSTER_ROLE_BINDING_REF_KINDS = ['ClusterRole'] as const;

/** upstream's ClusterRoleBinding printer. */
const CLUSTER_ROLE_BINDING_TABLE: TableDefinition<ClusterRoleBinding> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column(
      'Role',
      'string',
      'RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.',
    ),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
    column('Users', 'string', 'Users in the clusterRoleBinding', { priority: 1 }),
    column('Groups', 'string', 'Groups in the clusterRoleBinding', { priority: 1 }),
    column('ServiceAccounts', 'string', 'ServiceAccounts in the clusterRoleBinding', { priority: 1 }),
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
    table: CLUSTER_ROLE_BINDING_TABLE,
  });
};
