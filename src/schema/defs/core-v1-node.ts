/**
 * core/v1 Node and Binding.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, listKind, ref, listOf, mapOf, STRING, BOOL, INT32, INT64, TIME, QUANTITY } from '../dsl';

export const CORE_V1_NODE = definePackage('core.v1', [
  msg('Node', [
    f('metadata', 1, ref('meta.v1.ObjectMeta')),
    f('spec', 2, ref('NodeSpec')),
    f('status', 3, ref('NodeStatus')),
  ], { typeMeta: true }),
  listKind('NodeList', 'Node'),
  msg('NodeSpec', [
    f('podCIDR', 1, STRING),
    f('podCIDRs', 7, listOf(STRING), { listType: 'set', patchStrategy: 'merge' }),
    f('providerID', 3, STRING),
    f('unschedulable', 4, BOOL),
    f('taints', 5, listOf(ref('Taint')), { listType: 'atomic' }),
    f('configSource', 6, ref('NodeConfigSource'), { pointer: true }),
    f('externalID', 2, STRING),
  ]),
  msg('Taint', [
    f('key', 1, STRING, { emitEmpty: true, required: true }),
    f('value', 2, STRING),
    f('effect', 3, STRING, { emitEmpty: true, required: true }),
    f('timeAdded', 4, TIME, { pointer: true }),
  ]),
  msg('NodeConfigSource', [
    f('configMap', 2, ref('ConfigMapNodeConfigSource'), { pointer: true }),
  ]),
  msg('ConfigMapNodeConfigSource', [
    f('namespace', 1, STRING, { emitEmpty: true, required: true }),
    f('name', 2, STRING, { emitEmpty: true, required: true }),
    f('uid', 3, STRING),
    f('resourceVersion', 4, STRING),
    f('kubeletConfigKey', 5, STRING, { emitEmpty: true, required: true }),
  ]),
  msg('NodeStatus', [
    f('capacity', 1, mapOf(QUANTITY)),
    f('allocatable', 2, mapOf(QUANTITY)),
    f('phase', 3, STRING),
    f('conditions', 4, listOf(ref('NodeCondition')), { listType: 'map', listMapKeys: ['type'], patchStrategy: 'merge', patchMergeKey: 'type' }),
    f('addresses', 5, listOf(ref('NodeAddress')), { listType: 'map', listMapKeys: ['type'], patchStrategy: 'merge', patchMergeKey: 'type' }),
    f('daemonEndpoints', 6, ref('NodeDaemonEndpoints')),
    f('nodeInfo', 7, ref('NodeSystemInfo')),
    f('images', 8, listOf(ref('ContainerImage')), { listType: 'atomic' }),
    f('volumesInUse', 9, listOf(STRING), { listType: 'atomic' }),
    f('volumesAttached', 10, listOf(ref('AttachedVolume')), { listType: 'atomic' }),
    f('config', 11, ref('NodeConfigStatus'), { pointer: true }),
    f('runtimeHandlers', 12, listOf(ref('NodeRuntimeHandler')), { listType: 'atomic' }),
    f('features', 13, ref('NodeFeatures'), { pointer: true }),
  ]),
  msg('NodeCondition', [
    f('type', 1, STRING, { emitEmpty: true, required: true }),
    f('status', 2, STRING, { emitEmpty: true, required: true }),
    f('lastHeartbeatTime', 3, TIME),
    f('lastTransitionTime', 4, TIME),
    f('reason', 5, STRING),
    f('message', 6, STRING),
  ]),
  msg('NodeAddress', [
    f('type', 1, STRING, { emitEmpty: true, required: true }),
    f('address', 2, STRING, { emitEmpty: true, required: true }),
  ]),
  msg('NodeDaemonEndpoints', [
    f('kubeletEndpoint', 1, ref('DaemonEndpoint')),
  ]),
  msg('DaemonEndpoint', [
    f('Port', 1, INT32, { emitEmpty: true, required: true }),
  ]),
  msg('NodeSystemInfo', [
    f('machineID', 1, STRING, { emitEmpty: true, required: true }),
    f('systemUUID', 2, STRING, { emitEmpty: true, required: true }),
    f('bootID', 3, STRING, { emitEmpty: true, required: true }),
    f('kernelVersion', 4, STRING, { emitEmpty: true, required: true }),
    f('osImage', 5, STRING, { emitEmpty: true, required: true }),
    f('containerRuntimeVersion', 6, STRING, { emitEmpty: true, required: true }),
    f('kubeletVersion', 7, STRING, { emitEmpty: true, required: true }),
    f('kubeProxyVersion', 8, STRING, { emitEmpty: true, required: true }),
    f('operatingSystem', 9, STRING, { emitEmpty: true, required: true }),
    f('architecture', 10, STRING, { emitEmpty: true, required: true }),
  ]),
  msg('ContainerImage', [
    f('names', 1, listOf(STRING), { emitEmpty: true, listType: 'atomic' }),
    f('sizeBytes', 2, INT64),
  ]),
  msg('AttachedVolume', [
    f('name', 1, STRING, { emitEmpty: true, required: true }),
    f('devicePath', 2, STRING, { emitEmpty: true, required: true }),
  ]),
  msg('NodeConfigStatus', [
    f('assigned', 1, ref('NodeConfigSource'), { pointer: true }),
    f('active', 2, ref('NodeConfigSource'), { pointer: true }),
    f('lastKnownGood', 3, ref('NodeConfigSource'), { pointer: true }),
    f('error', 4, STRING),
  ]),
  msg('NodeRuntimeHandler', [
    f('name', 1, STRING, { emitEmpty: true }),
    f('features', 2, ref('NodeRuntimeHandlerFeatures'), { pointer: true }),
  ]),
  msg('NodeRuntimeHandlerFeatures', [
    f('recursiveReadOnlyMounts', 1, BOOL, { pointer: true }),
    f('userNamespaces', 2, BOOL, { pointer: true }),
  ]),
  msg('NodeFeatures', [
    f('supplementalGroupsPolicy', 1, BOOL, { pointer: true }),
  ]),
  msg('Binding', [
    f('metadata', 1, ref('meta.v1.ObjectMeta')),
    f('target', 2, ref('ObjectReference'), { emitEmpty: true, required: true }),
  ], { typeMeta: true }),
]);
