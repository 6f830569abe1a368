/**
 * Step 9: authorization, inside the limits (steps 7 and 8) as upstream's chain has it. Authorizers return a closed decision and a union walks them in order;
 * the first allow or deny wins, and when none has an opinion the request is denied with 403
 * (docs/API.md, "Authentication and authorization"). The server builds the chain from its flags
 * (server/authorization.ts: RBAC, Node, ABAC, Webhook, …); a gateway given none holds the
 * `system:masters` superuser rule and the fixed grants of upstream's bootstrap roles
 * `system:public-info-viewer`, `system:discovery` and `system:basic-user`.
 */
import { type UserInfo, parseFieldSelector } from '../../core';
import type { Naming } from '../../naming';
import { type Exchange, type Handler, type RequestInfo, type Step, infoOf, rejectingThrows, userOf } from '../types';
import { AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP } from './authentication';
import { type AuthorizationAttributes, type Authorizer, type Decision, authorizeAll, forbiddenError } from '../../authz';
import { nonResourceUrlMatches } from '../../authz/rules';

export { type AuthorizationAttributes, type Authorizer, type Decision, authorizeAll, forbiddenError } from '../../authz';

export const SUPERUSER_GROUP = 'system:masters';

/** The field selector's requirements, for the verbs that select (none when it does not parse: the handler answers 400). */
function fieldRequirements(verb: string, query: URLSearchParams | undefined): AuthorizationAttributes['fieldSelector'] {
  const text = query?.get('fieldSelector');
  if (!text || !['list', 'watch', 'deletecollection'].includes(verb)) return undefined;
  try {
    return parseFieldSelector(text).requirements;
  } catch {
    return undefined;
  }
}

export function attributesFor(user: UserInfo, info: RequestInfo, query?: URLSearchParams, withSelectors = false): AuthorizationAttributes {
  if (!info.isResourceRequest) {
    return {
      user,
      verb: info.verb,
      isResourceRequest: false,
      path: info.path,
      namespace: '',
      apiGroup: '',
      apiVersion: '',
      resource: '',
      subresource: '',
      name: '',
    };
  }
  return {
    user,
    verb: info.verb,
    isResourceRequest: true,
    path: info.path,
    namespace: info.namespace,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
    ...(withSelectors ? { fieldSelector: fieldRequirements(info.verb, query) } : {}),
  };
}

/** Group `system:masters` is unrestricted, as upstream's authorizer union puts its superuser first. */
export const superuserAuthorizer: Authorizer = {
  authorize: (a) => (a.user.groups.includes(SUPERUSER_GROUP) ? { decision: 'allow' } : { decision: 'noOpinion' }),
};

interface BootstrapGrant {
  groups: readonly string[];
  nonResourceURLs?: readonly string[];
  resources?: { apiGroup: string; resources: readonly string[]; verbs: readonly string[] };
}

/**
 * The fixed grants of upstream's bootstrap cluster roles that matter before RBAC exists:
 * public-info-viewer (everyone), discovery and basic-user (authenticated users).
 */
export function bootstrapPolicyAuthorizer(naming: Naming): Authorizer {
  const grants: BootstrapGrant[] = [
    { groups: [AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] },
    {
      groups: [AUTHENTICATED_GROUP],
      nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'],
    },
    {
      groups: [AUTHENTICATED_GROUP],
      resources: { apiGroup: naming.groups.authorization, resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
    },
    { groups: [AUTHENTICATED_GROUP], resources: { apiGroup: naming.groups.authentication, resources: ['selfsubjectreviews'], verbs: ['create'] } },
  ];
  return {
    authorize(a) {
      for (const grant of grants) {
        if (!grant.groups.some((g) => a.user.groups.includes(g))) continue;
        if (!a.isResourceRequest && grant.nonResourceURLs && a.verb === 'get') {
          if (grant.nonResourceURLs.some((rule) => nonResourceUrlMatches(rule, a.path))) return { decision: 'allow' };
        }
        const r = grant.resources;
        if (a.isResourceRequest && r && r.apiGroup === a.apiGroup && r.verbs.includes(a.verb) && !a.subresource && r.resources.includes(a.resource)) {
          return { decision: 'allow' };
        }
      }
      return { decision: 'noOpinion' };
    },
  };
}

export function authorizationStep(authorizers: readonly Authorizer[], withSelectors = false, naming?: Naming): Step {
  const decisionKey = naming && `${naming.groups.authorization}/decision`;
  const reasonKey = naming && `${naming.groups.authorization}/reason`;
  const decide = (exchange: Exchange, next: Handler, attributes: AuthorizationAttributes, d: Decision): Promise<void> | void => {
    // Upstream's audit annotations of the decision.
    if (exchange.annotate && decisionKey && reasonKey) {
      exchange.annotate(decisionKey, d.decision === 'allow' ? 'allow' : 'forbid');
      exchange.annotate(reasonKey, d.reason ?? '');
    }
    if (d.decision === 'allow') return next(exchange);
    throw forbiddenError(attributes, d.reason ?? '');
  };
  // A request the authorizers decide at once goes on with no promise of this step's own.
  return (next) =>
    rejectingThrows((exchange) => {
      const attributes = attributesFor(userOf(exchange), infoOf(exchange), exchange.request.query, withSelectors);
      const d = authorizeAll(authorizers, attributes);
      if (d instanceof Promise) return d.then((decision) => decide(exchange, next, attributes, decision));
      return decide(exchange, next, attributes, d);
    });
}
