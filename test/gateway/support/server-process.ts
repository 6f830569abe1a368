/**
 * Run the real entry point (`src/server/main.ts`) as a child process on a free port with its
 * own data dir, wait until it says it is ready, and stop it with SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ClientTls } from './https-client';
import { waitForOutput } from '../../support/child-output';

const ROOT = path.resolve(__dirname, '../../..');

export interface ServerProcess {
  /** The server's process id (for RSS readings). */
  pid: number;
  url: string;
  port: number;
  dataDir: string;
  kubeconfig: string;
  admin: ClientTls;
  output(): string;
  /** SIGTERM, then wait for the exit code. */
  stop(): Promise<number | null>;
  /** The exit code once the process ends on its own (after a signal the test sent). */
  exited(): Promise<number | null>;
  /** SIGKILL, then wait for the exit. */
  kill(): Promise<void>;
}

/**
 * Flags for tests of the API machinery itself: no ReplicaSet controller acting on the
 * ReplicaSets they store, no root CA ConfigMap in their namespaces and no simulated node or
 * scheduler acting on their pods (objects appearing, status changing under them).
 */
export const API_ONLY = ['--controllers', '*,-replicaset,-root-ca-cert-publisher,-validatingadmissionpolicy-status-controller', '--simulated-nodes', '0'];

export interface StartServerProcessOptions {
  readyTimeoutMs?: number;
  dataDir?: string;
  /** A process without the HTTPS gateway (`--controllers-only`): no URL and no admin credentials to wait for. */
  noGateway?: boolean;
}

export async function startServerProcess(args: string[], options: StartServerProcessOptions = {}): Promise<ServerProcess> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'keelson-e2e-')));
  const child: ChildProcess = spawn(
    process.execPath,
    ['-r', '@swc-node/register', 'src/server/main.ts', '--secure-port', '0', '--data-dir', dataDir, ...args],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  try {
    await waitForOutput(child, () => out, /keelson: ready/, options.readyTimeoutMs ?? 30_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`server not ready: ${(err as Error).message}`);
  }
  const m = options.noGateway ? ['', '', '0'] : /on (https:\/\/[^ ]+:(\d+)) /.exec(out);
  if (!m) throw new Error(`no URL in output:\n${out}`);
  const read = (f: string) => readFile(path.join(dataDir, f), 'utf8');
  const admin = options.noGateway ? { ca: '', cert: '', key: '' } : { ca: await read('ca.crt'), cert: await read('admin.crt'), key: await read('admin.key') };
  return {
    pid: child.pid!,
    url: m[1],
    port: Number(m[2]),
    dataDir,
    kubeconfig: path.join(dataDir, 'admin.kubeconfig'),
    admin,
    output: () => out,
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
    exited: () => exited,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}
