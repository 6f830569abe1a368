/**
 * The chain of authorizers, as upstream's union walks it: in order, the first allow or deny is
 * final, no opinion from all is a 403 with upstream's message.
 */
import { StatusError, forbidden } from '../status';
import type { AuthorizationAttributes, Authorizer, Decision } from './types';

/** Walk the authorizers in order; the first allow or deny is final. */
export async function authorizeAll(authorizers: readonly Authorizer[], attributes: AuthorizationAttributes): Promise<Decision> {
  const reasons: string[] = [];
  for (const authorizer of authorizers) {
    const d = await authorizer.authorize(attributes);
    if (d.decision !== 'noOpinion') return d;
    if (d.reason) reasons.push(d.reason);
  }
  return { decision: 'noOpinion', reason: reasons.join('\n') };
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

