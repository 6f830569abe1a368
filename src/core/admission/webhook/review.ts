/**
 * AdmissionReview v1: the request the server sends a webhook and the checks on what comes
 * back, in upstream's words (`received invalid webhook response: ...`).
 */
import { randomUUID } from 'node:crypto';
import type { ApiObject } from '../../api';
import type { AdmissionAttributes } from '../types';

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  requestKind: { group: string; version: string; kind: string };
  requestResource: { group: string; version: string; resource: string };
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: string;
  userInfo: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  object: ApiObject | null;
  oldObject: ApiObject | null;
  dryRun: boolean;
  options: Record<string, unknown> | null;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code?: number; message?: string; reason?: string; status?: string; details?: unknown };
  patch?: string;
  patchType?: string;
  auditAnnotations?: Record<string, string>;
  warnings?: string[];
}

const OPTIONS_KIND: Record<string, string> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' };

/** The request part of the review for `a`, as the webhook (and match conditions) see it. */
export function admissionRequest(a: AdmissionAttributes, metaGroup: string): AdmissionRequest {
  const kind = { group: a.group, version: a.version, kind: a.kind };
  const resource = { group: a.group, version: a.version, resource: a.resource };
  // An equivalent version's request names the version the client wrote as requestKind and requestResource.
  const requested = a.requested;
  const requestKind = requested ? { group: requested.group, version: requested.version, kind: requested.kind } : kind;
  const requestResource = requested ? { group: requested.group, version: requested.version, resource: requested.resource } : resource;
  const name = a.name || a.object?.metadata?.name || '';
  const options = a.options ? { ...stripUnset(a.options), kind: OPTIONS_KIND[a.operation], apiVersion: `${metaGroup}/v1` } : null;
  return {
    uid: randomUUID(),
    kind,
    resource,
    ...(a.subresource ? { subResource: a.subresource } : {}),
    requestKind,
    requestResource,
    ...(a.subresource ? { requestSubResource: a.subresource } : {}),
    ...(name ? { name } : {}),
    ...(a.namespace ? { namespace: a.namespace } : {}),
    operation: a.operation,
    userInfo: {
      username: a.user.username,
      ...(a.user.uid ? { uid: a.user.uid } : {}),
      ...(a.user.groups.length ? { groups: a.user.groups } : {}),
      ...(a.user.extra && Object.keys(a.user.extra).length ? { extra: a.user.extra } : {}),
    },
    object: a.object ?? null,
    oldObject: a.oldObject ?? null,
    dryRun: a.dryRun,
    options,
  };
}

function stripUnset(options: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) {
    if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0)) continue;
    out[k] = v;
  }
  return out;
}

export function reviewBody(request: AdmissionRequest, admissionApiVersion: string): string {
  return JSON.stringify({ kind: 'AdmissionReview', apiVersion: admissionApiVersion, request });
}

/** The response of a review, checked as upstream's VerifyAdmissionResponse does; throws with upstream's reason. */
export function verifyResponse(body: unknown, uid: string, admissionApiVersion: string, mutating: boolean): AdmissionResponse {
  const review = body as { apiVersion?: unknown; kind?: unknown; response?: AdmissionResponse } | null;
  if (typeof review !== 'object' || review === null) throw new Error('received invalid webhook response: expected an AdmissionReview object');
  if (review.apiVersion !== admissionApiVersion || review.kind !== 'AdmissionReview') {
    throw new Error(
      `received invalid webhook response: expected webhook response of ${admissionApiVersion}, Kind=AdmissionReview, got ${String(review.apiVersion ?? '')}, Kind=${String(review.kind ?? '')}`,
    );
  }
  const response = review.response;
  if (typeof response !== 'object' || response === null) throw new Error('received invalid webhook response: webhook response was absent');
  if (response.uid !== uid) throw new Error(`received invalid webhook response: expected response.uid="${uid}", got "${String(response.uid ?? '')}"`);
  if (typeof response.allowed !== 'boolean') throw new Error('received invalid webhook response: response.allowed must be a boolean');
  const hasPatch = typeof response.patch === 'string' && response.patch.length > 0;
  const hasPatchType = typeof response.patchType === 'string' && response.patchType.length > 0;
  if (mutating) {
    if (hasPatch && !hasPatchType) throw new Error('received invalid webhook response: webhook returned response.patch but not response.patchType');
    if (hasPatchType && !hasPatch) throw new Error('received invalid webhook response: webhook returned response.patchType but not response.patch');
    if (hasPatchType && response.patchType !== 'JSONPatch')
      throw new Error(`received invalid webhook response: webhook returned invalid response.patchType of "${response.patchType}"`);
  } else {
    if (hasPatch) throw new Error('received invalid webhook response: validating webhook may not return response.patch');
    if (hasPatchType) throw new Error('received invalid webhook response: validating webhook may not return response.patchType');
  }
  return response;
}
