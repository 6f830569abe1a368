/**
 * The chain of authorizers, as upstream's union walks it: in order, the first allow or deny is
 * final, no opinion from all is a 403 with upstream's message.
 */
import { StatusError, forbidden } from '../status';
import type { UserInfo } from '../core';
import type { AuthorizationAttributes, Authorizer, Decision, RulesResult } from './types';

/**
 * Walk the authorizers in order; the first allow or deny is final. A named authorizer's reason
 * is prefixed with its name (`RBAC: allowed by …`), and when none has an opinion the reason
 * joins what each one that had something to say answered — which authorizer looked at the
 * request and why it did not allow it.
 */
export function authorizeAll(authorizers: readonly Authorizer[], attributes: AuthorizationAttributes): Decision | Promise<Decision> {
  // Synchronous while the authorizers answer synchronously (the superuser rule, RBAC), so a
  // request they decide costs no promise; the first one that answers later turns the walk async.
  const reasons: string[] = [];
  for (let i = 0; i < authorizers.length; i++) {
    const d = authorizers[i]!.authorize(attributes);
    if (d instanceof Promise) return d.then((first) => walkFrom(authorizers, attributes, i, first, reasons));
    const final = decided(authorizers[i]!, d, reasons);
    if (final) return final;
  }
  return { decision: 'noOpinion', reason: reasons.join('; ') };
}

async function walkFrom(
  authorizers: readonly Authorizer[],
  attributes: AuthorizationAttributes,
  at: number,
  first: Decision,
  reasons: string[],
): Promise<Decision> {
  let d = first;
  for (let i = at; ; ) {
    const final = decided(authorizers[i]!, d, reasons);
    if (final) return final;
    if (++i >= authorizers.length) return { decision: 'noOpinion', reason: reasons.join('; ') };
    d = await authorizers[i]!.authorize(attributes);
  }
}

/** The chain's answer if `d` is final (allow or deny), else undefined with its reason noted. */
function decided(authorizer: Authorizer, d: Decision, reasons: string[]): Decision | undefined {
  if (d.decision === 'deny') return d;
  if (d.decision === 'allow') return d.reason && authorizer.name ? { decision: 'allow', reason: `${authorizer.name}: ${d.reason}` } : d;
  // An authorizer with nothing to say about this request (Node, for a user that is no node) is left out.
  if (d.reason) reasons.push(authorizer.name ? `${authorizer.name}: ${d.reason}` : d.reason);
  return undefined;
}

/** Upstream's union of rule resolvers: every authorizer's rules; incomplete if any is. */
export function rulesForAll(authorizers: readonly Authorizer[], user: UserInfo, namespace: string): RulesResult {
  const all: RulesResult = { resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] };
  for (const authorizer of authorizers) {
    if (!authorizer.rulesFor) continue;
    const r = authorizer.rulesFor(user, namespace);
    all.resourceRules.push(...r.resourceRules);
    all.nonResourceRules.push(...r.nonResourceRules);
    all.incomplete ||= r.incomplete;
    all.errors.push(...r.errors);
  }
  return all;
}

/** Upstream's responsewriters.Forbidden message and Status. */
export function forbiddenError(a: AuthorizationAttributes, reason: string): StatusError {
  const suffix = reason ? `: ${reason}` : '';
  const username = a.user.username;
  if (!a.isResourceRequest) {
    return new StatusError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `forbidden: User ${JSON.stringify(username)} cannot ${a.verb} path ${JSON.stringify(a.path)}${suffix}`,
      reason: 'Forbidden',
      details: {},
      code: 403,
    });
  }
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  const msg = `User ${JSON.stringify(username)} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${scope}`;
  return forbidden({ group: a.apiGroup, resource: a.resource }, a.name, msg + suffix);
}
