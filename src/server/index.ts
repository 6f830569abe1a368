/**
 * Start and stop a whole Keelson server in process: PKI and admin.kubeconfig under the data
 * dir, the store (embedded unless --etcd-servers), the core (or a remote core over gRPC with
 * --core-address), and the HTTPS gateway. `main.ts` is this plus flags, logging and signals;
 * tests call `startServer` directly.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type CoreApi, createCore } from '../core';
import { createGrpcCoreClient } from '../grpc';
import { enabledControllers, startControllers, type RunningControllers } from '../controllers';
import { builtinResources } from '../core/resources';
import type { ResourceDefinition } from '../core/resources/definition';
import { keelsonVersion, startGateway } from '../gateway';
import { buildFeatureGates, type FeatureGates } from '../features';
import { encodingFeatures, gatewayCodecs } from '../gateway/codecs';
import { createNaming } from '../naming';
import { type Store, createStore } from '../store';
import type { ServerConfig } from './flags';
import { type ServerHealthState, serverHealthChecks } from './health';
import { renderKubeconfig, serverUrl, writeKubeconfig } from './kubeconfig';
import { ensurePki } from './pki';

export type { ServerConfig } from './flags';
export { parseFlags } from './flags';

export interface StartServerOptions {
  log?: (line: string) => void;
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
}

const PACKAGE_VERSION = '0.1.0';

interface Backend {
  core: CoreApi;
  resources: readonly ResourceDefinition[];
  store?: Store;
  ready(): Promise<void>;
  close(): Promise<void>;
}

function openBackend(config: ServerConfig, features: FeatureGates, log: (message: string) => void): Backend {
  const naming = createNaming(config.vendor);
  if (config.coreAddress) {
    const client = createGrpcCoreClient(config.coreAddress);
    return { core: client, resources: builtinResources(naming), ready: async () => {}, close: async () => client.close() };
  }
  const store = config.etcdServers ? createStore({ kind: 'etcd', endpoints: config.etcdServers }) : createStore({ kind: 'embedded', dataDir: config.dataDir });
  const core = createCore({ store, naming, features, compactionIntervalMs: config.compactionIntervalMs, watchCache: { windowMs: config.watchCacheWindowMs } });
  // Controllers are API clients of the in-process core, as upstream's are of kube-apiserver; a gateway in
  // front of a remote core leaves them to the core's process.
  let controllers: RunningControllers | undefined;
  return {
    core,
    resources: core.resources,
    store,
    ready: async () => {
      await core.ready();
      controllers = startControllers(core, enabledControllers(config.controllers), log);
    },
    close: async () => {
      controllers?.stop();
      await core.close();
    },
  };
}

export async function startServer(config: ServerConfig, options: StartServerOptions = {}): Promise<RunningKeelson> {
  const log = options.log ?? (() => {});
  const naming = createNaming(config.vendor);
  const dataDir = path.resolve(config.dataDir);
  await mkdir(dataDir, { recursive: true });
  const pki = await ensurePki({ dataDir, extraServingNames: [config.bindAddress], skipServing: !!config.servingCertificate, log });
  const serving = config.servingCertificate ?? { cert: pki.servingCert, key: pki.servingKey };

  // The flags were checked by parseFlags; upstream logs a warning for GA and deprecated gates.
  // One set of gates serves the core and the gateway's codecs (CBOR, compression).
  const { gates: features, warnings } = buildFeatureGates(config.featureGates);
  for (const w of warnings) log(w);
  const backend = openBackend(config, features, log);
  const state: ServerHealthState = { coreReady: false, shuttingDown: false };
  let server;
  try {
    server = await startGateway({
      core: backend.core,
      resources: backend.resources,
      naming,
      codecs: gatewayCodecs(naming, encodingFeatures(features)),
      health: serverHealthChecks(state, backend.store),
      version: keelsonVersion({ keelsonVersion: PACKAGE_VERSION }),
      tls: { cert: serving.cert, key: serving.key, clientCa: pki.caCert },
      host: config.bindAddress,
      port: config.securePort,
      adapter: options.adapter,
      onUnexpectedError: (err) => log(`unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
    });
  } catch (err) {
    await backend.close().catch(() => {});
    throw err;
  }

  const url = serverUrl(config.bindAddress, server.port);
  const kubeconfigPath = path.join(dataDir, 'admin.kubeconfig');
  const certificateAuthority = config.servingCertificate ? pki.caCert + config.servingCertificate.cert : pki.caCert;
  const content = renderKubeconfig({ server: url, certificateAuthority, clientCertificate: pki.adminCert, clientKey: pki.adminKey });
  if (await writeKubeconfig(kubeconfigPath, content)) log(`wrote ${kubeconfigPath}`);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      state.shuttingDown = true;
      await server.close();
      await backend.close();
    })());

  const ready = backend.ready().then(() => {
    state.coreReady = true;
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
  return { port: server.port, url, kubeconfigPath, dataDir, ready, close };
}
