/**
 * scheduling/v1 PriorityClass: the priority a pod's `priorityClassName` resolves to.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, listKind, ref, STRING, INT32, BOOL } from '../dsl';

export const SCHEDULING_V1 = definePackage('scheduling.v1', [
  msg(
    'PriorityClass',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('value', 2, INT32, { emitEmpty: true, required: true }),
      f('globalDefault', 3, BOOL),
      f('description', 4, STRING),
      f('preemptionPolicy', 5, STRING, { pointer: true }),
    ],
    { typeMeta: true },
  ),
  listKind('PriorityClassList', 'PriorityClass'),
]);
