/**
 * discovery/v1 EndpointSlice: a Service's endpoints in slices of up to 1000, kept by the
 * endpointslice controller (and the API server's endpoint reconciler for `kubernetes`).
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, listKind, ref, listOf, mapOf, STRING, INT32, BOOL } from '../dsl';

export const DISCOVERY_V1 = definePackage('discovery.v1', [
  msg(
    'EndpointSlice',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('addressType', 4, STRING, { emitEmpty: true, required: true }),
      f('endpoints', 2, listOf(ref('Endpoint')), { emitEmpty: true, required: true, listType: 'atomic' }),
      f('ports', 3, listOf(ref('EndpointPort')), { emitEmpty: true, listType: 'atomic' }),
    ],
    { typeMeta: true },
  ),
  listKind('EndpointSliceList', 'EndpointSlice'),
  msg('Endpoint', [
    f('addresses', 1, listOf(STRING), { emitEmpty: true, required: true, listType: 'set' }),
    f('conditions', 2, ref('EndpointConditions')),
    f('hostname', 3, STRING, { pointer: true }),
    f('targetRef', 4, ref('core.v1.ObjectReference'), { pointer: true }),
    f('deprecatedTopology', 5, mapOf(STRING)),
    f('nodeName', 6, STRING, { pointer: true }),
    f('zone', 7, STRING, { pointer: true }),
    f('hints', 8, ref('EndpointHints'), { pointer: true }),
  ]),
  msg('EndpointConditions', [f('ready', 1, BOOL, { pointer: true }), f('serving', 2, BOOL, { pointer: true }), f('terminating', 3, BOOL, { pointer: true })]),
  msg('EndpointHints', [f('forZones', 1, listOf(ref('ForZone')), { listType: 'atomic' })]),
  msg('ForZone', [f('name', 1, STRING, { emitEmpty: true, required: true })]),
  msg(
    'EndpointPort',
    [
      f('name', 1, STRING, { pointer: true }),
      f('protocol', 2, STRING, { pointer: true }),
      f('port', 3, INT32, { pointer: true }),
      f('appProtocol', 4, STRING, { pointer: true }),
    ],
    { structType: 'atomic' },
  ),
]);
