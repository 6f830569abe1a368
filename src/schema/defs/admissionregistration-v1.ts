/**
 * admissionregistration/v1: webhook configurations, ValidatingAdmissionPolicy and its bindings.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 *
 * `Rule` is embedded inline in `RuleWithOperations`, which is embedded inline in
 * `NamedRuleWithOperations`: JSON flattens them, protobuf nests them (fields 2).
 */
import { definePackage, f, msg, listKind, ref, listOf, STRING, INT32, INT64, BYTES } from '../dsl';

const byName = { listType: 'map', listMapKeys: ['name'], patchStrategy: 'merge', patchMergeKey: 'name' } as const;

export const ADMISSIONREGISTRATION_V1 = definePackage('admissionregistration.v1', [
  msg('MutatingWebhookConfiguration', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('webhooks', 2, listOf(ref('MutatingWebhook')), byName)], {
    typeMeta: true,
  }),
  listKind('MutatingWebhookConfigurationList', 'MutatingWebhookConfiguration'),
  msg('ValidatingWebhookConfiguration', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('webhooks', 2, listOf(ref('ValidatingWebhook')), byName)], {
    typeMeta: true,
  }),
  listKind('ValidatingWebhookConfigurationList', 'ValidatingWebhookConfiguration'),
  msg('MutatingWebhook', [
    f('name', 1, STRING, { emitEmpty: true, required: true }),
    f('clientConfig', 2, ref('WebhookClientConfig'), { emitEmpty: true, required: true }),
    f('rules', 3, listOf(ref('RuleWithOperations')), { listType: 'atomic' }),
    f('failurePolicy', 4, STRING, { pointer: true }),
    f('matchPolicy', 9, STRING, { pointer: true }),
    f('namespaceSelector', 5, ref('meta.v1.LabelSelector'), { pointer: true }),
    f('objectSelector', 11, ref('meta.v1.LabelSelector'), { pointer: true }),
    f('sideEffects', 6, STRING, { pointer: true, emitEmpty: true, required: true }),
    f('timeoutSeconds', 7, INT32, { pointer: true }),
    f('admissionReviewVersions', 8, listOf(STRING), { emitEmpty: true, required: true, listType: 'atomic' }),
    f('reinvocationPolicy', 10, STRING, { pointer: true }),
    f('matchConditions', 12, listOf(ref('MatchCondition')), byName),
  ]),
  msg('ValidatingWebhook', [
    f('name', 1, STRING, { emitEmpty: true, required: true }),
    f('clientConfig', 2, ref('WebhookClientConfig'), { emitEmpty: true, required: true }),
    f('rules', 3, listOf(ref('RuleWithOperations')), { listType: 'atomic' }),
    f('failurePolicy', 4, STRING, { pointer: true }),
    f('matchPolicy', 9, STRING, { pointer: true }),
    f('namespaceSelector', 5, ref('meta.v1.LabelSelector'), { pointer: true }),
    f('objectSelector', 10, ref('meta.v1.LabelSelector'), { pointer: true }),
    f('sideEffects', 6, STRING, { pointer: true, emitEmpty: true, required: true }),
    f('timeoutSeconds', 7, INT32, { pointer: true }),
    f('admissionReviewVersions', 8, listOf(STRING), { emitEmpty: true, required: true, listType: 'atomic' }),
    f('matchConditions', 11, listOf(ref('MatchCondition')), byName),
  ]),
  msg('WebhookClientConfig', [f('url', 3, STRING, { pointer: true }), f('service', 1, ref('ServiceReference'), { pointer: true }), f('caBundle', 2, BYTES)]),
  msg('ServiceReference', [
    f('namespace', 1, STRING, { emitEmpty: true, required: true }),
    f('name', 2, STRING, { emitEmpty: true, required: true }),
    f('path', 3, STRING, { pointer: true }),
    f('port', 4, INT32, { pointer: true }),
  ]),
  msg('RuleWithOperations', [f('operations', 1, listOf(STRING), { listType: 'atomic' }), f('rule', 2, ref('Rule'), { inline: true })]),
  msg('Rule', [
    f('apiGroups', 1, listOf(STRING), { listType: 'atomic' }),
    f('apiVersions', 2, listOf(STRING), { listType: 'atomic' }),
    f('resources', 3, listOf(STRING), { listType: 'atomic' }),
    f('scope', 4, STRING, { pointer: true }),
  ]),
  msg('MatchCondition', [f('name', 1, STRING, { emitEmpty: true, required: true }), f('expression', 2, STRING, { emitEmpty: true, required: true })]),

  msg(
    'ValidatingAdmissionPolicy',
    [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('spec', 2, ref('ValidatingAdmissionPolicySpec')), f('status', 3, ref('ValidatingAdmissionPolicyStatus'))],
    { typeMeta: true },
  ),
  listKind('ValidatingAdmissionPolicyList', 'ValidatingAdmissionPolicy'),
  msg('ValidatingAdmissionPolicySpec', [
    f('paramKind', 1, ref('ParamKind'), { pointer: true }),
    f('matchConstraints', 2, ref('MatchResources'), { pointer: true }),
    f('validations', 3, listOf(ref('Validation')), { listType: 'atomic' }),
    f('failurePolicy', 4, STRING, { pointer: true }),
    f('auditAnnotations', 5, listOf(ref('AuditAnnotation')), { listType: 'atomic' }),
    f('matchConditions', 6, listOf(ref('MatchCondition')), byName),
    f('variables', 7, listOf(ref('Variable')), byName),
  ]),
  msg('ParamKind', [f('apiVersion', 1, STRING), f('kind', 2, STRING)], { structType: 'atomic' }),
  msg('Validation', [
    f('expression', 1, STRING, { emitEmpty: true, required: true }),
    f('message', 2, STRING),
    f('reason', 3, STRING, { pointer: true }),
    f('messageExpression', 4, STRING),
  ]),
  msg('Variable', [f('name', 1, STRING, { emitEmpty: true, required: true }), f('expression', 2, STRING, { emitEmpty: true, required: true })], {
    structType: 'atomic',
  }),
  msg('AuditAnnotation', [f('key', 1, STRING, { emitEmpty: true, required: true }), f('valueExpression', 2, STRING, { emitEmpty: true, required: true })]),
  msg('ValidatingAdmissionPolicyStatus', [
    f('observedGeneration', 1, INT64),
    f('typeChecking', 2, ref('TypeChecking'), { pointer: true }),
    f('conditions', 3, listOf(ref('meta.v1.Condition')), { listType: 'map', listMapKeys: ['type'] }),
  ]),
  msg('TypeChecking', [f('expressionWarnings', 1, listOf(ref('ExpressionWarning')), { listType: 'atomic' })]),
  msg('ExpressionWarning', [f('fieldRef', 2, STRING, { emitEmpty: true, required: true }), f('warning', 3, STRING, { emitEmpty: true, required: true })]),

  msg('ValidatingAdmissionPolicyBinding', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('spec', 2, ref('ValidatingAdmissionPolicyBindingSpec'))], {
    typeMeta: true,
  }),
  listKind('ValidatingAdmissionPolicyBindingList', 'ValidatingAdmissionPolicyBinding'),
  msg('ValidatingAdmissionPolicyBindingSpec', [
    f('policyName', 1, STRING),
    f('paramRef', 2, ref('ParamRef'), { pointer: true }),
    f('matchResources', 3, ref('MatchResources'), { pointer: true }),
    f('validationActions', 4, listOf(STRING), { listType: 'set' }),
  ]),
  msg(
    'ParamRef',
    [
      f('name', 1, STRING),
      f('namespace', 2, STRING),
      f('selector', 3, ref('meta.v1.LabelSelector'), { pointer: true }),
      f('parameterNotFoundAction', 4, STRING, { pointer: true }),
    ],
    { structType: 'atomic' },
  ),
  msg(
    'MatchResources',
    [
      f('namespaceSelector', 1, ref('meta.v1.LabelSelector'), { pointer: true }),
      f('objectSelector', 2, ref('meta.v1.LabelSelector'), { pointer: true }),
      f('resourceRules', 3, listOf(ref('NamedRuleWithOperations')), { listType: 'atomic' }),
      f('excludeResourceRules', 4, listOf(ref('NamedRuleWithOperations')), { listType: 'atomic' }),
      f('matchPolicy', 7, STRING, { pointer: true }),
    ],
    { structType: 'atomic' },
  ),
  msg(
    'NamedRuleWithOperations',
    [f('resourceNames', 1, listOf(STRING), { listType: 'atomic' }), f('ruleWithOperations', 2, ref('RuleWithOperations'), { inline: true })],
    { structType: 'atomic' },
  ),
]);
