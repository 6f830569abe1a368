/**
 * apps/v1 ReplicaSet.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, listKind, ref, listOf, STRING, INT32, INT64, TIME } from '../dsl';

export const APPS_V1 = definePackage('apps.v1', [
  msg('ReplicaSet', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('spec', 2, ref('ReplicaSetSpec')), f('status', 3, ref('ReplicaSetStatus'))], {
    typeMeta: true,
  }),
  listKind('ReplicaSetList', 'ReplicaSet'),
  msg('ReplicaSetSpec', [
    f('replicas', 1, INT32, { pointer: true }),
    f('minReadySeconds', 4, INT32),
    f('selector', 2, ref('meta.v1.LabelSelector'), { pointer: true, emitEmpty: true, required: true }),
    f('template', 3, ref('core.v1.PodTemplateSpec')),
  ]),
  msg('ReplicaSetStatus', [
    f('replicas', 1, INT32, { emitEmpty: true, required: true }),
    f('fullyLabeledReplicas', 2, INT32),
    f('readyReplicas', 4, INT32),
    f('availableReplicas', 5, INT32),
    f('observedGeneration', 3, INT64),
    f('conditions', 6, listOf(ref('ReplicaSetCondition')), { listType: 'map', listMapKeys: ['type'], patchStrategy: 'merge', patchMergeKey: 'type' }),
  ]),
  msg('ReplicaSetCondition', [
    f('type', 1, STRING, { emitEmpty: true, required: true }),
    f('status', 2, STRING, { emitEmpty: true, required: true }),
    f('lastTransitionTime', 3, TIME),
    f('reason', 4, STRING),
    f('message', 5, STRING),
  ]),
]);
