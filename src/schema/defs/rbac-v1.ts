/**
 * rbac/v1 roles, bindings and their lists.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, listKind, ref, listOf, STRING } from '../dsl';

export const RBAC_V1 = definePackage('rbac.v1', [
  msg('Role', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('rules', 2, listOf(ref('PolicyRule')), { emitEmpty: true, listType: 'atomic' })], {
    typeMeta: true,
  }),
  listKind('RoleList', 'Role'),
  msg(
    'RoleBinding',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('subjects', 2, listOf(ref('Subject')), { listType: 'atomic' }),
      f('roleRef', 3, ref('RoleRef'), { emitEmpty: true, required: true }),
    ],
    { typeMeta: true },
  ),
  listKind('RoleBindingList', 'RoleBinding'),
  msg(
    'ClusterRole',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('rules', 2, listOf(ref('PolicyRule')), { emitEmpty: true, listType: 'atomic' }),
      f('aggregationRule', 3, ref('AggregationRule'), { pointer: true }),
    ],
    { typeMeta: true },
  ),
  listKind('ClusterRoleList', 'ClusterRole'),
  msg(
    'ClusterRoleBinding',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('subjects', 2, listOf(ref('Subject')), { listType: 'atomic' }),
      f('roleRef', 3, ref('RoleRef'), { emitEmpty: true, required: true }),
    ],
    { typeMeta: true },
  ),
  listKind('ClusterRoleBindingList', 'ClusterRoleBinding'),
  msg('PolicyRule', [
    f('verbs', 1, listOf(STRING), { emitEmpty: true, required: true, listType: 'atomic' }),
    f('apiGroups', 2, listOf(STRING), { listType: 'atomic' }),
    f('resources', 3, listOf(STRING), { listType: 'atomic' }),
    f('resourceNames', 4, listOf(STRING), { listType: 'atomic' }),
    f('nonResourceURLs', 5, listOf(STRING), { listType: 'atomic' }),
  ]),
  msg(
    'Subject',
    [
      f('kind', 1, STRING, { emitEmpty: true, required: true }),
      f('apiGroup', 2, STRING),
      f('name', 3, STRING, { emitEmpty: true, required: true }),
      f('namespace', 4, STRING),
    ],
    { structType: 'atomic' },
  ),
  msg(
    'RoleRef',
    [
      f('apiGroup', 1, STRING, { emitEmpty: true, required: true }),
      f('kind', 2, STRING, { emitEmpty: true, required: true }),
      f('name', 3, STRING, { emitEmpty: true, required: true }),
    ],
    { structType: 'atomic' },
  ),
  msg('AggregationRule', [f('clusterRoleSelectors', 1, listOf(ref('meta.v1.LabelSelector')), { listType: 'atomic' })]),
]);
