/**
 * Controllers that run in the server process (`--controllers`), each an ordinary API client of
 * the core, as kube-controller-manager's controllers are clients of kube-apiserver.
 */
import { type Core, type UserInfo, SharedInformers } from '../core';
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
import { EndpointsController } from './endpoints-controller';
import { EndpointSliceController } from './endpointslice';
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
export {
  ClusterAuthenticationTrustController,
  AUTHENTICATION_CONFIGMAP,
  AUTHENTICATION_TRUST_RESYNC_MS,
  type ClusterAuthenticationInfo,
} from './cluster-authentication-trust';
export { AdmissionPolicyStatusController } from './admission-policy-status';
export { FlowControlConfigController, danglingCondition, parseGoBool } from './flowcontrol-config';
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
export { EndpointsController, MAX_ENDPOINTS_CAPACITY, repackSubsets } from './endpoints-controller';
export { EndpointSliceController, MAX_ENDPOINTS_PER_SLICE } from './endpointslice';
export {
  LeaseEndpointReconciler,
  MASTER_LEASES_PREFIX,
  MASTER_LEASE_RENEW_MS,
  MASTER_LEASE_TTL_MS,
  type EndpointReconcilerOptions,
} from './endpoint-reconciler';
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
  'endpoint',
  'endpointslice',
] as const;
export type ControllerName = (typeof CONTROLLER_NAMES)[number];

/** Controllers `*` leaves out, as upstream does: they run only when named. */
export const DISABLED_BY_DEFAULT: ReadonlySet<ControllerName> = new Set(['tokencleaner', 'bootstrapsigner']);

