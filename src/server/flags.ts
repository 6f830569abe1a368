/**
 * Command-line flags with kube-apiserver's names (docs/FLAGS.md), in both `--flag value`
 * and `--flag=value` forms (booleans also as a bare `--flag`). Each flag is declared once, in
 * `FLAGS`: its name, the config field it sets, its default, how its value parses and its help;
 * the defaults, the parser, the help text and docs/FLAGS.md (written by tools/flags-doc.ts) all
 * come from that table. Parsing is a pure
 * function of the arguments (and of `readFile`, for the files it must check): it returns a typed
 * config, the help text, or a typed error naming the flag, so that the entry point refuses to
 * start with a clear message.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { type Naming, type Vendor, VENDORS, createNaming, isVendor } from '../naming';
import { readWebhookConfig } from '../authn/webhook';
import { readAbacPolicyFile } from '../authz/abac';
import { parseAuthorizationConfig } from '../authz/config';
import { FeatureGateError, buildFeatureGates } from '../features';
import { MAX_SIMULATED_NODES } from '../controllers/simulated-nodes';
import {
  CONTROLLER_NAMES,
  type ControllerOptions,
  DISABLED_BY_DEFAULT,
  LARGE_CLUSTER_SIZE_THRESHOLD,
  NODE_EVICTION_RATE,
  NODE_MONITOR_GRACE_PERIOD_MS,
  NODE_MONITOR_PERIOD_MS,
  NODE_STARTUP_GRACE_PERIOD_MS,
  SECONDARY_NODE_EVICTION_RATE,
  TERMINATED_POD_GC_THRESHOLD,
  UNHEALTHY_ZONE_THRESHOLD,
} from '../controllers';
import { type RuntimeConfig, parseRuntimeConfig } from './runtime-config';
import { readAdmissionControlConfig } from './admission-config';
import {
  DEFAULT_EVENT_TTL_MS,
  type AdmissionPluginsError,
  IMPLEMENTED_PLUGINS,
  UPSTREAM_PLUGIN_ORDER,
  defaultAdmissionPlugins,
  resolveAdmissionPlugins,
  DEFAULT_NODE_PORT_RANGE,
  DEFAULT_SERVICE_CIDR,
  parseNodePortRange,
} from '../core';
import { type Prefix, masked, parseAddr, parsePrefix, prefixText } from '../util/go-netip';

export interface ServingCertificate {
  certFile: string;
  keyFile: string;
  /** PEM contents, already checked to parse and to match each other. */
  cert: string;
  key: string;
}

export interface ServerConfig {
  bindAddress: string;
  /** --advertise-address: the address the kubernetes Service's endpoints list for this server. */
  advertiseAddress?: string;
  /** --service-cluster-ip-range: the range Services' cluster IPs come from, as a masked CIDR (docs/SERVICES.md). */
  serviceClusterIpRange: string;
  /** --service-node-port-range: NodePort Services' ports, as `<first>-<last>`. */
  serviceNodePortRange: string;
  /** --enable-aggregator-routing: Service references lead to a ready endpoint rather than the cluster IP. */
  enableAggregatorRouting: boolean;
  /** 0 picks a free port. */
  securePort: number;
  /** A serving certificate from --tls-cert-file/--tls-private-key-file; otherwise one is generated. */
  servingCertificate?: ServingCertificate;
  /** etcd client URLs; absent means the embedded store under dataDir. */
  etcdServers?: string[];
  /** --etcd-cafile, --etcd-certfile, --etcd-keyfile: TLS to etcd, as PEM read at start. */
  etcdCaFile?: string;
  etcdCertFile?: string;
  etcdKeyFile?: string;
  dataDir: string;
  vendor: Vendor;
  /** host:port of a remote core; the gateway then calls it over gRPC. */
  coreAddress?: string;
  controllers: string[];
  /** --simulated-nodes: simulated nodes (and the scheduler) run in process; 0 disables both. */
  simulatedNodes: number;
  /** --leader-elect: controllers (and scheduler and nodes) run only while this process holds their Lease. */
  leaderElect: boolean;
  /** --controllers-only: run only the controllers (and scheduler and nodes) against --core-address. */
  controllersOnly: boolean;
  /** --kubeconfig: the credentials a --controllers-only process presents to the core. */
  kubeconfig?: string;
  /**
   * --cluster-signing-cert-file/--cluster-signing-key-file: the CA csrsigning signs with (default the
   * generated one), and a --controllers-only process its scheduler's and nodes' client certificates.
   */
  clusterSigningCertFile?: string;
  /** --cluster-signing-duration in milliseconds: the longest validity csrsigning gives. */
  clusterSigningDurationMs: number;
  clusterSigningKeyFile?: string;
  /** --use-service-account-credentials: each controller acts as its own service account. */
  useServiceAccountCredentials: boolean;
  /** --node-monitor-period, --node-monitor-grace-period, --node-startup-grace-period in milliseconds: the node lifecycle controller's timing. */
  nodeMonitorPeriodMs: number;
  nodeMonitorGracePeriodMs: number;
  nodeStartupGracePeriodMs: number;
  /** --terminated-pod-gc-threshold: terminated pods kept before the pod garbage collector deletes the oldest; <= 0 keeps them all. */
  terminatedPodGcThreshold: number;
  /** --node-eviction-rate, --secondary-node-eviction-rate (nodes a second), --large-cluster-size-threshold, --unhealthy-zone-threshold: the per-zone NoExecute tainting limits. */
  nodeEvictionRate: number;
  secondaryNodeEvictionRate: number;
  largeClusterSizeThreshold: number;
  unhealthyZoneThreshold: number;
  featureGates: Record<string, boolean>;
  /** --runtime-config: group versions and resources switched on or off, in command-line order. */
  runtimeConfig: RuntimeConfig;
  /** --etcd-compaction-interval in milliseconds (either backend); 0 disables compaction. */
  compactionIntervalMs: number;
  /** --watch-cache-window in milliseconds: how long the watch cache keeps recent events. */
  watchCacheWindowMs: number;
  /** --watch-cache-max-bytes: the estimated memory every resource's recent events may hold together (0: no bound). */
  watchCacheMaxBytes: number;
  /** --event-ttl in milliseconds: how long an Event lives after its last write. */
  eventTtlMs: number;
  /** --max-requests-inflight: read-only requests served at once (0: no limit). */
  maxRequestsInflight: number;
  /** --max-mutating-requests-inflight: mutating requests served at once (0: no limit). */
  maxMutatingRequestsInflight: number;
  /** --enable-priority-and-fairness: API Priority and Fairness instead of the two in-flight counters. */
  enablePriorityAndFairness: boolean;
  /** --request-timeout in milliseconds: how long a non-long-running request may take. */
  requestTimeoutMs: number;
  /** --shutdown-delay-duration in milliseconds: how long the server keeps serving, /readyz failing, after a stop signal. */
  shutdownDelayMs: number;
  /** -v / --v: log verbosity (request lines from 3). */
  verbosity: number;
  /** --logging-format: text (default) or json. */
  loggingFormat: 'text' | 'json';
  /** --audit-policy-file: which requests are audited, at which level. */
  auditPolicyFile?: string;
  /** --audit-log-path: where audit events go (`-`: stdout). */
  auditLogPath?: string;
  auditLogMaxSizeMb: number;
  auditLogMaxBackups: number;
  auditLogMaxAgeDays: number;
  /** --audit-log-format: json (default) or legacy. */
  auditLogFormat: string;
  /** --audit-log-compress: gzip rotated audit logs. */
  auditLogCompress: boolean;
  /** --audit-log-mode: blocking (default), blocking-strict or batch. */
  auditLogMode: string;
  auditLogBatchBufferSize: number;
  auditLogBatchMaxSize: number;
  auditLogBatchMaxWaitMs: number;
  auditLogBatchThrottleEnable: boolean;
  auditLogBatchThrottleQps: number;
  auditLogBatchThrottleBurst: number;
  auditLogTruncateEnabled: boolean;
  auditLogTruncateMaxBatchSize: number;
  auditLogTruncateMaxEventSize: number;
  /** --audit-log-version: only `audit.<domain>/v1`; default that. */
  auditLogVersion?: string;
  /** --audit-webhook-config-file: kubeconfig-format file naming the service audit events are POSTed to. */
  auditWebhookConfigFile?: string;
  /** --audit-webhook-mode: batch (default), blocking or blocking-strict. */
  auditWebhookMode: string;
  /** --audit-webhook-initial-backoff in milliseconds: the wait before the first retry of a failed POST. */
  auditWebhookInitialBackoffMs: number;
  auditWebhookBatchBufferSize: number;
  auditWebhookBatchMaxSize: number;
  auditWebhookBatchMaxWaitMs: number;
  auditWebhookBatchThrottleEnable: boolean;
  auditWebhookBatchThrottleQps: number;
  auditWebhookBatchThrottleBurst: number;
  auditWebhookTruncateEnabled: boolean;
  auditWebhookTruncateMaxBatchSize: number;
  auditWebhookTruncateMaxEventSize: number;
  /** --audit-webhook-version: the group version of the EventList sent (only `audit.<domain>/v1`); default that. */
  auditWebhookVersion?: string;
  /** --anonymous-auth: requests without credentials are `system:anonymous` (else 401). */
  anonymousAuth: boolean;
  /** --client-ca-file: PEM CA bundle for client certificates; default the generated CA under dataDir. */
  clientCaFile?: string;
  /** --requestheader-client-ca-file: the front proxy's CA bundle; unset, no front-proxy authentication (docs/FRONT-PROXY.md). */
  requestheaderClientCaFile?: string;
  /**
   * --requestheader-allowed-names: the common names a front proxy's certificate may have (empty:
   * any it signed); on the gRPC door, the client-certificate users allowed to act for the user a
   * request names (empty: the generated gateway's).
   */
  requestheaderAllowedNames: string[];
  /** --requestheader-username-headers, -uid-headers, -group-headers, -extra-headers-prefix: where the front proxy names the user. */
  requestheaderUsernameHeaders: string[];
  requestheaderUidHeaders: string[];
  requestheaderGroupHeaders: string[];
  requestheaderExtraHeadersPrefix: string[];
  /** --proxy-client-cert-file / --proxy-client-key-file: what the aggregator presents to extension servers. */
  proxyClientCertificate?: ServingCertificate;
  /** --token-auth-file: static bearer tokens (CSV). */
  tokenAuthFile?: string;
  /** --enable-bootstrap-token-auth. */
  enableBootstrapTokenAuth: boolean;
  /** --api-audiences: the audiences the API server identifies as (TokenReview's default). */
  apiAudiences: string[];
  /** --service-account-key-file (repeatable): PEM keys that verify service-account tokens. */
  serviceAccountKeyFiles: string[];
  /** --service-account-signing-key-file: the private key TokenRequest signs with; default one generated under dataDir. */
  serviceAccountSigningKeyFile?: string;
  /** --service-account-issuer (repeatable): the first issues, all are accepted; default `https://<word>.default.svc.cluster.local`. */
  serviceAccountIssuers: string[];
  /** --service-account-jwks-uri: the key set's URL in the issuer discovery document; default `https://<server address>/openid/v1/jwks`. */
  serviceAccountJwksUri?: string;
  /** --service-account-lookup: a token's account (and bound object) must still exist. */
  serviceAccountLookup: boolean;
  /** --oidc-issuer-url: enables OpenID Connect ID tokens (https only). */
  oidcIssuerUrl?: string;
  /** --oidc-client-id: the audience every ID token must be for. */
  oidcClientId?: string;
  oidcUsernameClaim: string;
  oidcUsernamePrefix?: string;
  oidcGroupsClaim?: string;
  oidcGroupsPrefix?: string;
  /** --oidc-required-claim (repeatable key=value). */
  oidcRequiredClaims: Record<string, string>;
  oidcCaFile?: string;
  oidcSigningAlgs: string[];
  /** --authentication-config: structured authentication configuration (jwt issuers, anonymous), reloaded on change. */
  authenticationConfigFile?: string;
  /** --authentication-token-webhook-config-file: kubeconfig-format settings of a TokenReview webhook. */
  authenticationTokenWebhookConfigFile?: string;
  /** --authentication-token-webhook-cache-ttl in milliseconds. */
  authenticationTokenWebhookCacheTtlMs: number;
  /** --authentication-token-webhook-version: `v1beta1` or `v1`. */
  authenticationTokenWebhookVersion: 'v1beta1' | 'v1';
  /** --authorization-mode: the authorizers, in order (AlwaysAllow, AlwaysDeny, RBAC). */
  authorizationModes: string[];
  /** --enable-admission-plugins: plugins on in addition to the defaults (order does not matter). */
  enableAdmissionPlugins: string[];
  /** --disable-admission-plugins: plugins off, defaults included. */
  disableAdmissionPlugins: string[];
  /** The admission chain those two give, in upstream's order (unset: kube-apiserver's defaults). */
  admissionPlugins?: string[];
  /** --admission-control-config-file: per-plugin configuration (the webhooks' client credentials). */
  admissionControlConfigFile?: string;
  /** --authorization-policy-file: ABAC's policy, one JSON object per line. */
  authorizationPolicyFile?: string;
  /** --authorization-config: an AuthorizationConfiguration file (excludes the mode and webhook flags). */
  authorizationConfigFile?: string;
  /** --authorization-webhook-*: the legacy Webhook mode's settings. */
  authorizationWebhookConfigFile?: string;
  authorizationWebhookVersion: 'v1beta1' | 'v1';
  authorizationWebhookCacheAuthorizedTtlMs: number;
  authorizationWebhookCacheUnauthorizedTtlMs: number;
  /** --grpc-bind-address. */
  grpcBindAddress: string;
  /** --grpc-port: serve the core's gRPC door there (0 picks a free port); unset: not served. */
  grpcPort?: number;
  /** --core-only: serve only the gRPC door (no HTTPS gateway), for deployments that split them. */
  coreOnly: boolean;
}

