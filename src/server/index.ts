/**
 * Start and stop a whole Keelson server in process: PKI and admin.kubeconfig under the data
 * dir, the store (embedded unless --etcd-servers), the core (or a remote core over gRPC with
 * --core-address), and the HTTPS gateway. `main.ts` is this plus flags, logging and signals;
 * tests call `startServer` directly.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import path from 'node:path';
import {
  type CoreApi,
  createCore,
  type CoreState,
  builtinResources,
  type ResourceCatalog,
  type ResourceDefinition,
  followCatalog,
  type SignerAuthorizer,
  type AdmissionPlugin,
  defaultAdmissionPlugins,
  createServiceResolver,
  kubernetesServiceNames,
  type ServiceObjectReader,
  type ServiceResolver,
  type ServingAddress,
} from '../core';
import type { GrpcCoreServer } from '../grpc';
import {
  type Authenticator,
  type ServiceAccountTokenOptions,
  type TokenAuthenticator,
  bootstrapTokenAuthenticator,
  createAuthenticator,
  keysOfPem,
  oidcAuthenticator,
  parseTokenFile,
  structuredAuthenticator,
  readWebhookConfig,
  webhookTokenAuthenticator,
  serviceAccountAuthenticator,
  tokenFileAuthenticator,
  tokenRequestHandler,
  tokenReviewHandler,
  issuerDiscoveryProvider,
} from '../authn';
import { StatusError } from '../status';
import { type Clock, systemClock } from '../clock';
import { enabledControllers, FlowControlConfigController, startControllers, type RunningControllers } from '../controllers';
import { type AuditEvent, type AuditPolicy, type RequestLogEntry, type RunningServer, keelsonVersion, parseAuditPolicy, startGateway } from '../gateway';
import type { Logger } from './logging';
import { openAuditLog } from './audit-log';
import { caSigner } from './certificates';
import {
  type AuditBackend,
  type PluginError,
  bufferedBackend,
  ignoringErrors,
  legacyEventLine,
  truncatingBackend,
  unionBackends,
  webhookBackend,
} from './audit-backends';
import { authorizeAll } from '../gateway/steps/authorization';
import { type Authorize, type RulesFor, accessReviewHandlers, bootstrapPolicy, rbacEscalationPlugin, reconcilePolicy, rulesForAll } from '../authz';
import { buildAuthorizers } from './authorization';
import { buildFeatureGates, type FeatureGates } from '../features';
import { encodingFeatures, gatewayCodecs } from '../gateway/codecs';
import { type Naming, createNaming } from '../naming';
import { type EtcdTlsOptions, type Store, createStore } from '../store';
import { applyRuntimeConfig } from './runtime-config';
import { readAdmissionControlConfig } from './admission-config';
import { ServerMetrics } from '../metrics';
import { nodeCollectorMetrics } from './node-collector-metrics';
import { workQueueMetrics } from './workqueue-metrics';
import { admissionMetrics } from './admission-metrics';
import { timedStore } from './store-metrics';
import { startKubernetesEndpoints } from './kubernetes-endpoints';
import { buildFlowControl } from './flow-control';
import { type ServerConfig, auditBackendSettings, controllerFlags, readFlagFile } from './flags';
import { type ServerHealthState, serverHealthChecks } from './health';
import { CLUSTER_NAME, renderKubeconfig, serverUrl, writeKubeconfig } from './kubeconfig';
import { CONTROLLER_MANAGER_CERT_USER, GATEWAY_USER, type Pki, ensurePki } from './pki';
import { frontProxyAuthenticator, handshakeClientCa, startAuthenticationTrust } from './front-proxy';

/**
 * The gRPC door, loaded when a flag asks for it (`--grpc-port`, `--core-address`): grpc-js is
 * memory and start-up time a server without it never needs (docs/BENCHMARKS.md, "What the
 * mechanisms save").
 */
function grpcDoor(): typeof import('../grpc') {
  return require('../grpc') as typeof import('../grpc');
}

export type { ServerConfig } from './flags';
export { parseFlags } from './flags';

export interface StartServerOptions {
  log?: (line: string) => void;
  /** The structured log: request lines at verbosity 3 go to it. */
  logger?: Logger;
  /** The embedded store keeps its database in memory (the data dir still holds the PKI and kubeconfigs). */
  inMemoryStore?: boolean;
  /**
   * The time the server reads (default the system clock): token expiry, TTLs, leases, bookmarks,
   * compaction, controllers. Certificates are checked by TLS against the real time.
   */
  clock?: Clock;
  /** Wait for the core to bootstrap before resolving (default true). */
  waitForReady?: boolean;
  /**
   * The HTTPS listener in front of the gateway (`StartGatewayOptions.adapter`): Express by
   * default; `node` for side-by-side measurements (tools/bench).
   */
  adapter?: 'express' | 'node';
}

