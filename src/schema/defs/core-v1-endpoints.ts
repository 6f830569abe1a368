/**
 * core/v1 Endpoints: the addresses behind a Service, kept by the endpoints controller (and by the
 * API server's endpoint reconciler for the `kubernetes` Service).
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, listKind, ref, listOf, STRING, INT32 } from '../dsl';

export const CORE_V1_ENDPOINTS = definePackage('core.v1', [
  msg('Endpoints', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('subsets', 2, listOf(ref('EndpointSubset')), { listType: 'atomic' })], {
    typeMeta: true,
  }),
  listKind('EndpointsList', 'Endpoints'),
  msg('EndpointSubset', [
    f('addresses', 1, listOf(ref('EndpointAddress')), { listType: 'atomic' }),
    f('notReadyAddresses', 2, listOf(ref('EndpointAddress')), { listType: 'atomic' }),
    f('ports', 3, listOf(ref('EndpointPort')), { listType: 'atomic' }),
  ]),
  msg(
    'EndpointAddress',
    [
      f('ip', 1, STRING, { emitEmpty: true, required: true }),
      f('hostname', 3, STRING),
      f('nodeName', 4, STRING, { pointer: true }),
      f('targetRef', 2, ref('ObjectReference'), { pointer: true }),
    ],
    { structType: 'atomic' },
  ),
  msg(
    'EndpointPort',
    [f('name', 1, STRING), f('port', 2, INT32, { emitEmpty: true, required: true }), f('protocol', 3, STRING), f('appProtocol', 4, STRING, { pointer: true })],
    { structType: 'atomic' },
  ),
]);
