/**
 * apiregistration/v1 APIService: the aggregator's registration of a group version, served
 * locally or by an extension API server behind a Service.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32's
 * kube-aggregator types; protobuf number 6 (the old `priority`) stays unused as there.
 */
import { definePackage, f, msg, listKind, ref, listOf, STRING, BOOL, BYTES, INT32, TIME } from '../dsl';

export const APIREGISTRATION_V1 = definePackage('apiregistration.v1', [
  msg('APIService', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('spec', 2, ref('APIServiceSpec')), f('status', 3, ref('APIServiceStatus'))], {
    typeMeta: true,
  }),
  listKind('APIServiceList', 'APIService'),
  msg('APIServiceSpec', [
    // No omitempty upstream: a local APIService writes `"service": null`.
    f('service', 1, ref('ServiceReference'), { pointer: true, emitEmpty: true }),
    f('group', 2, STRING),
    f('version', 3, STRING),
    f('insecureSkipTLSVerify', 4, BOOL),
    f('caBundle', 5, BYTES),
    f('groupPriorityMinimum', 7, INT32, { emitEmpty: true, required: true }),
    f('versionPriority', 8, INT32, { emitEmpty: true, required: true }),
  ]),
  msg('ServiceReference', [f('namespace', 1, STRING), f('name', 2, STRING), f('port', 3, INT32, { pointer: true })]),
  msg('APIServiceStatus', [f('conditions', 1, listOf(ref('APIServiceCondition')), { patchStrategy: 'merge', patchMergeKey: 'type' })]),
  msg('APIServiceCondition', [
    f('type', 1, STRING, { emitEmpty: true, required: true }),
    f('status', 2, STRING, { emitEmpty: true, required: true }),
    f('lastTransitionTime', 3, TIME),
    f('reason', 4, STRING),
    f('message', 5, STRING),
  ]),
]);
