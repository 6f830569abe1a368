/**
 * Authorization's vocabulary, shared by the authorizers and the doors that ask them: the
 * attributes of a request (upstream's authorizer.Attributes) and a closed decision — allow,
 * deny, or no opinion (the next authorizer is asked; no opinion from all is a 403).
 */
import type { UserInfo } from '../core/api';

export interface AuthorizationAttributes {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  namespace: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  name: string;
}

export type Decision = { decision: 'allow' } | { decision: 'deny'; reason: string } | { decision: 'noOpinion'; reason?: string };

export interface Authorizer {
  authorize(attributes: AuthorizationAttributes): Decision | Promise<Decision>;
}