export interface RunningKeelson {
  port: number;
  /** The URL in admin.kubeconfig, e.g. `https://127.0.0.1:6443`. */
  url: string;
  kubeconfigPath: string;
  dataDir: string;
  /** Resolves once the core has bootstrapped (readyz turns ok). */
  ready: Promise<void>;
  /** Stop serving, end open watches, close the core and the store. Idempotent. */
  close(): Promise<void>;
  /** `host:port` of the core's gRPC door, when served (`--grpc-port`). */
  grpcAddress?: string;
  /** The core this process serves (in-process calls, as the controllers make them), and its served types. */
  core: CoreApi;
  catalog?: ResourceCatalog;
}

const PACKAGE_VERSION = '0.1.0';
/** Upstream's HTTP log level. */
const REQUEST_LOG_VERBOSITY = 3;

interface Backend {
  core: CoreApi;
  /** The in-process core's store and cache state (absent in front of a remote core). */
  state?: CoreState;
  resources: readonly ResourceDefinition[];
  /** The served types as custom resources come and go (absent in front of a remote core: the built-in ones only). */
  catalog?: ResourceCatalog;
  store?: Store;
  /** Where Service references lead (the aggregator's proxy): the core's resolver, or one reading Services through its API. */
  services: ServiceResolver;
  /** Resolves once the core can serve; `serving` is where this server listens (the kubernetes Service's target). */
  ready(serving?: ServingAddress): Promise<void>;
  /** Start the controllers, once the server is ready (upstream's readyz does not wait for them). */
  startControllers?(): void;
  close(): Promise<void>;
}

interface BackendDeps {
  features: FeatureGates;
  /** RBAC's privilege-escalation rules, as an admission plugin. */
  admission: AdmissionPlugin[];
  /** The authorizer chain: the access reviews answer with it. */
  authorize: Authorize;
  /** The chain's rule resolvers: SelfSubjectRulesReview answers with them. */
  rulesFor: RulesFor;
  /**
   * The server's PKI. A first start makes it on a worker thread while the store and the core
   * start; it is there before the doors open, so before the controllers start.
   */
  pki: () => Pki;
  /** The server's authenticator chain: TokenReview answers with it. */
  authenticator: Authenticator;
  /** Service-account token settings: TokenRequest issues with them. */
  serviceAccounts: ServiceAccountTokenOptions;
  log: (message: string) => void;
  metrics: ServerMetrics;
  inMemoryStore?: boolean;
  clock: Clock;
}

/** `--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`, read once at start. */
function etcdTls(config: ServerConfig): EtcdTlsOptions | undefined {
  if (!config.etcdCaFile && !config.etcdCertFile) return undefined;
  const read = (flag: string, file: string | undefined) => (file ? readFlagFile(flag, file) : undefined);
  return { ca: read('etcd-cafile', config.etcdCaFile), cert: read('etcd-certfile', config.etcdCertFile), key: read('etcd-keyfile', config.etcdKeyFile) };
}

