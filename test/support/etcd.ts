/**
 * A real, throwaway etcd for tests and benches: one member on free loopback ports with a
 * temporary data dir. Start one per test file (`beforeAll`) and `stop()` it in `afterAll`.
 *
 * The binary is `etcd` from PATH (Debian's `etcd-server`), or `$ETCD_BIN`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port';
import { eventually } from './eventually';

export interface EtcdInstance {
  /** Client URL, e.g. `http://127.0.0.1:41234`. */
  endpoint: string;
  dataDir: string;
  /** Kill etcd and remove its data dir. Idempotent. */
  stop(): Promise<void>;
  /** `kill -9` etcd, keeping its data dir and ports (etcd fully down). */
  kill(): Promise<void>;
  /** Start etcd again on the same data dir and ports, once killed; resolves when healthy. */
  restart(): Promise<void>;
}

export interface StartEtcdOptions {
  /** How many times to pick new ports when etcd fails to start (a port taken in between). */
  attempts?: number;
  /** How long one attempt may take to answer `/health`. */
  readyTimeoutMs?: number;
  /**
   * Serve clients over TLS only, with client certificates required (`--client-cert-auth`): the
   * PEM files of etcd's serving certificate and key, the CA that verifies clients, and the client
   * certificate and key the health check itself presents.
   */
  tls?: { certFile: string; keyFile: string; caFile: string; clientCert: string; clientKey: string; ca: string };
}

const STDERR_TAIL_BYTES = 16 * 1024;

export async function startEtcd(options: StartEtcdOptions = {}): Promise<EtcdInstance> {
  const attempts = options.attempts ?? 5;
  const readyTimeoutMs = options.readyTimeoutMs ?? 15_000;
  let lastError: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      return await startOnce(readyTimeoutMs, options.tls);
    } catch (err) {
      lastError = err;
    }
  }
  throw new Error(`etcd did not start after ${attempts} attempts: ${String(lastError)}`);
}

