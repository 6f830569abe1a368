/**
 * The access review APIs of `authorization.<vendor>/v1`, answered by the server's authorizer
 * chain as upstream's are: SelfSubjectAccessReview (may I? — what `kubectl auth can-i` asks),
 * SubjectAccessReview (may this user?) and LocalSubjectAccessReview (the same, in one
 * namespace). Exactly one of `resourceAttributes` and `nonResourceAttributes`; the answer is in
 * `status.allowed`, `status.denied` and `status.reason`.
 */
import type { ApiObject, RequestContext, UserInfo, CreateHandler } from '../core';
import type { Naming } from '../naming';
import { badRequest, invalid } from '../status';
import type { AuthorizationAttributes, Decision, RulesResult } from './types';

export type Authorize = (attributes: AuthorizationAttributes) => Promise<Decision>;
export type RulesFor = (user: UserInfo, namespace: string) => RulesResult;

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

function fieldError(field: string, value: unknown, detail: string) {
  const causeMessage = `Invalid value: ${JSON.stringify(value)}: ${detail}`;
  return { field, causeReason: 'FieldValueInvalid', causeMessage, message: `${field}: ${causeMessage}` };
}

function attributesOf(kind: string, naming: Naming, spec: Record<string, unknown>, user: UserInfo): AuthorizationAttributes {
  const gk = { group: naming.groups.authorization, kind };
  const resource = spec.resourceAttributes;
  const nonResource = spec.nonResourceAttributes;
  if (isObj(resource) === isObj(nonResource)) {
    throw invalid(gk, '', [
      fieldError('spec.resourceAttributes', resource ?? null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified'),
    ]);
  }
  if (isObj(resource)) {
    return {
      user,
      verb: str(resource.verb),
      isResourceRequest: true,
      path: '',
      namespace: str(resource.namespace),
      apiGroup: str(resource.group),
      apiVersion: str(resource.version),
      resource: str(resource.resource),
      subresource: str(resource.subresource),
      name: str(resource.name),
    };
  }
  const nr = nonResource as Record<string, unknown>;
  return {
    user,
    verb: str(nr.verb),
    isResourceRequest: false,
    path: str(nr.path),
    namespace: '',
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    name: '',
  };
}

function answered(body: ApiObject, decision: Decision): ApiObject {
  const status: Record<string, unknown> = { allowed: decision.decision === 'allow' };
  if (decision.decision === 'deny') status.denied = true;
  const reason = decision.decision === 'allow' ? '' : decision.reason;
  if (reason) status.reason = reason;
  return { ...body, metadata: { ...(body.metadata ?? {}), creationTimestamp: null }, status };
}

function userOfSpec(kind: string, naming: Naming, spec: Record<string, unknown>): UserInfo {
  const groups = Array.isArray(spec.groups) ? spec.groups.filter((g): g is string => typeof g === 'string') : [];
  if (!str(spec.user) && groups.length === 0) {
    throw invalid({ group: naming.groups.authorization, kind }, '', [fieldError('spec.user', '', 'at least one of user or group must be specified')]);
  }
  const user: UserInfo = { username: str(spec.user), groups };
  if (str(spec.uid)) user.uid = str(spec.uid);
  if (isObj(spec.extra)) {
    const extra: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(spec.extra)) if (Array.isArray(v)) extra[k] = v.filter((x): x is string => typeof x === 'string');
    user.extra = extra;
  }
  return user;
}

const specOf = (body: ApiObject) => (isObj(body.spec) ? body.spec : {});

/** The four handlers, by resource name, for `CoreOptions.handlers`. */
export function accessReviewHandlers(authorize: Authorize, naming: Naming, rulesFor: RulesFor): Record<string, CreateHandler> {
  return {
    // What may I do in this namespace? (`kubectl auth can-i --list`.) Upstream answers with the status only.
    selfsubjectrulesreviews: {
      async create(body, _options, ctx: RequestContext) {
        const namespace = str(specOf(body).namespace);
        if (!namespace) throw badRequest('no namespace on request');
        const r = rulesFor(ctx.user, namespace);
        const status: Record<string, unknown> = { resourceRules: r.resourceRules, nonResourceRules: r.nonResourceRules, incomplete: r.incomplete };
        // Upstream's aggregate error text: one error as it is, several in brackets.
        if (r.errors.length) status.evaluationError = r.errors.length === 1 ? r.errors[0] : `[${r.errors.join(', ')}]`;
        return { apiVersion: body.apiVersion, kind: body.kind, metadata: { creationTimestamp: null }, spec: {}, status };
      },
    },
    selfsubjectaccessreviews: {
      async create(body, _options, ctx: RequestContext) {
        return answered(body, await authorize(attributesOf('SelfSubjectAccessReview', naming, specOf(body), ctx.user)));
      },
    },
    subjectaccessreviews: {
      async create(body) {
        const spec = specOf(body);
        return answered(body, await authorize(attributesOf('SubjectAccessReview', naming, spec, userOfSpec('SubjectAccessReview', naming, spec))));
      },
    },
    localsubjectaccessreviews: {
      async create(body) {
        const spec = specOf(body);
        const namespace = body.metadata?.namespace ?? '';
        if (isObj(spec.nonResourceAttributes)) {
          throw invalid({ group: naming.groups.authorization, kind: 'LocalSubjectAccessReview' }, '', [
            fieldError('spec.nonResourceAttributes', spec.nonResourceAttributes, 'disallowed on this kind of request'),
          ]);
        }
        if (isObj(spec.resourceAttributes)) {
          const ns = str(spec.resourceAttributes.namespace);
          if (ns && ns !== namespace)
            throw badRequest(`spec.resourceAttributes.namespace must match metadata.namespace: ${JSON.stringify(ns)} != ${JSON.stringify(namespace)}`);
          spec.resourceAttributes = { ...spec.resourceAttributes, namespace };
        }
        return answered(body, await authorize(attributesOf('LocalSubjectAccessReview', naming, spec, userOfSpec('LocalSubjectAccessReview', naming, spec))));
      },
    },
  };
}
