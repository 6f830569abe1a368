/**
 * policy/v1 PodDisruptionBudget, and the Eviction a pod's `eviction` subresource takes.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, listKind, ref, listOf, mapOf, STRING, INT32, INT64, TIME, INT_OR_STRING } from '../dsl';

export const POLICY_V1 = definePackage('policy.v1', [
  msg(
    'PodDisruptionBudget',
    [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('spec', 2, ref('PodDisruptionBudgetSpec')), f('status', 3, ref('PodDisruptionBudgetStatus'))],
    { typeMeta: true },
  ),
  listKind('PodDisruptionBudgetList', 'PodDisruptionBudget'),
  msg('Eviction', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('deleteOptions', 2, ref('meta.v1.DeleteOptions'), { pointer: true })], { typeMeta: true }),
  msg('PodDisruptionBudgetSpec', [
    f('minAvailable', 1, INT_OR_STRING, { pointer: true }),
    f('selector', 2, ref('meta.v1.LabelSelector'), { pointer: true, patchStrategy: 'replace' }),
    f('maxUnavailable', 3, INT_OR_STRING, { pointer: true }),
    f('unhealthyPodEvictionPolicy', 4, STRING, { pointer: true }),
  ]),
  msg('PodDisruptionBudgetStatus', [
    f('observedGeneration', 1, INT64),
    f('disruptedPods', 2, mapOf(TIME)),
    f('disruptionsAllowed', 3, INT32, { emitEmpty: true, required: true }),
    f('currentHealthy', 4, INT32, { emitEmpty: true, required: true }),
    f('desiredHealthy', 5, INT32, { emitEmpty: true, required: true }),
    f('expectedPods', 6, INT32, { emitEmpty: true, required: true }),
    f('conditions', 7, listOf(ref('meta.v1.Condition')), { listType: 'map', listMapKeys: ['type'], patchStrategy: 'merge', patchMergeKey: 'type' }),
  ]),
]);
