/**
 * Keelson as a library (`import { startServer } from 'keelson'`): a real control-plane API
 * inside a test — the same server `npm start` runs, on a free loopback port with its embedded
 * store in memory, upstream's names by default (for client-node and client-go), controllers and
 * a simulated node included. Several run side by side in one process; `stop()` leaves nothing
 * open. The PKI is generated once per process and copied into each server's directory.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseFlags, startServer as startKeelson } from '../server';
import { renderKubeconfig } from '../server/kubeconfig';
import { signClientCertificate } from '../server/pki';
import type { Clock } from '../clock';
import { UPSTREAM_VENDOR, type Vendor, createNaming } from '../naming';
import type { ApiObject } from '../core';
import { type CrdSource, installCrds } from './crds';

export { ManualClock, systemClock, type Clock } from '../clock';
export type { CrdSource } from './crds';

export interface ServerOptions {
  /** Naming profile: `kubernetes` (default here: upstream's names, for unmodified clients) or `platform`. */
  vendor?: Vendor;
  /** `--controllers` (default `['*']`); `[]` runs none, as envtest. */
  controllers?: string[];
  /** Simulated nodes with a scheduler (default 1; 0 for none). */
  simulatedNodes?: number;
  featureGates?: Record<string, boolean>;
  /** `--authorization-mode` (default RBAC). */
  authorizationModes?: string[];
  /** Requests without credentials are `system:anonymous` (default true, as the server). */
  anonymousAuth?: boolean;
  /**
   * API Priority and Fairness (`--enable-priority-and-fairness`, default on) and the server's
   * concurrency it shares out (`--max-requests-inflight` + `--max-mutating-requests-inflight`):
   * lower limits reproduce overload in a test.
   */
  priorityAndFairness?: { enabled?: boolean; maxRequestsInflight?: number; maxMutatingRequestsInflight?: number };
  /** `memory` (default: nothing on disk but the PKI) or `file` (a database in the server's temporary directory). */
  store?: 'memory' | 'file';
  /**
   * Front-proxy authentication (docs/FRONT-PROXY.md): the CA bundle (PEM) that signs an
   * authenticating proxy's client certificate, and which headers name the user. The header names
   * default to the conventional ones kubeadm passes (`X-Remote-User`, `X-Remote-Group`,
   * `X-Remote-Extra-`); `allowedNames` to none (any certificate the CA signed).
   */
  frontProxy?: FrontProxyOptions;
  /** The client certificate and key (PEM) the aggregator presents to extension API servers (`--proxy-client-*`). */
  proxyClient?: Credentials;
  /**
   * Services (docs/SERVICES.md): `--service-cluster-ip-range` (default `10.0.0.0/24`),
   * `--service-node-port-range` (default `30000-32767`) and `--enable-aggregator-routing`.
   */
  services?: { clusterIPRange?: string; nodePortRange?: string; aggregatorRouting?: boolean };
  /** Any other server flag, as on the command line (`['--request-timeout', '5s']`). */
  flags?: string[];
  /** Where the server's log lines go (default: nowhere). */
  log?: (line: string) => void;
  /**
   * The time the server reads (default the system clock): a `ManualClock` makes token expiry,
   * TTLs, leases and bookmarks testable without sleeping. Its timers fire only as it advances.
   */
  clock?: Clock;
  /**
   * CustomResourceDefinitions to install once the server is up (objects, YAML files, or
   * directories of YAML files, as envtest's `CRDInstallOptions`): `startServer` resolves once
   * every one is Established and served.
   */
  crds?: CrdSource[];
}

export interface FrontProxyOptions {
  clientCa: string;
  allowedNames?: string[];
  usernameHeaders?: string[];
  groupHeaders?: string[];
  extraHeadersPrefix?: string[];
}

export interface Credentials {
  /** PEM client certificate and key. */
  cert: string;
  key: string;
}

export interface UserCredentials extends Credentials {
  /** A kubeconfig (YAML) for this user. */
  kubeconfig: string;
}

export interface RunningServer {
  /** e.g. `https://127.0.0.1:41234`. */
  url: string;
  /** The admin kubeconfig, as YAML (`KubeConfig.loadFromString`). */
  kubeconfig: string;
  /** The same, as a file (for kubectl `--kubeconfig`). */
  kubeconfigPath: string;
  /** The CA certificate (PEM) that verifies the server. */
  ca: string;
  /** A cluster-admin client certificate (`system:masters`). */
  adminCredentials: Credentials;
  /** A client certificate for `name` in `groups`, signed by the server's CA; RBAC decides what it may do. */
  newUser(name: string, groups?: string[]): Promise<UserCredentials>;
  /** Install more CustomResourceDefinitions (as `crds`); resolves with them once they are served. */
  installCRDs(crds: CrdSource[]): Promise<ApiObject[]>;
  /** Stop serving, close the store and remove the server's directory. */
  stop(): Promise<void>;
}

/** The files of a PKI (and service-account key) generated once per process. */
const PKI_FILES = [
  'ca.crt',
  'ca.key',
  'serving.crt',
  'serving.key',
  'admin.crt',
  'admin.key',
  'gateway.crt',
  'gateway.key',
  'controller-manager.crt',
  'controller-manager.key',
  'service-account.key',
];
/**
 * Where the first server's PKI was kept, for the later ones to copy: shared by the process's
 * servers by design (files never changed once written), so they trust one CA and one
 * service-account key, and a credential of one is good on another.
 */
let pkiSource: Promise<string> | undefined;