function openBackend(config: ServerConfig, deps: BackendDeps): Backend {
  const naming = createNaming(config.vendor);
  let resources: ResourceDefinition[];
  try {
    resources = applyRuntimeConfig(builtinResources(naming), config.runtimeConfig);
  } catch (err) {
    throw new Error(`--runtime-config: ${(err as Error).message}`);
  }
  if (config.coreAddress) {
    // The gateway presents its own client certificate; the core lets it act for the end user.
    const { createGrpcCoreClient, serverNameFor } = grpcDoor();
    const serverName = serverNameFor(config.coreAddress);
    const pki = deps.pki();
    const client = createGrpcCoreClient(config.coreAddress, {
      tls: { ca: pki.caCert, cert: pki.gatewayCert, key: pki.gatewayKey, ...(serverName ? { serverName } : {}) },
    });
    // Custom resources are the core's: the gateway follows its definitions to route and publish them.
    const catalog = followCatalog(client, resources, naming, deps.clock);
    return {
      core: client,
      resources,
      catalog,
      services: createServiceResolver({ read: readThrough(client) }),
      ready: async () => {},
      close: async () => {
        catalog.stop();
        client.close();
      },
    };
  }
  const store = timedStore(
    config.etcdServers
      ? createStore({ kind: 'etcd', endpoints: config.etcdServers, tls: etcdTls(config) })
      : deps.inMemoryStore
        ? createStore({ kind: 'embedded', inMemory: true })
        : createStore({ kind: 'embedded', dataDir: config.dataDir }),
    deps.metrics,
  );
  const core = createCore({
    store,
    naming,
    resources,
    clock: deps.clock,
    features: deps.features,
    compactionIntervalMs: config.compactionIntervalMs,
    eventTtlMs: config.eventTtlMs,
    // The kubernetes Service's port 443 leads to this server (docs/SERVICES.md), told where it listens at ready.
    services: { clusterIPRange: config.serviceClusterIpRange, nodePortRange: config.serviceNodePortRange, endpointRouting: config.enableAggregatorRouting },
    onBackgroundError: (what, err) => deps.log(`${what}: ${(err as Error).message}`),
    watchCache: { windowMs: config.watchCacheWindowMs, maxHistoryBytes: config.watchCacheMaxBytes },
    admission: deps.admission,
    admissionMetrics: admissionMetrics(deps.metrics.registry),
    admissionPlugins: config.admissionPlugins ?? defaultAdmissionPlugins(),
    authorizeSigner: signerAuthorizer(deps.authorize, naming),
    ...(config.admissionControlConfigFile ? readAdmissionControlConfig(config.admissionControlConfigFile, naming) : {}),
    handlers: {
      tokenreviews: tokenReviewHandler({ authenticator: deps.authenticator, apiAudiences: deps.serviceAccounts.apiAudiences }),
      'serviceaccounts/token': tokenRequestHandler(deps.serviceAccounts),
      ...accessReviewHandlers(deps.authorize, naming, deps.rulesFor),
    },
  });
  const state = core.state!();
  deps.metrics.setStateSource(state);
  // Controllers are API clients of the in-process core, as upstream's are of kube-apiserver; a gateway in
  // front of a remote core leaves them to the core's process.
  let controllers: RunningControllers | undefined;
  let flowControlConfig: FlowControlConfigController | undefined;
  return {
    core,
    state,
    resources: core.resources,
    catalog: core.catalog,
    store,
    services: core.services ?? createServiceResolver({ read: readThrough(core) }),
    ready: async (serving) => {
      await core.ready(serving);
      // Upstream's rbac/bootstrap-roles post-start hook: the default roles and bindings, reconciled on every start.
      const summary = await reconcilePolicy(core, SERVER_CONTEXT, bootstrapPolicy(naming), naming);
      if (summary.created + summary.updated + summary.recreated > 0) {
        deps.log(
          `default RBAC policy: ${summary.created} created, ${summary.updated} updated, ${summary.recreated} recreated, ${summary.protected} left alone (autoupdate=false)`,
        );
      }
      // Upstream's priority-and-fairness-config-producer post-start hook, wherever the flowcontrol group's v1 is served.
      const flowcontrolServed = ['flowschemas', 'prioritylevelconfigurations'].every((resource) =>
        core.resources.some((d) => d.group === naming.groups.flowcontrol && d.version === 'v1' && d.resource === resource),
      );
      if (flowcontrolServed) {
        flowControlConfig = new FlowControlConfigController({ core, naming, clock: deps.clock, user: SERVER_CONTEXT.user, log: deps.log });
        flowControlConfig.start();
      }
    },
    startControllers: () => {
      const pki = deps.pki();
      const rootCA = config.servingCertificate ? pki.caCert + config.servingCertificate.cert : pki.caCert;
      // csrsigning signs with --cluster-signing-cert-file when given, else with the CA made under
      // --data-dir; both are trusted for client certificates (clientCaOf), so what it signs authenticates.
      const csrSign = config.clusterSigningCertFile
        ? caSigner(readFlagFile('cluster-signing-cert-file', config.clusterSigningCertFile), {
            pem: readFlagFile('cluster-signing-key-file', config.clusterSigningKeyFile!),
          })
        : caSigner(pki.caCert, path.join(path.resolve(config.dataDir), 'ca.key'));
      controllers = startControllers(core, enabledControllers(config.controllers), deps.log, {
        ...controllerFlags(config),
        simulatedNodes: config.simulatedNodes,
        rootCA,
        leaderElect: config.leaderElect,
        useServiceAccountCredentials: config.useServiceAccountCredentials,
        clock: deps.clock,
        csrSign,
        // The server is the controller manager too: its metrics carry the node collector's.
        zoneMetrics: nodeCollectorMetrics(deps.metrics.registry),
        workQueueMetrics: workQueueMetrics(deps.metrics.registry),
      });
    },
    close: async () => {
      await controllers?.stop().catch((err: unknown) => deps.log(`stopping the controllers: ${(err as Error).message}`));
      flowControlConfig?.stop();
      await core.close();
    },
  };
}

/**
 * The certificates plugins' check, as upstream's IsAuthorizedForSignerName: the verb on the
 * `signers` resource named by the signer, else by its domain's wildcard (`example.com/*`).
 */