export interface FlagError {
  /** The flag at fault, as written on the command line (`--secure-port`), or '' for stray arguments. */
  flag: string;
  message: string;
}

export type FlagParseResult = { kind: 'config'; config: ServerConfig } | { kind: 'help'; text: string } | { kind: 'error'; error: FlagError };

export interface FlagIo {
  readFile(path: string): string;
}

const defaultIo: FlagIo = { readFile: (path) => readFileSync(path, 'utf8') };

class FlagFailure extends Error {
  constructor(
    readonly flag: string,
    message: string,
  ) {
    super(message);
  }
}

function invalid(flag: string, value: string, reason: string): FlagFailure {
  return new FlagFailure(`--${flag}`, `invalid argument ${JSON.stringify(value)} for "--${flag}" flag: ${reason}`);
}

/**
 * One flag. `field` is where its value goes; `parse` turns the text into the value (it sees the
 * value so far, for repeatable flags); `shownDefault` is what help prints as the default.
 */
interface Flag<K extends keyof ServerConfig = keyof ServerConfig> {
  name: string;
  field: K;
  /** The value's type as help prints it (pflag's names). */
  type: 'string' | 'int' | 'int32' | 'float32' | 'bool' | 'duration' | 'strings' | 'mapStringBool' | 'mapStringString' | 'ip' | 'portRange';
  usage: string;
  /** More for docs/FLAGS.md than help has room for: the pages that explain the flag, longer lists. */
  docs?: string;
  default?: ServerConfig[K];
  shownDefault?: string;
  parse(value: string, name: string, previous: ServerConfig[K] | undefined): ServerConfig[K];
}

function flag<K extends keyof ServerConfig>(spec: Flag<K>): Flag {
  return spec as unknown as Flag;
}

type ConfigKey<T> = { [K in keyof ServerConfig]-?: ServerConfig[K] extends T ? K : never }[keyof ServerConfig];

/** The mode, batch, truncate and version flags upstream gives each audit backend (`log`, `webhook`). */
function auditBackendFlags(
  plugin: 'log' | 'webhook',
  f: {
    mode: [ConfigKey<string>, string, string];
    bufferSize: [ConfigKey<number>, number];
    maxSize: [ConfigKey<number>, number];
    maxWait: [ConfigKey<number>, number, string];
    throttleEnable: [ConfigKey<boolean>, boolean];
    throttleQps: [ConfigKey<number>, number];
    throttleBurst: [ConfigKey<number>, number];
    truncateEnabled: ConfigKey<boolean>;
    truncateMaxBatchSize: ConfigKey<number>;
    truncateMaxEventSize: ConfigKey<number>;
    version: ConfigKey<string | undefined>;
  },
): Flag[] {
  const where = plugin === 'log' ? 'the audit log' : 'the audit webhook';
  const batch = 'Batch mode';
  return [
    flag({ name: `audit-${plugin}-mode`, field: f.mode[0], type: 'string', default: f.mode[1], usage: f.mode[2], parse: (v) => v }),
    flag({
      name: `audit-${plugin}-batch-buffer-size`,
      field: f.bufferSize[0],
      type: 'int',
      default: f.bufferSize[1],
      usage: `${batch}: events held for ${where} before new ones are dropped.`,
      parse: (v, n) => parseGoInt(n, v),
    }),
    flag({
      name: `audit-${plugin}-batch-max-size`,
      field: f.maxSize[0],
      type: 'int',
      default: f.maxSize[1],
      usage: `${batch}: the most events ${where} takes at once.`,
      parse: (v, n) => parseGoInt(n, v),
    }),
    flag({
      name: `audit-${plugin}-batch-max-wait`,
      field: f.maxWait[0],
      type: 'duration',
      default: f.maxWait[1],
      shownDefault: f.maxWait[2],
      usage: `${batch}: how long events wait for a batch to fill before it goes as it is.`,
      parse: (v, n) => parseDuration(n, v),
    }),
    flag({
      name: `audit-${plugin}-batch-throttle-enable`,
      field: f.throttleEnable[0],
      type: 'bool',
      default: f.throttleEnable[1],
      usage: `${batch}: limit how many batches a second go to ${where}.`,
      parse: (v, n) => parseBool(n, v),
    }),
    flag({
      name: `audit-${plugin}-batch-throttle-qps`,
      field: f.throttleQps[0],
      type: 'float32',
      default: f.throttleQps[1],
      usage: `${batch}, throttled: batches a second, on average.`,
      parse: (v, n) => parseFloat32(n, v),
    }),
    flag({
      name: `audit-${plugin}-batch-throttle-burst`,
      field: f.throttleBurst[0],
      type: 'int',
      default: f.throttleBurst[1],
      usage: `${batch}, throttled: batches that may go at once after a quiet spell.`,
      parse: (v, n) => parseGoInt(n, v),
    }),
    flag({
      name: `audit-${plugin}-truncate-enabled`,
      field: f.truncateEnabled,
      type: 'bool',
      default: false,
      usage: `Cut events and batches for ${where} down to the --audit-${plugin}-truncate-* sizes.`,
      parse: (v, n) => parseBool(n, v),
    }),
    flag({
      name: `audit-${plugin}-truncate-max-batch-size`,
      field: f.truncateMaxBatchSize,
      type: 'int',
      default: 10 * 1024 * 1024,
      usage: 'With truncation: the most bytes of events handed over at once; more are split.',
      parse: (v, n) => parseGoInt(n, v),
    }),
    flag({
      name: `audit-${plugin}-truncate-max-event-size`,
      field: f.truncateMaxEventSize,
      type: 'int',
      default: 100 * 1024,
      usage:
        'With truncation: an event larger than this many bytes loses its request and response objects (and is annotated audit.<domain>/truncated), and is dropped if still too large.',
      parse: (v, n) => parseGoInt(n, v),
    }),
    flag({
      name: `audit-${plugin}-version`,
      field: f.version,
      type: 'string',
      shownDefault: 'audit.<domain>/v1',
      usage: `The group version of the events ${where} gets; audit.<domain>/v1 is the only one.`,
      parse: (v) => v,
    }),
  ];
}

const DEFAULT_WINDOW_MS = 5 * 60_000;

