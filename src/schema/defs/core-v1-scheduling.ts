/**
 * core/v1 pod scheduling and identity: affinity, tolerations, spread, pod security context, DNS.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, ref, listOf, STRING, BOOL, INT32, INT64 } from '../dsl';

export const CORE_V1_SCHEDULING = definePackage('core.v1', [
  msg('Affinity', [
    f('nodeAffinity', 1, ref('NodeAffinity'), { pointer: true }),
    f('podAffinity', 2, ref('PodAffinity'), { pointer: true }),
    f('podAntiAffinity', 3, ref('PodAntiAffinity'), { pointer: true }),
  ]),
  msg('Toleration', [
    f('key', 1, STRING),
    f('operator', 2, STRING),
    f('value', 3, STRING),
    f('effect', 4, STRING),
    f('tolerationSeconds', 5, INT64, { pointer: true }),
  ]),
  msg('TopologySpreadConstraint', [
    f('maxSkew', 1, INT32, { emitEmpty: true, required: true }),
    f('topologyKey', 2, STRING, { emitEmpty: true, required: true }),
    f('whenUnsatisfiable', 3, STRING, { emitEmpty: true, required: true }),
    f('labelSelector', 4, ref('meta.v1.LabelSelector'), { pointer: true }),
    f('minDomains', 5, INT32, { pointer: true }),
    f('nodeAffinityPolicy', 6, STRING, { pointer: true }),
    f('nodeTaintsPolicy', 7, STRING, { pointer: true }),
    f('matchLabelKeys', 8, listOf(STRING), { listType: 'atomic' }),
  ]),
  msg('PodSecurityContext', [
    f('seLinuxOptions', 1, ref('SELinuxOptions'), { pointer: true }),
    f('windowsOptions', 8, ref('WindowsSecurityContextOptions'), { pointer: true }),
    f('runAsUser', 2, INT64, { pointer: true }),
    f('runAsGroup', 6, INT64, { pointer: true }),
    f('runAsNonRoot', 3, BOOL, { pointer: true }),
    f('supplementalGroups', 4, listOf(INT64), { listType: 'atomic' }),
    f('supplementalGroupsPolicy', 12, STRING, { pointer: true }),
    f('fsGroup', 5, INT64, { pointer: true }),
    f('sysctls', 7, listOf(ref('Sysctl')), { listType: 'atomic' }),
    f('fsGroupChangePolicy', 9, STRING, { pointer: true }),
    f('seccompProfile', 10, ref('SeccompProfile'), { pointer: true }),
    f('appArmorProfile', 11, ref('AppArmorProfile'), { pointer: true }),
    f('seLinuxChangePolicy', 13, STRING, { pointer: true }),
  ]),
  msg('PodDNSConfig', [
    f('nameservers', 1, listOf(STRING), { listType: 'atomic' }),
    f('searches', 2, listOf(STRING), { listType: 'atomic' }),
    f('options', 3, listOf(ref('PodDNSConfigOption')), { listType: 'atomic' }),
  ]),
  msg('HostAlias', [f('ip', 1, STRING, { emitEmpty: true, required: true }), f('hostnames', 2, listOf(STRING), { listType: 'atomic' })]),
  msg('PodOS', [f('name', 1, STRING, { emitEmpty: true, required: true })]),
  msg('PodSchedulingGate', [f('name', 1, STRING, { emitEmpty: true, required: true })]),
  msg('PodResourceClaim', [
    f('name', 1, STRING, { emitEmpty: true, required: true }),
    f('resourceClaimName', 3, STRING, { pointer: true }),
    f('resourceClaimTemplateName', 4, STRING, { pointer: true }),
  ]),
  msg('PodReadinessGate', [f('conditionType', 1, STRING, { emitEmpty: true, required: true })]),
  msg('NodeAffinity', [
    f('requiredDuringSchedulingIgnoredDuringExecution', 1, ref('NodeSelector'), { pointer: true }),
    f('preferredDuringSchedulingIgnoredDuringExecution', 2, listOf(ref('PreferredSchedulingTerm')), { listType: 'atomic' }),
  ]),
  msg('PodAffinity', [
    f('requiredDuringSchedulingIgnoredDuringExecution', 1, listOf(ref('PodAffinityTerm')), { listType: 'atomic' }),
    f('preferredDuringSchedulingIgnoredDuringExecution', 2, listOf(ref('WeightedPodAffinityTerm')), { listType: 'atomic' }),
  ]),
  msg('PodAntiAffinity', [
    f('requiredDuringSchedulingIgnoredDuringExecution', 1, listOf(ref('PodAffinityTerm')), { listType: 'atomic' }),
    f('preferredDuringSchedulingIgnoredDuringExecution', 2, listOf(ref('WeightedPodAffinityTerm')), { listType: 'atomic' }),
  ]),
  msg('Sysctl', [f('name', 1, STRING, { emitEmpty: true, required: true }), f('value', 2, STRING, { emitEmpty: true, required: true })]),
  msg('PodDNSConfigOption', [f('name', 1, STRING), f('value', 2, STRING, { pointer: true })]),
  msg('NodeSelector', [f('nodeSelectorTerms', 1, listOf(ref('NodeSelectorTerm')), { emitEmpty: true, required: true, listType: 'atomic' })], {
    structType: 'atomic',
  }),
  msg('PreferredSchedulingTerm', [
    f('weight', 1, INT32, { emitEmpty: true, required: true }),
    f('preference', 2, ref('NodeSelectorTerm'), { emitEmpty: true, required: true }),
  ]),
  msg('PodAffinityTerm', [
    f('labelSelector', 1, ref('meta.v1.LabelSelector'), { pointer: true }),
    f('namespaces', 2, listOf(STRING), { listType: 'atomic' }),
    f('topologyKey', 3, STRING, { emitEmpty: true, required: true }),
    f('namespaceSelector', 4, ref('meta.v1.LabelSelector'), { pointer: true }),
    f('matchLabelKeys', 5, listOf(STRING), { listType: 'atomic' }),
    f('mismatchLabelKeys', 6, listOf(STRING), { listType: 'atomic' }),
  ]),
  msg('WeightedPodAffinityTerm', [
    f('weight', 1, INT32, { emitEmpty: true, required: true }),
    f('podAffinityTerm', 2, ref('PodAffinityTerm'), { emitEmpty: true, required: true }),
  ]),
  msg(
    'NodeSelectorTerm',
    [
      f('matchExpressions', 1, listOf(ref('NodeSelectorRequirement')), { listType: 'atomic' }),
      f('matchFields', 2, listOf(ref('NodeSelectorRequirement')), { listType: 'atomic' }),
    ],
    { structType: 'atomic' },
  ),
  msg('NodeSelectorRequirement', [
    f('key', 1, STRING, { emitEmpty: true, required: true }),
    f('operator', 2, STRING, { emitEmpty: true, required: true }),
    f('values', 3, listOf(STRING), { listType: 'atomic' }),
  ]),
]);