async function startOnce(readyTimeoutMs: number, tls: StartEtcdOptions['tls']): Promise<EtcdInstance> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-etcd-'));
  const clientPort = await freePort();
  let peerPort = await freePort();
  while (peerPort === clientPort) peerPort = await freePort();
  const clientUrl = `${tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const name = 'keelson-test';
  const args = [
    '--name',
    name,
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    clientUrl,
    '--advertise-client-urls',
    clientUrl,
    '--listen-peer-urls',
    peerUrl,
    '--initial-advertise-peer-urls',
    peerUrl,
    '--initial-cluster',
    `${name}=${peerUrl}`,
    '--logger',
    'zap',
    '--log-outputs',
    'stderr',
    '--log-level',
    'error',
    ...(tls ? ['--cert-file', tls.certFile, '--key-file', tls.keyFile, '--trusted-ca-file', tls.caFile, '--client-cert-auth'] : []),
  ];

  let stderrTail = '';
  let child!: ChildProcess;
  let exited!: Promise<void>;
  // A test process that dies without calling stop() must not leave etcd running.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  /** Spawn etcd and wait until it is healthy. */
  const launch = async (): Promise<void> => {
    child = spawn(process.env.ETCD_BIN ?? 'etcd', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_BYTES);
    });
    const current = child;
    exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
    // Spawn failures (no binary) arrive as 'error'; the 'exit' wait below covers the rest.
    const spawnError = new Promise<Error>((resolve) => current.once('error', resolve));
    const outcome = await Promise.race([
      waitHealthy(clientUrl, readyTimeoutMs, tls).then(() => 'healthy' as const),
      exited.then(() => 'exited' as const),
      spawnError.then((err) => {
        throw err;
      }),
    ]);
    if (outcome === 'exited' || current.exitCode !== null) {
      throw new Error(`etcd exited during start-up (code ${current.exitCode}): ${stderrTail.trim()}`);
    }
    // Unref only once healthy: a forgotten stop() then does not keep Jest alive (the exit hook kills it).
    current.unref();
    (current.stderr as { unref?: () => void } | null)?.unref?.();
  };

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      process.removeListener('exit', killOnExit);
      await terminate(child, exited);
      await fs.rm(dataDir, { recursive: true, force: true });
    })();
    return stopped;
  };
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  const restart = async () => {
    await kill();
    await launch();
  };

  try {
    await launch();
  } catch (err) {
    await stop();
    throw err;
  }
  return { endpoint: clientUrl, dataDir, stop, kill, restart };
}

async function terminate(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Polls etcd's `/health` on the client URL until it reports healthy. */
async function waitHealthy(clientUrl: string, timeoutMs: number, tls: StartEtcdOptions['tls']): Promise<void> {
  await eventually(() => isHealthy(clientUrl, tls), { what: `etcd at ${clientUrl} to be healthy`, timeoutMs, intervalMs: 50 });
}

function isHealthy(clientUrl: string, tls: StartEtcdOptions['tls']): Promise<boolean> {
  return new Promise((resolve) => {
    const get = tls ? https.get : http.get;
    const options = tls ? { timeout: 1_000, ca: tls.ca, cert: tls.clientCert, key: tls.clientKey } : { timeout: 1_000 };
    const req = get(`${clientUrl}/health`, options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(res.statusCode === 200 && /"health"\s*:\s*"true"/.test(body)));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

export interface EtcdMember {
  name: string;
  /** Client URL of this member. */
  endpoint: string;
  /** `kill -9` this member, keeping its data dir and ports. */
  kill(): Promise<void>;
  /** Start it again on the same data and ports; resolves when it answers `/health` (quorum). */
  restart(): Promise<void>;
  readonly running: boolean;
}

export interface EtcdCluster {
  members: EtcdMember[];
  /** Every member's client URL, for `--etcd-servers`. */
  endpoints: string[];
  /** The index of the member that is the raft leader now (asked of a running member). */
  leader(): Promise<number>;
  stop(): Promise<void>;
}

/** A real etcd cluster of `size` members on loopback ports, each with its own temporary data dir. */
export async function startEtcdCluster(size = 3, readyTimeoutMs = 30_000): Promise<EtcdCluster> {
  const ports: number[] = [];
  while (ports.length < size * 2) {
    const p = await freePort();
    if (!ports.includes(p)) ports.push(p);
  }
  const specs = Array.from({ length: size }, (_, i) => ({
    name: `m${i}`,
    client: `http://127.0.0.1:${ports[2 * i]}`,
    peer: `http://127.0.0.1:${ports[2 * i + 1]}`,
  }));
  const initialCluster = specs.map((s) => `${s.name}=${s.peer}`).join(',');
  const dirs = await Promise.all(specs.map(() => fs.mkdtemp(path.join(os.tmpdir(), 'keelson-etcd-member-'))));
  const children: Array<ChildProcess | undefined> = specs.map(() => undefined);
  const exits: Array<Promise<void>> = specs.map(() => Promise.resolve());
  const killAll = () => children.forEach((c) => c?.kill('SIGKILL'));
  process.once('exit', killAll);

  const spawnMember = (i: number): void => {
    const s = specs[i]!;
    const child = spawn(
      process.env.ETCD_BIN ?? 'etcd',
      [
        '--name',
        s.name,
        '--data-dir',
        dirs[i]!,
        '--listen-client-urls',
        s.client,
        '--advertise-client-urls',
        s.client,
        '--listen-peer-urls',
        s.peer,
        '--initial-advertise-peer-urls',
        s.peer,
        '--initial-cluster',
        initialCluster,
        '--initial-cluster-state',
        'new',
        '--initial-cluster-token',
        'keelson-test-cluster',
        '--logger',
        'zap',
        '--log-outputs',
        'stderr',
        '--log-level',
        'error',
      ],
      { stdio: ['ignore', 'ignore', 'ignore'] },
    );
    child.unref();
    children[i] = child;
    exits[i] = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  };
  const healthy = async (i: number): Promise<void> => waitHealthy(specs[i]!.client, readyTimeoutMs, undefined);

  specs.forEach((_, i) => spawnMember(i));
  try {
    await Promise.all(specs.map((_, i) => healthy(i)));
  } catch (err) {
    killAll();
    throw err;
  }

  const members: EtcdMember[] = specs.map((s, i) => ({
    name: s.name,
    endpoint: s.client,
    get running() {
      const c = children[i];
      return !!c && c.exitCode === null && c.signalCode === null;
    },
    async kill() {
      const c = children[i];
      if (c && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await exits[i];
    },
    async restart() {
      await this.kill();
      spawnMember(i);
      await healthy(i);
    },
  }));

  return {
    members,
    endpoints: specs.map((s) => s.client),
    async leader() {
      for (const m of members) {
        if (!m.running) continue;
        const status = await postJson(`${m.endpoint}/v3/maintenance/status`, {}).catch(() => undefined);
        if (!status?.leader) continue;
        const ids = await Promise.all(
          members.map(async (x) =>
            x.running ? (await postJson(`${x.endpoint}/v3/maintenance/status`, {}).catch(() => undefined))?.header?.member_id : undefined,
          ),
        );
        const index = ids.indexOf(status.leader);
        if (index >= 0) return index;
      }
      throw new Error('no etcd member knows a leader');
    },
    async stop() {
      process.removeListener('exit', killAll);
      await Promise.all(members.map((m) => m.kill()));
      await Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true })));
    },
  };
}

/** POST JSON to etcd's gRPC gateway; resolves the decoded answer. */
function postJson(url: string, body: unknown): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', timeout: 2_000, headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(text));
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