function signerAuthorizer(authorize: Authorize, naming: Naming): SignerAuthorizer {
  return async (user, verb, signerName) => {
    const allowed = async (name: string) =>
      (
        await authorize({
          user,
          verb,
          isResourceRequest: true,
          path: '',
          namespace: '',
          apiGroup: naming.groups.certificates,
          apiVersion: '*',
          resource: 'signers',
          subresource: '',
          name,
        })
      ).decision === 'allow';
    return (await allowed(signerName)) || allowed(`${signerName.split('/')[0]}/*`);
  };
}

/** The identity the server reads its own Secrets with (bootstrap tokens). */
const SERVER_CONTEXT = { user: { username: 'system:apiserver', groups: ['system:masters'] } };

/** A Service or Endpoints read through a core's API for a resolver; undefined when it does not exist. */
function readThrough(core: CoreApi): ServiceObjectReader {
  return (resource, namespace, name) =>
    core.get({ group: '', version: 'v1', resource, namespace, name }, {}, SERVER_CONTEXT).catch((err: unknown) => {
      if (StatusError.is(err, 'NotFound')) return undefined;
      throw err;
    });
}

/**
 * The authenticator chain from the flags: the front proxy's headers (`--requestheader-*`),
 * client certificates (checked by TLS against the client CA, `clientCa()`), `--token-auth-file`,
 * bootstrap tokens (read through `core()` from the watch cache), anonymous unless
 * `--anonymous-auth=false`.
 */
function buildAuthenticator(
  config: ServerConfig,
  core: () => CoreApi,
  clientCa: () => string,
  serviceAccounts: ServiceAccountTokenOptions,
  log: (message: string) => void,
  closers: Array<() => void>,
  metrics: ServerMetrics,
  clock: Clock,
): Authenticator {
  const naming = createNaming(config.vendor);
  const tokens: TokenAuthenticator[] = [serviceAccountAuthenticator(serviceAccounts)];
  if (config.tokenAuthFile) {
    let text: string;
    try {
      text = readFileSync(config.tokenAuthFile, 'utf8');
    } catch (err) {
      throw new Error(`--token-auth-file: cannot read ${JSON.stringify(config.tokenAuthFile)}: ${(err as Error).message}`);
    }
    const file = parseTokenFile(text, config.tokenAuthFile);
    for (const w of file.warnings) log(w);
    tokens.push(tokenFileAuthenticator(file));
  }
  if (config.enableBootstrapTokenAuth) {
    tokens.push(
      bootstrapTokenAuthenticator({
        namespace: naming.namespaces.system,
        secretType: naming.bootstrapTokenSecretType,
        clock,
        secrets: async (namespace, name) => {
          try {
            return await core().get({ group: '', version: 'v1', resource: 'secrets', namespace, name }, { resourceVersion: '0' }, SERVER_CONTEXT);
          } catch (err) {
            if (StatusError.is(err, 'NotFound')) return undefined;
            throw err;
          }
        },
      }),
    );
  }
  if (config.authenticationTokenWebhookConfigFile) {
    let client;
    try {
      client = readWebhookConfig(config.authenticationTokenWebhookConfigFile);
    } catch (err) {
      throw new Error(`--authentication-token-webhook-config-file: ${(err as Error).message}`);
    }
    tokens.push(
      webhookTokenAuthenticator({
        client,
        apiVersion: `${naming.groups.authentication}/${config.authenticationTokenWebhookVersion}`,
        cacheTtlMs: config.authenticationTokenWebhookCacheTtlMs,
        clock,
      }),
    );
  }
  let anonymous = config.anonymousAuth;
  let anonymousPaths: string[] | undefined;
  if (config.authenticationConfigFile) {
    let structured;
    try {
      structured = structuredAuthenticator({
        file: config.authenticationConfigFile,
        naming,
        clock,
        serviceAccountIssuers: serviceAccounts.issuers,
        log,
        onReload: (status) => metrics.configReloaded('authentication', { status: status.status, atMs: status.lastTimestampSeconds * 1000 }),
      });
    } catch (err) {
      throw new Error(`--authentication-config: ${(err as Error).message}`);
    }
    closers.push(() => structured.close());
    tokens.push(structured);
    const section = structured.config().anonymous;
    if (section) {
      anonymous = section.enabled;
      if (section.paths.length > 0) anonymousPaths = section.paths;
    }
  }
  if (config.oidcIssuerUrl) {
    const oidc = oidcAuthenticator({
      issuerUrl: config.oidcIssuerUrl,
      clientId: config.oidcClientId!,
      usernameClaim: config.oidcUsernameClaim,
      ...(config.oidcUsernamePrefix !== undefined ? { usernamePrefix: config.oidcUsernamePrefix } : {}),
      ...(config.oidcGroupsClaim ? { groupsClaim: config.oidcGroupsClaim } : {}),
      ...(config.oidcGroupsPrefix !== undefined ? { groupsPrefix: config.oidcGroupsPrefix } : {}),
      requiredClaims: config.oidcRequiredClaims,
      ...(config.oidcCaFile ? { ca: readFlagFile('oidc-ca-file', config.oidcCaFile) } : {}),
      signingAlgs: config.oidcSigningAlgs,
      clock,
      log,
    });
    closers.push(() => oidc.close());
    tokens.push(oidc);
  }
  const requestHeader = frontProxyAuthenticator(config, clientCa, clock);
  return createAuthenticator({
    ...(requestHeader ? { requestHeader } : {}),
    certificates: true,
    tokens,
    anonymous,
    ...(anonymousPaths ? { anonymousPaths } : {}),
  });
}

