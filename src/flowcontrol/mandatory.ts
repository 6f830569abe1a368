/**
 * Upstream's mandatory configuration (`apis/flowcontrol/bootstrap`): the `exempt` and
 * `catch-all` FlowSchemas and priority levels the filter imagines while the API objects are
 * missing (before the configuration is first read, or after someone deleted them), so a request
 * always has a schema: members of `system:masters` are exempt, everyone else shares `catch-all`
 * (5 shares, Reject).
 */
import {
  FLOW_SCHEMA_CATCH_ALL,
  FLOW_SCHEMA_EXEMPT,
  type FlowSchema,
  PRIORITY_LEVEL_CATCH_ALL,
  PRIORITY_LEVEL_EXEMPT,
  type PolicyRulesWithSubjects,
  type PriorityLevelConfiguration,
} from '../core';

const EVERYTHING: Omit<PolicyRulesWithSubjects, 'subjects'> = {
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
};

export const MANDATORY_PRIORITY_LEVEL_EXEMPT: PriorityLevelConfiguration = {
  metadata: { name: PRIORITY_LEVEL_EXEMPT },
  spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } },
};

export const MANDATORY_PRIORITY_LEVEL_CATCH_ALL: PriorityLevelConfiguration = {
  metadata: { name: PRIORITY_LEVEL_CATCH_ALL },
  spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } } },
};

export const MANDATORY_FLOW_SCHEMA_EXEMPT: FlowSchema = {
  metadata: { name: FLOW_SCHEMA_EXEMPT },
  spec: {
    matchingPrecedence: 1,
    priorityLevelConfiguration: { name: PRIORITY_LEVEL_EXEMPT },
    rules: [{ subjects: [{ kind: 'Group', group: { name: 'system:masters' } }], ...EVERYTHING }],
  },
};

export const MANDATORY_FLOW_SCHEMA_CATCH_ALL: FlowSchema = {
  metadata: { name: FLOW_SCHEMA_CATCH_ALL },
  spec: {
    matchingPrecedence: 10000,
    priorityLevelConfiguration: { name: PRIORITY_LEVEL_CATCH_ALL },
    distinguisherMethod: { type: 'ByUser' },
    rules: [
      {
        subjects: [
          { kind: 'Group', group: { name: 'system:unauthenticated' } },
          { kind: 'Group', group: { name: 'system:authenticated' } },
        ],
        ...EVERYTHING,
      },
    ],
  },
};
