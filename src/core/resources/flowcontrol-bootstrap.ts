/**
 * API Priority and Fairness' default configuration, as upstream 1.32's `bootstrap` package
 * defines it: the mandatory objects (`exempt`, `catch-all`), whose specs validation pins and the
 * configuration controller always restores, and the suggested ones, which it creates and keeps up
 * to date while their autoupdate annotation says so. Every object is written fully defaulted, so
 * the defaulting of a write changes none of them. Vendor words (the system namespace, the
 * coordination group, the controller manager's and scheduler's object names) come from the
 * naming profile; user and group names are the identities the server authenticates.
 */
import type { Naming } from '../../naming';
import {
  FLOW_SCHEMA_CATCH_ALL,
  FLOW_SCHEMA_EXEMPT,
  FLOWCONTROL_WILDCARD as ALL,
  type FlowDistinguisherMethodType,
  type FlowSchema,
  type PolicyRulesWithSubjects,
  PRIORITY_LEVEL_CATCH_ALL,
  PRIORITY_LEVEL_EXEMPT,
  type PriorityLevelConfiguration,
  type PriorityLevelConfigurationSpec,
  type ResourcePolicyRule,
  type Subject,
} from './flowcontrol-types';

/** The objects of one kind: mandatory, then suggested, each list in upstream's order. */
export interface BootstrapObjects<T> {
  mandatory: T[];
  suggested: T[];
}

export interface FlowControlBootstrap {
  priorityLevels: BootstrapObjects<PriorityLevelConfiguration>;
  flowSchemas: BootstrapObjects<FlowSchema>;
}

// The identities upstream's suggested schemas name (user.SystemPrivilegedGroup and friends).
const MASTERS = 'system:masters';
const AUTHENTICATED = 'system:authenticated';
const UNAUTHENTICATED = 'system:unauthenticated';
const NODES = 'system:nodes';
const SERVICE_ACCOUNTS = 'system:serviceaccounts';
const CONTROLLER_MANAGER_USER = 'system:kube-controller-manager';
const SCHEDULER_USER = 'system:kube-scheduler';

const group = (name: string): Subject => ({ kind: 'Group', group: { name } });
const user = (name: string): Subject => ({ kind: 'User', user: { name } });
const serviceAccount = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', serviceAccount: { namespace, name } });

function resourceRule(verbs: string[], apiGroups: string[], resources: string[], namespaces: string[], clusterScope: boolean): ResourcePolicyRule {
  return clusterScope ? { verbs, apiGroups, resources, clusterScope, namespaces } : { verbs, apiGroups, resources, namespaces };
}

/** Every request of the subjects: all verbs on every resource in every namespace and none, and every path. */
function everything(subjects: Subject[]): PolicyRulesWithSubjects {
  return {
    subjects,
    resourceRules: [resourceRule([ALL], [ALL], [ALL], [ALL], true)],
    nonResourceRules: [{ verbs: [ALL], nonResourceURLs: [ALL] }],
  };
}

function flowSchema(
  naming: Naming,
  name: string,
  priorityLevel: string,
  matchingPrecedence: number,
  distinguisher: FlowDistinguisherMethodType | undefined,
  ...rules: PolicyRulesWithSubjects[]
): FlowSchema {
  return {
    metadata: { name, annotations: { [naming.labels.apfAutoupdate]: 'true' } },
    spec: {
      priorityLevelConfiguration: { name: priorityLevel },
      matchingPrecedence,
      ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}),
      rules,
    },
  };
}

function priorityLevel(naming: Naming, name: string, spec: PriorityLevelConfigurationSpec): PriorityLevelConfiguration {
  return { metadata: { name, annotations: { [naming.labels.apfAutoupdate]: 'true' } }, spec };
}

/** A Limited level that queues, with upstream's shares, lendable percent and queuing. */
function queuing(naming: Naming, name: string, shares: number, lendablePercent: number, queues: number, handSize: number): PriorityLevelConfiguration {
  return priorityLevel(naming, name, {
    type: 'Limited',
    limited: { nominalConcurrencyShares: shares, limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit: 50 } }, lendablePercent },
  });
}

