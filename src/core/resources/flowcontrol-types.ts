/**
 * The objects of API Priority and Fairness, `flowcontrol.apiserver.<group domain>` v1 (and v1beta3,
 * which has the same shape): FlowSchema classifies requests into a priority level and a flow,
 * PriorityLevelConfiguration says how a level's share of the server's concurrency is used. Field
 * names are upstream's JSON names; the request filter reads these types, the type modules
 * (`flowschemas.ts`, `prioritylevelconfigurations.ts`) serve them.
 */
import type { ApiObject } from '../api';

/** The two mandatory objects' names (each is both a FlowSchema and a PriorityLevelConfiguration). */
export const FLOW_SCHEMA_EXEMPT = 'exempt';
export const FLOW_SCHEMA_CATCH_ALL = 'catch-all';
export const PRIORITY_LEVEL_EXEMPT = 'exempt';
export const PRIORITY_LEVEL_CATCH_ALL = 'catch-all';

/** The wildcard of every list in a rule (verbs, apiGroups, resources, namespaces, nonResourceURLs, names). */
export const FLOWCONTROL_WILDCARD = '*';

/** The condition the configuration controller keeps on every FlowSchema. */
export const FLOW_SCHEMA_CONDITION_DANGLING = 'Dangling';

/** Upstream's FlowSchemaMaxMatchingPrecedence. */
export const FLOW_SCHEMA_MAX_MATCHING_PRECEDENCE = 10000;

/** The response headers naming the objects a request was classified by (upstream's names). */
export const RESPONSE_HEADER_FLOW_SCHEMA_UID = 'X-Kubernetes-PF-FlowSchema-UID';
export const RESPONSE_HEADER_PRIORITY_LEVEL_UID = 'X-Kubernetes-PF-PriorityLevel-UID';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export type FlowDistinguisherMethodType = 'ByUser' | 'ByNamespace';

export interface FlowDistinguisherMethod {
  type: FlowDistinguisherMethodType;
}

export interface PriorityLevelConfigurationReference {
  name: string;
}

export type SubjectKind = 'User' | 'Group' | 'ServiceAccount';

export interface UserSubject {
  /** A username, or `*` for all. */
  name: string;
}

export interface GroupSubject {
  /** A group name, or `*` for all. */
  name: string;
}

export interface ServiceAccountSubject {
  namespace: string;
  /** A service account's name, or `*` for every one in the namespace. */
  name: string;
}

/** A union: `kind` says which one of `user`, `group`, `serviceAccount` is set. */
export interface Subject {
  kind: SubjectKind;
  user?: UserSubject;
  group?: GroupSubject;
  serviceAccount?: ServiceAccountSubject;
}

export interface ResourcePolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  /** Matches requests without a namespace (cluster-scoped objects, or across all namespaces). */
  clusterScope?: boolean;
  /** Matched against a request's namespace; `*` matches any namespace but not "no namespace". */
  namespaces?: string[];
}

export interface NonResourcePolicyRule {
  verbs: string[];
  /** Paths, or prefixes ending in `/*`, or `*` alone. */
  nonResourceURLs: string[];
}

/** Matches when one subject and one of the resource or non-resource rules match. */
export interface PolicyRulesWithSubjects {
  subjects: Subject[];
  resourceRules?: ResourcePolicyRule[];
  nonResourceRules?: NonResourcePolicyRule[];
}

export interface FlowSchemaSpec {
  priorityLevelConfiguration: PriorityLevelConfigurationReference;
  /** 1..10000, lower wins; defaults to 1000. */
  matchingPrecedence?: number;
  /** Absent: every request of the schema is one flow. */
  distinguisherMethod?: FlowDistinguisherMethod;
  rules?: PolicyRulesWithSubjects[];
}

export interface FlowSchemaCondition {
  type?: string;
  status?: ConditionStatus;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}

export interface FlowSchemaStatus {
  conditions?: FlowSchemaCondition[];
}

export interface FlowSchema extends ApiObject {
  spec?: FlowSchemaSpec;
  status?: FlowSchemaStatus;
}

export type PriorityLevelEnablement = 'Exempt' | 'Limited';

export type LimitResponseType = 'Queue' | 'Reject';

export interface QueuingConfiguration {
  /** Defaults to 64. */
  queues?: number;
  /** Defaults to 8. */
  handSize?: number;
  /** Defaults to 50. */
  queueLengthLimit?: number;
}

export interface LimitResponse {
  type: LimitResponseType;
  /** Only with `type: Queue`. */
  queuing?: QueuingConfiguration;
}

export interface LimitedPriorityLevelConfiguration {
  /** v1: 30 when unspecified, an explicit 0 stays 0 (a "jail" level). */
  nominalConcurrencyShares?: number | null;
  limitResponse?: LimitResponse;
  /** 0..100, defaults to 0. */
  lendablePercent?: number;
  /** Absent: no limit on borrowing. */
  borrowingLimitPercent?: number;
}

export interface ExemptPriorityLevelConfiguration {
  /** Defaults to 0. */
  nominalConcurrencyShares?: number;
  /** 0..100, defaults to 0. */
  lendablePercent?: number;
}

export interface PriorityLevelConfigurationSpec {
  type: PriorityLevelEnablement;
  /** Set if and only if `type` is Limited. */
  limited?: LimitedPriorityLevelConfiguration;
  /** Only with `type` Exempt. */
  exempt?: ExemptPriorityLevelConfiguration;
}

export interface PriorityLevelConfigurationCondition {
  type?: string;
  status?: ConditionStatus;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}

export interface PriorityLevelConfigurationStatus {
  conditions?: PriorityLevelConfigurationCondition[];
}

export interface PriorityLevelConfiguration extends ApiObject {
  spec?: PriorityLevelConfigurationSpec;
  status?: PriorityLevelConfigurationStatus;
}