export interface RunningControllers {
  /** Stop them; resolves once any leader Lease held has been released. */
  stop(): Promise<void>;
  /** With leader election: throws when a Lease this process leads with went unrenewed too long. */
  checkLeaderElection?(): void;
  /**
   * Without leader election: resolves when every controller that queues its work is done with
   * what it has queued, as a test that moves a ManualClock waits for the work a tick started.
   */
  idle?(): Promise<void>;
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
  endpoint: 'endpoint-controller',
  endpointslice: 'endpointslice-controller',
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
  const running: Array<{ stop(): void; idle?(): Promise<void> }> = [];
  /** Starts a controller and keeps it to stop. */
  const run = (controller: { start(): unknown; stop(): void; idle?(): Promise<void> }) => {
    void controller.start();
    running.push(controller);
  };
  // One informer per resource for all of them, as upstream's controller manager shares its informers.
  const clock = options.clock ?? systemClock;
  const informers = new SharedInformers(core, { user: CONTROLLER_MANAGER_USER, userAgent: 'keelson-controller-manager/shared-informers' }, clock);
  // What every controller below is given (ApiControllerOptions); each adds who it acts as.
  const shared = { core, informers, naming: core.naming, clock, log, queueMetrics: options.workQueueMetrics };
  if (names.includes('namespace'))
    run(new NamespaceLifecycleController({ core, resources: core.resources, catalog: core.catalog, user: userOf('namespace'), log }));
  if (names.includes('garbagecollector'))
    run(
      new GarbageCollector({
        core,
        resources: core.resources,
        catalog: core.catalog,
        user: userOf('garbagecollector'),
        log,
        queueMetrics: options.workQueueMetrics,
      }),
    );
  if (names.includes('clusterrole-aggregation')) {
    running.push(new ClusterRoleAggregationController({ ...shared, rbacGroup: core.naming.groups.rbac, user: userOf('clusterrole-aggregation') }));
  }
  if (names.includes('replicaset') && !served(core, core.naming.apiGroups.apps, 'replicasets')) {
    log?.('replicaset controller: not started, replicasets are not served (--runtime-config)');
  } else if (names.includes('replicaset')) {
    run(new ReplicaSetController({ ...shared, user: userOf('replicaset') }));
  }
  if (names.includes('serviceaccount')) run(new ServiceAccountController({ ...shared, user: userOf('serviceaccount') }));
  if (names.includes('root-ca-cert-publisher') && options.rootCA)
    run(new RootCaPublisher({ ...shared, user: userOf('root-ca-cert-publisher'), rootCA: options.rootCA }));
  if (names.includes('tokencleaner')) run(new TokenCleaner({ ...shared, user: userOf('tokencleaner') }));
  if (names.includes('bootstrapsigner')) run(new BootstrapSigner({ ...shared, user: userOf('bootstrapsigner') }));
  const policyStatus = 'validatingadmissionpolicy-status-controller';
  if (names.includes(policyStatus) && served(core, core.naming.groups.admissionregistration, 'validatingadmissionpolicies')) {
    run(new AdmissionPolicyStatusController({ ...shared, resources: core.resources, user: userOf(policyStatus) }));
  }
  if (['nodelifecycle', 'taint-eviction-controller', 'podgc'].some((n) => names.includes(n as ControllerName)) && !served(core, '', 'nodes')) {
    log?.('node lifecycle, taint eviction and pod garbage collection: not started, nodes are not served (--runtime-config)');
  } else {
    const nodeOptions = { ...shared, watchAs: CONTROLLER_MANAGER_USER };
    if (names.includes('nodelifecycle')) {
      const leases = served(core, core.naming.groups.coordination, 'leases');
      run(
        new NodeLifecycleController({
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
        }),
      );
    }
    if (names.includes('taint-eviction-controller')) run(new TaintEvictionController({ ...nodeOptions, user: userOf('taint-eviction-controller') }));
    if (names.includes('podgc')) run(new PodGarbageCollector({ ...nodeOptions, user: userOf('podgc'), terminatedThreshold: options.terminatedPodGcThreshold }));
  }
  const csrs = served(core, core.naming.groups.certificates, 'certificatesigningrequests');
  if (names.includes('csrsigning') && csrs && options.csrSign)
    run(new CsrSigningController({ ...shared, user: userOf('csrsigning'), sign: options.csrSign, durationMs: options.clusterSigningDurationMs }));
  else if (names.includes('csrsigning') && csrs) {
    log?.('csrsigning: not started, no cluster signing CA (--cluster-signing-cert-file and --cluster-signing-key-file)');
  }
  if (names.includes('csrapproving') && csrs) run(new CsrApprovingController({ ...shared, user: userOf('csrapproving') }));
  if (names.includes('csrcleaner') && csrs) run(new CsrCleaner({ ...shared, user: userOf('csrcleaner') }));
  if (names.includes('disruption') && served(core, 'policy', 'poddisruptionbudgets'))
    run(new DisruptionController({ ...shared, watchAs: CONTROLLER_MANAGER_USER, user: userOf('disruption') }));
  const services = served(core, '', 'services') && served(core, '', 'pods');
  const watchAs = { watchAs: CONTROLLER_MANAGER_USER };
  if (names.includes('endpoint') && services && served(core, '', 'endpoints'))
    run(new EndpointsController({ ...shared, ...watchAs, user: userOf('endpoint') }));
  if (names.includes('endpointslice') && services && served(core, core.naming.groups.discovery, 'endpointslices'))
    run(new EndpointSliceController({ ...shared, ...watchAs, user: userOf('endpointslice') }));
  return {
    stop: async () => running.forEach((c) => c.stop()),
    idle: async () => void (await Promise.all(running.map((c) => c.idle?.()))),
  };
}

function served(core: Core, group: string, resource: string): boolean {
  return core.resources.some((d) => d.group === group && d.resource === resource);
}

/** The scheduler and the simulated nodes (`--simulated-nodes`), which act for the cluster's nodes. */
function runNodes(core: Core, log: ((m: string) => void) | undefined, options: ControllerOptions): RunningControllers {
  const nodes = new SimulatedNodes({
    core,
    naming: core.naming,
    clock: options.clock ?? systemClock,
    count: options.simulatedNodes ?? 0,
    watchAs: SCHEDULER_USER,
    log,
  });
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
  if (names.length > 0)
    groups.push({ lease: core.naming.leaderLeases.controllerManager, user: CONTROLLER_MANAGER_USER, run: () => runControllers(core, names, log, options) });
  const nodesServed = served(core, '', 'nodes') && served(core, core.naming.groups.coordination, 'leases');
  if ((options.simulatedNodes ?? 0) > 0 && !nodesServed) log?.('simulated nodes: not started, nodes or leases are not served (--runtime-config)');
  if ((options.simulatedNodes ?? 0) > 0 && nodesServed)
    groups.push({ lease: core.naming.leaderLeases.scheduler, user: SCHEDULER_USER, run: () => runNodes(core, log, options) });
  if (!options.leaderElect) {
    const running = groups.map((g) => g.run());
    return {
      stop: async () => void (await Promise.all(running.map((r) => r.stop()))),
      idle: async () => void (await Promise.all(running.map((r) => r.idle?.()))),
    };
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