/** Every flag, in the order help lists them. */
const FLAGS: readonly Flag[] = [
  flag({
    name: 'bind-address',
    field: 'bindAddress',
    type: 'ip',
    default: '127.0.0.1',
    usage: 'Address the HTTPS port listens on.',
    parse: (v, n) => parseIp(n, v),
  }),
  flag({
    name: 'advertise-address',
    field: 'advertiseAddress',
    type: 'ip',
    usage:
      "The address the kubernetes Service's endpoints list for this server (the lease endpoint reconciler). Unset: --bind-address, or, that being loopback or unspecified, the host's first non-internal address.",
    parse: (v, n) => parseIp(n, v),
  }),
  flag({
    name: 'service-cluster-ip-range',
    field: 'serviceClusterIpRange',
    type: 'string',
    default: DEFAULT_SERVICE_CIDR,
    usage:
      "CIDR range Services' cluster IPs are allocated from; its first address is the kubernetes Service's. At most 2^20 addresses, at least 8; one range (dual-stack is not served).",
    docs: 'See docs/SERVICES.md, "Cluster IPs and node ports".',
    parse: (v, n) => parseServiceClusterIpRange(n, v),
  }),
  flag({
    name: 'service-node-port-range',
    field: 'serviceNodePortRange',
    type: 'portRange',
    default: DEFAULT_NODE_PORT_RANGE,
    usage: "Ports NodePort and LoadBalancer Services' node ports are allocated from, both ends included: '<first>-<last>', '<first>+<offset>' or one port.",
    parse: (v, n) => parseServicePortRange(n, v),
  }),
  flag({
    name: 'enable-aggregator-routing',
    field: 'enableAggregatorRouting',
    type: 'bool',
    default: false,
    usage:
      "Service references (APIServices, admission and conversion webhooks) lead to a ready address of the Service's Endpoints rather than its cluster IP, which nothing answers here.",
    docs: 'See docs/SERVICES.md, "Reaching a Service".',
    parse: (v, n) => parseBool(n, v),
  }),
  flag({
    name: 'secure-port',
    field: 'securePort',
    type: 'int',
    default: 6443,
    usage:
      "HTTPS port of the API (0 picks a free one and logs it); with --controllers-only, of the controller manager's health and metrics (default 10257 there).",
    parse: (v, n) => parsePort(n, v, 0),
  }),
  flag({
    name: 'tls-cert-file',
    field: 'servingCertificate',
    type: 'string',
    usage: 'PEM certificate the server presents on its HTTPS port (intermediates after it); without it the server makes one under --data-dir.',
    parse: (v, n, prev) => ({ ...(prev ?? { keyFile: '', cert: '', key: '' }), certFile: nonEmpty(n, v) }),
  }),
  flag({
    name: 'tls-private-key-file',
    field: 'servingCertificate',
    type: 'string',
    usage: 'PEM private key of the --tls-cert-file certificate.',
    parse: (v, n, prev) => ({ ...(prev ?? { certFile: '', cert: '', key: '' }), keyFile: nonEmpty(n, v) }),
  }),
  flag({
    name: 'etcd-servers',
    field: 'etcdServers',
    type: 'strings',
    usage:
      'etcd endpoints to keep the objects in, as scheme://host:port, separated by commas; without them the objects live in the embedded store under --data-dir.',
    parse: (v, n) => parseEtcdServers(n, v),
  }),
  flag({
    name: 'etcd-cafile',
    field: 'etcdCaFile',
    type: 'string',
    usage: "PEM CA bundle that etcd's serving certificates must chain to (default: the host's roots, when --etcd-certfile is given or a server is https).",
    docs: 'See docs/DEPLOYING.md, "An etcd cluster", for the three TLS flags together.',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'etcd-certfile',
    field: 'etcdCertFile',
    type: 'string',
    usage: "PEM client certificate presented to etcd (what etcd's --client-cert-auth asks for).",
    docs: 'See docs/DEPLOYING.md, "An etcd cluster".',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'etcd-keyfile',
    field: 'etcdKeyFile',
    type: 'string',
    usage: 'PEM private key of --etcd-certfile.',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'data-dir',
    field: 'dataDir',
    type: 'string',
    default: './data',
    usage: 'Directory for the embedded store, the generated PKI and admin.kubeconfig.',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'vendor',
    field: 'vendor',
    type: 'string',
    default: 'platform' as Vendor,
    usage: `Naming profile of the served API: ${VENDORS.join(' or ')}. platform writes the vendor word as platform (${createNaming('platform').group('rbac.authorization')}); kubernetes serves upstream's names, for unmodified kubectl, client-go and client libraries.`,
    docs: 'See docs/API.md, "Naming profiles". kubectl caches discovery per server address: after restarting a server on the same address with the other profile, remove `~/.kube/cache/discovery/<host>_<port>` (or give kubectl a fresh `--cache-dir`).',
    parse: (v, n) => {
      if (!isVendor(v)) throw invalid(n, v, `must be one of ${VENDORS.join(', ')}`);
      return v;
    },
  }),
  flag({
    name: 'core-address',
    field: 'coreAddress',
    type: 'string',
    usage:
      'host:port of a remote core; the gateway then serves it as a pure gRPC client, presenting the generated gateway client certificate. With --controllers-only: the core the controllers work against.',
    docs: 'See docs/DEPLOYING.md, "Splitting gateway and core".',
    parse: (v, n) => parseHostPort(n, v),
  }),
  flag({
    name: 'controllers',
    field: 'controllers',
    type: 'strings',
    default: ['*'],
    usage: `Which controllers run in process, comma-separated: '*' stands for those on by default, a name adds that controller, '-name' leaves it out; an empty list runs none. Known: ${CONTROLLER_NAMES.join(', ')}; ${[...DISABLED_BY_DEFAULT].join(' and ')} run only when named, as upstream's.`,
    docs: 'nodelifecycle marks nodes not heard from for `--node-monitor-grace-period` Unknown and taints them, their pods no longer Ready; taint-eviction-controller evicts pods from a NoExecute-tainted node when their tolerations run out; podgc force-deletes the pods of vanished nodes, terminating pods never scheduled, and terminated pods beyond `--terminated-pod-gc-threshold`; disruption keeps PodDisruptionBudget status; csrsigning, csrapproving and csrcleaner sign CertificateSigningRequests with the cluster CA, approve kubelet client requests and remove old ones.',
    parse: (v, n) => {
      // As upstream's string-slice flag: an empty value is an empty list.
      if (v === '') return [];
      const items = parseList(n, v);
      const known = new Set<string>(CONTROLLER_NAMES);
      // Upstream's controller manager refuses names it does not know.
      for (const item of items) {
        if (item !== '*' && !known.has(item.replace(/^-/, ''))) throw invalid(n, v, `"${item.replace(/^-/, '')}" is not in the list of known controllers`);
      }
      return items;
    },
  }),
  flag({
    name: 'simulated-nodes',
    field: 'simulatedNodes',
    type: 'int',
    default: 1,
    usage: `Number of simulated nodes that register, heartbeat through Leases and run the pods bound to them, with a scheduler binding pending pods to them (what kwok does); 0 disables both (at most ${MAX_SIMULATED_NODES}).`,
    parse: (v, n) => {
      const count = Number(v);
      if (!/^\d+$/.test(v) || count > MAX_SIMULATED_NODES) throw invalid(n, v, `must be an integer from 0 to ${MAX_SIMULATED_NODES}`);
      return count;
    },
  }),
  flag({
    name: 'leader-elect',
    field: 'leaderElect',
    type: 'bool',
    default: true,
    usage:
      'Start a leader election client and gain leadership before running the controllers (Lease <prefix>-controller-manager) and the scheduler and simulated nodes (Lease <prefix>-scheduler), both Leases in the system namespace, so that several servers on one store run each of them once.',
    parse: (v, n) => parseBool(n, v),
  }),
  flag({
    name: 'use-service-account-credentials',
    field: 'useServiceAccountCredentials',
    type: 'bool',
    default: false,
    usage:
      'If true, each controller acts as its own service account in the system namespace (bound to system:controller:<name>) instead of as the controller manager (system:kube-controller-manager).',
    parse: (v, n) => parseBool(n, v),
  }),
  flag({
    name: 'node-monitor-period',
    field: 'nodeMonitorPeriodMs',
    type: 'duration',
    default: NODE_MONITOR_PERIOD_MS,
    shownDefault: '5s',
    usage: 'How often the node lifecycle controller looks at the heartbeats of every node.',
    docs: 'Shorter values of this flag and the two grace periods make tests that stop a node quicker; the simulated nodes renew their Leases every 10 s.',
    parse: (v, n) => positiveDuration(n, v),
  }),
  flag({
    name: 'node-monitor-grace-period',
    field: 'nodeMonitorGracePeriodMs',
    type: 'duration',
    default: NODE_MONITOR_GRACE_PERIOD_MS,
    shownDefault: '50s',
    usage: 'How long a node that has posted Ready may go unheard (no change to its Ready condition, no Lease renewal) before it is marked Unknown and tainted.',
    parse: (v, n) => positiveDuration(n, v),
  }),
  flag({
    name: 'node-startup-grace-period',
    field: 'nodeStartupGracePeriodMs',
    type: 'duration',
    default: NODE_STARTUP_GRACE_PERIOD_MS,
    shownDefault: '1m0s',
    usage: 'How long after its creation a node that never posted Ready is given before it is marked Unknown and tainted.',
    parse: (v, n) => positiveDuration(n, v),
  }),
  flag({
    name: 'node-eviction-rate',
    field: 'nodeEvictionRate',
    type: 'float32',
    default: NODE_EVICTION_RATE,
    usage:
      "Nodes a second that may be tainted NoExecute (their pods evicted) in a zone that is healthy, or has lost all its nodes while other zones have not. Zones are the nodes' topology.<domain>/region and zone labels; when every zone has lost all its nodes none is tainted NoExecute, so a lone node that stops never has its pods evicted.",
    parse: (v, n) => parseFloat32(n, v),
  }),
  flag({
    name: 'secondary-node-eviction-rate',
    field: 'secondaryNodeEvictionRate',
    type: 'float32',
    default: SECONDARY_NODE_EVICTION_RATE,
    usage:
      'Nodes a second that may be tainted NoExecute in a zone that has lost most of its nodes (see --unhealthy-zone-threshold), when it has more than --large-cluster-size-threshold nodes; smaller zones then taint none.',
    parse: (v, n) => parseFloat32(n, v),
  }),
  flag({
    name: 'large-cluster-size-threshold',
    field: 'largeClusterSizeThreshold',
    type: 'int32',
    default: LARGE_CLUSTER_SIZE_THRESHOLD,
    usage: 'Nodes above which a zone that has lost most of its nodes goes on tainting at --secondary-node-eviction-rate rather than stopping.',
    parse: (v, n) => parseInt32(n, v),
  }),
  flag({
    name: 'unhealthy-zone-threshold',
    field: 'unhealthyZoneThreshold',
    type: 'float32',
    default: UNHEALTHY_ZONE_THRESHOLD,
    usage: "Share of a zone's nodes not Ready (and more than two of them) at which the zone counts as having lost most of its nodes.",
    parse: (v, n) => parseFloat32(n, v),
  }),
  flag({
    name: 'terminated-pod-gc-threshold',
    field: 'terminatedPodGcThreshold',
    type: 'int32',
    default: TERMINATED_POD_GC_THRESHOLD,
    usage: 'Terminated pods (Succeeded or Failed) kept before the pod garbage collector deletes the oldest, evicted ones first; 0 or less keeps them all.',
    parse: (v, n) => parseInt32(n, v),
  }),
  flag({
    name: 'controllers-only',
    field: 'controllersOnly',
    type: 'bool',
    default: false,
    usage:
      'Run only the controllers (and, with --simulated-nodes, the scheduler and the nodes) as API clients of the core at --core-address, authenticated with --kubeconfig, as kube-controller-manager runs beside kube-apiserver; no store, no gateway.',
    docs: 'See docs/DEPLOYING.md, "Controllers in their own process".',
    parse: (v, n) => parseBool(n, v),
  }),
  flag({
    name: 'kubeconfig',
    field: 'kubeconfig',
    type: 'string',
    usage:
      "With --controllers-only: kubeconfig whose current context gives the CA that verifies the core and the controller manager's client certificate or token (the server writes controller-manager.kubeconfig under --data-dir).",
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'cluster-signing-duration',
    field: 'clusterSigningDurationMs',
    type: 'duration',
    default: 8760 * 3_600_000,
    shownDefault: '8760h0m0s',
    usage: 'The longest validity csrsigning gives a certificate; a request may ask for less with spec.expirationSeconds (at least 10 minutes).',
    parse: (v, n) => positiveDuration(n, v),
  }),
  flag({
    name: 'cluster-signing-cert-file',
    field: 'clusterSigningCertFile',
    type: 'string',
    usage:
      "PEM CA certificate csrsigning signs approved CertificateSigningRequests with (default: the CA generated under --data-dir); the server trusts it for client certificates too, so what it signs authenticates. With --controllers-only it also signs the scheduler's and the simulated nodes' client certificates (the cluster CA: ca.crt and ca.key under the server's --data-dir), and is needed when --simulated-nodes is above 0.",
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'cluster-signing-key-file',
    field: 'clusterSigningKeyFile',
    type: 'string',
    usage: 'PEM private key of --cluster-signing-cert-file.',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'runtime-config',
    field: 'runtimeConfig',
    type: 'mapStringString',
    default: [] as RuntimeConfig,
    shownDefault: '',
    usage:
      "A set of key=value pairs that enable or disable built-in APIs: <group>/<version> (or v1 for the core group), <group>/<version>/<resource>, or api/all, api/ga, api/beta, api/alpha for every version of that stability; 'true' when the value is omitted (e.g. apps/v1=false). A switched-off type is not served: no discovery, no OpenAPI, 404.",
    parse: (v, n, prev) => {
      try {
        return [...(prev ?? []), ...parseRuntimeConfig(v)];
      } catch (err) {
        throw invalid(n, v, (err as Error).message);
      }
    },
  }),
  flag({
    name: 'feature-gates',
    field: 'featureGates',
    type: 'mapStringBool',
    default: {},
    shownDefault: '',
    usage: 'Gate=true|false pairs, comma-separated, turning features on or off (e.g. A=true,B=false); unknown gates refuse to start.',
    parse: (v) => parseKnownFeatureGates(v),
  }),
  flag({
    name: 'etcd-compaction-interval',
    field: 'compactionIntervalMs',
    type: 'duration',
    default: DEFAULT_WINDOW_MS,
    shownDefault: '5m0s',
    usage: 'The interval of compaction requests to the store (either backend), a duration such as 5m0s; 0 disables compaction.',
    parse: (v, n) => parseDuration(n, v),
  }),
  flag({
    name: 'max-requests-inflight',
    field: 'maxRequestsInflight',
    type: 'int',
    default: 400,
    usage:
      'Reads (get, list) served at once; one more is answered 429 with Retry-After: 1. Watches are not counted, and members of system:masters are never refused. 0: no limit.',
    parse: (v, n) => parseCount(n, v),
  }),
  flag({
    name: 'max-mutating-requests-inflight',
    field: 'maxMutatingRequestsInflight',
    type: 'int',
    default: 200,
    usage: 'Writes (create, update, patch, delete) served at once; one more is answered 429, as for --max-requests-inflight. 0: no limit.',
    parse: (v, n) => parseCount(n, v),
  }),
  flag({
    name: 'enable-priority-and-fairness',
    field: 'enablePriorityAndFairness',
    type: 'bool',
    default: true,
    usage:
      'Limit and queue requests by API Priority and Fairness (FlowSchemas and PriorityLevelConfigurations), sharing --max-requests-inflight + --max-mutating-requests-inflight seats among the priority levels; false: the two in-flight counters alone.',
    parse: (v, n) => parseBool(n, v),
  }),
  flag({
    name: 'v',
    field: 'verbosity',
    type: 'int',
    default: 0,
    usage:
      'How much the server logs (-v or --v); at 3 and above, an HTTP line per request: method, URI, latency, user agent, audit ID, source IP and code, never a credential.',
    parse: (v, n) => parseCount(n, v),
  }),
  flag({
    name: 'logging-format',
    field: 'loggingFormat',
    type: 'string',
    default: 'text' as const,
    usage: 'How log lines are written: "text" (keelson: <message> key="value" …) or "json" (a JSON object a line: ts, msg, v and the fields).',
    parse: (v, n) => {
      if (v !== 'text' && v !== 'json') throw invalid(n, v, 'permitted formats: "json", "text"');
      return v;
    },
  }),
  flag({
    name: 'audit-policy-file',
    field: 'auditPolicyFile',
    type: 'string',
    usage:
      'The audit Policy (YAML or JSON): which requests are audited, and at which level (None, Metadata, Request, RequestResponse). Events are audit.<domain>/v1 Events; they need a backend too, the log (--audit-log-path) or the webhook (--audit-webhook-config-file).',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'audit-log-path',
    field: 'auditLogPath',
    type: 'string',
    usage: "File the audit events are appended to, a JSON line each; '-' for standard output.",
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'audit-log-maxsize',
    field: 'auditLogMaxSizeMb',
    type: 'int',
    default: 0,
    usage: 'Megabytes the audit log may reach before it is renamed aside (<name>-<UTC time>.<ext>) and a new one started; 0: never.',
    parse: (v, n) => parseGoInt(n, v),
  }),
  flag({
    name: 'audit-log-maxbackup',
    field: 'auditLogMaxBackups',
    type: 'int',
    default: 0,
    usage: 'Renamed-aside audit logs kept, newest first; 0 keeps them all.',
    parse: (v, n) => parseGoInt(n, v),
  }),
  flag({
    name: 'audit-log-maxage',
    field: 'auditLogMaxAgeDays',
    type: 'int',
    default: 0,
    usage: 'Days a renamed-aside audit log is kept, judged by the time in its name; 0: no limit.',
    parse: (v, n) => parseGoInt(n, v),
  }),
  flag({
    name: 'audit-log-format',
    field: 'auditLogFormat',
    type: 'string',
    default: 'json',
    usage: 'How audit events are written to the log: json, an Event a line, or legacy, upstream\'s one-line text (<time> AUDIT: id="…" stage="…" …) each.',
    parse: (v) => v,
  }),
  flag({
    name: 'audit-log-compress',
    field: 'auditLogCompress',
    type: 'bool',
    default: false,
    usage: 'Gzip each audit log once it is renamed aside.',
    parse: (v, n) => parseBool(n, v),
  }),
  ...auditBackendFlags('log', {
    mode: [
      'auditLogMode',
      'blocking',
      'How events reach the audit log: blocking writes them as the request goes (the default); blocking-strict does too, and fails a request whose first event could not be written with 500; batch queues them and writes them in the background.',
    ],
    bufferSize: ['auditLogBatchBufferSize', 10_000],
    maxSize: ['auditLogBatchMaxSize', 1],
    maxWait: ['auditLogBatchMaxWaitMs', 0, '0s'],
    throttleEnable: ['auditLogBatchThrottleEnable', false],
    throttleQps: ['auditLogBatchThrottleQps', 0],
    throttleBurst: ['auditLogBatchThrottleBurst', 0],
    truncateEnabled: 'auditLogTruncateEnabled',
    truncateMaxBatchSize: 'auditLogTruncateMaxBatchSize',
    truncateMaxEventSize: 'auditLogTruncateMaxEventSize',
    version: 'auditLogVersion',
  }),
  flag({
    name: 'audit-webhook-config-file',
    field: 'auditWebhookConfigFile',
    type: 'string',
    usage:
      'Audit events also go, POSTed as EventLists, to a remote service named in this file in kubeconfig format (its cluster gives the URL and CA, its user the client certificate); needs --audit-policy-file.',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'audit-webhook-initial-backoff',
    field: 'auditWebhookInitialBackoffMs',
    type: 'duration',
    default: 10_000,
    shownDefault: '10s',
    usage: 'How long to wait before the first retry of a POST to the audit webhook that failed; each later wait is half as long again, five tries in all.',
    parse: (v, n) => parseDuration(n, v),
  }),
  ...auditBackendFlags('webhook', {
    mode: [
      'auditWebhookMode',
      'batch',
      'How events reach the audit webhook: batch queues them and sends them in the background (the default); blocking makes each request wait until its events are sent; blocking-strict does too, and fails a request whose first event could not be sent with 500.',
    ],
    bufferSize: ['auditWebhookBatchBufferSize', 10_000],
    maxSize: ['auditWebhookBatchMaxSize', 400],
    maxWait: ['auditWebhookBatchMaxWaitMs', 30_000, '30s'],
    throttleEnable: ['auditWebhookBatchThrottleEnable', true],
    throttleQps: ['auditWebhookBatchThrottleQps', 10],
    throttleBurst: ['auditWebhookBatchThrottleBurst', 15],
    truncateEnabled: 'auditWebhookTruncateEnabled',
    truncateMaxBatchSize: 'auditWebhookTruncateMaxBatchSize',
    truncateMaxEventSize: 'auditWebhookTruncateMaxEventSize',
    version: 'auditWebhookVersion',
  }),
  flag({
    name: 'shutdown-delay-duration',
    field: 'shutdownDelayMs',
    type: 'duration',
    default: 0,
    shownDefault: '0s',
    usage:
      'After a stop signal, how long the server goes on serving with /readyz failing, so that load balancers turn away; then open watches end, requests in flight finish (up to --request-timeout) and the store closes. A second signal exits at once.',
    parse: (v, n) => parseDuration(n, v),
  }),
  flag({
    name: 'request-timeout',
    field: 'requestTimeoutMs',
    type: 'duration',
    default: 60_000,
    shownDefault: '1m0s',
    usage:
      'A duration, the default request timeout for handlers: a request that is not long-running (watches are) answers 504 when it takes longer. A shorter ?timeout= on the request wins.',
    parse: (v, n) => positiveDuration(n, v),
  }),
  flag({
    name: 'event-ttl',
    field: 'eventTtlMs',
    type: 'duration',
    default: DEFAULT_EVENT_TTL_MS,
    shownDefault: '1h0m0s',
    usage: 'How long an Event is kept after its last write (either backend).',
    parse: (v, n) => positiveDuration(n, v),
  }),
  flag({
    name: 'watch-cache-window',
    field: 'watchCacheWindowMs',
    type: 'duration',
    default: DEFAULT_WINDOW_MS,
    shownDefault: '5m0s',
    usage: 'How long the watch cache keeps recent events for watches that resume from an older resourceVersion, a duration such as 5m0s.',
    parse: (v, n) => {
      const ms = parseDuration(n, v);
      if (ms <= 0) throw invalid(n, v, 'must be positive');
      return ms;
    },
  }),
  flag({
    name: 'watch-cache-max-bytes',
    field: 'watchCacheMaxBytes',
    type: 'int',
    default: 32 * 1024 * 1024,
    shownDefault: '32Mi',
    usage:
      "The memory, estimated, that the watch cache's recent events may hold for all resources together, in bytes or with a Ki, Mi or Gi suffix; past it the busiest resources give up their oldest events first. A watch resuming from before them is served from the store's history (etcd's watch from a revision, the embedded store's log) and then joins the live stream; only a version the store has compacted (--etcd-compaction-interval) answers 410. 0: no bound.",
    parse: (v, n) => {
      const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(v);
      if (!m) throw invalid(n, v, 'must be a whole number of bytes, optionally with a Ki, Mi or Gi suffix');
      return Number(m[1]) * { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[m[2] ?? '']!;
    },
  }),
  flag({
    name: 'anonymous-auth',
    field: 'anonymousAuth',
    type: 'bool',
    default: true,
    usage:
      'A request with no credentials is served as system:anonymous (group system:unauthenticated) instead of answered 401; one with bad credentials is still refused.',
    parse: (v, n) => parseBool(n, v),
  }),
  flag({
    name: 'client-ca-file',
    field: 'clientCaFile',
    type: 'string',
    usage:
      "PEM CA bundle for client certificates: one that chains to it names its user by CommonName and its groups by Organization. The CA made under --data-dir stays trusted beside it. Client certificates are accepted from that generated CA (it signs every credential the server writes: admin.kubeconfig, controller-manager.kubeconfig, the gateway's certificate), from this bundle, and from --cluster-signing-cert-file's CA when given; from nothing else.",
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'token-auth-file',
    field: 'tokenAuthFile',
    type: 'string',
    usage: 'Bearer tokens for the secure port, from this CSV file: token, user name, user uid and optionally "group1,group2".',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'enable-bootstrap-token-auth',
    field: 'enableBootstrapTokenAuth',
    type: 'bool',
    default: false,
    usage: "Accept the bearer tokens of 'bootstrap.<vendor>/token' Secrets named bootstrap-token-<id> in the system namespace (for node TLS bootstrap).",
    parse: (v, n) => parseBool(n, v),
  }),
  flag({
    name: 'api-audiences',
    field: 'apiAudiences',
    type: 'strings',
    default: [],
    shownDefault: '',
    usage: 'The audiences this server answers to; a TokenReview that names none is checked against them.',
    parse: (v, n) => parseList(n, v),
  }),
  flag({
    name: 'service-account-key-file',
    field: 'serviceAccountKeyFiles',
    type: 'strings',
    default: [],
    shownDefault: '',
    usage: 'PEM file of public (or private) keys that verify service account tokens; repeatable. Default: the signing key.',
    parse: (v, n, prev) => [...(prev ?? []), ...parseList(n, v)],
  }),
  flag({
    name: 'service-account-signing-key-file',
    field: 'serviceAccountSigningKeyFile',
    type: 'string',
    usage: 'Private key (PEM) that signs the tokens TokenRequest (kubectl create token) issues. Default: one generated under --data-dir.',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'service-account-issuer',
    field: 'serviceAccountIssuers',
    type: 'strings',
    default: [],
    shownDefault: '',
    usage:
      'Issuer of service account tokens (the iss claim); repeatable: the first issues, every one is accepted. Default: https://<vendor word>.default.svc.cluster.local.',
    parse: (v, n, prev) => [...(prev ?? []), nonEmpty(n, v)],
  }),
  flag({
    name: 'service-account-jwks-uri',
    field: 'serviceAccountJwksUri',
    type: 'string',
    usage:
      "The URL of the service account issuer's key set, as the discovery document at /.well-known/openid-configuration gives it (https only). Default: https://<server address>/openid/v1/jwks.",
    parse: (v, n) => {
      let url: URL;
      try {
        url = new URL(v);
      } catch {
        throw invalid(n, v, 'must be a valid URL');
      }
      if (url.protocol !== 'https:') throw invalid(n, v, 'requires the https scheme');
      return v;
    },
  }),
  flag({
    name: 'service-account-lookup',
    field: 'serviceAccountLookup',
    type: 'bool',
    default: true,
    usage: 'A service account token is valid only while its account (and the object it is bound to) exists.',
    parse: (v, n) => parseBool(n, v),
  }),
  flag({
    name: 'oidc-issuer-url',
    field: 'oidcIssuerUrl',
    type: 'string',
    usage: 'https URL of an OpenID Connect provider whose ID tokens authenticate users; its discovery document gives the signing keys.',
    parse: (v, n) => {
      if (!v.startsWith('https://')) throw invalid(n, v, 'must be an https URL');
      return v;
    },
  }),
  flag({
    name: 'oidc-client-id',
    field: 'oidcClientId',
    type: 'string',
    usage: 'The client ID every ID token must be issued to (its audience).',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'oidc-username-claim',
    field: 'oidcUsernameClaim',
    type: 'string',
    default: 'sub',
    usage: 'The claim used as the user name; claims other than email are prefixed with the issuer URL unless --oidc-username-prefix says otherwise.',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'oidc-username-prefix',
    field: 'oidcUsernamePrefix',
    type: 'string',
    usage: "Prefix of user names (default: the issuer URL and '#', none for the email claim); '-' disables prefixing.",
    parse: (v) => v,
  }),
  flag({
    name: 'oidc-groups-claim',
    field: 'oidcGroupsClaim',
    type: 'string',
    usage: "The claim holding the user's groups (a string or a list of strings).",
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({ name: 'oidc-groups-prefix', field: 'oidcGroupsPrefix', type: 'string', usage: 'Prefix of group names.', parse: (v) => v }),
  flag({
    name: 'oidc-required-claim',
    field: 'oidcRequiredClaims',
    type: 'mapStringString',
    default: {},
    shownDefault: '',
    usage: 'A key=value pair that must be in the ID token; repeatable.',
    parse: (v, n, prev) => {
      const eq = v.indexOf('=');
      if (eq <= 0) throw invalid(n, v, 'must be key=value');
      return { ...(prev ?? {}), [v.slice(0, eq)]: v.slice(eq + 1) };
    },
  }),
  flag({
    name: 'oidc-ca-file',
    field: 'oidcCaFile',
    type: 'string',
    usage: "The CA that signed the identity provider's certificate; default the host's roots.",
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'oidc-signing-algs',
    field: 'oidcSigningAlgs',
    type: 'strings',
    default: ['RS256'],
    usage: 'The accepted signing algorithms.',
    parse: (v, n) => parseList(n, v),
  }),
  flag({
    name: 'authentication-config',
    field: 'authenticationConfigFile',
    type: 'string',
    usage:
      'File with an AuthenticationConfiguration (JWT issuers with CEL claim mappings and validation rules, anonymous access); reloaded when it changes, a bad edit keeping the last good one. Excludes the --oidc-* flags.',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'authentication-token-webhook-config-file',
    field: 'authenticationTokenWebhookConfigFile',
    type: 'string',
    usage:
      'Bearer tokens no other method knows are sent as TokenReviews to the service this kubeconfig-format file names (server, CA, client certificate); its decisions are cached.',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'authentication-token-webhook-cache-ttl',
    field: 'authenticationTokenWebhookCacheTtlMs',
    type: 'duration',
    default: 120_000,
    shownDefault: '2m0s',
    usage: "How long a token webhook's decision is remembered.",
    parse: (v, n) => parseDuration(n, v),
  }),
  flag({
    name: 'authentication-token-webhook-version',
    field: 'authenticationTokenWebhookVersion',
    type: 'string',
    default: 'v1beta1' as const,
    usage: 'TokenReview version the token webhook speaks: v1beta1 or v1.',
    parse: (v, n) => {
      if (v !== 'v1beta1' && v !== 'v1') throw invalid(n, v, 'must be v1beta1 or v1');
      return v;
    },
  }),
  flag({
    name: 'requestheader-client-ca-file',
    field: 'requestheaderClientCaFile',
    type: 'string',
    usage:
      'PEM CA bundle that verifies the client certificate of an authenticating proxy in front of the server, before the user named in the --requestheader-username-headers headers is believed. Keep it apart from --client-ca-file.',
    docs: 'See docs/FRONT-PROXY.md.',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'requestheader-allowed-names',
    field: 'requestheaderAllowedNames',
    type: 'strings',
    default: [],
    usage:
      'Common names a front-proxy client certificate may have to name users in headers; empty, any certificate --requestheader-client-ca-file verifies. On the gRPC door: the client-certificate users allowed to act for the end user a request names (empty: the generated gateway certificate, system:keelson-gateway).',
    docs: 'See docs/FRONT-PROXY.md and docs/DEPLOYING.md, "Splitting gateway and core".',
    parse: (v, n) => parseHeaderList(n, v),
  }),
  flag({
    name: 'requestheader-username-headers',
    field: 'requestheaderUsernameHeaders',
    type: 'strings',
    default: [],
    usage: 'Request headers to inspect for usernames, the first with a value winning. X-Remote-User is common.',
    parse: (v, n) => parseHeaderList(n, v),
  }),
  flag({
    name: 'requestheader-uid-headers',
    field: 'requestheaderUidHeaders',
    type: 'strings',
    default: [],
    usage: 'Request headers to inspect for UIDs. X-Remote-Uid is suggested. Requires the RemoteRequestHeaderUID feature to be enabled.',
    parse: (v, n) => parseHeaderList(n, v),
  }),
  flag({
    name: 'requestheader-group-headers',
    field: 'requestheaderGroupHeaders',
    type: 'strings',
    default: [],
    usage: 'Request headers to inspect for groups, every value of each a group. X-Remote-Group is suggested.',
    parse: (v, n) => parseHeaderList(n, v),
  }),
  flag({
    name: 'requestheader-extra-headers-prefix',
    field: 'requestheaderExtraHeadersPrefix',
    type: 'strings',
    default: [],
    usage:
      'Request header prefixes to inspect for extra user information: the rest of the header name, lower-cased and percent-decoded, is the key. X-Remote-Extra- is suggested.',
    parse: (v, n) => parseHeaderList(n, v),
  }),
  flag({
    name: 'proxy-client-cert-file',
    field: 'proxyClientCertificate',
    type: 'string',
    usage:
      'PEM client certificate the server presents when it proxies a request to an extension API server (the aggregator), which checks it against the front-proxy CA it reads from the extension-apiserver-authentication ConfigMap.',
    docs: 'See docs/FRONT-PROXY.md.',
    parse: (v, n, prev) => ({ ...(prev ?? { keyFile: '', cert: '', key: '' }), certFile: nonEmpty(n, v) }),
  }),
  flag({
    name: 'proxy-client-key-file',
    field: 'proxyClientCertificate',
    type: 'string',
    usage: 'PEM private key of --proxy-client-cert-file.',
    parse: (v, n, prev) => ({ ...(prev ?? { certFile: '', cert: '', key: '' }), keyFile: nonEmpty(n, v) }),
  }),
  flag({
    name: 'enable-admission-plugins',
    field: 'enableAdmissionPlugins',
    type: 'strings',
    default: [] as string[],
    shownDefault: '',
    usage: `Admission plugins to enable in addition to the default ones (${defaultAdmissionPlugins().join(', ')}). Comma-delimited; the order does not matter, plugins always run in upstream's order: ${UPSTREAM_PLUGIN_ORDER.filter((n) => IMPLEMENTED_PLUGINS.has(n)).join(', ')}.`,
    docs: 'See docs/ADMISSION.md for what each plugin does.',
    parse: (v, n, prev) => (v === '' ? (prev ?? []) : [...(prev ?? []), ...parseList(n, v)]),
  }),
  flag({
    name: 'disable-admission-plugins',
    field: 'disableAdmissionPlugins',
    type: 'strings',
    default: [] as string[],
    shownDefault: '',
    usage:
      'Admission plugins to disable, default ones included. Comma-delimited; the order does not matter. Upstream plugins for types Keelson does not serve may be named too.',
    parse: (v, n, prev) => (v === '' ? (prev ?? []) : [...(prev ?? []), ...parseList(n, v)]),
  }),
  flag({
    name: 'admission-control-config-file',
    field: 'admissionControlConfigFile',
    type: 'string',
    usage:
      "Upstream's AdmissionConfiguration: per-plugin settings, such as the webhook plugins' kubeConfigFile, which gives the client certificate or token presented to each webhook host.",
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'authorization-mode',
    field: 'authorizationModes',
    type: 'strings',
    default: ['RBAC'],
    usage:
      'Authorizers asked in turn, comma-separated: AlwaysAllow, AlwaysDeny, ABAC, RBAC (RoleBindings and ClusterRoleBindings, from an index kept by watches; the default roles are reconciled at start), Node (kubelets, system:node:<name>), Webhook; system:masters is allowed before any. Not with --authorization-config.',
    parse: (v, n) => {
      const modes = parseList(n, v);
      const known = ['AlwaysAllow', 'AlwaysDeny', 'RBAC', 'ABAC', 'Node', 'Webhook'];
      for (const m of modes) {
        if (!known.includes(m)) throw invalid(n, v, `authorization mode ${JSON.stringify(m)} is not supported; supported: ${known.join(', ')}`);
      }
      if (new Set(modes).size !== modes.length) throw invalid(n, v, 'authorization modes may not be repeated');
      return modes;
    },
  }),
  flag({
    name: 'authorization-config',
    field: 'authorizationConfigFile',
    type: 'string',
    usage:
      'File with an AuthorizationConfiguration (ordered authorizers, webhooks with caches, failure policy and CEL match conditions); reloaded on change and every minute. Excludes --authorization-mode and --authorization-webhook-*.',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'authorization-webhook-config-file',
    field: 'authorizationWebhookConfigFile',
    type: 'string',
    usage: 'With the Webhook mode: the service SubjectAccessReviews are sent to, named by this kubeconfig-format file.',
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'authorization-webhook-version',
    field: 'authorizationWebhookVersion',
    type: 'string',
    default: 'v1beta1' as const,
    usage: 'SubjectAccessReview version the authorization webhook speaks: v1beta1 or v1.',
    parse: (v, n) => {
      if (v !== 'v1beta1' && v !== 'v1') throw invalid(n, v, 'must be v1beta1 or v1');
      return v;
    },
  }),
  flag({
    name: 'authorization-webhook-cache-authorized-ttl',
    field: 'authorizationWebhookCacheAuthorizedTtlMs',
    type: 'duration',
    default: 300_000,
    shownDefault: '5m0s',
    usage: "How long the authorization webhook's allow is remembered.",
    parse: (v, n) => parseDuration(n, v),
  }),
  flag({
    name: 'authorization-webhook-cache-unauthorized-ttl',
    field: 'authorizationWebhookCacheUnauthorizedTtlMs',
    type: 'duration',
    default: 30_000,
    shownDefault: '30s',
    usage: "How long the authorization webhook's refusal is remembered.",
    parse: (v, n) => parseDuration(n, v),
  }),
  flag({
    name: 'authorization-policy-file',
    field: 'authorizationPolicyFile',
    type: 'string',
    usage: "The ABAC mode's policy, one JSON object per line; required by that mode and only with it.",
    parse: (v, n) => nonEmpty(n, v),
  }),
  flag({
    name: 'grpc-bind-address',
    field: 'grpcBindAddress',
    type: 'ip',
    default: '127.0.0.1',
    usage: 'The IP address on which to serve the core over gRPC (--grpc-port).',
    parse: (v, n) => parseIp(n, v),
  }),
  flag({
    name: 'grpc-port',
    field: 'grpcPort',
    type: 'int',
    usage: 'Serve the core over gRPC (TLS with the serving certificate, authenticated like HTTPS) on this port; 0 picks a free port. Unset: not served.',
    docs: 'See docs/DEPLOYING.md, "Splitting gateway and core".',
    parse: (v, n) => parsePort(n, v, 0),
  }),
  flag({
    name: 'core-only',
    field: 'coreOnly',
    type: 'bool',
    default: false,
    usage: 'Serve only the core over gRPC (needs --grpc-port), without the HTTPS gateway, for deployments that split gateway and core.',
    docs: 'See docs/DEPLOYING.md, "Splitting gateway and core".',
    parse: (v, n) => parseBool(n, v),
  }),
];

const BY_NAME = new Map(FLAGS.map((f) => [f.name, f] as const));

/** Every flag's name, in help order. */
export function flagNames(): string[] {
  return FLAGS.map((f) => f.name);
}

/** One flag as help and docs/FLAGS.md show it. */
export interface FlagDoc {
  /** `-v, --v` for the one flag with a short form, else `--name`. */
  spelling: string;
  name: string;
  /** The value's type as help prints it (pflag's names); `bool` for switches. */
  type: string;
  /** The default as help prints it, '' where there is none. */
  shownDefault: string;
  usage: string;
  docs?: string;
}

/** The flag table for docs: the same names, types, defaults and usage help prints, in help order. */
export function flagDocs(): FlagDoc[] {
  return FLAGS.map((f) => ({
    spelling: f.name === 'v' ? '-v, --v' : `--${f.name}`,
    name: f.name,
    type: f.type,
    shownDefault: shownDefault(f),
    usage: f.usage,
    ...(f.docs !== undefined && { docs: f.docs }),
  }));
}

/** The defaults, from the table. */
export function defaultConfig(): ServerConfig {
  const config: Partial<Record<keyof ServerConfig, unknown>> = {};
  for (const f of FLAGS) if (f.default !== undefined) config[f.field] = structuredClone(f.default);
  return config as ServerConfig;
}

export const DEFAULTS: Readonly<ServerConfig> = defaultConfig();

function shownDefault(f: Flag): string {
  if (f.shownDefault !== undefined) return f.shownDefault;
  if (f.default === undefined) return '';
  return Array.isArray(f.default) ? f.default.join(',') : String(f.default);
}

export function helpText(): string {
  const lines = ['Usage: keelson [flags]', '', 'Flags:'];
  const heads = FLAGS.map((f) => `${f.name === 'v' ? '  -v, --v' : `      --${f.name}`} ${f.type === 'bool' ? '' : f.type}`.trimEnd());
  // pflag's layout: one column for the names, as wide as the widest, then the usage.
  const width = Math.max(...heads.map((h) => h.length)) + 3;
  FLAGS.forEach((f, i) => {
    const shown = shownDefault(f);
    lines.push(heads[i]!.padEnd(width) + f.usage + (shown ? ` (default ${shown})` : ''));
  });
  lines.push(`${'  -h, --help'.padEnd(width)}help for keelson`);
  return `${lines.join('\n')}\n`;
}

/** Go's strconv.ParseBool, which bool flags and feature gates use. */
function parseGoBool(value: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return undefined;
}

function parseBool(name: string, value: string): boolean {
  const b = parseGoBool(value);
  if (b === undefined) throw invalid(name, value, `strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`);
  return b;
}

function nonEmpty(name: string, value: string): string {
  if (!value) throw invalid(name, value, 'must not be empty');
  return value;
}

/**
 * `--service-cluster-ip-range` as kube-apiserver completes and validates it (getServiceIPAndRanges,
 * ServiceIPRange, validateClusterIPFlags): empty is the default; the first entry must parse
 * (leading zeros allowed, as ParseCIDRSloppy) and hold at least 8 addresses and at most 2^20; a
 * second one must be of the other family, and is then refused: Keelson is single-stack. The
 * masked range is kept.
 */
function parseServiceClusterIpRange(name: string, value: string): string {
  if (value === '') return DEFAULT_SERVICE_CIDR;
  const entries = value.split(',');
  const fail = (message: string) => new FlagFailure(`--${name}`, message);
  const primary = sloppyPrefix(entries[0]!);
  if (!primary) throw fail('service-cluster-ip-range[0] is not a valid cidr');
  const width = (p: Prefix) => p.addr.bytes.length * 8;
  if (Math.min(2 ** (width(primary) - primary.bits), 2 ** 16) < 8) {
    throw fail('error determining service IP ranges for primary service cidr: the service cluster IP range must be at least 8 IP addresses');
  }
  const secondary = entries.length > 1 ? sloppyPrefix(entries[1]!) : undefined;
  if (entries.length > 1 && !secondary) throw fail('service-cluster-ip-range[1] is not an ip net');
  const errs: string[] = [];
  if (entries.length > 2) errs.push('--service-cluster-ip-range must not contain more than two entries');
  const tooLarge = (p: Prefix, flagName: string) => {
    if (width(p) - p.bits > 20) errs.push(`specified ${flagName} is too large; for ${width(p)}-bit addresses, the mask must be >= ${width(p) - 20}`);
  };
  tooLarge(primary, '--service-cluster-ip-range');
  if (secondary) {
    if (width(secondary) === width(primary)) errs.push('--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family');
    tooLarge(secondary, '--service-cluster-ip-range[1]');
  }
  // utilerrors' aggregate: one error as it is, several in brackets.
  if (errs.length > 0) throw fail(errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`);
  if (secondary) throw fail(`--${name}: dual-stack ranges are not served; give one range (docs/SERVICES.md)`);
  return prefixText(masked(primary));
}

/** Go's ParseCIDRSloppy: ParseCIDR, IPv4 fields with leading zeros read as decimal; undefined when it does not parse. */
function sloppyPrefix(text: string): Prefix | undefined {
  const slash = text.lastIndexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const plain = address.includes(':') ? address : address.replace(/(^|\.)0+(?=\d)/g, '$1');
  try {
    return parsePrefix(`${plain}${slash < 0 ? '' : text.slice(slash)}`);
  } catch {
    return undefined;
  }
}

/** `--service-node-port-range` as upstream's PortRange flag value sets it; empty is the default. */
function parseServicePortRange(name: string, value: string): string {
  let range: { base: number; size: number };
  try {
    range = parseNodePortRange(value);
  } catch (err) {
    throw invalid(name, value, (err as Error).message);
  }
  return range.size === 0 ? DEFAULT_NODE_PORT_RANGE : `${range.base}-${range.base + range.size - 1}`;
}

function parseIp(name: string, value: string): string {
  if (!isIP(value)) throw invalid(name, value, 'must be an IP address');
  return value;
}

export function parseFeatureGates(value: string): Record<string, boolean> {
  const gates: Record<string, boolean> = {};
  for (const part of value.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const eq = item.indexOf('=');
    if (eq < 0) throw invalid('feature-gates', value, `missing bool value for ${item}`);
    const name = item.slice(0, eq).trim();
    const raw = item.slice(eq + 1).trim();
    if (!name) throw invalid('feature-gates', value, `missing feature gate name in ${JSON.stringify(item)}`);
    const b = parseGoBool(raw);
    if (b === undefined)
      throw invalid('feature-gates', value, `invalid value of ${name}=${raw}, err: strconv.ParseBool: parsing ${JSON.stringify(raw)}: invalid syntax`);
    gates[name] = b;
  }
  return gates;
}

/** The syntax, then the catalog: unknown gates and disabling a locked GA gate refuse to start (docs/API.md, "Feature gates"). */
function parseKnownFeatureGates(value: string): Record<string, boolean> {
  const gates = parseFeatureGates(value);
  try {
    buildFeatureGates(gates);
  } catch (err) {
    if (err instanceof FeatureGateError) throw invalid('feature-gates', value, err.message);
    throw err;
  }
  return gates;
}

/** The controller manager's timing and eviction flags, as the controllers take them. */
export function controllerFlags(config: ServerConfig): Partial<ControllerOptions> {
  return {
    nodeMonitorPeriodMs: config.nodeMonitorPeriodMs,
    nodeMonitorGracePeriodMs: config.nodeMonitorGracePeriodMs,
    nodeStartupGracePeriodMs: config.nodeStartupGracePeriodMs,
    terminatedPodGcThreshold: config.terminatedPodGcThreshold,
    nodeEvictionRate: config.nodeEvictionRate,
    secondaryNodeEvictionRate: config.secondaryNodeEvictionRate,
    largeClusterSizeThreshold: config.largeClusterSizeThreshold,
    unhealthyZoneThreshold: config.unhealthyZoneThreshold,
    clusterSigningDurationMs: config.clusterSigningDurationMs,
  };
}

/** A duration greater than 0. */
function positiveDuration(name: string, value: string): number {
  const ms = parseDuration(name, value);
  if (ms <= 0) throw invalid(name, value, 'must be greater than 0');
  return ms;
}

/** Go's strconv.ParseFloat for a float32 flag. */
function parseFloat32(name: string, value: string): number {
  const n = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value) ? Number(value) : NaN;
  if (Number.isNaN(n)) throw invalid(name, value, `strconv.ParseFloat: parsing ${JSON.stringify(value)}: invalid syntax`);
  if (!Number.isFinite(Math.fround(n))) throw invalid(name, value, `strconv.ParseFloat: parsing ${JSON.stringify(value)}: value out of range`);
  return n;
}

/** Go's strconv.ParseInt for an int32 flag. */
function parseInt32(name: string, value: string): number {
  if (!/^[-+]?\d+$/.test(value)) throw invalid(name, value, `strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`);
  const n = Number(value);
  if (n < -(2 ** 31) || n > 2 ** 31 - 1) throw invalid(name, value, `strconv.ParseInt: parsing ${JSON.stringify(value)}: value out of range`);
  return n;
}

/** Go's strconv.ParseInt for an int flag (64 bits; JavaScript keeps it exact to 2^53). */
function parseGoInt(name: string, value: string): number {
  if (!/^[-+]?\d+$/.test(value)) throw invalid(name, value, `strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw invalid(name, value, `strconv.ParseInt: parsing ${JSON.stringify(value)}: value out of range`);
  return n;
}

/** A non-negative integer count. */
function parseCount(name: string, value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw invalid(name, value, 'must be a non-negative integer');
  return Number(value);
}

function parsePort(name: string, value: string, min: number): number {
  if (!/^\d+$/.test(value)) throw invalid(name, value, `strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`);
  const n = Number(value);
  if (n < min || n > 65535) throw invalid(name, value, `must be between ${min} and 65535, inclusive`);
  return n;
}

function parseList(name: string, value: string): string[] {
  const items = value.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw invalid(name, value, 'empty element in list');
  return items;
}

/** A header list as upstream's request-header options take it: empty for none, no blank element. */
function parseHeaderList(name: string, value: string): string[] {
  if (value === '') return [];
  const items = value.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw new FlagFailure(`--${name}`, `empty value in ${JSON.stringify(name)}`);
  return items;
}

function parseEtcdServers(name: string, value: string): string[] {
  const urls = parseList(name, value);
  for (const u of urls) {
    let parsed: URL;
    try {
      parsed = new URL(u);
    } catch {
      throw invalid(name, value, `${JSON.stringify(u)} is not a URL`);
    }
    if (!['http:', 'https:', 'unix:', 'unixs:'].includes(parsed.protocol)) {
      throw invalid(name, value, `${JSON.stringify(u)} must use http, https, unix or unixs`);
    }
  }
  return urls;
}

function parseHostPort(name: string, value: string): string {
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(value);
  if (!m) throw invalid(name, value, 'must be host:port');
  parsePort(name, m[2]!, 1);
  return value;
}

/** A certificate and its key from two flags' files, checked to parse and to match each other. */
function loadCertificatePair(flags: { cert: string; key: string }, certFile: string, keyFile: string, io: FlagIo): ServingCertificate {
  const read = (flagName: string, path: string) => {
    try {
      return io.readFile(path);
    } catch (err) {
      throw new FlagFailure(`--${flagName}`, `--${flagName}: cannot read ${JSON.stringify(path)}: ${(err as Error).message}`);
    }
  };
  const cert = read(flags.cert, certFile);
  const key = read(flags.key, keyFile);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw new FlagFailure(`--${flags.cert}`, `--${flags.cert}: ${JSON.stringify(certFile)} holds no PEM certificate: ${(err as Error).message}`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new FlagFailure(`--${flags.key}`, `--${flags.key}: ${JSON.stringify(keyFile)} holds no PEM private key: ${(err as Error).message}`);
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new FlagFailure(
      `--${flags.key}`,
      `--${flags.key}: the key in ${JSON.stringify(keyFile)} does not match the certificate in ${JSON.stringify(certFile)}`,
    );
  }
  return { certFile, keyFile, cert, key };
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration (`5m0s`, `90s`, `1h30m`, `0`) in milliseconds, as kube-apiserver's duration flags take. */
export function parseDuration(name: string, value: string): number {
  if (value === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(value); m; m = re.exec(value)) {
    total += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    consumed = re.lastIndex;
  }
  if (consumed === 0 || consumed !== value.length) throw invalid(name, value, `time: invalid duration ${JSON.stringify(value)}`);
  return total;
}

/** Parse `argv` (without the node and script paths). */
export function parseFlags(args: readonly string[], io: FlagIo = defaultIo): FlagParseResult {
  let argv = args;
  try {
    const config = defaultConfig();
    const seen = new Set<string>();
    for (let i = 0; i < argv.length; i++) {
      const arg = argv[i]!;
      if (arg === '--help' || arg === '-h') return { kind: 'help', text: helpText() };
      // pflag's one shorthand kube-apiserver has: -v for --v.
      if (arg === '-v' || arg.startsWith('-v=')) {
        argv = [...argv.slice(0, i), `-${arg}`, ...argv.slice(i + 1)];
        i--;
        continue;
      }
      if (!arg.startsWith('--')) throw new FlagFailure('', `unexpected argument ${JSON.stringify(arg)}; every option is a --flag`);
      const eq = arg.indexOf('=');
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      const f = BY_NAME.get(name);
      if (!f) throw new FlagFailure(eq < 0 ? arg : arg.slice(0, eq), `unknown flag: ${eq < 0 ? arg : arg.slice(0, eq)}`);
      let value: string;
      if (eq >= 0) value = arg.slice(eq + 1);
      else if (f.type === 'bool')
        value = 'true'; // pflag: a bare boolean flag means true
      else if (i + 1 >= argv.length) throw new FlagFailure(`--${name}`, `flag needs an argument: --${name}`);
      else value = argv[++i]!;
      (config as unknown as Record<string, unknown>)[f.field] = f.parse(value, name, config[f.field] as never);
      seen.add(name);
    }
    return { kind: 'config', config: finish(config, seen, io) };
  } catch (err) {
    if (err instanceof FlagFailure) return { kind: 'error', error: { flag: err.flag, message: err.message } };
    throw err;
  }
}

/** The front proxy's CA bundle readable and holding certificates, and the uid headers only behind their gate, as upstream checks them. */
function checkRequestHeader(config: ServerConfig, io: FlagIo): void {
  if (config.requestheaderClientCaFile !== undefined) {
    let pem: string;
    try {
      pem = io.readFile(config.requestheaderClientCaFile);
    } catch (err) {
      throw new FlagFailure(
        '--requestheader-client-ca-file',
        `--requestheader-client-ca-file: cannot read ${JSON.stringify(config.requestheaderClientCaFile)}: ${(err as Error).message}`,
      );
    }
    if (!/-----BEGIN CERTIFICATE-----/.test(pem)) {
      throw new FlagFailure(
        '--requestheader-client-ca-file',
        `--requestheader-client-ca-file: ${JSON.stringify(config.requestheaderClientCaFile)} holds no PEM certificate`,
      );
    }
  }
  if (config.requestheaderUidHeaders.length > 0 && !buildFeatureGates(config.featureGates).gates.enabled(UID_GATE)) {
    throw new FlagFailure('--requestheader-uid-headers', `--requestheader-uid-headers requires the ${JSON.stringify(UID_GATE)} feature to be enabled`);
  }
}

/**
 * upstream's validatePublicIPServiceClusterIPRangeIPFamilies: the kubernetes Service is single-stack,
 * so its range and the address its endpoints list (`--advertise-address`) are of one family.
 */
function checkServiceFamily(config: ServerConfig): void {
  if (config.advertiseAddress === undefined) return;
  const rangeIs4 = parsePrefix(config.serviceClusterIpRange).addr.bytes.length === 4;
  if (rangeIs4 !== (parseAddr(config.advertiseAddress).bytes.length === 4)) {
    throw new FlagFailure(
      '--advertise-address',
      `service IP family ${JSON.stringify(config.serviceClusterIpRange)} must match public address family ${JSON.stringify(config.advertiseAddress)}`,
    );
  }
}

/** The gate of `--requestheader-uid-headers` (alpha in 1.32). */
const UID_GATE = 'RemoteRequestHeaderUID';

/** Checks across flags: the certificate pairs, the front proxy's, and what --core-only needs. */
function finish(config: ServerConfig, seen: ReadonlySet<string>, io: FlagIo): ServerConfig {
  for (const pair of [
    { cert: 'tls-cert-file', key: 'tls-private-key-file', field: 'servingCertificate' },
    { cert: 'proxy-client-cert-file', key: 'proxy-client-key-file', field: 'proxyClientCertificate' },
  ] as const) {
    const hasCert = seen.has(pair.cert);
    if (hasCert !== seen.has(pair.key)) {
      const [missing, given] = hasCert ? [pair.key, pair.cert] : [pair.cert, pair.key];
      throw new FlagFailure(`--${missing}`, `--${missing} is required when --${given} is set: give both or neither`);
    }
    const files = config[pair.field];
    if (files) config[pair.field] = loadCertificatePair(pair, files.certFile, files.keyFile, io);
  }
  checkRequestHeader(config, io);
  checkServiceFamily(config);
  if (config.coreOnly && config.grpcPort === undefined)
    throw new FlagFailure('--core-only', '--core-only needs --grpc-port: a core-only process serves only the gRPC door');
  if (config.coreOnly && config.coreAddress) throw new FlagFailure('--core-only', '--core-only and --core-address exclude each other');
  if (config.controllersOnly) {
    // kube-controller-manager's secure port.
    if (!seen.has('secure-port')) config.securePort = 10257;
    if (!config.coreAddress)
      throw new FlagFailure('--controllers-only', '--controllers-only needs --core-address: the controllers are clients of a remote core');
    if (!config.kubeconfig) throw new FlagFailure('--kubeconfig', '--controllers-only needs --kubeconfig: the credentials the controllers present to the core');
    if (config.coreOnly) throw new FlagFailure('--controllers-only', '--controllers-only and --core-only exclude each other');
  } else {
    if (seen.has('kubeconfig')) throw new FlagFailure('--kubeconfig', '--kubeconfig is used only with --controllers-only');
  }
  if (seen.has('cluster-signing-cert-file') !== seen.has('cluster-signing-key-file')) {
    const missing = seen.has('cluster-signing-cert-file') ? '--cluster-signing-key-file' : '--cluster-signing-cert-file';
    throw new FlagFailure(
      missing,
      `${missing} is required with ${missing === '--cluster-signing-key-file' ? '--cluster-signing-cert-file' : '--cluster-signing-key-file'}: give both or neither`,
    );
  }
  if (config.controllersOnly && config.simulatedNodes > 0 && !config.clusterSigningCertFile) {
    throw new FlagFailure(
      '--simulated-nodes',
      '--simulated-nodes needs --cluster-signing-cert-file and --cluster-signing-key-file with --controllers-only: the scheduler and each node present a client certificate signed with them (or pass --simulated-nodes=0)',
    );
  }
  if (config.auditLogPath) validateAuditBackend(config, 'log', createNaming(config.vendor));
  if (config.auditWebhookConfigFile) validateAuditBackend(config, 'webhook', createNaming(config.vendor));
  if (config.oidcIssuerUrl && !config.oidcClientId) throw new FlagFailure('--oidc-client-id', '--oidc-client-id is required with --oidc-issuer-url');
  if (config.authenticationConfigFile && config.oidcIssuerUrl) {
    throw new FlagFailure('--authentication-config', 'authentication-config file and oidc-* flags are mutually exclusive');
  }
  try {
    config.admissionPlugins = resolveAdmissionPlugins(config.enableAdmissionPlugins, config.disableAdmissionPlugins);
  } catch (err) {
    const flagName = (err as AdmissionPluginsError).errors?.[0]?.startsWith('disable') ? '--disable-admission-plugins' : '--enable-admission-plugins';
    throw new FlagFailure(flagName, (err as Error).message);
  }
  for (const f of ['etcd-cafile', 'etcd-certfile', 'etcd-keyfile']) {
    if (seen.has(f) && !config.etcdServers) throw new FlagFailure(`--${f}`, `--${f} is used only with --etcd-servers`);
  }
  if (seen.has('etcd-certfile') !== seen.has('etcd-keyfile')) {
    const missing = seen.has('etcd-certfile') ? '--etcd-keyfile' : '--etcd-certfile';
    throw new FlagFailure(missing, `${missing} is required with ${missing === '--etcd-keyfile' ? '--etcd-certfile' : '--etcd-keyfile'}: give both or neither`);
  }
  for (const [f, file] of [
    ['etcd-cafile', config.etcdCaFile],
    ['etcd-certfile', config.etcdCertFile],
    ['etcd-keyfile', config.etcdKeyFile],
  ] as const) {
    if (file !== undefined) {
      try {
        io.readFile(file);
      } catch (err) {
        throw new FlagFailure(`--${f}`, `cannot read ${JSON.stringify(file)}: ${(err as Error).message}`);
      }
    }
  }
  if (config.admissionControlConfigFile) {
    try {
      readAdmissionControlConfig(config.admissionControlConfigFile, createNaming(config.vendor));
    } catch (err) {
      throw new FlagFailure('--admission-control-config-file', (err as Error).message);
    }
  }
  // As upstream's authorization options validate them.
  if (config.authorizationConfigFile) {
    const legacy = [
      'authorization-mode',
      'authorization-webhook-config-file',
      'authorization-webhook-version',
      'authorization-webhook-cache-authorized-ttl',
      'authorization-webhook-cache-unauthorized-ttl',
    ];
    if (legacy.some((f) => seen.has(f))) {
      throw new FlagFailure(
        '--authorization-config',
        '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined',
      );
    }
    let parsed;
    try {
      parsed = parseAuthorizationConfig(io.readFile(config.authorizationConfigFile), createNaming(config.vendor));
    } catch (err) {
      throw new FlagFailure('--authorization-config', `${config.authorizationConfigFile}: ${(err as Error).message}`);
    }
    // The file's order is the chain's; the mode list mirrors it for the rest of the server.
    config.authorizationModes = [...new Set(parsed.authorizers.map((a) => a.type))];
  }
  if (config.authorizationModes.includes('Webhook') && !config.authorizationWebhookConfigFile && !config.authorizationConfigFile) {
    throw new FlagFailure('--authorization-webhook-config-file', "authorization-mode Webhook's authorization config file not passed");
  }
  if (config.authorizationWebhookConfigFile && !config.authorizationModes.includes('Webhook')) {
    throw new FlagFailure('--authorization-webhook-config-file', 'cannot specify --authorization-webhook-config-file without mode Webhook');
  }
  if (config.authorizationModes.includes('ABAC') && !config.authorizationPolicyFile) {
    throw new FlagFailure('--authorization-policy-file', "authorization-mode ABAC's authorization policy file not passed");
  }
  if (config.authorizationPolicyFile && !config.authorizationModes.includes('ABAC')) {
    throw new FlagFailure('--authorization-policy-file', 'cannot specify --authorization-policy-file without mode ABAC');
  }
  if (config.authorizationPolicyFile) {
    try {
      readAbacPolicyFile(config.authorizationPolicyFile, createNaming(config.vendor));
    } catch (err) {
      throw new FlagFailure('--authorization-policy-file', (err as Error).message);
    }
  }
  return config;
}

/** One audit backend's mode, batching and truncation settings, from its `--audit-<plugin>-*` flags. */
export interface AuditBackendSettings {
  mode: string;
  batch: { bufferSize: number; maxBatchSize: number; maxBatchWaitMs: number; throttle?: { qps: number; burst: number } };
  truncate: { enabled: boolean; maxEventSize: number; maxBatchSize: number };
}

export function auditBackendSettings(config: ServerConfig, plugin: 'log' | 'webhook'): AuditBackendSettings {
  const c = config;
  return plugin === 'log'
    ? {
        mode: c.auditLogMode,
        batch: {
          bufferSize: c.auditLogBatchBufferSize,
          maxBatchSize: c.auditLogBatchMaxSize,
          maxBatchWaitMs: c.auditLogBatchMaxWaitMs,
          ...(c.auditLogBatchThrottleEnable ? { throttle: { qps: c.auditLogBatchThrottleQps, burst: c.auditLogBatchThrottleBurst } } : {}),
        },
        truncate: { enabled: c.auditLogTruncateEnabled, maxEventSize: c.auditLogTruncateMaxEventSize, maxBatchSize: c.auditLogTruncateMaxBatchSize },
      }
    : {
        mode: c.auditWebhookMode,
        batch: {
          bufferSize: c.auditWebhookBatchBufferSize,
          maxBatchSize: c.auditWebhookBatchMaxSize,
          maxBatchWaitMs: c.auditWebhookBatchMaxWaitMs,
          ...(c.auditWebhookBatchThrottleEnable ? { throttle: { qps: c.auditWebhookBatchThrottleQps, burst: c.auditWebhookBatchThrottleBurst } } : {}),
        },
        truncate: {
          enabled: c.auditWebhookTruncateEnabled,
          maxEventSize: c.auditWebhookTruncateMaxEventSize,
          maxBatchSize: c.auditWebhookTruncateMaxBatchSize,
        },
      };
}

/** An audit backend's options, checked as upstream's audit options check them (only when that backend is on). */
function validateAuditBackend(config: ServerConfig, plugin: 'log' | 'webhook', naming: Naming): void {
  const fail = (flagName: string, message: string): never => {
    throw new FlagFailure(`--${flagName}`, message);
  };
  const log = plugin === 'log';
  const o = auditBackendSettings(config, plugin);
  const modes = ['batch', 'blocking', 'blocking-strict'];
  if (!modes.includes(o.mode)) fail(`audit-${plugin}-mode`, `invalid audit ${plugin} mode ${o.mode}, allowed modes are ${JSON.stringify(modes.join(','))}`);
  if (o.mode === 'batch') {
    const { bufferSize, maxBatchSize, throttle } = o.batch;
    if (bufferSize <= 0) fail(`audit-${plugin}-batch-buffer-size`, `invalid audit batch ${plugin} buffer size ${bufferSize}, must be a positive number`);
    if (maxBatchSize <= 0) fail(`audit-${plugin}-batch-max-size`, `invalid audit batch ${plugin} max batch size ${maxBatchSize}, must be a positive number`);
    if (throttle) {
      if (throttle.qps <= 0)
        fail(`audit-${plugin}-batch-throttle-qps`, `invalid audit batch ${plugin} throttle QPS ${throttle.qps}, must be a positive number`);
      if (throttle.burst <= 0)
        fail(`audit-${plugin}-batch-throttle-burst`, `invalid audit batch ${plugin} throttle burst ${throttle.burst}, must be a positive number`);
    }
  }
  // Upstream checks the truncation sizes whether or not truncation is on.
  const { maxEventSize, maxBatchSize: maxBatchBytes } = o.truncate;
  if (maxEventSize <= 0)
    fail(`audit-${plugin}-truncate-max-event-size`, `invalid audit truncate ${plugin} max event size ${maxEventSize}, must be a positive number`);
  if (maxBatchBytes < maxEventSize) {
    fail(
      `audit-${plugin}-truncate-max-batch-size`,
      `invalid audit truncate ${plugin} max batch size ${maxBatchBytes}, must be greater than max event size (${maxEventSize})`,
    );
  }
  const known = `${naming.group('audit')}/v1`;
  const version = (log ? config.auditLogVersion : config.auditWebhookVersion) ?? known;
  if (log) config.auditLogVersion = version;
  else config.auditWebhookVersion = version;
  if (version !== known) fail(`audit-${plugin}-version`, `invalid group version, allowed versions are ${JSON.stringify([known]).replace(/,/g, ' ')}`);
  if (log) {
    const formats = ['legacy', 'json'];
    if (!formats.includes(config.auditLogFormat))
      fail('audit-log-format', `invalid audit log format ${config.auditLogFormat}, allowed formats are ${JSON.stringify(formats.join(','))}`);
    if (config.auditLogMaxAgeDays < 0) fail('audit-log-maxage', `--audit-log-maxage ${config.auditLogMaxAgeDays} can't be a negative number`);
    if (config.auditLogMaxBackups < 0) fail('audit-log-maxbackup', `--audit-log-maxbackup ${config.auditLogMaxBackups} can't be a negative number`);
    if (config.auditLogMaxSizeMb < 0) fail('audit-log-maxsize', `--audit-log-maxsize ${config.auditLogMaxSizeMb} can't be a negative number`);
  } else {
    try {
      readWebhookConfig(config.auditWebhookConfigFile!);
    } catch (err) {
      fail('audit-webhook-config-file', (err as Error).message);
    }
  }
}

/** A file a flag names, read whole; a failure names the flag. */
export function readFlagFile(flag: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`--${flag}: cannot read ${JSON.stringify(file)}: ${(err as Error).message}`);
  }
}
