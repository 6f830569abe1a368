/**
 * meta/v1 discovery documents: APIVersions, APIGroup(List), APIResourceList.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, ref, listOf, wrappedListOf, STRING, BOOL } from '../dsl';

export const META_V1_DISCOVERY = definePackage('meta.v1', [
  msg(
    'APIGroup',
    [
      f('name', 1, STRING, { emitEmpty: true, required: true }),
      f('versions', 2, listOf(ref('GroupVersionForDiscovery')), { emitEmpty: true, required: true, listType: 'atomic' }),
      f('preferredVersion', 3, ref('GroupVersionForDiscovery')),
      f('serverAddressByClientCIDRs', 4, listOf(ref('ServerAddressByClientCIDR')), { listType: 'atomic' }),
    ],
    { typeMeta: true },
  ),
  msg('APIGroupList', [f('groups', 1, listOf(ref('APIGroup')), { emitEmpty: true, required: true, listType: 'atomic' })], { typeMeta: true }),
  msg(
    'APIVersions',
    [
      f('versions', 1, listOf(STRING), { emitEmpty: true, required: true, listType: 'atomic' }),
      f('serverAddressByClientCIDRs', 2, listOf(ref('ServerAddressByClientCIDR')), { emitEmpty: true, required: true, listType: 'atomic' }),
    ],
    { typeMeta: true },
  ),
  msg(
    'APIResourceList',
    [
      f('groupVersion', 1, STRING, { emitEmpty: true, required: true }),
      f('resources', 2, listOf(ref('APIResource')), { emitEmpty: true, required: true, listType: 'atomic' }),
    ],
    { typeMeta: true },
  ),
  msg('GroupVersionForDiscovery', [
    f('groupVersion', 1, STRING, { emitEmpty: true, required: true }),
    f('version', 2, STRING, { emitEmpty: true, required: true }),
  ]),
  msg('ServerAddressByClientCIDR', [
    f('clientCIDR', 1, STRING, { emitEmpty: true, required: true }),
    f('serverAddress', 2, STRING, { emitEmpty: true, required: true }),
  ]),
  msg('APIResource', [
    f('name', 1, STRING, { emitEmpty: true, required: true }),
    f('singularName', 6, STRING, { emitEmpty: true, required: true }),
    f('namespaced', 2, BOOL, { emitEmpty: true, required: true }),
    f('group', 8, STRING),
    f('version', 9, STRING),
    f('kind', 3, STRING, { emitEmpty: true, required: true }),
    f('verbs', 4, wrappedListOf(STRING), { emitEmpty: true, required: true }),
    f('shortNames', 5, listOf(STRING), { listType: 'atomic' }),
    f('categories', 7, listOf(STRING), { listType: 'atomic' }),
    f('storageVersionHash', 10, STRING),
  ]),
]);
