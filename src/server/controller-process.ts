/**
 * The controllers as a process of their own (`--controllers-only --core-address`), as
 * kube-controller-manager and kube-scheduler run beside kube-apiserver: the same controllers,
 * scheduler and simulated nodes as in the server, API clients of a remote core over gRPC, each
 * presenting its own credential to the core's authenticators and authorizers
 * (docs/ARCHITECTURE.md, "Controllers").
 *
 * Who presents what:
 * - the controller manager (its leader election, and the reads of every controller's informers,
 *   as upstream's shared informers read): the `--kubeconfig` credential;
 * - with `--use-service-account-credentials`, each controller's writes: a token of its service
 *   account in the system namespace (created when missing), requested through TokenRequest
 *   and renewed at 80% of its lifetime, as upstream's controller client builder does;
 * - the scheduler (`system:kube-scheduler`) and each simulated node (`system:node:<name>` in
 *   `system:nodes`): a client certificate signed here with `--cluster-signing-cert-file`/
 *   `--cluster-signing-key-file`, as a kubelet's is by the cluster signer.
 */
import { caSigner } from './certificates';
import { Registry } from 'prom-client';
import { nodeCollectorMetrics } from './node-collector-metrics';
import { workQueueMetrics } from './workqueue-metrics';
import { type ControllerServing, serveControllerManager } from './controller-serving';
import {
  type ApiList,
  type ApiObject,
  type DeleteOptions,
  type DeleteResult,
  type GetOptions,
  type ListOptions,
  type Patch,
  type RequestContext,
  type ResourceTarget,
  type UserInfo,
  type WatchStream,
  type WriteBody,
  type WriteOptions,
  type WriteResult,
  type Core,
  builtinResources,
  staticCatalog,
  type ResourceCatalog,
} from '../core';
import { type GrpcCoreClient, createGrpcCoreClient, serverNameFor } from '../grpc';
import { type Clock, systemClock } from '../clock';
import { type Naming, createNaming } from '../naming';
import { StatusError } from '../status';
import { SERVICE_ACCOUNT_PREFIX } from '../authn/service-account';
import { CONTROLLER_MANAGER_USER, enabledControllers, startControllers, type RunningControllers } from '../controllers';
import { type ServerConfig, controllerFlags, readFlagFile } from './flags';
import { type KubeconfigCredentials, readKubeconfigCredentials } from './kubeconfig';
import { signClientCertificate } from './pki';

/** Upstream's controller client builder asks for hour-long tokens and renews them at 80% of their life. */
const TOKEN_EXPIRATION_SECONDS = 3600;
const TOKEN_RENEW_FRACTION = 0.8;
const TOKEN_RETRY_MS = 10_000;
const CORE_WAIT_RETRY_MS = 500;

export interface RemoteIdentitiesOptions {
  /** `host:port` of the core's gRPC door. */
  address: string;
  naming: Naming;
  credentials: KubeconfigCredentials;
  /** The user `credentials` stand for: calls made as this user use them. */
  baseUser: string;
  /** The CA client certificates for other users are signed with. */
  signer?: { cert: string; key: string };
  clock?: Clock;
  log?: (message: string) => void;
}

/**
 * A Core whose calls reach a remote core as the user their context names: one gRPC channel per
 * identity, each with that identity's credential. Lists and watches of a service account act as
 * the base user, as upstream's controllers read through the manager's shared informers and write
 * through their own clients.
 */
export class RemoteIdentities implements Core {
  readonly naming: Naming;
  readonly resources;
  readonly catalog: ResourceCatalog;
  private readonly base: GrpcCoreClient;
  private readonly clients = new Map<string, Promise<GrpcCoreClient>>();
  private readonly opened: GrpcCoreClient[] = [];
  private readonly timers = new Set<() => void>();
  private readonly clock: Clock;
  private closed = false;

  constructor(private readonly options: RemoteIdentitiesOptions) {
    this.naming = options.naming;
    this.resources = builtinResources(options.naming);
    this.catalog = staticCatalog(this.resources);
    this.clock = options.clock ?? systemClock;
    const { clientCertificate, clientKey, token } = options.credentials;
    this.base = this.open(clientCertificate && clientKey ? { cert: clientCertificate, key: clientKey } : {}, token);
  }

