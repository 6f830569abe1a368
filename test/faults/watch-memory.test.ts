/**
 * Memory under sustained writes (issue 50; docs/RELIABILITY.md, "Memory under sustained
 * writes"): the server on the embedded store, writers creating, patching, applying and
 * deleting ~1 KB ConfigMaps with 20 watchers. Live memory after GC stays flat while the load
 * runs and returns to the idle figure once the load's objects are gone and its events have left
 * the window; every watcher receives every event in order; a watch resumed from a version older
 * than the in-memory history succeeds from the store's history.
 *
 * Reduced in `npm test` (30 s at 400 writes/s, a 20 s window and an 8 MiB budget, so that a
 * 15 s old resume comes from the store); `npm run test:faults` runs the figures: 10
 * minutes at 1,000 writes/s with the default window and budget, a 4-minute-old resume, 6.5
 * minutes after.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Child, forkChild } from '../../tools/bench/ipc';
import type { ServerStats } from '../../tools/bench/keelson-child';
import { runMemoryScenario } from '../../tools/bench/load/memory-scenario';
import { FAULT_TIMEOUT_MS, FULL, summary } from './support';

jest.setTimeout(FAULT_TIMEOUT_MS);

const ROOT = path.resolve(__dirname, '../..');
const SERVER_FLAGS = FULL ? [] : ['--watch-cache-window', '20s', '--watch-cache-max-bytes', '8Mi'];

let dir: string;
let child: Child;
let port: number;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-watch-memory-'));
  let ready: () => void = () => {};
  const whenReady = new Promise<void>((resolve) => (ready = resolve));
  // The bench's server child: the real server, plus a full GC and memory readings over IPC.
  child = forkChild(path.join(ROOT, 'tools/bench/keelson-child.ts'), 'keelson', {
    args: ['--secure-port', '0', '--data-dir', dir, '--vendor', 'kubernetes', '--controllers', '*,-replicaset', '--simulated-nodes', '0', ...SERVER_FLAGS],
    execArgv: ['-r', '@swc-node/register', '--expose-gc'],
    env: { ...process.env },
    onEvent: (event) => {
      if (event.event === 'listening') port = event.port as number;
      if (event.event === 'ready') ready();
    },
  });
  await Promise.race([whenReady, child.whenExited().then((code) => Promise.reject(new Error(`the server exited (${code}):\n${child.recentOutput()}`)))]);
});

afterAll(async () => {
  await child?.stop();
  await rm(dir, { recursive: true, force: true });
});

test(`memory follows the live data under ${FULL ? '10 minutes' : '30 s'} of sustained writes with 20 watchers`, async () => {
  const read = (f: string) => readFile(path.join(dir, f), 'utf8');
  const target = { host: '127.0.0.1', port, tls: { ca: await read('ca.crt'), cert: await read('admin.crt'), key: await read('admin.key') } };
  const result = await runMemoryScenario({
    target,
    writesPerSecond: FULL ? 1000 : 400,
    gc: () => child.call<ServerStats>('gc'),
    loadMs: FULL ? 600_000 : 30_000,
    afterMs: FULL ? 390_000 : 27_000,
    sampleMs: FULL ? 15_000 : 3_000,
    resumeAgeMs: FULL ? 240_000 : 15_000,
  });
  const { samples, ...figures } = result;
  summary('watch-memory', { ...figures, samples: samples.map((s) => `${s.phase}@${s.t}s live ${s.liveMb} rss ${s.rssMb}`) });

  expect(result.writeErrors).toBe(0);
  expect(result.watchers).toEqual({ all: 20, complete: 20, outOfOrder: 0, ended: 0, errors: [] });
  expect(result.resume).toMatchObject({ ok: true, outOfOrder: 0 });
  expect(result.resume.events).toBe(result.resume.expected);
  expect(result.resume.expected).toBeGreaterThan(0);
  if (FULL) {
    // The figures.
    expect(result.lastHalfLiveMb.spreadPct).toBeLessThanOrEqual(10);
    expect(result.maxRssMb).toBeLessThanOrEqual(300);
    expect(result.after!.liveVsIdlePct).toBeLessThanOrEqual(20);
  } else {
    // An 8 MiB budget: the history cannot make live memory grow past it, however long the load.
    expect(result.maxLiveMb).toBeLessThan(result.idle.liveMb + 40);
    expect(result.after!.liveMb).toBeLessThanOrEqual(result.idle.liveMb * 1.2 + 2);
  }
});
