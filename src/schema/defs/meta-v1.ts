/**
 * meta/v1: object and list metadata, Status, DeleteOptions, WatchEvent, Condition.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, ref, listOf, mapOf, STRING, BOOL, INT32, INT64, TIME, RAW_EXTENSION, FIELDS_V1 } from '../dsl';

export const META_V1 = definePackage('meta.v1', [
  msg('ObjectMeta', [
    f('name', 1, STRING),
    f('generateName', 2, STRING),
    f('namespace', 3, STRING),
    f('selfLink', 4, STRING),
    f('uid', 5, STRING),
    f('resourceVersion', 6, STRING),
    f('generation', 7, INT64),
    f('creationTimestamp', 8, TIME),
    f('deletionTimestamp', 9, TIME, { pointer: true }),
    f('deletionGracePeriodSeconds', 10, INT64, { pointer: true }),
    f('labels', 11, mapOf(STRING)),
    f('annotations', 12, mapOf(STRING)),
    f('ownerReferences', 13, listOf(ref('OwnerReference')), { listType: 'map', listMapKeys: ['uid'], patchStrategy: 'merge', patchMergeKey: 'uid' }),
    f('finalizers', 14, listOf(STRING), { listType: 'set', patchStrategy: 'merge' }),
    f('managedFields', 17, listOf(ref('ManagedFieldsEntry')), { listType: 'atomic' }),
  ]),
  msg('ListMeta', [f('selfLink', 1, STRING), f('resourceVersion', 2, STRING), f('continue', 3, STRING), f('remainingItemCount', 4, INT64, { pointer: true })]),
  msg(
    'OwnerReference',
    [
      f('apiVersion', 5, STRING, { emitEmpty: true, required: true }),
      f('kind', 1, STRING, { emitEmpty: true, required: true }),
      f('name', 3, STRING, { emitEmpty: true, required: true }),
      f('uid', 4, STRING, { emitEmpty: true, required: true }),
      f('controller', 6, BOOL, { pointer: true }),
      f('blockOwnerDeletion', 7, BOOL, { pointer: true }),
    ],
    { structType: 'atomic' },
  ),
  msg('ManagedFieldsEntry', [
    f('manager', 1, STRING),
    f('operation', 2, STRING),
    f('apiVersion', 3, STRING),
    f('time', 4, TIME, { pointer: true }),
    f('fieldsType', 6, STRING),
    f('fieldsV1', 7, FIELDS_V1, { pointer: true }),
    f('subresource', 8, STRING),
  ]),
  msg('LabelSelector', [f('matchLabels', 1, mapOf(STRING)), f('matchExpressions', 2, listOf(ref('LabelSelectorRequirement')), { listType: 'atomic' })], {
    structType: 'atomic',
  }),
  msg(
    'Status',
    [
      f('metadata', 1, ref('ListMeta')),
      f('status', 2, STRING),
      f('message', 3, STRING),
      f('reason', 4, STRING),
      f('details', 5, ref('StatusDetails'), { pointer: true, listType: 'atomic' }),
      f('code', 6, INT32),
    ],
    { typeMeta: true },
  ),
  msg(
    'DeleteOptions',
    [
      f('gracePeriodSeconds', 1, INT64, { pointer: true }),
      f('preconditions', 2, ref('Preconditions'), { pointer: true }),
      f('orphanDependents', 3, BOOL, { pointer: true }),
      f('propagationPolicy', 4, STRING, { pointer: true }),
      f('dryRun', 5, listOf(STRING), { listType: 'atomic' }),
      f('ignoreStoreReadErrorWithClusterBreakingPotential', 6, BOOL, { pointer: true }),
    ],
    { typeMeta: true },
  ),
  msg('WatchEvent', [f('type', 1, STRING, { emitEmpty: true, required: true }), f('object', 2, RAW_EXTENSION, { emitEmpty: true, required: true })]),
  msg('PartialObjectMetadata', [f('metadata', 1, ref('ObjectMeta'))], { typeMeta: true }),
  msg(
    'PartialObjectMetadataList',
    [f('metadata', 1, ref('ListMeta')), f('items', 2, listOf(ref('PartialObjectMetadata')), { emitEmpty: true, required: true })],
    { typeMeta: true },
  ),
  msg('FieldSelectorRequirement', [
    f('key', 1, STRING, { emitEmpty: true, required: true }),
    f('operator', 2, STRING, { emitEmpty: true, required: true }),
    f('values', 3, listOf(STRING), { listType: 'atomic' }),
  ]),
  msg('LabelSelectorRequirement', [
    f('key', 1, STRING, { emitEmpty: true, required: true }),
    f('operator', 2, STRING, { emitEmpty: true, required: true }),
    f('values', 3, listOf(STRING), { listType: 'atomic' }),
  ]),
  msg('StatusDetails', [
    f('name', 1, STRING),
    f('group', 2, STRING),
    f('kind', 3, STRING),
    f('uid', 6, STRING),
    f('causes', 4, listOf(ref('StatusCause')), { listType: 'atomic' }),
    f('retryAfterSeconds', 5, INT32),
  ]),
  msg('Preconditions', [f('uid', 1, STRING, { pointer: true }), f('resourceVersion', 2, STRING, { pointer: true })]),
  // metav1.Condition: the condition type newer APIs share (ValidatingAdmissionPolicy status).
  msg('Condition', [
    f('type', 1, STRING, { emitEmpty: true, required: true }),
    f('status', 2, STRING, { emitEmpty: true, required: true }),
    f('observedGeneration', 3, INT64),
    f('lastTransitionTime', 4, TIME, { emitEmpty: true, required: true }),
    f('reason', 5, STRING, { emitEmpty: true, required: true }),
    f('message', 6, STRING, { emitEmpty: true, required: true }),
  ]),
  msg('StatusCause', [f('reason', 1, STRING), f('message', 2, STRING), f('field', 3, STRING)]),
]);
