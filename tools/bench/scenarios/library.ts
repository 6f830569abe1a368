/**
 * Scenario 11: Keelson as a library. Start-to-ready of `startServer()` in this process (median
 * of 20, the embedded store in memory, the PKI reused after the first), against `npm start` of
 * the same tree (tools/start.js in a child process, the build current: fork to "ready", median
 * of 5); and the memory 20 servers running at once add to the process.
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startServer, type RunningServer } from '../../../src/library';
import type { Context } from '../context';

const ROOT = path.resolve(__dirname, '../../..');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function collect(): void {
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

async function npmStartToReady(): Promise<number> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-bench-start-'));
  const start = performance.now();
  const child = fork(path.join(ROOT, 'tools/start.js'), ['--data-dir', dir, '--secure-port', '0'], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  try {
    return await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('keelson: ready')) resolve(performance.now() - start);
      });
      child.on('exit', (code) => reject(new Error(`npm start exited ${code}: ${out}`)));
    });
  } finally {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runLibrary(ctx: Context): Promise<void> {
  // The first start generates the PKI and warms the modules; it is not counted.
  await (await startServer()).stop();
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    const start = performance.now();
    const server = await startServer();
    times.push(performance.now() - start);
    await server.stop();
  }
  const forks: number[] = [];
  for (let i = 0; i < (ctx.options.quick ? 3 : 5); i++) forks.push(await npmStartToReady());
  const library = median(times);
  const npm = median(forks);
  ctx.rows.push({
    scenario: 11,
    name: 'library: startServer() to ready (median of 20)',
    keelson: `${library.toFixed(0)} ms`,
    reference: `${npm.toFixed(0)} ms npm start (tools/start.js, build current)`,
    ratio: `${(npm / library).toFixed(1)}× faster`,
    cpu: '',
    latency: `min ${Math.min(...times).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms`,
    note: 'in process, store in memory, controllers and one simulated node, PKI reused; npm start: fresh data dir, new PKI, fork to "keelson: ready"',
  });

  collect();
  const before = process.memoryUsage();
  const servers: RunningServer[] = [];
  for (let i = 0; i < 20; i++) servers.push(await startServer());
  collect();
  const during = process.memoryUsage();
  await Promise.all(servers.map((s) => s.stop()));
  const heap = (m: NodeJS.MemoryUsage) => m.heapUsed + m.external + m.arrayBuffers;
  const perServer = (heap(during) - heap(before)) / 20 / 2 ** 20;
  ctx.rows.push({
    scenario: 11,
    name: 'library: 20 servers running in one process',
    keelson: `${perServer.toFixed(1)} MiB per server`,
    reference: '',
    ratio: '',
    cpu: '',
    latency: '',
    note: `heap, external and array buffers after a full GC, 20 servers with default options (store in memory, controllers, one simulated node); process RSS ${(during.rss / 2 ** 20).toFixed(0)} MiB with them (RSS alone does not shrink back between runs)`,
  });
}
