/**
 * core/v1 Namespace, Secret, ConfigMap, ServiceAccount, Event and the references they share.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, listKind, ref, listOf, mapOf, STRING, BOOL, BYTES, INT32, TIME, MICRO_TIME } from '../dsl';

export const CORE_V1_OBJECTS = definePackage('core.v1', [
  msg('Namespace', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('spec', 2, ref('NamespaceSpec')), f('status', 3, ref('NamespaceStatus'))], {
    typeMeta: true,
  }),
  listKind('NamespaceList', 'Namespace'),
  msg(
    'Secret',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('immutable', 5, BOOL, { pointer: true }),
      f('data', 2, mapOf(BYTES)),
      f('stringData', 4, mapOf(STRING)),
      f('type', 3, STRING),
    ],
    { typeMeta: true },
  ),
  listKind('SecretList', 'Secret'),
  msg(
    'ConfigMap',
    [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('immutable', 4, BOOL, { pointer: true }), f('data', 2, mapOf(STRING)), f('binaryData', 3, mapOf(BYTES))],
    { typeMeta: true },
  ),
  listKind('ConfigMapList', 'ConfigMap'),
  msg(
    'ServiceAccount',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('secrets', 2, listOf(ref('ObjectReference')), { listType: 'map', listMapKeys: ['name'], patchStrategy: 'merge', patchMergeKey: 'name' }),
      f('imagePullSecrets', 3, listOf(ref('LocalObjectReference')), { listType: 'atomic' }),
      f('automountServiceAccountToken', 4, BOOL, { pointer: true }),
    ],
    { typeMeta: true },
  ),
  listKind('ServiceAccountList', 'ServiceAccount'),
  // The events group's Event is the same object, kept in the store once (core/resources/events.ts).
  msg(
    'Event',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta'), { emitEmpty: true, required: true }),
      f('involvedObject', 2, ref('ObjectReference'), { emitEmpty: true, required: true }),
      f('reason', 3, STRING),
      f('message', 4, STRING),
      f('source', 5, ref('EventSource')),
      f('firstTimestamp', 6, TIME),
      f('lastTimestamp', 7, TIME),
      f('count', 8, INT32),
      f('type', 9, STRING),
      f('eventTime', 10, MICRO_TIME),
      f('series', 11, ref('EventSeries'), { pointer: true }),
      f('action', 12, STRING),
      f('related', 13, ref('ObjectReference'), { pointer: true }),
      f('reportingComponent', 14, STRING, { emitEmpty: true }),
      f('reportingInstance', 15, STRING, { emitEmpty: true }),
    ],
    { typeMeta: true },
  ),
  listKind('EventList', 'Event'),
  msg('EventSeries', [f('count', 1, INT32), f('lastObservedTime', 2, MICRO_TIME)]),
  msg(
    'ObjectReference',
    [
      f('kind', 1, STRING),
      f('namespace', 2, STRING),
      f('name', 3, STRING),
      f('uid', 4, STRING),
      f('apiVersion', 5, STRING),
      f('resourceVersion', 6, STRING),
      f('fieldPath', 7, STRING),
    ],
    { structType: 'atomic' },
  ),
  msg('LocalObjectReference', [f('name', 1, STRING)], { structType: 'atomic' }),
  msg('EventSource', [f('component', 1, STRING), f('host', 2, STRING)]),
  msg('NamespaceSpec', [f('finalizers', 1, listOf(STRING), { listType: 'atomic' })]),
  msg('NamespaceStatus', [
    f('phase', 1, STRING),
    f('conditions', 2, listOf(ref('NamespaceCondition')), { listType: 'map', listMapKeys: ['type'], patchStrategy: 'merge', patchMergeKey: 'type' }),
  ]),
  msg('NamespaceCondition', [
    f('type', 1, STRING, { emitEmpty: true, required: true }),
    f('status', 2, STRING, { emitEmpty: true, required: true }),
    f('lastTransitionTime', 4, TIME),
    f('reason', 5, STRING),
    f('message', 6, STRING),
  ]),
]);
