/**
 * Crashes on the embedded store: cycles of `kill -9` of the real server process while several
 * clients create, update and delete over HTTPS and an informer-like client watches. After each
 * restart on the same data dir:
 * - every acknowledged write is there with its acknowledged content and resourceVersion;
 * - a write in flight at the kill is either wholly there or wholly absent;
 * - resource versions only grow;
 * - the watcher (resuming from its last version, relisting on 410 as informers do) saw no
 *   change twice and ends up with exactly what the server lists.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { FAULT_TIMEOUT_MS, FULL, Ledger, Watcher, call, runWriter, sleep, summary } from './support';

jest.setTimeout(FAULT_TIMEOUT_MS);

const CYCLES = FULL ? 100 : 3;
const WRITERS = 4;
const NS = 'crash';
const BASE = `/api/v1/namespaces/${NS}/configmaps`;

let dir: string;
let server: ServerProcess;

async function start(): Promise<ServerProcess> {
  return startServerProcess(['--vendor', 'kubernetes', '--controllers=', '--simulated-nodes', '0', '--disable-admission-plugins', 'ServiceAccount'], {
    dataDir: dir,
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-crash-'));
  server = await start();
  const r = await call(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  expect(r.status).toBe(201);
});

/** Stopped after the test whether it passed or not, so its loop does not outlive the file. */
let watcher: Watcher | undefined;

afterAll(async () => {
  watcher?.stop();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

test(`${CYCLES} kill -9 cycles lose no acknowledged write and half-apply none`, async () => {
  const ledger = new Ledger();
  const w = (watcher = new Watcher(BASE));
  let watching = w.run(() => server);
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const srv = server;
    const writers = Array.from({ length: WRITERS }, (_, k) =>
      runWriter({ ledger, prefix: `w${k}-${cycle}-`, base: BASE, server: () => srv, onUnknown: 'stop', stopped: () => false }),
    );
    await sleep(150 + Math.random() * 450); // the point: the kill lands at a random moment of the writes
    await server.kill();
    await Promise.all(writers);
    w.stop();
    await watching;

    server = await start();
    const list = await call(server, 'GET', BASE);
    expect(list.status).toBe(200);
    expect(Number(list.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(ledger.maxAckedRv);
    ledger.checkAll(list.body.items);

    // The watcher resumes from its last version against the restarted server.
    watching = w.run(() => server);
    expect(await w.matches(list.body.items)).toBe(true);
  }
  w.stop();
  await watching;
  expect(w.duplicates).toBe(0);
  summary('crash-embedded', {
    cycles: CYCLES,
    acknowledgedWrites: ledger.acknowledged,
    inFlightAtKill: ledger.unknownOutcomes,
    inFlightApplied: ledger.unknownApplied,
    objects: ledger.entries.size,
    watchEvents: w.events,
    relists: w.relists,
    duplicates: w.duplicates,
  });
});
