/**
 * Controllers that run in the server process (`--controllers`), each an ordinary API client of
 * the core, as kube-controller-manager's controllers are clients of kube-apiserver.
 */
import type { Core } from '../core';
import type { UserInfo } from '../core/api';
import { SharedInformers } from '../core/informer';
import type { Naming } from '../naming';
import { SERVICE_ACCOUNT_PREFIX } from '../authn/service-account';
import { NamespaceLifecycleController } from './namespace-lifecycle';
import { GarbageCollector } from './garbage-collector';
import { ClusterRoleAggregationController } from './clusterrole-aggregation';
import { ReplicaSetController } from './replicaset';
import { ServiceAccountController } from './serviceaccounts';
import { SimulatedNodes } from './simulated-nodes';
import { RootCaPublisher } from './root-ca-publisher';
import { AdmissionPolicyStatusController } from './admission-policy-status';
import { BootstrapSigner, TokenCleaner } from './bootstrap-tokens';
import { LeaderElector } from './leader-election';
import { Scheduler, SCHEDULER_USER } from './scheduler';
import { NodeLifecycleController, TaintEvictionController, type ZoneMetrics } from './node-lifecycle';
import { PodGarbageCollector } from './pod-gc';
import { DisruptionController } from './disruption';
import { type CsrSign, CsrApprovingController, CsrCleaner, CsrSigningController } from './certificates';
import type { WorkQueueMetrics } from './work-queue';
import { type Clock, systemClock } from '../clock';

export { NamespaceLifecycleController, NAMESPACE_FINALIZER } from './namespace-lifecycle';
export { GarbageCollector } from './garbage-collector';
export { ClusterRoleAggregationController, aggregatedRules } from './clusterrole-aggregation';
export { ReplicaSetController, rankForDeletion, isPodActive, podDeletionCostKey } from './replicaset';
export { ServiceAccountController, DEFAULT_SERVICE_ACCOUNT } from './serviceaccounts';
export { SimulatedNodes, MAX_SIMULATED_NODES, NODE_LEASE_DURATION_SECONDS, SIMULATED_NODE_MAX_PODS } from './simulated-nodes';
export { Scheduler, SCHEDULER_USER, DEFAULT_SCHEDULER_NAME, fitErrorMessage, tolerates, nodeMatches, podRequest } from './scheduler';
export { EventRecorder } from './events';
export { LeaderElector, LEASE_DURATION_MS, RENEW_DEADLINE_MS, RETRY_PERIOD_MS } from './leader-election';
export { RootCaPublisher } from './root-ca-publisher';
export { AdmissionPolicyStatusController } from './admission-policy-status';
export {
  type ZoneMetrics,
  NodeLifecycleController,
  TaintEvictionController,
  NODE_MONITOR_PERIOD_MS,
  NODE_MONITOR_GRACE_PERIOD_MS,
  NODE_STARTUP_GRACE_PERIOD_MS,
  NODE_EVICTION_RATE,
  SECONDARY_NODE_EVICTION_RATE,
  LARGE_CLUSTER_SIZE_THRESHOLD,
  UNHEALTHY_ZONE_THRESHOLD,
} from './node-lifecycle';
export { PodGarbageCollector, POD_GC_CHECK_PERIOD_MS, POD_GC_QUARANTINE_MS, TERMINATED_POD_GC_THRESHOLD } from './pod-gc';
export { DisruptionController, DISRUPTED_POD_TIMEOUT_MS } from './disruption';
export { CsrSigningController, CsrApprovingController, CsrCleaner, CLUSTER_SIGNING_DURATION_MS, type CsrSign } from './certificates';
export { BootstrapSigner, TokenCleaner, CLUSTER_INFO, JWS_KEY_PREFIX, bootstrapToken, detachedSignature } from './bootstrap-tokens';

/** Upstream's controller names (kube-controller-manager `--controllers`). */
export const CONTROLLER_NAMES = [
  'namespace',
  'garbagecollector',
  'clusterrole-aggregation',
  'replicaset',
  'serviceaccount',
  'root-ca-cert-publisher',
  'tokencleaner',
  'bootstrapsigner',
  'validatingadmissionpolicy-status-controller',
  'nodelifecycle',
  'taint-eviction-controller',
  'podgc',
  'disruption',
  'csrsigning',
  'csrapproving',
  'csrcleaner',
] as const;
export type ControllerName = (typeof CONTROLLER_NAMES)[number];

/** Controllers `*` leaves out, as upstream does: they run only when named. */
export const DISABLED_BY_DEFAULT: ReadonlySet<ControllerName> = new Set(['tokencleaner', 'bootstrapsigner']);

