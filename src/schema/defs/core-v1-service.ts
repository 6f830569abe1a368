/**
 * core/v1 Service and the types only it uses (its spec, ports, status, load-balancer status,
 * session affinity).
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, listKind, ref, listOf, mapOf, STRING, BOOL, INT32, INT_OR_STRING } from '../dsl';

export const CORE_V1_SERVICE = definePackage('core.v1', [
  msg('Service', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('spec', 2, ref('ServiceSpec')), f('status', 3, ref('ServiceStatus'))], { typeMeta: true }),
  listKind('ServiceList', 'Service'),
  msg('ServiceSpec', [
    // Two ports may share a number with different protocols: the apply key is both, the
    // strategic merge key the number alone (upstream keeps both markers).
    f('ports', 1, listOf(ref('ServicePort')), { listType: 'map', listMapKeys: ['port', 'protocol'], patchStrategy: 'merge', patchMergeKey: 'port' }),
    f('selector', 2, mapOf(STRING), { mapType: 'atomic' }),
    f('clusterIP', 3, STRING),
    f('clusterIPs', 18, listOf(STRING), { listType: 'atomic' }),
    f('type', 4, STRING),
    f('externalIPs', 5, listOf(STRING), { listType: 'atomic' }),
    f('sessionAffinity', 7, STRING),
    f('loadBalancerIP', 8, STRING),
    f('loadBalancerSourceRanges', 9, listOf(STRING), { listType: 'atomic' }),
    f('externalName', 10, STRING),
    f('externalTrafficPolicy', 11, STRING),
    f('healthCheckNodePort', 12, INT32),
    f('publishNotReadyAddresses', 13, BOOL),
    f('sessionAffinityConfig', 14, ref('SessionAffinityConfig'), { pointer: true }),
    f('ipFamilies', 19, listOf(STRING), { listType: 'atomic' }),
    f('ipFamilyPolicy', 17, STRING, { pointer: true }),
    f('allocateLoadBalancerNodePorts', 20, BOOL, { pointer: true }),
    f('loadBalancerClass', 21, STRING, { pointer: true }),
    f('internalTrafficPolicy', 22, STRING, { pointer: true }),
    f('trafficDistribution', 23, STRING, { pointer: true }),
  ]),
  msg('ServicePort', [
    f('name', 1, STRING),
    f('protocol', 2, STRING),
    f('appProtocol', 6, STRING, { pointer: true }),
    f('port', 3, INT32, { emitEmpty: true, required: true }),
    f('targetPort', 4, INT_OR_STRING),
    f('nodePort', 5, INT32),
  ]),
  msg('SessionAffinityConfig', [f('clientIP', 1, ref('ClientIPConfig'), { pointer: true })]),
  msg('ClientIPConfig', [f('timeoutSeconds', 1, INT32, { pointer: true })]),
  msg('ServiceStatus', [
    f('loadBalancer', 1, ref('LoadBalancerStatus')),
    f('conditions', 2, listOf(ref('meta.v1.Condition')), { listType: 'map', listMapKeys: ['type'], patchStrategy: 'merge', patchMergeKey: 'type' }),
  ]),
  msg('LoadBalancerStatus', [f('ingress', 1, listOf(ref('LoadBalancerIngress')), { listType: 'atomic' })]),
  msg('LoadBalancerIngress', [
    f('ip', 1, STRING),
    f('hostname', 2, STRING),
    f('ipMode', 3, STRING, { pointer: true }),
    f('ports', 4, listOf(ref('PortStatus')), { listType: 'atomic' }),
  ]),
  msg('PortStatus', [
    f('port', 1, INT32, { emitEmpty: true, required: true }),
    f('protocol', 2, STRING, { emitEmpty: true, required: true }),
    f('error', 3, STRING, { pointer: true }),
  ]),
]);
