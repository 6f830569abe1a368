/**
 * authorization/v1 access review kinds.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, ref, listOf, wrappedListOf, mapOf, STRING, BOOL } from '../dsl';

export const AUTHORIZATION_V1 = definePackage('authorization.v1', [
  msg(
    'LocalSubjectAccessReview',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('spec', 2, ref('SubjectAccessReviewSpec'), { emitEmpty: true, required: true }),
      f('status', 3, ref('SubjectAccessReviewStatus')),
    ],
    { typeMeta: true },
  ),
  msg(
    'SelfSubjectAccessReview',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('spec', 2, ref('SelfSubjectAccessReviewSpec'), { emitEmpty: true, required: true }),
      f('status', 3, ref('SubjectAccessReviewStatus')),
    ],
    { typeMeta: true },
  ),
  msg(
    'SelfSubjectRulesReview',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('spec', 2, ref('SelfSubjectRulesReviewSpec'), { emitEmpty: true, required: true }),
      f('status', 3, ref('SubjectRulesReviewStatus')),
    ],
    { typeMeta: true },
  ),
  msg(
    'SubjectAccessReview',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('spec', 2, ref('SubjectAccessReviewSpec'), { emitEmpty: true, required: true }),
      f('status', 3, ref('SubjectAccessReviewStatus')),
    ],
    { typeMeta: true },
  ),
  msg('SubjectAccessReviewSpec', [
    f('resourceAttributes', 1, ref('ResourceAttributes'), { pointer: true }),
    f('nonResourceAttributes', 2, ref('NonResourceAttributes'), { pointer: true }),
    f('user', 3, STRING),
    f('groups', 4, listOf(STRING), { listType: 'atomic' }),
    f('extra', 5, mapOf(wrappedListOf(STRING))),
    f('uid', 6, STRING),
  ]),
  msg('SubjectAccessReviewStatus', [
    f('allowed', 1, BOOL, { emitEmpty: true, required: true }),
    f('denied', 4, BOOL),
    f('reason', 2, STRING),
    f('evaluationError', 3, STRING),
  ]),
  msg('SelfSubjectAccessReviewSpec', [
    f('resourceAttributes', 1, ref('ResourceAttributes'), { pointer: true }),
    f('nonResourceAttributes', 2, ref('NonResourceAttributes'), { pointer: true }),
  ]),
  msg('SelfSubjectRulesReviewSpec', [f('namespace', 1, STRING)]),
  msg('SubjectRulesReviewStatus', [
    f('resourceRules', 1, listOf(ref('ResourceRule')), { emitEmpty: true, required: true, listType: 'atomic' }),
    f('nonResourceRules', 2, listOf(ref('NonResourceRule')), { emitEmpty: true, required: true, listType: 'atomic' }),
    f('incomplete', 3, BOOL, { emitEmpty: true, required: true }),
    f('evaluationError', 4, STRING),
  ]),
  msg('ResourceAttributes', [
    f('namespace', 1, STRING),
    f('verb', 2, STRING),
    f('group', 3, STRING),
    f('version', 4, STRING),
    f('resource', 5, STRING),
    f('subresource', 6, STRING),
    f('name', 7, STRING),
    f('fieldSelector', 8, ref('FieldSelectorAttributes'), { pointer: true }),
    f('labelSelector', 9, ref('LabelSelectorAttributes'), { pointer: true }),
  ]),
  msg('NonResourceAttributes', [f('path', 1, STRING), f('verb', 2, STRING)]),
  msg('ResourceRule', [
    f('verbs', 1, listOf(STRING), { emitEmpty: true, required: true, listType: 'atomic' }),
    f('apiGroups', 2, listOf(STRING), { listType: 'atomic' }),
    f('resources', 3, listOf(STRING), { listType: 'atomic' }),
    f('resourceNames', 4, listOf(STRING), { listType: 'atomic' }),
  ]),
  msg('NonResourceRule', [
    f('verbs', 1, listOf(STRING), { emitEmpty: true, required: true, listType: 'atomic' }),
    f('nonResourceURLs', 2, listOf(STRING), { listType: 'atomic' }),
  ]),
  msg('FieldSelectorAttributes', [f('rawSelector', 1, STRING), f('requirements', 2, listOf(ref('meta.v1.FieldSelectorRequirement')), { listType: 'atomic' })]),
  msg('LabelSelectorAttributes', [f('rawSelector', 1, STRING), f('requirements', 2, listOf(ref('meta.v1.LabelSelectorRequirement')), { listType: 'atomic' })]),
]);
