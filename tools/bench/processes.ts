/**
 * The processes a bench run starts besides etcd: Keelson (the compiled server in
 * keelson-child), the bare https reference, and the load generator. Each is a forked child
 * with an IPC channel; CPU time and memory come from the process itself.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { StoreOptions } from '../../src/store';
import type { Build } from './build';
import { HttpsConnection, type Target, requestHead } from './https-client';
import { type Child, forkChild } from './ipc';
import type { ServerStats } from './keelson-child';
import { processMemory } from './proc-stats';

export type StoreChoice = { kind: 'etcd'; endpoint: string } | { kind: 'embedded' };

export interface KeelsonOptions {
  store: StoreChoice;
  dataDir: string;
  adapter?: 'express' | 'node';
  /** Write a V8 CPU profile of the server to this directory when it stops. */
  cpuProfDir?: string;
  /** Extra flags for node itself (V8's, e.g. `--single-threaded-gc`): a runtime setting A/B'd (ab-create.ts). */
  nodeFlags?: string[];
  /** Extra server flags after the bench's own (a later flag wins): a setting A/B'd (ab-create.ts). */
  serverArgs?: string[];
}

export interface KeelsonServer {
  child: Child;
  /** Admin client (system:masters) pointed at the server. */
  target: Target;
  dataDir: string;
  /** From fork to the first `/readyz` 200, ms. */
  startMs: number;
  stats(): Promise<ServerStats>;
  /** Full GC, then stats (for memory readings). */
  gc(): Promise<ServerStats>;
  /**
   * Before measuring a freshly started server: a pause and a full GC, so that the garbage of
   * start-up (the watch cache's initial load) is not collected inside the first measured cell.
   */
  settle(): Promise<void>;
  /** Peak RSS from /proc (VmHWM), which also covers the time before the IPC channel is served. */
  peakRss(): number | undefined;
  stop(): Promise<void>;
}

async function readTls(dataDir: string): Promise<Target['tls']> {
  const read = (f: string) => readFile(path.join(dataDir, f), 'utf8');
  return { ca: await read('ca.crt'), cert: await read('admin.crt'), key: await read('admin.key') };
}