/**
 * Service-account token settings from the flags: the signing key (`--service-account-signing-key-file`,
 * else one generated once under the data dir), the verifying keys (`--service-account-key-file`,
 * else the signing key), the issuers and audiences (default `--api-audiences`: the issuers, as upstream).
 */
async function serviceAccountSettings(config: ServerConfig, dataDir: string, core: () => CoreApi, clock: Clock): Promise<ServiceAccountTokenOptions> {
  const naming = createNaming(config.vendor);
  let signingPem: string;
  if (config.serviceAccountSigningKeyFile) {
    signingPem = readFlagFile('service-account-signing-key-file', config.serviceAccountSigningKeyFile);
  } else {
    const file = path.join(dataDir, 'service-account.key');
    try {
      signingPem = await readFile(file, 'utf8');
    } catch {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      signingPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      await writeFile(file, signingPem, { mode: 0o600 });
    }
  }
  const signing = keysOfPem(signingPem);
  if (!signing.privateKey) throw new Error('--service-account-signing-key-file: the file holds no private key');
  const verifyingKeys = config.serviceAccountKeyFiles.length
    ? config.serviceAccountKeyFiles.flatMap((file) => keysOfPem(readFlagFile('service-account-key-file', file)).publicKeys)
    : signing.publicKeys;
  const issuers = config.serviceAccountIssuers.length ? config.serviceAccountIssuers : [`https://${naming.word}.default.svc.cluster.local`];
  return {
    naming,
    clock,
    issuers,
    apiAudiences: config.apiAudiences.length ? config.apiAudiences : issuers,
    verifyingKeys,
    signingKey: signing.privateKey,
    lookup: config.serviceAccountLookup,
    objects: async (resource, namespace, name) => {
      try {
        return await core().get({ group: '', version: 'v1', resource, namespace, name }, { resourceVersion: '0' }, SERVER_CONTEXT);
      } catch (err) {
        if (StatusError.is(err, 'NotFound')) return undefined;
        throw err;
      }
    },
  };
}

/**
 * Auditing: `--audit-policy-file` and at least one backend, the log (`--audit-log-path`) or the
 * webhook (`--audit-webhook-config-file`), as upstream needs (a policy alone, or a backend
 * alone, audits nothing; upstream logs the same). A bad policy refuses to start.
 */
