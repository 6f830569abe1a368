/**
 * flowcontrol.apiserver/v1 and v1beta3: API Priority and Fairness' FlowSchema and
 * PriorityLevelConfiguration. The two versions have the same messages and field numbers; they
 * differ in one field, `limited.nominalConcurrencyShares`, a pointer in v1 (so an explicit 0
 * differs from unspecified) and a plain int32 in v1beta3.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import type { FieldDef, PackageDef } from '../types';
import { definePackage, f, msg, listKind, listOf, ref, STRING, INT32, BOOL, TIME } from '../dsl';

/** The messages of one version; `nominalConcurrencyShares` is that version's field. */
function flowcontrolPackage(name: string, nominalConcurrencyShares: FieldDef): PackageDef {
  return definePackage(name, [
    msg('FlowSchema', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('spec', 2, ref('FlowSchemaSpec')), f('status', 3, ref('FlowSchemaStatus'))], {
      typeMeta: true,
    }),
    listKind('FlowSchemaList', 'FlowSchema'),
    msg('FlowSchemaSpec', [
      f('priorityLevelConfiguration', 1, ref('PriorityLevelConfigurationReference'), { emitEmpty: true, required: true }),
      f('matchingPrecedence', 2, INT32, { emitEmpty: true }),
      f('distinguisherMethod', 3, ref('FlowDistinguisherMethod'), { pointer: true }),
      f('rules', 4, listOf(ref('PolicyRulesWithSubjects')), { listType: 'atomic' }),
    ]),
    msg('FlowDistinguisherMethod', [f('type', 1, STRING, { emitEmpty: true, required: true })]),
    msg('PriorityLevelConfigurationReference', [f('name', 1, STRING, { emitEmpty: true, required: true })]),
    msg('PolicyRulesWithSubjects', [
      f('subjects', 1, listOf(ref('Subject')), { emitEmpty: true, required: true, listType: 'atomic' }),
      f('resourceRules', 2, listOf(ref('ResourcePolicyRule')), { listType: 'atomic' }),
      f('nonResourceRules', 3, listOf(ref('NonResourcePolicyRule')), { listType: 'atomic' }),
    ]),
    msg('Subject', [
      f('kind', 1, STRING, { emitEmpty: true, required: true }),
      f('user', 2, ref('UserSubject'), { pointer: true }),
      f('group', 3, ref('GroupSubject'), { pointer: true }),
      f('serviceAccount', 4, ref('ServiceAccountSubject'), { pointer: true }),
    ]),
    msg('UserSubject', [f('name', 1, STRING, { emitEmpty: true, required: true })]),
    msg('GroupSubject', [f('name', 1, STRING, { emitEmpty: true, required: true })]),
    msg('ServiceAccountSubject', [f('namespace', 1, STRING, { emitEmpty: true, required: true }), f('name', 2, STRING, { emitEmpty: true, required: true })]),
    msg('ResourcePolicyRule', [
      f('verbs', 1, listOf(STRING), { emitEmpty: true, required: true, listType: 'set' }),
      f('apiGroups', 2, listOf(STRING), { emitEmpty: true, required: true, listType: 'set' }),
      f('resources', 3, listOf(STRING), { emitEmpty: true, required: true, listType: 'set' }),
      f('clusterScope', 4, BOOL),
      f('namespaces', 5, listOf(STRING), { emitEmpty: true, listType: 'set' }),
    ]),
    msg('NonResourcePolicyRule', [
      f('verbs', 1, listOf(STRING), { emitEmpty: true, required: true, listType: 'set' }),
      f('nonResourceURLs', 6, listOf(STRING), { emitEmpty: true, required: true, listType: 'set' }),
    ]),
    msg('FlowSchemaStatus', [
      f('conditions', 1, listOf(ref('FlowSchemaCondition')), { listType: 'map', listMapKeys: ['type'], patchStrategy: 'merge', patchMergeKey: 'type' }),
    ]),
    msg('FlowSchemaCondition', conditionFields()),
    msg(
      'PriorityLevelConfiguration',
      [
        f('metadata', 1, ref('meta.v1.ObjectMeta')),
        f('spec', 2, ref('PriorityLevelConfigurationSpec')),
        f('status', 3, ref('PriorityLevelConfigurationStatus')),
      ],
      { typeMeta: true },
    ),
    listKind('PriorityLevelConfigurationList', 'PriorityLevelConfiguration'),
    msg('PriorityLevelConfigurationSpec', [
      f('type', 1, STRING, { emitEmpty: true, required: true }),
      f('limited', 2, ref('LimitedPriorityLevelConfiguration'), { pointer: true }),
      f('exempt', 3, ref('ExemptPriorityLevelConfiguration'), { pointer: true }),
    ]),
    msg('LimitedPriorityLevelConfiguration', [
      nominalConcurrencyShares,
      f('limitResponse', 2, ref('LimitResponse')),
      f('lendablePercent', 3, INT32, { pointer: true }),
      f('borrowingLimitPercent', 4, INT32, { pointer: true }),
    ]),
    msg('ExemptPriorityLevelConfiguration', [f('nominalConcurrencyShares', 1, INT32, { pointer: true }), f('lendablePercent', 2, INT32, { pointer: true })]),
    msg('LimitResponse', [f('type', 1, STRING, { emitEmpty: true, required: true }), f('queuing', 2, ref('QueuingConfiguration'), { pointer: true })]),
    msg('QueuingConfiguration', [
      f('queues', 1, INT32, { emitEmpty: true }),
      f('handSize', 2, INT32, { emitEmpty: true }),
      f('queueLengthLimit', 3, INT32, { emitEmpty: true }),
    ]),
    msg('PriorityLevelConfigurationStatus', [
      f('conditions', 1, listOf(ref('PriorityLevelConfigurationCondition')), {
        listType: 'map',
        listMapKeys: ['type'],
        patchStrategy: 'merge',
        patchMergeKey: 'type',
      }),
    ]),
    msg('PriorityLevelConfigurationCondition', conditionFields()),
  ]);
}

/** FlowSchemaCondition and PriorityLevelConfigurationCondition have the same fields. */
function conditionFields(): FieldDef[] {
  return [f('type', 1, STRING), f('status', 2, STRING), f('lastTransitionTime', 3, TIME), f('reason', 4, STRING), f('message', 5, STRING)];
}

// v1: a pointer without omitempty, so unspecified (defaulted to 30) and an explicit 0 differ.
export const FLOWCONTROL_V1 = flowcontrolPackage('flowcontrol.v1', f('nominalConcurrencyShares', 1, INT32, { pointer: true, emitEmpty: true }));

// v1beta3: a plain int32, whose 0 is kept only with the round-trip annotation (upstream's v1beta3 defaults).
export const FLOWCONTROL_V1BETA3 = flowcontrolPackage('flowcontrol.v1beta3', f('nominalConcurrencyShares', 1, INT32, { emitEmpty: true }));
