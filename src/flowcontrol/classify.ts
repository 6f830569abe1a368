/**
 * Classification, as upstream's filter matches (`rule.go`): the first FlowSchema, in order of
 * matching precedence then name, with a rule whose subjects take the user and whose resource
 * rules (or, for a non-resource request, non-resource rules) take the request. The flow is the
 * schema's name plus its distinguisher: the user's name (ByUser), the namespace (ByNamespace),
 * or nothing.
 */
import type { UserInfo } from '../core';
import {
  FLOWCONTROL_WILDCARD,
  type FlowSchema,
  type NonResourcePolicyRule,
  type PolicyRulesWithSubjects,
  type ResourcePolicyRule,
  type Subject,
} from '../core';

/** What classification and work estimation read of a request (upstream's RequestDigest). */
export interface FlowRequest {
  user: UserInfo;
  isResourceRequest: boolean;
  /** Upstream's request verb: get, list, watch, create, ...; a non-resource request's lower-case method. */
  verb: string;
  path: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** Upstream's FlowSchemaSequence order: lower matching precedence first, then name. */
export function bySchemaPrecedence(a: FlowSchema, b: FlowSchema): number {
  const pa = a.spec?.matchingPrecedence ?? 1000;
  const pb = b.spec?.matchingPrecedence ?? 1000;
  if (pa !== pb) return pa - pb;
  const na = a.metadata?.name ?? '';
  const nb = b.metadata?.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

export function matchesFlowSchema(request: FlowRequest, schema: FlowSchema): boolean {
  for (const rule of schema.spec?.rules ?? []) if (matchesRule(request, rule)) return true;
  return false;
}

function matchesRule(request: FlowRequest, rule: PolicyRulesWithSubjects): boolean {
  if (!rule.subjects?.some((s) => matchesSubject(request.user, s))) return false;
  if (request.isResourceRequest) return (rule.resourceRules ?? []).some((r) => matchesResourceRule(request, r));
  return (rule.nonResourceRules ?? []).some((r) => matchesNonResourceRule(request, r));
}

export function matchesSubject(user: UserInfo, subject: Subject): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.user !== undefined && (subject.user.name === FLOWCONTROL_WILDCARD || subject.user.name === user.username);
    case 'Group':
      if (!subject.group) return false;
      return subject.group.name === FLOWCONTROL_WILDCARD || user.groups.includes(subject.group.name);
    case 'ServiceAccount': {
      const sa = subject.serviceAccount;
      if (!sa) return false;
      if (sa.name === FLOWCONTROL_WILDCARD) return user.username.startsWith(`${SERVICE_ACCOUNT_PREFIX}${sa.namespace}:`);
      return user.username === `${SERVICE_ACCOUNT_PREFIX}${sa.namespace}:${sa.name}`;
    }
    default:
      return false;
  }
}

function matchesResourceRule(request: FlowRequest, rule: ResourcePolicyRule): boolean {
  if (!contains(rule.verbs, request.verb)) return false;
  const resource = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
  if (!contains(rule.resources, resource)) return false;
  if (!contains(rule.apiGroups, request.apiGroup)) return false;
  if (request.namespace === '') return rule.clusterScope === true;
  return contains(rule.namespaces, request.namespace);
}

function matchesNonResourceRule(request: FlowRequest, rule: NonResourcePolicyRule): boolean {
  if (!contains(rule.verbs, request.verb)) return false;
  for (const url of rule.nonResourceURLs ?? []) {
    if (url === FLOWCONTROL_WILDCARD || url === request.path) return true;
    // As upstream: the rule's path, its `*` taken off, is a prefix of whole segments.
    let prefix = url.endsWith('*') ? url.slice(0, -1) : url;
    if (!prefix.endsWith('/')) prefix += '/';
    if (request.path.startsWith(prefix)) return true;
  }
  return false;
}

/** Upstream's containsString: the wildcard counts only as the list's one entry. */
function contains(list: readonly string[] | undefined, value: string): boolean {
  if (!list) return false;
  if (list.length === 1 && list[0] === FLOWCONTROL_WILDCARD) return true;
  return list.includes(value);
}

/** The flow distinguisher a schema asks for. */
export function flowDistinguisher(request: FlowRequest, schema: FlowSchema): string {
  switch (schema.spec?.distinguisherMethod?.type) {
    case 'ByUser':
      return request.user.username;
    case 'ByNamespace':
      return request.namespace;
    default:
      return '';
  }
}
