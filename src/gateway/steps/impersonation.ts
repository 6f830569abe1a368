/**
 * Step 6: impersonation, as upstream's impersonation filter. `Impersonate-User`,
 * `Impersonate-Group` (repeatable), `Impersonate-Uid` and `Impersonate-Extra-<key>` ask to act
 * as another user; each part is authorized for the requesting user with the `impersonate` verb
 * (users, groups, service accounts, `uids` and `userextras` of the authentication group) and a
 * denial is upstream's 403. The request then runs as the impersonated user: with
 * `system:authenticated` added (or `system:unauthenticated` for `system:anonymous`), and a
 * service account's fixed groups when none were named.
 */
import type { UserInfo } from '../../core';
import type { Naming } from '../../naming';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP } from '../../authn';
import { badRequest } from '../../status';
import { type Exchange, type GatewayRequest, type Handler, type Step, rejectingThrows, userOf } from '../types';
import { type AuthorizationAttributes, type Authorizer, authorizeAll, forbiddenError } from './authorization';

const EXTRA_PREFIX = 'impersonate-extra-';
const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** What the headers ask for; undefined when they ask for nothing. */
export interface ImpersonationRequest {
  user: string;
  groups: string[];
  uid?: string;
  extra: Record<string, string[]>;
}

/** Header values as Node joins repeated headers (", "); impersonation values never contain ", " in practice. */
function values(request: GatewayRequest, name: string): string[] {
  const raw = request.headers[name];
  if (raw === undefined) return [];
  return raw.split(', ');
}

export function impersonationOf(request: GatewayRequest): ImpersonationRequest | undefined {
  // Nearly every request has no Impersonate-* header: nothing to collect.
  let asking = false;
  for (const name in request.headers) {
    if (name.startsWith('impersonate-')) {
      asking = true;
      break;
    }
  }
  if (!asking) return undefined;
  const users = values(request, 'impersonate-user');
  const groups = values(request, 'impersonate-group');
  const uids = values(request, 'impersonate-uid');
  const extra: Record<string, string[]> = {};
  for (const name of Object.keys(request.headers)) {
    if (!name.startsWith(EXTRA_PREFIX)) continue;
    let key = name.slice(EXTRA_PREFIX.length);
    try {
      key = decodeURIComponent(key);
    } catch {
      throw badRequest(`invalid impersonation extra key ${JSON.stringify(key)}`);
    }
    extra[key] = values(request, name);
  }
  const asked = groups.length > 0 || uids.length > 0 || Object.keys(extra).length > 0;
  if (users.length === 0) {
    // Upstream refuses groups, uid or extra without a user (it answers 500; a client's mistake is a 400 here).
    if (asked) throw badRequest('requested impersonation of groups, uid or extra without impersonating a user');
    return undefined;
  }
  const request_: ImpersonationRequest = { user: users[0]!, groups, extra };
  if (uids.length > 0) request_.uid = uids[0]!;
  return request_;
}

function serviceAccountOf(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
  return parts.length === 2 && parts[0] && parts[1] ? { namespace: parts[0], name: parts[1] } : undefined;
}

function checkFor(requester: UserInfo, fields: Partial<AuthorizationAttributes>): AuthorizationAttributes {
  return {
    user: requester,
    verb: 'impersonate',
    isResourceRequest: true,
    path: '',
    namespace: '',
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    name: '',
    ...fields,
  };
}

export interface ImpersonationStepOptions {
  authorizers: readonly Authorizer[];
  naming: Naming;
}

export function impersonationStep(options: ImpersonationStepOptions): Step {
  const authGroup = options.naming.groups.authentication;
  // A request that impersonates no one (nearly all) goes on with no promise of this step's own.
  return (next) =>
    rejectingThrows((exchange) => {
      const asked = impersonationOf(exchange.request);
      if (!asked) return next(exchange);
      return impersonate(exchange, next, asked);
    });

  async function impersonate(exchange: Exchange, next: Handler, asked: ImpersonationRequest): Promise<void> {
    const requester = userOf(exchange);
    const checks: AuthorizationAttributes[] = [];
    const sa = serviceAccountOf(asked.user);
    checks.push(
      sa
        ? checkFor(requester, { resource: 'serviceaccounts', namespace: sa.namespace, name: sa.name })
        : checkFor(requester, { resource: 'users', name: asked.user }),
    );
    for (const group of asked.groups) checks.push(checkFor(requester, { resource: 'groups', name: group }));
    if (asked.uid !== undefined) checks.push(checkFor(requester, { apiGroup: authGroup, resource: 'uids', name: asked.uid }));
    for (const [key, vals] of Object.entries(asked.extra)) {
      for (const value of vals) checks.push(checkFor(requester, { apiGroup: authGroup, resource: 'userextras', subresource: key, name: value }));
    }
    for (const check of checks) {
      const decision = await authorizeAll(options.authorizers, check);
      if (decision.decision !== 'allow') throw forbiddenError(check, decision.reason ?? '');
    }
    let groups = [...asked.groups];
    if (sa && groups.length === 0) groups = ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`];
    const implied = asked.user === ANONYMOUS_USER ? UNAUTHENTICATED_GROUP : AUTHENTICATED_GROUP;
    if (!groups.includes(implied)) groups.push(implied);
    const user: UserInfo = { username: asked.user, groups };
    if (asked.uid !== undefined) user.uid = asked.uid;
    if (Object.keys(asked.extra).length > 0) user.extra = asked.extra;
    exchange.user = user;
    return next(exchange);
  }
}
