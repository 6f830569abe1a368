/**
 * coordination/v1 Lease: node heartbeats and leader election.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, listKind, ref, STRING, INT32, MICRO_TIME } from '../dsl';

export const COORDINATION_V1 = definePackage('coordination.v1', [
  msg('Lease', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('spec', 2, ref('LeaseSpec'))], { typeMeta: true }),
  listKind('LeaseList', 'Lease'),
  msg('LeaseSpec', [
    f('holderIdentity', 1, STRING, { pointer: true }),
    f('leaseDurationSeconds', 2, INT32, { pointer: true }),
    f('acquireTime', 3, MICRO_TIME, { pointer: true }),
    f('renewTime', 4, MICRO_TIME, { pointer: true }),
    f('leaseTransitions', 5, INT32, { pointer: true }),
    f('strategy', 6, STRING, { pointer: true }),
    f('preferredHolder', 7, STRING, { pointer: true }),
  ]),
]);