function openAudit(
  config: ServerConfig,
  naming: Naming,
  log: (message: string) => void,
  clock: Clock,
  metrics: ServerMetrics,
): { policy: AuditPolicy; backend: AuditBackend; blocking: boolean } | undefined {
  const wanted = config.auditLogPath || config.auditWebhookConfigFile;
  if (!config.auditPolicyFile || !wanted) {
    if (config.auditPolicyFile || wanted) log('auditing is off: it needs --audit-policy-file and --audit-log-path or --audit-webhook-config-file');
    return undefined;
  }
  let policy: AuditPolicy;
  try {
    policy = parseAuditPolicy(readFlagFile('audit-policy-file', config.auditPolicyFile), naming);
  } catch (err) {
    throw new Error(`--audit-policy-file: ${(err as Error).message}`);
  }
  const onError: PluginError = (plugin, err, events) => {
    metrics.audit.errors.inc({ plugin }, events.length);
    log(
      `Error in audit plugin '${plugin}' affecting ${events.length} audit events: ${err.message}\nImpacted events:\n${events.map(legacyEventLine).join('\n')}`,
    );
  };
  // Each backend behind its mode (upstream's wrapBackend), then truncation.
  const chain = (plugin: 'log' | 'webhook', backend: AuditBackend): AuditBackend => {
    const { mode, batch, truncate } = auditBackendSettings(config, plugin);
    let wrapped = backend;
    if (mode === 'blocking') wrapped = ignoringErrors(backend);
    // Upstream writes the log's batches one after another and sends the webhook's side by side.
    else if (mode === 'batch') wrapped = bufferedBackend(backend, { ...batch, sequential: plugin === 'log', clock, onError });
    if (truncate.enabled) {
      wrapped = truncatingBackend(wrapped, { ...truncate, annotation: `${naming.group('audit')}/truncated`, onError });
    }
    return wrapped;
  };
  const backends: AuditBackend[] = [];
  if (config.auditLogPath) {
    const auditLog = openAuditLog({
      path: config.auditLogPath,
      maxSizeMb: config.auditLogMaxSizeMb,
      maxBackups: config.auditLogMaxBackups,
      maxAgeDays: config.auditLogMaxAgeDays,
      compress: config.auditLogCompress,
      format: config.auditLogFormat === 'legacy' ? 'legacy' : 'json',
      clock,
      onError,
      log,
    });
    backends.push(chain('log', auditLog));
  }
  if (config.auditWebhookConfigFile) {
    const webhook = webhookBackend({
      client: readWebhookConfig(config.auditWebhookConfigFile),
      apiVersion: config.auditWebhookVersion ?? `${naming.group('audit')}/v1`,
      initialBackoffMs: config.auditWebhookInitialBackoffMs,
      clock,
      onError,
    });
    backends.push(chain('webhook', webhook));
  }
  // A backend the caller waits on (the webhook's blocking modes): the answer waits for the last event too.
  const blocking = !!config.auditWebhookConfigFile && config.auditWebhookMode !== 'batch';
  return { policy, backend: unionBackends(backends), blocking };
}

/**
 * The CAs trusted for client certificates: the CA generated under the data dir (it signs every
 * credential the server writes: admin.kubeconfig, controller-manager.kubeconfig, the gateway's
 * certificate), the `--client-ca-file` bundle beside it, and `--cluster-signing-cert-file`'s CA,
 * which csrsigning signs with. A server never writes or signs a credential it then refuses.
 */
function clientCaOf(config: ServerConfig, pki: Pki): string {
  const bundles = [pki.caCert];
  if (config.clientCaFile) {
    try {
      bundles.push(readFileSync(config.clientCaFile, 'utf8'));
    } catch (err) {
      throw new Error(`--client-ca-file: cannot read ${JSON.stringify(config.clientCaFile)}: ${(err as Error).message}`);
    }
  }
  if (config.clusterSigningCertFile) bundles.push(readFlagFile('cluster-signing-cert-file', config.clusterSigningCertFile));
  return uniqueCertificates(bundles);
}

/** The certificates of PEM bundles, each once, as one bundle. */
function uniqueCertificates(bundles: readonly string[]): string {
  const blocks = bundles.flatMap((b) => b.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []);
  return `${[...new Set(blocks.map((b) => b.replace(/\r\n/g, '\n')))].join('\n')}\n`;
}

