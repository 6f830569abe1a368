/** The shapes of ValidatingAdmissionPolicy and its binding that admission acts on (admissionregistration/v1). */
import type { ApiObject } from '../../api';
import type { MetaLabelSelector } from '../../validation/selectors';
import type { MatchCondition, RuleWithOperations } from '../webhook/types';

export interface NamedRuleWithOperations extends RuleWithOperations {
  resourceNames?: string[];
}

export interface MatchResources {
  namespaceSelector?: MetaLabelSelector;
  objectSelector?: MetaLabelSelector;
  resourceRules?: NamedRuleWithOperations[];
  excludeResourceRules?: NamedRuleWithOperations[];
  matchPolicy?: 'Exact' | 'Equivalent';
}

export interface Validation {
  expression: string;
  message?: string;
  reason?: string;
  messageExpression?: string;
}

export interface AuditAnnotation {
  key: string;
  valueExpression: string;
}

export interface Variable {
  name: string;
  expression: string;
}

export interface ValidatingAdmissionPolicy extends ApiObject {
  spec?: {
    paramKind?: { apiVersion?: string; kind?: string };
    matchConstraints?: MatchResources;
    validations?: Validation[];
    failurePolicy?: 'Fail' | 'Ignore';
    auditAnnotations?: AuditAnnotation[];
    matchConditions?: MatchCondition[];
    variables?: Variable[];
  };
}

export interface ParamRef {
  name?: string;
  namespace?: string;
  selector?: MetaLabelSelector;
  parameterNotFoundAction?: 'Allow' | 'Deny';
}

export interface ValidatingAdmissionPolicyBinding extends ApiObject {
  spec?: {
    policyName?: string;
    paramRef?: ParamRef;
    matchResources?: MatchResources;
    validationActions?: Array<'Deny' | 'Warn' | 'Audit'>;
  };
}

/** Where the plugin finds policies, bindings and parameter objects. */
export interface PolicySource {
  policies(): readonly ValidatingAdmissionPolicy[];
  bindings(): readonly ValidatingAdmissionPolicyBinding[];
  /** The served type of `apiVersion`/`kind`, if any: its resource and whether it is namespaced. */
  paramType(apiVersion: string, kind: string): { group: string; version: string; resource: string; namespaced: boolean } | undefined;
  /** Objects of a parameter type: one by name, or those a selector picks, in a namespace ('' for cluster-scoped). */
  params(
    type: { group: string; version: string; resource: string },
    namespace: string,
    pick: { name: string } | { selector: MetaLabelSelector },
  ): Promise<ApiObject[]>;
}