  /** Resolves once the core answers the base identity (retrying while it is not up yet). */
  async ready(): Promise<void> {
    const target: ResourceTarget = { group: '', version: 'v1', resource: 'namespaces', name: this.naming.namespaces.system };
    let reported = '';
    for (;;) {
      if (this.closed) throw new Error('closed before the core answered');
      try {
        await this.base.get(target, {}, { user: CONTROLLER_MANAGER_USER });
        return;
      } catch (err) {
        if (StatusError.is(err, 'Unauthorized'))
          throw new Error(`the core at ${this.options.address} refused the controller manager's credentials: ${(err as Error).message}`);
        // The core answered: it is up, whatever it thinks of this request.
        if (err instanceof StatusError && ![500, 503, 504].includes(err.code)) return;
        const message = (err as Error).message;
        if (message !== reported) this.options.log?.(`waiting for the core at ${this.options.address}: ${message}`);
        reported = message;
      }
      await new Promise<void>((resolve) => {
        const cancel = this.clock.setTimeout(() => {
          this.timers.delete(cancel);
          resolve();
        }, CORE_WAIT_RETRY_MS);
        this.timers.add(cancel);
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const cancel of this.timers) cancel();
    this.timers.clear();
    for (const client of this.opened) client.close();
  }

  async get(target: ResourceTarget, options: GetOptions, ctx: RequestContext): Promise<ApiObject> {
    return (await this.client(ctx.user)).get(target, options, ctx);
  }
  async list(target: ResourceTarget, options: ListOptions, ctx: RequestContext): Promise<ApiList> {
    return (await this.reader(ctx.user)).list(target, options, ctx);
  }
  async watch(target: ResourceTarget, options: ListOptions, ctx: RequestContext): Promise<WatchStream> {
    return (await this.reader(ctx.user)).watch(target, options, ctx);
  }
  async create(target: ResourceTarget, object: WriteBody<ApiObject>, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    return (await this.client(ctx.user)).create(target, object, options, ctx);
  }
  async update(target: ResourceTarget, object: WriteBody<ApiObject>, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    return (await this.client(ctx.user)).update(target, object, options, ctx);
  }
  async patch(target: ResourceTarget, patch: WriteBody<Patch>, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    return (await this.client(ctx.user)).patch(target, patch, options, ctx);
  }
  async delete(target: ResourceTarget, options: DeleteOptions, ctx: RequestContext): Promise<DeleteResult> {
    return (await this.client(ctx.user)).delete(target, options, ctx);
  }
  async deleteCollection(target: ResourceTarget, listOptions: ListOptions, deleteOptions: DeleteOptions, ctx: RequestContext): Promise<ApiList> {
    return (await this.client(ctx.user)).deleteCollection(target, listOptions, deleteOptions, ctx);
  }

  private reader(user: UserInfo): Promise<GrpcCoreClient> {
    return user.username.startsWith(SERVICE_ACCOUNT_PREFIX) ? Promise.resolve(this.base) : this.client(user);
  }

  /** The channel that presents `user`'s credential, opened on first use (and again after a failed attempt). */
  private client(user: UserInfo): Promise<GrpcCoreClient> {
    if (user.username === this.options.baseUser) return Promise.resolve(this.base);
    let client = this.clients.get(user.username);
    if (!client) {
      client = user.username.startsWith(SERVICE_ACCOUNT_PREFIX) ? this.serviceAccountClient(user.username) : this.certificateClient(user);
      this.clients.set(user.username, client);
      client.catch(() => this.clients.delete(user.username));
    }
    return client;
  }

  private open(tls: { cert?: string; key?: string }, token?: string | (() => string | undefined)): GrpcCoreClient {
    const address = this.options.address;
    const serverName = serverNameFor(address);
    const client = createGrpcCoreClient(address, {
      tls: {
        ...(this.options.credentials.certificateAuthority ? { ca: this.options.credentials.certificateAuthority } : {}),
        ...tls,
        ...(serverName ? { serverName } : {}),
      },
      ...(token !== undefined ? { token } : {}),
    });
    this.opened.push(client);
    return client;
  }

  private async certificateClient(user: UserInfo): Promise<GrpcCoreClient> {
    const signer = this.options.signer;
    if (!signer) throw new Error(`no credential for ${user.username}: it needs a client certificate, and no --cluster-signing-cert-file was given`);
    const groups = user.groups.filter((g) => g !== 'system:authenticated');
    const { cert, key } = await signClientCertificate(signer.cert, signer.key, user.username, groups, new Date(this.clock.now()));
    return this.open({ cert, key });
  }

  /** A channel with a token of the service account, which is created when missing and whose token is renewed. */
  private async serviceAccountClient(username: string): Promise<GrpcCoreClient> {
    const [namespace, name] = username.slice(SERVICE_ACCOUNT_PREFIX.length).split(':') as [string, string];
    const ctx: RequestContext = { user: CONTROLLER_MANAGER_USER, userAgent: 'keelson-controller-manager/client-builder' };
    const account: ResourceTarget = { group: '', version: 'v1', resource: 'serviceaccounts', namespace, name };
    try {
      await this.base.get(account, {}, ctx);
    } catch (err) {
      if (!StatusError.is(err, 'NotFound')) throw err;
      await this.base
        .create({ ...account, name: undefined }, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } }, {}, ctx)
        .catch((e: unknown) => {
          if (!StatusError.is(e, 'AlreadyExists')) throw e;
        });
    }
    let token = '';
    const renew = async (): Promise<void> => {
      const request = { apiVersion: `${this.naming.groups.authentication}/v1`, kind: 'TokenRequest', spec: { expirationSeconds: TOKEN_EXPIRATION_SECONDS } };
      const { object } = await this.base.create({ ...account, subresource: 'token' }, request, {}, ctx);
      const status = (object.status ?? {}) as { token?: string; expirationTimestamp?: string };
      if (!status.token) throw new Error(`TokenRequest for ${username} returned no token`);
      token = status.token;
      const lifetime =
        (status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : this.clock.now() + TOKEN_EXPIRATION_SECONDS * 1000) - this.clock.now();
      this.schedule(Math.max(TOKEN_RETRY_MS, lifetime * TOKEN_RENEW_FRACTION), renew, username);
    };
    await renew();
    return this.open({}, () => token);
  }