/** Poll GET /readyz anonymously until 200; resolves with the time it first answered 200. */
async function waitReady(port: number, ca: string, child: Child, timeoutMs: number): Promise<number> {
  const target: Target = { host: '127.0.0.1', port, tls: { ca } };
  const head = requestHead('GET', '/readyz', target);
  const deadline = performance.now() + timeoutMs;
  let conn: HttpsConnection | undefined;
  try {
    for (;;) {
      if (child.process.exitCode !== null) throw new Error(`keelson exited during start-up:\n${child.recentOutput()}`);
      if (performance.now() > deadline) throw new Error(`keelson not ready after ${timeoutMs} ms:\n${child.recentOutput()}`);
      try {
        if (!conn || conn.socket.destroyed) conn = await HttpsConnection.connect(target);
        const res = await conn.request(head);
        if (res.status === 200) return performance.now();
      } catch {
        conn = undefined;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    conn?.close();
  }
}

export async function startKeelson(build: Build, options: KeelsonOptions): Promise<KeelsonServer> {
  // The scenarios measure the API itself: no ReplicaSet controller turns their ReplicaSets into pods, no simulated node runs them.
  const args = [
    '--secure-port',
    '0',
    '--data-dir',
    options.dataDir,
    '--bench-adapter',
    options.adapter ?? 'express',
    '--controllers',
    '*,-replicaset',
    '--simulated-nodes',
    '0',
  ];
  if (options.store.kind === 'etcd') args.push('--etcd-servers', options.store.endpoint);
  if (options.serverArgs) args.push(...options.serverArgs);
  const execArgv = ['--expose-gc'];
  if (options.cpuProfDir) execArgv.push('--cpu-prof', '--cpu-prof-dir', options.cpuProfDir);
  if (options.nodeFlags) execArgv.push(...options.nodeFlags);
  let onListening: (port: number) => void = () => {};
  const listening = new Promise<number>((resolve) => (onListening = resolve));
  const forkedAt = performance.now();
  const child = forkChild(build.file('tools/bench/keelson-child'), 'keelson', {
    args,
    env: build.env,
    execArgv,
    onEvent: (event) => {
      if (event.event === 'listening') onListening(event.port as number);
    },
  });
  const port = await Promise.race([
    listening,
    child.whenExited().then((code) => {
      throw new Error(`keelson exited (${code}) before listening:\n${child.recentOutput()}`);
    }),
  ]);
  const tls = await readTls(options.dataDir);
  const readyAt = await waitReady(port, tls.ca, child, 120_000);
  return {
    child,
    target: { host: '127.0.0.1', port, tls },
    dataDir: options.dataDir,
    startMs: readyAt - forkedAt,
    stats: () => child.call<ServerStats>('stats'),
    gc: () => child.call<ServerStats>('gc'),
    settle: async () => {
      await new Promise((r) => setTimeout(r, 500));
      await child.call<ServerStats>('gc');
    },
    peakRss: () => processMemory(child.pid)?.peakRss,
    stop: async () => {
      await child.stop();
    },
  };
}

export interface BareServer {
  child: Child;
  target: Target;
  route(path: string, body: Buffer, contentType: string): Promise<void>;
  /** Busy-wait this long in every routed GET (see bare-server.ts). */
  spin(us: number): Promise<void>;
  /** Open `store` for the floor requests (see bare-server.ts); `keys` maps GET paths to store keys. */
  floor(options: { store: StoreOptions; keys?: Record<string, string>; managedFields?: unknown }): Promise<void>;
  /** Open `store` for floor creates, stamping the managedFields Keelson recorded on `template`. */
  floorCreates(store: StoreOptions, template: Record<string, unknown>): Promise<void>;
  stats(): Promise<ServerStats>;
  /** The floor's shared revision reads so far, and the seconds they took from sending to answer. */
  revisionReads(): Promise<{ reads: number; seconds: number }>;
  gc(): Promise<ServerStats>;
  stop(): Promise<void>;
}

/** Where the bare server takes creates at the floor (see bare-server.ts): `<path><namespace>`. */
export const FLOOR_CREATE_PATH = '/bare-create/';

/** The bare node:https reference, with the certificates Keelson generated in `dataDir`. */
export async function startBare(build: Build, dataDir: string, clientTls: Target['tls'], cpuProfDir?: string): Promise<BareServer> {
  let onListening: (port: number) => void = () => {};
  const listening = new Promise<number>((resolve) => (onListening = resolve));
  const child = forkChild(build.file('tools/bench/bare-server'), 'bare-https', {
    args: [dataDir],
    env: build.env,
    execArgv: cpuProfDir ? ['--expose-gc', '--cpu-prof', '--cpu-prof-dir', cpuProfDir] : ['--expose-gc'],
    onEvent: (event) => event.event === 'listening' && onListening(event.port as number),
  });
  const port = await listening;
  return {
    child,
    target: { host: '127.0.0.1', port, tls: clientTls },
    route: (p, body, contentType) => child.call('route', { path: p, body, contentType }),
    spin: (us) => child.call('spin', { us }),
    floor: (options) => child.call('floor', options),
    floorCreates: (store, template) => child.call('floor', { store, managedFields: (template.metadata as { managedFields?: unknown }).managedFields }),
    stats: () => child.call<ServerStats>('stats'),
    revisionReads: () => child.call<{ reads: number; seconds: number }>('revisionReads'),
    gc: () => child.call<ServerStats>('gc'),
    stop: async () => {
      await child.stop();
    },
  };
}

/** The load generator process (load-worker.ts). */
export function startWorker(build: Build, name = 'load-generator'): Child {
  return forkChild(build.file('tools/bench/load-worker'), name, { env: build.env });
}