/** Upstream 1.32's bootstrap configuration under the naming profile. */
export function flowControlBootstrap(naming: Naming): FlowControlBootstrap {
  const system = naming.namespaces.system;
  const coordination = naming.groups.coordination;
  const systemAccounts = serviceAccount(system, ALL);
  const leaderElectionRules = (namespace: string): ResourcePolicyRule[] => [
    resourceRule(['get', 'create', 'update'], [''], ['endpoints', 'configmaps'], [namespace], false),
    resourceRule(['get', 'create', 'update'], [coordination], ['leases'], [ALL], false),
  ];
  return {
    priorityLevels: {
      mandatory: [
        priorityLevel(naming, PRIORITY_LEVEL_EXEMPT, { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }),
        priorityLevel(naming, PRIORITY_LEVEL_CATCH_ALL, {
          type: 'Limited',
          limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' }, lendablePercent: 0 },
        }),
      ],
      suggested: [
        queuing(naming, 'system', 30, 33, 64, 6),
        queuing(naming, 'node-high', 40, 25, 64, 6),
        queuing(naming, 'leader-election', 10, 0, 16, 4),
        queuing(naming, 'workload-high', 40, 50, 128, 6),
        queuing(naming, 'workload-low', 100, 90, 128, 6),
        queuing(naming, 'global-default', 20, 50, 128, 6),
      ],
    },
    flowSchemas: {
      mandatory: [
        flowSchema(naming, FLOW_SCHEMA_EXEMPT, PRIORITY_LEVEL_EXEMPT, 1, undefined, everything([group(MASTERS)])),
        flowSchema(naming, FLOW_SCHEMA_CATCH_ALL, PRIORITY_LEVEL_CATCH_ALL, 10000, 'ByUser', everything([group(UNAUTHENTICATED), group(AUTHENTICATED)])),
      ],
      suggested: [
        flowSchema(naming, 'system-nodes', 'system', 500, 'ByUser', everything([group(NODES)])),
        flowSchema(naming, 'system-node-high', 'node-high', 400, 'ByUser', {
          subjects: [group(NODES)],
          resourceRules: [resourceRule([ALL], [''], ['nodes', 'nodes/status'], [ALL], true), resourceRule([ALL], [coordination], ['leases'], [ALL], false)],
        }),
        flowSchema(naming, 'probes', PRIORITY_LEVEL_EXEMPT, 2, undefined, {
          subjects: [group(UNAUTHENTICATED), group(AUTHENTICATED)],
          nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
        }),
        flowSchema(naming, 'system-leader-election', 'leader-election', 100, 'ByUser', {
          subjects: [user(CONTROLLER_MANAGER_USER), user(SCHEDULER_USER), systemAccounts],
          resourceRules: leaderElectionRules(system),
        }),
        flowSchema(naming, 'endpoint-controller', 'workload-high', 150, 'ByUser', {
          subjects: [user(CONTROLLER_MANAGER_USER), serviceAccount(system, 'endpoint-controller'), serviceAccount(system, 'endpointslicemirroring-controller')],
          resourceRules: [resourceRule(['get', 'create', 'update'], [''], ['endpoints'], [ALL], false)],
        }),
        flowSchema(naming, 'workload-leader-election', 'leader-election', 200, 'ByUser', {
          subjects: [systemAccounts],
          resourceRules: leaderElectionRules(ALL),
        }),
        flowSchema(naming, naming.leaderLeases.controllerManager, 'workload-high', 800, 'ByNamespace', everything([user(CONTROLLER_MANAGER_USER)])),
        flowSchema(naming, naming.leaderLeases.scheduler, 'workload-high', 800, 'ByNamespace', everything([user(SCHEDULER_USER)])),
        flowSchema(naming, `${system}-service-accounts`, 'workload-high', 900, 'ByNamespace', everything([systemAccounts])),
        flowSchema(naming, 'service-accounts', 'workload-low', 9000, 'ByUser', everything([group(SERVICE_ACCOUNTS)])),
        flowSchema(naming, 'global-default', 'global-default', 9900, 'ByUser', everything([group(UNAUTHENTICATED), group(AUTHENTICATED)])),
      ],
    },
  };
}

/** The mandatory object of that name, if it is one. */
export function mandatoryObject<T extends FlowSchema | PriorityLevelConfiguration>(objects: BootstrapObjects<T>, name: string | undefined): T | undefined {
  return objects.mandatory.find((o) => o.metadata?.name === name);
}
