/**
 * core/v1 PodStatus and container statuses.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, ref, listOf, mapOf, STRING, BOOL, INT32, INT64, TIME, QUANTITY } from '../dsl';

export const CORE_V1_POD_STATUS = definePackage('core.v1', [
  msg('PodStatus', [
    f('phase', 1, STRING),
    f('conditions', 2, listOf(ref('PodCondition')), { listType: 'map', listMapKeys: ['type'], patchStrategy: 'merge', patchMergeKey: 'type' }),
    f('message', 3, STRING),
    f('reason', 4, STRING),
    f('nominatedNodeName', 11, STRING),
    f('hostIP', 5, STRING),
    f('hostIPs', 16, listOf(ref('HostIP')), { listType: 'atomic', patchStrategy: 'merge', patchMergeKey: 'ip' }),
    f('podIP', 6, STRING),
    f('podIPs', 12, listOf(ref('PodIP')), { listType: 'map', listMapKeys: ['ip'], patchStrategy: 'merge', patchMergeKey: 'ip' }),
    f('startTime', 7, TIME, { pointer: true }),
    f('initContainerStatuses', 10, listOf(ref('ContainerStatus')), { listType: 'atomic' }),
    f('containerStatuses', 8, listOf(ref('ContainerStatus')), { listType: 'atomic' }),
    f('qosClass', 9, STRING),
    f('ephemeralContainerStatuses', 13, listOf(ref('ContainerStatus')), { listType: 'atomic' }),
    f('resize', 14, STRING),
    f('resourceClaimStatuses', 15, listOf(ref('PodResourceClaimStatus')), { listType: 'map', listMapKeys: ['name'], patchStrategy: 'merge,retainKeys', patchMergeKey: 'name' }),
  ]),
  msg('PodCondition', [
    f('type', 1, STRING, { emitEmpty: true, required: true }),
    f('status', 2, STRING, { emitEmpty: true, required: true }),
    f('lastProbeTime', 3, TIME),
    f('lastTransitionTime', 4, TIME),
    f('reason', 5, STRING),
    f('message', 6, STRING),
  ]),
  msg('HostIP', [
    f('ip', 1, STRING, { emitEmpty: true, required: true }),
  ]),
  msg('PodIP', [
    f('ip', 1, STRING, { emitEmpty: true, required: true }),
  ]),
  msg('ContainerStatus', [
    f('name', 1, STRING, { emitEmpty: true, required: true }),
    f('state', 2, ref('ContainerState')),
    f('lastState', 3, ref('ContainerState')),
    f('ready', 4, BOOL, { emitEmpty: true, required: true }),
    f('restartCount', 5, INT32, { emitEmpty: true, required: true }),
    f('image', 6, STRING, { emitEmpty: true, required: true }),
    f('imageID', 7, STRING, { emitEmpty: true, required: true }),
    f('containerID', 8, STRING),
    f('started', 9, BOOL, { pointer: true }),
    f('allocatedResources', 10, mapOf(QUANTITY)),
    f('resources', 11, ref('ResourceRequirements'), { pointer: true }),
    f('volumeMounts', 12, listOf(ref('VolumeMountStatus')), { listType: 'map', listMapKeys: ['mountPath'], patchStrategy: 'merge', patchMergeKey: 'mountPath' }),
    f('user', 13, ref('ContainerUser'), { pointer: true }),
    f('allocatedResourcesStatus', 14, listOf(ref('ResourceStatus')), { listType: 'map', listMapKeys: ['name'], patchStrategy: 'merge', patchMergeKey: 'name' }),
  ]),
  msg('PodResourceClaimStatus', [
    f('name', 1, STRING, { emitEmpty: true, required: true }),
    f('resourceClaimName', 2, STRING, { pointer: true }),
  ]),
  msg('ContainerState', [
    f('waiting', 1, ref('ContainerStateWaiting'), { pointer: true }),
    f('running', 2, ref('ContainerStateRunning'), { pointer: true }),
    f('terminated', 3, ref('ContainerStateTerminated'), { pointer: true }),
  ]),
  msg('VolumeMountStatus', [
    f('name', 1, STRING, { emitEmpty: true, required: true }),
    f('mountPath', 2, STRING, { emitEmpty: true, required: true }),
    f('readOnly', 3, BOOL),
    f('recursiveReadOnly', 4, STRING, { pointer: true }),
  ]),
  msg('ContainerUser', [
    f('linux', 1, ref('LinuxContainerUser'), { pointer: true }),
  ]),
  msg('ResourceStatus', [
    f('name', 1, STRING, { emitEmpty: true, required: true }),
    f('resources', 2, listOf(ref('ResourceHealth')), { listType: 'map', listMapKeys: ['resourceID'] }),
  ]),
  msg('ContainerStateWaiting', [
    f('reason', 1, STRING),
    f('message', 2, STRING),
  ]),
  msg('ContainerStateRunning', [
    f('startedAt', 1, TIME),
  ]),
  msg('ContainerStateTerminated', [
    f('exitCode', 1, INT32, { emitEmpty: true, required: true }),
    f('signal', 2, INT32),
    f('reason', 3, STRING),
    f('message', 4, STRING),
    f('startedAt', 5, TIME),
    f('finishedAt', 6, TIME),
    f('containerID', 7, STRING),
  ]),
  msg('LinuxContainerUser', [
    f('uid', 1, INT64, { emitEmpty: true, required: true }),
    f('gid', 2, INT64, { emitEmpty: true, required: true }),
    f('supplementalGroups', 3, listOf(INT64), { listType: 'atomic' }),
  ]),
  msg('ResourceHealth', [
    f('resourceID', 1, STRING, { emitEmpty: true, required: true }),
    f('health', 2, STRING),
  ]),
]);
