/**
 * autoscaling/v1 Scale (the /scale subresource).
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, ref, STRING, INT32 } from '../dsl';

export const AUTOSCALING_V1 = definePackage('autoscaling.v1', [
  msg('Scale', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('spec', 2, ref('ScaleSpec')), f('status', 3, ref('ScaleStatus'))], { typeMeta: true }),
  msg('ScaleSpec', [f('replicas', 1, INT32)]),
  msg('ScaleStatus', [f('replicas', 1, INT32, { emitEmpty: true, required: true }), f('selector', 2, STRING)]),
]);
