export type { AuthorizationAttributes, Authorizer, Decision } from './types';
export { appliesTo, rbacAuthorizer, ruleAllows, type RbacAuthorizer, type RbacOptions } from './rbac';
export { abacAuthorizer, abacGroup, abacPolicyAllows, loadAbacPolicy, readAbacPolicyFile, type AbacPolicy } from './abac';
export { accessReviewHandlers, type Authorize } from './access-review';
export { authorizeAll, forbiddenError } from './chain';
export { rbacEscalationPlugin, type EscalationOptions } from './escalation';
export type { PolicyRule } from './rbac';