export interface RunningControllers {
  /** Stop them; resolves once any leader Lease held has been released. */
  stop(): Promise<void>;
  /** With leader election: throws when a Lease this process leads with went unrenewed too long. */
  checkLeaderElection?(): void;
}

/** Upstream's `--controllers` syntax: `*` for all, a name to enable, `-name` to disable. */
export function enabledControllers(spec: readonly string[]): ControllerName[] {
  const all = spec.includes('*');
  return CONTROLLER_NAMES.filter((n) => !spec.includes(`-${n}`) && (spec.includes(n) || (all && !DISABLED_BY_DEFAULT.has(n))));
}

export interface ControllerOptions {
  /** `--simulated-nodes`: that many simulated nodes, and with any the scheduler (0: neither). */
  simulatedNodes?: number;
  /** The CA bundle `root-ca-cert-publisher` publishes in every namespace. */
  rootCA?: string;
  /** `--leader-elect`: run only while holding the leader Lease. */
  leaderElect?: boolean;
  /** This process's leader-election identity (default `<hostname>_<uuid>`). */
  identity?: string;
  /**
   * `--use-service-account-credentials`: each controller acts as its own service account in the
   * system namespace (`system:serviceaccount:<system>:<controller's account>`, bound to
   * `system:controller:<account>`), as upstream's; otherwise all act as the controller manager.
   */
  useServiceAccountCredentials?: boolean;
  /** The time every controller, the nodes and leader election read (default the system clock). */
  clock?: Clock;
  /** `--node-monitor-period`, `--node-monitor-grace-period`, `--node-startup-grace-period` (ms; upstream's defaults when absent). */
  nodeMonitorPeriodMs?: number;
  nodeMonitorGracePeriodMs?: number;
  nodeStartupGracePeriodMs?: number;
  /** Where the controllers' work queues report (upstream's `workqueue_*` metrics). */
  workQueueMetrics?: WorkQueueMetrics;
  /** Where the node lifecycle controller's zone figures go (upstream's `node_collector_*` metrics). */
  zoneMetrics?: ZoneMetrics;
  /** What `csrsigning` signs approved requests with (the cluster CA); absent, it does not start. */
  csrSign?: CsrSign;
  /** `--cluster-signing-duration` in milliseconds (a year when absent). */
  clusterSigningDurationMs?: number;
  /** `--terminated-pod-gc-threshold`: terminated pods kept before podgc deletes the oldest; <= 0 keeps them all. */
  terminatedPodGcThreshold?: number;
  /** `--node-eviction-rate`, `--secondary-node-eviction-rate`, `--large-cluster-size-threshold`, `--unhealthy-zone-threshold` (upstream's defaults when absent). */
  nodeEvictionRate?: number;
  secondaryNodeEvictionRate?: number;
  largeClusterSizeThreshold?: number;
  unhealthyZoneThreshold?: number;
}

/**
 * Who the controllers (and their leader election) act as, unless each has its own service account.
 * In process the core takes the groups as given (cluster-admin, as the controllers' writes need
 * without service-account credentials); over gRPC the credential decides them.
 */
export const CONTROLLER_MANAGER_USER: UserInfo = { username: 'system:kube-controller-manager', groups: ['system:masters', 'system:authenticated'] };

/** Upstream's service account of each controller (kube-controller-manager's `--use-service-account-credentials`). */
export const CONTROLLER_SERVICE_ACCOUNTS: Readonly<Record<ControllerName, string>> = {
  namespace: 'namespace-controller',
  garbagecollector: 'generic-garbage-collector',
  'clusterrole-aggregation': 'clusterrole-aggregation-controller',
  replicaset: 'replicaset-controller',
  serviceaccount: 'service-account-controller',
  'root-ca-cert-publisher': 'root-ca-cert-publisher',
  tokencleaner: 'token-cleaner',
  bootstrapsigner: 'bootstrap-signer',
  'validatingadmissionpolicy-status-controller': 'validatingadmissionpolicy-status-controller',
  nodelifecycle: 'node-controller',
  'taint-eviction-controller': 'node-controller',
  podgc: 'pod-garbage-collector',
  disruption: 'disruption-controller',
  csrsigning: 'certificate-controller',
  csrapproving: 'certificate-controller',
  csrcleaner: 'certificate-controller',
};

