/**
 * certificates/v1 CertificateSigningRequest.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, listKind, ref, listOf, wrappedListOf, mapOf, STRING, BYTES, INT32, TIME } from '../dsl';

export const CERTIFICATES_V1 = definePackage('certificates.v1', [
  msg(
    'CertificateSigningRequest',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('spec', 2, ref('CertificateSigningRequestSpec'), { emitEmpty: true }),
      f('status', 3, ref('CertificateSigningRequestStatus')),
    ],
    { typeMeta: true },
  ),
  listKind('CertificateSigningRequestList', 'CertificateSigningRequest'),
  msg('CertificateSigningRequestSpec', [
    f('request', 1, BYTES, { emitEmpty: true, required: true }),
    f('signerName', 7, STRING, { emitEmpty: true, required: true }),
    f('expirationSeconds', 8, INT32, { pointer: true }),
    f('usages', 5, listOf(STRING), { listType: 'atomic' }),
    f('username', 2, STRING),
    f('uid', 3, STRING),
    f('groups', 4, listOf(STRING), { listType: 'atomic' }),
    f('extra', 6, mapOf(wrappedListOf(STRING))),
  ]),
  msg('CertificateSigningRequestStatus', [
    f('conditions', 1, listOf(ref('CertificateSigningRequestCondition')), { listType: 'map', listMapKeys: ['type'] }),
    f('certificate', 2, BYTES),
  ]),
  msg('CertificateSigningRequestCondition', [
    f('type', 1, STRING, { emitEmpty: true, required: true }),
    f('status', 6, STRING, { emitEmpty: true, required: true }),
    f('reason', 2, STRING),
    f('message', 3, STRING),
    f('lastUpdateTime', 4, TIME),
    f('lastTransitionTime', 5, TIME),
  ]),
]);