  private schedule(ms: number, work: () => Promise<void>, username: string): void {
    if (this.closed) return;
    const cancel = this.clock.setTimeout(() => {
      this.timers.delete(cancel);
      work().catch((err: unknown) => {
        this.options.log?.(`renewing the token of ${username}: ${(err as Error).message}`);
        this.schedule(TOKEN_RETRY_MS, work, username);
      });
    }, ms);
    this.timers.add(cancel);
  }
}

export interface RunningControllerProcess {
  /** Resolves once the core has answered and the controllers have started. */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** Start the controllers of `--controllers` (and the scheduler and simulated nodes) against `--core-address`. */
export async function startControllerProcess(config: ServerConfig, options: { log?: (line: string) => void } = {}): Promise<RunningControllerProcess> {
  const log = options.log ?? (() => {});
  const naming = createNaming(config.vendor);
  let credentials: KubeconfigCredentials;
  try {
    credentials = await readKubeconfigCredentials(config.kubeconfig!);
  } catch (err) {
    throw new Error(`--kubeconfig: ${(err as Error).message}`);
  }
  const signer =
    config.clusterSigningCertFile && config.clusterSigningKeyFile
      ? {
          cert: readFlagFile('cluster-signing-cert-file', config.clusterSigningCertFile),
          key: readFlagFile('cluster-signing-key-file', config.clusterSigningKeyFile),
        }
      : undefined;
  const core = new RemoteIdentities({
    address: config.coreAddress!,
    naming,
    credentials,
    baseUser: CONTROLLER_MANAGER_USER.username,
    ...(signer ? { signer } : {}),
    log,
  });
  let controllers: RunningControllers | undefined;
  let serving: ControllerServing | undefined;
  const registry = new Registry();
  let closed = false;
  const ready = core.ready().then(async () => {
    if (closed) return;
    // The controller manager's secure port: health for anyone, metrics for whom the core allows.
    serving = await serveControllerManager({
      core,
      naming,
      registry,
      reviewer: CONTROLLER_MANAGER_USER,
      host: config.bindAddress,
      port: config.securePort,
      ...(credentials.certificateAuthority ? { clientCa: credentials.certificateAuthority } : {}),
      checks: [
        { name: 'ping', check: () => {} },
        ...(config.leaderElect ? [{ name: 'leaderElection', check: () => controllers?.checkLeaderElection?.() }] : []),
      ],
      log,
    });
    log(
      `serving the controller manager's health and metrics on https://${config.bindAddress.includes(':') ? `[${config.bindAddress}]` : config.bindAddress}:${serving.port}`,
    );
    if (closed) return;
    controllers = startControllers(core, enabledControllers(config.controllers), log, {
      ...controllerFlags(config),
      simulatedNodes: config.simulatedNodes,
      // As upstream's root-ca-cert-publisher without --root-ca-file: the CA of the kubeconfig.
      ...(credentials.certificateAuthority ? { rootCA: credentials.certificateAuthority } : {}),
      leaderElect: config.leaderElect,
      useServiceAccountCredentials: config.useServiceAccountCredentials,
      ...(signer ? { csrSign: caSigner(signer.cert, { pem: signer.key }) } : {}),
      zoneMetrics: nodeCollectorMetrics(registry),
      workQueueMetrics: workQueueMetrics(registry),
    });
  });
  return {
    ready,
    async close() {
      closed = true;
      // Release the leader Leases while the channels are still open, so a standby takes over at once.
      await controllers?.stop().catch((err: unknown) => log(`stopping the controllers: ${(err as Error).message}`));
      await serving?.close();
      await core.close();
    },
  };
}
