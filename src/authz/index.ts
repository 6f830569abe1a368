export type { AuthorizationAttributes, Authorizer, Decision, RulesResult } from './types';
export { appliesTo, rbacAuthorizer, ruleAllows, type RbacAuthorizer, type RbacOptions } from './rbac';
export { accessReviewHandlers, type Authorize, type RulesFor } from './access-review';
export { authorizeAll, forbiddenError, rulesForAll } from './chain';
export { reconcilePolicy, reconcileRole, reconcileBinding, type ReconcileSummary } from './reconcile';
export { rbacEscalationPlugin, type EscalationOptions } from './escalation';
export type { PolicyRule } from './rbac';
export { bootstrapPolicy, type BootstrapPolicy } from './bootstrap-policy';