/** The user a controller acts as. */
export function controllerUser(naming: Naming, name: ControllerName, useServiceAccountCredentials: boolean | undefined): UserInfo {
  if (!useServiceAccountCredentials) return CONTROLLER_MANAGER_USER;
  const namespace = naming.namespaces.system;
  return {
    username: `${SERVICE_ACCOUNT_PREFIX}${namespace}:${CONTROLLER_SERVICE_ACCOUNTS[name]}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
  };
}

function runControllers(core: Core, names: readonly ControllerName[], log: ((m: string) => void) | undefined, options: ControllerOptions): RunningControllers {
  const userOf = (name: ControllerName) => controllerUser(core.naming, name, options.useServiceAccountCredentials);
  const running: { stop(): void }[] = [];
  // One informer per resource for all of them, as upstream's controller manager shares its informers.
  const informers = new SharedInformers(core, { user: CONTROLLER_MANAGER_USER, userAgent: 'keelson-controller-manager/shared-informers' }, options.clock ?? systemClock);
  if (names.includes('namespace')) {
    const user = userOf('namespace');
    const c = new NamespaceLifecycleController({ core, resources: core.resources, user, log });
    void c.start();
    running.push(c);
  }
  if (names.includes('garbagecollector')) {
    const user = userOf('garbagecollector');
    const gc = new GarbageCollector({ core, resources: core.resources, user, log, queueMetrics: options.workQueueMetrics });
    gc.start();
    running.push(gc);
  }
  if (names.includes('clusterrole-aggregation')) {
    running.push(new ClusterRoleAggregationController({ core, informers, rbacGroup: core.naming.groups.rbac, user: userOf('clusterrole-aggregation'), clock: options.clock ?? systemClock, log }));
  }
  if (names.includes('replicaset') && !served(core, core.naming.apiGroups.apps, 'replicasets')) {
    log?.('replicaset controller: not started, replicasets are not served (--runtime-config)');
  } else if (names.includes('replicaset')) {
    const rs = new ReplicaSetController({ core, informers, naming: core.naming, user: userOf('replicaset'), clock: options.clock ?? systemClock, log, queueMetrics: options.workQueueMetrics });
    rs.start();
    running.push(rs);
  }
  if (names.includes('serviceaccount')) {
    const sa = new ServiceAccountController({ core, informers, user: userOf('serviceaccount'), clock: options.clock ?? systemClock, log, queueMetrics: options.workQueueMetrics });
    sa.start();
    running.push(sa);
  }
  if (names.includes('root-ca-cert-publisher') && options.rootCA) {
    const publisher = new RootCaPublisher({ core, informers, naming: core.naming, clock: options.clock ?? systemClock, user: userOf('root-ca-cert-publisher'), rootCA: options.rootCA, log, queueMetrics: options.workQueueMetrics });
    publisher.start();
    running.push(publisher);
  }
  const tokenOptions = { core, informers, naming: core.naming, clock: options.clock ?? systemClock, log, queueMetrics: options.workQueueMetrics };
  if (names.includes('tokencleaner')) {
    const cleaner = new TokenCleaner({ ...tokenOptions, user: userOf('tokencleaner') });
    cleaner.start();
    running.push(cleaner);
  }
  if (names.includes('bootstrapsigner')) {
    const signer = new BootstrapSigner({ ...tokenOptions, user: userOf('bootstrapsigner') });
    signer.start();
    running.push(signer);
  }
  const policyStatus = 'validatingadmissionpolicy-status-controller';
  if (names.includes(policyStatus) && served(core, core.naming.groups.admissionregistration, 'validatingadmissionpolicies')) {
    const c = new AdmissionPolicyStatusController({ core, informers, naming: core.naming, resources: core.resources, clock: options.clock ?? systemClock, user: userOf(policyStatus), log, queueMetrics: options.workQueueMetrics });
    c.start();
    running.push(c);
  }
  if (['nodelifecycle', 'taint-eviction-controller', 'podgc'].some((n) => names.includes(n as ControllerName)) && !served(core, '', 'nodes')) {
    log?.('node lifecycle, taint eviction and pod garbage collection: not started, nodes are not served (--runtime-config)');
  } else {
    const nodeOptions = { core, informers, naming: core.naming, clock: options.clock ?? systemClock, watchAs: CONTROLLER_MANAGER_USER, log, queueMetrics: options.workQueueMetrics };
    if (names.includes('nodelifecycle')) {
      const leases = served(core, core.naming.groups.coordination, 'leases');
      const c = new NodeLifecycleController({
        ...nodeOptions,
        leases,
        user: userOf('nodelifecycle'),
        monitorPeriodMs: options.nodeMonitorPeriodMs,
        gracePeriodMs: options.nodeMonitorGracePeriodMs,
        startupGracePeriodMs: options.nodeStartupGracePeriodMs,
        evictionRate: options.nodeEvictionRate,
        secondaryEvictionRate: options.secondaryNodeEvictionRate,
        largeClusterSizeThreshold: options.largeClusterSizeThreshold,
        unhealthyZoneThreshold: options.unhealthyZoneThreshold,
        ...(options.zoneMetrics ? { metrics: options.zoneMetrics } : {}),
      });
      c.start();
      running.push(c);
    }
    if (names.includes('taint-eviction-controller')) {
      const c = new TaintEvictionController({ ...nodeOptions, user: userOf('taint-eviction-controller') });
      c.start();
      running.push(c);
    }
    if (names.includes('podgc')) {
      const c = new PodGarbageCollector({ ...nodeOptions, user: userOf('podgc'), terminatedThreshold: options.terminatedPodGcThreshold });
      c.start();
      running.push(c);
    }
  }
  const csrs = served(core, core.naming.groups.certificates, 'certificatesigningrequests');
  const certOptions = { core, informers, naming: core.naming, clock: options.clock ?? systemClock, log, queueMetrics: options.workQueueMetrics };
  if (names.includes('csrsigning') && csrs && options.csrSign) {
    const c = new CsrSigningController({ ...certOptions, user: userOf('csrsigning'), sign: options.csrSign, durationMs: options.clusterSigningDurationMs });
    c.start();
    running.push(c);
  } else if (names.includes('csrsigning') && csrs) {
    log?.('csrsigning: not started, no cluster signing CA (--cluster-signing-cert-file and --cluster-signing-key-file)');
  }
  if (names.includes('csrapproving') && csrs) {
    const c = new CsrApprovingController({ ...certOptions, user: userOf('csrapproving') });
    c.start();
    running.push(c);
  }
  if (names.includes('csrcleaner') && csrs) {
    const c = new CsrCleaner({ ...certOptions, user: userOf('csrcleaner') });
    c.start();
    running.push(c);
  }
  if (names.includes('disruption') && served(core, 'policy', 'poddisruptionbudgets')) {
    const c = new DisruptionController({ core, informers, naming: core.naming, clock: options.clock ?? systemClock, watchAs: CONTROLLER_MANAGER_USER, user: userOf('disruption'), log, queueMetrics: options.workQueueMetrics });
    c.start();
    running.push(c);
  }
  return {
    stop: async () => running.forEach((c) => c.stop()),
  };
}

function served(core: Core, group: string, resource: string): boolean {
  return core.resources.some((d) => d.group === group && d.resource === resource);
}

/** The scheduler and the simulated nodes (`--simulated-nodes`), which act for the cluster's nodes. */
function runNodes(core: Core, log: ((m: string) => void) | undefined, options: ControllerOptions): RunningControllers {
  const nodes = new SimulatedNodes({ core, naming: core.naming, clock: options.clock ?? systemClock, count: options.simulatedNodes ?? 0, watchAs: SCHEDULER_USER, log });
  const scheduler = new Scheduler({ core, naming: core.naming, clock: options.clock ?? systemClock, log });
  nodes.start();
  scheduler.start();
  return {
    stop: async () => {
      scheduler.stop();
      nodes.stop();
    },
  };
}

/**
 * Start the controllers (and, with `simulatedNodes`, the scheduler and the nodes). With
 * `leaderElect`, each group runs only while this process holds its Lease
 * (`<prefix>-controller-manager`, `<prefix>-scheduler`), so several processes on one store
 * run them once.
 */
export function startControllers(core: Core, names: readonly ControllerName[], log?: (m: string) => void, options: ControllerOptions = {}): RunningControllers {
  // A process with no controllers (or no nodes) does not take their Lease from one that has them.
  const groups: Array<{ lease: string; user: UserInfo; run: () => RunningControllers }> = [];
  if (names.length > 0) groups.push({ lease: core.naming.leaderLeases.controllerManager, user: CONTROLLER_MANAGER_USER, run: () => runControllers(core, names, log, options) });
  const nodesServed = served(core, '', 'nodes') && served(core, core.naming.groups.coordination, 'leases');
  if ((options.simulatedNodes ?? 0) > 0 && !nodesServed) log?.('simulated nodes: not started, nodes or leases are not served (--runtime-config)');
  if ((options.simulatedNodes ?? 0) > 0 && nodesServed) groups.push({ lease: core.naming.leaderLeases.scheduler, user: SCHEDULER_USER, run: () => runNodes(core, log, options) });
  if (!options.leaderElect) {
    const running = groups.map((g) => g.run());
    return { stop: async () => void (await Promise.all(running.map((r) => r.stop()))) };
  }
  const electors = groups.map((g) => {
    let running: RunningControllers | undefined;
    const elector = new LeaderElector({
      core,
      naming: core.naming,
      clock: options.clock ?? systemClock,
      user: g.user,
      name: g.lease,
      identity: options.identity,
      onStartedLeading: () => (running = g.run()),
      onStoppedLeading: () => {
        void running?.stop();
        running = undefined;
      },
      log,
    });
    elector.start();
    return elector;
  });
  return { stop: async () => void (await Promise.all(electors.map((e) => e.stop()))), checkLeaderElection: () => electors.forEach((e) => e.check()) };
}
