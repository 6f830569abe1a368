/**
 * authentication/v1 review kinds.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, ref, listOf, wrappedListOf, mapOf, STRING, BOOL, INT64, TIME } from '../dsl';

export const AUTHENTICATION_V1 = definePackage('authentication.v1', [
  msg('SelfSubjectReview', [f('metadata', 1, ref('meta.v1.ObjectMeta')), f('status', 2, ref('SelfSubjectReviewStatus'))], { typeMeta: true }),
  msg(
    'TokenRequest',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('spec', 2, ref('TokenRequestSpec'), { emitEmpty: true, required: true }),
      f('status', 3, ref('TokenRequestStatus')),
    ],
    { typeMeta: true },
  ),
  msg(
    'TokenReview',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('spec', 2, ref('TokenReviewSpec'), { emitEmpty: true, required: true }),
      f('status', 3, ref('TokenReviewStatus')),
    ],
    { typeMeta: true },
  ),
  msg('SelfSubjectReviewStatus', [f('userInfo', 1, ref('UserInfo'))]),
  msg('TokenRequestSpec', [
    f('audiences', 1, listOf(STRING), { emitEmpty: true, required: true, listType: 'atomic' }),
    f('expirationSeconds', 4, INT64, { pointer: true, emitEmpty: true }),
    f('boundObjectRef', 3, ref('BoundObjectReference'), { pointer: true, emitEmpty: true }),
  ]),
  msg('TokenRequestStatus', [
    f('token', 1, STRING, { emitEmpty: true, required: true }),
    f('expirationTimestamp', 2, TIME, { emitEmpty: true, required: true }),
  ]),
  msg('TokenReviewSpec', [f('token', 1, STRING), f('audiences', 2, listOf(STRING), { listType: 'atomic' })]),
  msg('TokenReviewStatus', [
    f('authenticated', 1, BOOL),
    f('user', 2, ref('UserInfo')),
    f('audiences', 4, listOf(STRING), { listType: 'atomic' }),
    f('error', 3, STRING),
  ]),
  msg('UserInfo', [
    f('username', 1, STRING),
    f('uid', 2, STRING),
    f('groups', 3, listOf(STRING), { listType: 'atomic' }),
    f('extra', 4, mapOf(wrappedListOf(STRING))),
  ]),
  msg('BoundObjectReference', [f('kind', 1, STRING), f('apiVersion', 2, STRING), f('name', 3, STRING), f('uid', 4, STRING)]),
]);