function flagsOf(options: ServerOptions, dataDir: string): string[] {
  const args = ['--secure-port', '0', '--data-dir', dataDir, '--vendor', options.vendor ?? UPSTREAM_VENDOR, '--leader-elect=false'];
  args.push('--simulated-nodes', String(options.simulatedNodes ?? 1));
  args.push(`--controllers=${(options.controllers ?? ['*']).join(',')}`);
  if (options.featureGates && Object.keys(options.featureGates).length > 0) {
    args.push(
      '--feature-gates',
      Object.entries(options.featureGates)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    );
  }
  if (options.authorizationModes) args.push('--authorization-mode', options.authorizationModes.join(','));
  if (options.anonymousAuth !== undefined) args.push(`--anonymous-auth=${options.anonymousAuth}`);
  const apf = options.priorityAndFairness;
  if (apf?.enabled !== undefined) args.push(`--enable-priority-and-fairness=${apf.enabled}`);
  if (apf?.maxRequestsInflight !== undefined) args.push('--max-requests-inflight', String(apf.maxRequestsInflight));
  if (apf?.maxMutatingRequestsInflight !== undefined) args.push('--max-mutating-requests-inflight', String(apf.maxMutatingRequestsInflight));
  const services = options.services;
  if (services?.clusterIPRange !== undefined) args.push('--service-cluster-ip-range', services.clusterIPRange);
  if (services?.nodePortRange !== undefined) args.push('--service-node-port-range', services.nodePortRange);
  if (services?.aggregatorRouting !== undefined) args.push(`--enable-aggregator-routing=${services.aggregatorRouting}`);
  return [...args, ...(options.flags ?? [])];
}

/** The front-proxy and proxy-client flags, their PEM written into the server's directory. */
async function frontProxyFlags(options: ServerOptions, dataDir: string): Promise<string[]> {
  const args: string[] = [];
  const fp = options.frontProxy;
  if (fp) {
    const caFile = path.join(dataDir, 'front-proxy-ca.crt');
    await writeFile(caFile, fp.clientCa);
    const list = (flag: string, values: string[]) => args.push(`--requestheader-${flag}=${values.join(',')}`);
    args.push('--requestheader-client-ca-file', caFile);
    list('allowed-names', fp.allowedNames ?? []);
    list('username-headers', fp.usernameHeaders ?? ['X-Remote-User']);
    list('group-headers', fp.groupHeaders ?? ['X-Remote-Group']);
    list('extra-headers-prefix', fp.extraHeadersPrefix ?? ['X-Remote-Extra-']);
  }
  if (options.proxyClient) {
    const certFile = path.join(dataDir, 'proxy-client.crt');
    const keyFile = path.join(dataDir, 'proxy-client.key');
    await Promise.all([writeFile(certFile, options.proxyClient.cert), writeFile(keyFile, options.proxyClient.key, { mode: 0o600 })]);
    args.push('--proxy-client-cert-file', certFile, '--proxy-client-key-file', keyFile);
  }
  return args;
}

/** Start a server; resolves once it is ready. */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keelson-'));
  const parsed = parseFlags([...(await frontProxyFlags(options, dataDir)), ...flagsOf(options, dataDir)]);
  if (parsed.kind !== 'config') {
    await rm(dataDir, { recursive: true, force: true });
    throw new Error(parsed.kind === 'error' ? parsed.error.message : 'unexpected --help');
  }
  // The first server of the process generates the PKI; later ones start from a copy of it.
  const source = pkiSource;
  if (source) {
    const from = await source;
    await Promise.all(PKI_FILES.map((f) => copyFile(path.join(from, f), path.join(dataDir, f)).catch(() => undefined)));
  }
  let running;
  try {
    running = await startKeelson(parsed.config, {
      log: options.log ?? (() => {}),
      inMemoryStore: (options.store ?? 'memory') === 'memory',
      ...(options.clock ? { clock: options.clock } : {}),
    });
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  if (!source)
    pkiSource = (async () => {
      // Kept apart from this server's directory, which goes when it stops.
      const keep = await mkdtemp(path.join(os.tmpdir(), 'keelson-pki-'));
      await Promise.all(PKI_FILES.map((f) => copyFile(path.join(dataDir, f), path.join(keep, f)).catch(() => undefined)));
      return keep;
    })();
  const read = (f: string) => readFile(path.join(dataDir, f), 'utf8');
  const [kubeconfig, ca, caKey, adminCert, adminKey] = await Promise.all([
    read('admin.kubeconfig'),
    read('ca.crt'),
    read('ca.key'),
    read('admin.crt'),
    read('admin.key'),
  ]);
  let stopped: Promise<void> | undefined;
  const naming = createNaming(options.vendor ?? UPSTREAM_VENDOR);
  const installCRDs = (crds: CrdSource[]) => {
    if (!running.catalog) return Promise.reject(new Error('custom resources are served by an in-process core only'));
    return installCrds(running.core, running.catalog, naming, crds);
  };
  if (options.crds?.length) {
    try {
      await installCRDs(options.crds);
    } catch (err) {
      await running.close();
      await rm(dataDir, { recursive: true, force: true });
      throw err;
    }
  }
  return {
    installCRDs,
    url: running.url,
    kubeconfig,
    kubeconfigPath: running.kubeconfigPath,
    ca,
    adminCredentials: { cert: adminCert, key: adminKey },
    async newUser(name, groups = []) {
      const { cert, key } = await signClientCertificate(ca, caKey, name, groups);
      return {
        cert,
        key,
        kubeconfig: renderKubeconfig({
          server: running.url,
          certificateAuthority: ca,
          clientCertificate: cert,
          clientKey: key,
          userName: name,
          contextName: `${name}@keelson`,
        }),
      };
    },
    stop() {
      stopped ??= (async () => {
        await running.close();
        await rm(dataDir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