export async function startServer(config: ServerConfig, options: StartServerOptions = {}): Promise<RunningKeelson> {
  const log = options.log ?? (() => {});
  const naming = createNaming(config.vendor);
  const dataDir = path.resolve(config.dataDir);
  await mkdir(dataDir, { recursive: true });
  // A first start makes the PKI on a worker thread: the store and the core start meanwhile (the
  // watch cache's load is most of a start on a full store), and the doors wait for it.
  let made: Pki | undefined;
  // The generated serving certificate also names the advertised address and the kubernetes
  // Service (its DNS names and cluster IP), as upstream's self-signed one does.
  const extraServingNames = [
    config.bindAddress,
    ...(config.advertiseAddress ? [config.advertiseAddress] : []),
    ...kubernetesServiceNames(config.serviceClusterIpRange),
  ];
  const pkiMade = ensurePki({ dataDir, extraServingNames, skipServing: !!config.servingCertificate, log }).then((p) => (made = p));
  // Awaited below; a start that fails before then must not leave its failure unhandled.
  pkiMade.catch(() => undefined);
  const pkiOf = (): Pki => {
    if (!made) throw new Error('the PKI is not made yet');
    return made;
  };

  // The flags were checked by parseFlags; upstream logs a warning for GA and deprecated gates.
  // One set of gates serves the core and the gateway's codecs (CBOR, compression).
  const { gates: features, warnings } = buildFeatureGates(config.featureGates);
  for (const w of warnings) log(w);
  // Upstream labels reload metrics with a hash of the server's identity.
  const metrics = new ServerMetrics(`sha256:${createHash('sha256').update(`${hostname()}_${randomUUID()}`).digest('hex')}`);
  let backend: Backend | undefined;
  const clock = options.clock ?? systemClock;
  const serviceAccounts = await serviceAccountSettings(config, dataDir, () => backend!.core, clock);
  const closers: Array<() => void> = [];
  const authenticator = buildAuthenticator(
    config,
    () => backend!.core,
    () => clientCaOf(config, pkiOf()),
    serviceAccounts,
    log,
    closers,
    metrics,
    clock,
  );
  let authorization: ReturnType<typeof buildAuthorizers> | undefined;
  const authorize: Authorize = async (a) => authorizeAll(authorization!.authorizers, a);
  const rulesFor: RulesFor = (user, namespace) => rulesForAll(authorization!.authorizers, user, namespace);
  const escalation = rbacEscalationPlugin({ naming, rbac: () => authorization?.rbac(), authorize });
  // A gateway in front of a remote core presents its certificate from the first call.
  if (config.coreAddress) await pkiMade;
  backend = openBackend(config, {
    features,
    pki: pkiOf,
    authenticator,
    serviceAccounts,
    authorize,
    rulesFor,
    admission: [escalation],
    log,
    metrics,
    inMemoryStore: options.inMemoryStore,
    clock,
  });
  authorization = buildAuthorizers(config, backend.core, features, SERVER_CONTEXT, log, clock, (status, atMs) =>
    metrics.configReloaded('authorization', { status, atMs }),
  );
  const audit = openAudit(config, naming, log, clock, metrics);
  // Both doors admit through it: the gateway's HTTPS and the core's gRPC (a core-only process too).
  const flowControl = buildFlowControl(config, { core: backend.core, state: backend.state, metrics, naming, clock, ctx: SERVER_CONTEXT, log });
  const state: ServerHealthState = { coreReady: false, shuttingDown: false };
  // Why a request was refused (never the credential itself).
  const onUnauthenticated = (reason: string) => log(`unauthenticated request: ${reason}`);
  let grpc: GrpcCoreServer | undefined;
  let server: RunningServer | undefined;
  let pki: Pki;
  try {
    pki = await pkiMade;
    const serving = config.servingCertificate ?? { cert: pki.servingCert, key: pki.servingKey };
    const clientCa = clientCaOf(config, pki);
    if (config.grpcPort !== undefined && !config.coreAddress) {
      grpc = await grpcDoor().startGrpcCoreServer(backend.core, {
        address: `${config.grpcBindAddress.includes(':') ? `[${config.grpcBindAddress}]` : config.grpcBindAddress}:${config.grpcPort}`,
        tls: { key: serving.key, cert: serving.cert, ca: clientCa },
        // Without allowed names, the gateway certificate this server generates (docs/DEPLOYING.md).
        authentication: {
          authenticator,
          authorize,
          proxyUsers: config.requestheaderAllowedNames.length > 0 ? config.requestheaderAllowedNames : [GATEWAY_USER],
          onRejected: onUnauthenticated,
        },
        ...(flowControl ? { flowControl, requestTimeoutMs: config.requestTimeoutMs } : {}),
      });
      log(`serving the core over gRPC on ${grpc.address}`);
    }
    if (!config.coreOnly)
      server = await startGateway({
        core: backend.core,
        resources: backend.resources,
        catalog: backend.catalog,
        naming,
        codecs: gatewayCodecs(naming, encodingFeatures(features)),
        features,
        health: serverHealthChecks(state, backend.store, backend.state),
        version: keelsonVersion({ keelsonVersion: PACKAGE_VERSION }),
        tls: { cert: serving.cert, key: serving.key, clientCa: handshakeClientCa(clientCa, config) },
        host: config.bindAddress,
        port: config.securePort,
        adapter: options.adapter,
        authenticator,
        authorizers: authorization.authorizers,
        onUnauthenticated,
        metrics,
        issuerDiscovery: issuerDiscoveryProvider(
          { issuer: serviceAccounts.issuers[0]!, jwksUri: config.serviceAccountJwksUri, keys: serviceAccounts.verifyingKeys },
          log,
        ),
        ...(audit
          ? { audit: { policy: audit.policy, sink: (event: AuditEvent) => audit.backend.process([event]), naming, clock, metrics, blocking: audit.blocking } }
          : {}),
        // With priority and fairness the in-flight counters are its seats; only the timeout stays here.
        limits: {
          maxReadOnly: flowControl ? 0 : config.maxRequestsInflight,
          maxMutating: flowControl ? 0 : config.maxMutatingRequestsInflight,
          requestTimeoutMs: config.requestTimeoutMs,
        },
        ...(flowControl ? { flowControl } : {}),
        // The aggregation layer (docs/AGGREGATION.md), presenting --proxy-client-cert-file to extension servers.
        aggregator: { resolver: backend.services, proxyClient: () => config.proxyClientCertificate, log },
        clock,
        ...(options.logger?.enabled(REQUEST_LOG_VERBOSITY)
          ? { onRequestLogged: (entry: RequestLogEntry) => options.logger!.verbose(REQUEST_LOG_VERBOSITY, 'HTTP', { ...entry }) }
          : {}),
        onUnexpectedError: (err, request) =>
          log(
            `unexpected error${request ? ` in request ${request.id} (${request.method} ${request.path})` : ''}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
          ),
      });
  } catch (err) {
    await grpc?.close().catch(() => {});
    await backend.close().catch(() => {});
    throw err;
  }
  const opened = backend;

  const port = server?.port ?? 0;
  const url = serverUrl(config.bindAddress, port);
  const kubeconfigPath = path.join(dataDir, 'admin.kubeconfig');
  const certificateAuthority = config.servingCertificate ? pki.caCert + config.servingCertificate.cert : pki.caCert;
  const content = renderKubeconfig({ server: url, certificateAuthority, clientCertificate: pki.adminCert, clientKey: pki.adminKey });
  if (await writeKubeconfig(kubeconfigPath, content)) log(`wrote ${kubeconfigPath}`);
  // What a controllers-only process presents (--kubeconfig), as kubeadm writes controller-manager.conf.
  const controllerManagerPath = path.join(dataDir, 'controller-manager.kubeconfig');
  const controllerManager = renderKubeconfig({
    server: server ? url : `https://${grpc?.address ?? ''}`,
    certificateAuthority,
    clientCertificate: pki.controllerManagerCert,
    clientKey: pki.controllerManagerKey,
    userName: CONTROLLER_MANAGER_CERT_USER,
    contextName: `${CONTROLLER_MANAGER_CERT_USER}@${CLUSTER_NAME}`,
  });
  await writeKubeconfig(controllerManagerPath, controllerManager);

  let authenticationTrust: { stop(): void } | undefined;
  let closing: Promise<void> | undefined;
  // The kubernetes Service's endpoints (upstream's lease endpoint reconciler), once the core is ready.
  let kubernetesEndpoints: ReturnType<typeof startKubernetesEndpoints>;
  const close = () =>
    (closing ??= (async () => {
      // Upstream's order: readyz fails at once, serving goes on for the delay, then listeners stop,
      // watches end and requests in flight answer, and only then does the store close.
      state.shuttingDown = true;
      // Upstream's pre-shutdown hook: this server leaves the kubernetes endpoints first.
      await kubernetesEndpoints?.stop();
      if (config.shutdownDelayMs > 0) {
        log(`shutting down in ${config.shutdownDelayMs / 1000}s (--shutdown-delay-duration); /readyz fails meanwhile`);
        await new Promise((r) => setTimeout(r, config.shutdownDelayMs));
      }
      await server?.close(config.requestTimeoutMs);
      await grpc?.close();
      flowControl?.close();
      authorization.stop();
      authenticationTrust?.stop();
      for (const close of closers) close();
      await opened.close();
      // The last events reach the file before the process may exit.
      await audit?.backend.close();
      metrics.close();
    })());

  // The kubernetes Service's target port is the port listened on (chosen now when --secure-port is 0).
  const ready = opened.ready(server ? { host: new URL(url).hostname.replace(/^\[|\]$/g, ''), port } : undefined).then(async () => {
    await authorization.start();
    state.coreReady = true;
    if (!closing)
      authenticationTrust = startAuthenticationTrust(config, clientCaOf(config, pki), {
        core: opened.core,
        naming,
        user: SERVER_CONTEXT.user,
        clock,
        log,
      });
    if (!closing)
      kubernetesEndpoints = startKubernetesEndpoints(config, {
        core: opened.core,
        store: opened.store,
        naming,
        clock,
        user: SERVER_CONTEXT.user,
        log,
        port,
      });
    // After /readyz turns ok: their first pass over every object (the garbage collector's graph)
    // would otherwise hold the answer up.
    if (!closing) opened.startControllers?.();
  });
  if (options.waitForReady ?? true) {
    try {
      await ready;
    } catch (err) {
      await close().catch(() => {});
      throw err;
    }
  } else {
    ready.catch((err) => log(`the core failed to start: ${err instanceof Error ? err.message : String(err)}`));
  }
  return {
    port,
    url,
    kubeconfigPath,
    dataDir,
    ready,
    close,
    core: opened.core,
    ...(opened.catalog ? { catalog: opened.catalog } : {}),
    ...(grpc ? { grpcAddress: grpc.address } : {}),
  };
}
