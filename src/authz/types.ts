/**
 * Authorization's vocabulary, shared by the authorizers and the doors that ask them: the
 * attributes of a request (upstream's authorizer.Attributes) and a closed decision — allow,
 * deny, or no opinion (the next authorizer is asked; no opinion from all is a 403).
 */
import type { UserInfo } from '../core';

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
  /**
   * The request's field selector, for list, watch and deletecollection under the
   * `AuthorizeWithSelectors` gate (a kubelet lists only its pods by `spec.nodeName`).
   */
  fieldSelector?: ReadonlyArray<{ field: string; operator: '=' | '!='; value: string }>;
}

export type Decision = { decision: 'allow'; reason?: string } | { decision: 'deny'; reason: string } | { decision: 'noOpinion'; reason?: string };

export interface Authorizer {
  authorize(attributes: AuthorizationAttributes): Decision | Promise<Decision>;
  /** The name the chain reports it by (`RBAC`, `Node`, a webhook's name); unnamed ones are not reported. */
  readonly name?: string;
  /** What the authorizer allows `user` at `namespace`, for SelfSubjectRulesReview. */
  rulesFor?(user: UserInfo, namespace: string): RulesResult;
}

/** The rules a user holds at one namespace, as upstream's RuleResolver answers for SelfSubjectRulesReview. */
export interface RulesResult {
  resourceRules: Array<{ verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }>;
  nonResourceRules: Array<{ verbs: string[]; nonResourceURLs?: string[] }>;
  /** The authorizer cannot list everything it would allow (a webhook, say). */
  incomplete: boolean;
  /** What went wrong while collecting (a binding to a missing role, say). */
  errors: string[];
}

/** An authorizer that can also list what it allows (upstream's RuleResolver). */
export interface RuleResolver {
  rulesFor(user: UserInfo, namespace: string): RulesResult;
}
