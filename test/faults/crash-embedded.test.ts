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
import { httpsStream } from '../gateway/support/https-client';
import { FAULT_TIMEOUT_MS, FULL, call, sleep, summary } from './support';

jest.setTimeout(FAULT_TIMEOUT_MS);

const CYCLES = FULL ? 100 : 3;
const WRITERS = 4;
const NS = 'crash';
const BASE = `/api/v1/namespaces/${NS}/configmaps`;

type State = { data: Record<string, string>; rv: string } | null;
interface Tracked {
  acked: State;
  /** The write in flight when the server died: its outcome is unknown until checked. */
  pending?: { data: Record<string, string> | null };
}

const tracked = new Map<string, Tracked>();
let dir: string;
let server: ServerProcess;
let maxAckedRv = 0;
let acknowledged = 0;
let inFlightAtKill = 0;
let inFlightApplied = 0;

async function start(): Promise<ServerProcess> {
  return startServerProcess(['--vendor', 'kubernetes', '--controllers=', '--simulated-nodes', '0', '--disable-admission-plugins', 'ServiceAccount'], { dataDir: dir });
}

function ack(name: string, state: State): void {
  tracked.set(name, { acked: state });
  acknowledged++;
  if (state) {
    const rv = Number(state.rv);
    if (rv <= maxAckedRv) throw new Error(`resourceVersion went backwards: ${rv} after ${maxAckedRv}`);
    maxAckedRv = rv;
  }
}

/** One writer: creates, updates and deletes its own objects until the server goes away. */
async function writer(k: number, srv: ServerProcess, cycle: number): Promise<void> {
  let seq = 0;
  for (;;) {
    const mine = [...tracked.entries()].filter(([n, t]) => n.startsWith(`w${k}-`) && t.acked && !t.pending);
    const roll = Math.random();
    const value = `${cycle}-${seq++}`;
    try {
      if (mine.length < 5 || roll < 0.2) {
        const name = `w${k}-${cycle}-${seq}`;
        const data = { v: value };
        tracked.set(name, { acked: null, pending: { data } });
        const r = await call(srv, 'POST', BASE, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
        if (r.status !== 201) throw new Error(`create answered ${r.status}: ${JSON.stringify(r.body)}`);
        ack(name, { data, rv: r.body.metadata.resourceVersion });
      } else {
        const [name, t] = mine[Math.floor(Math.random() * mine.length)]!;
        if (roll < 0.8) {
          const data = { v: value };
          tracked.set(name, { acked: t.acked, pending: { data } });
          const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, resourceVersion: t.acked!.rv }, data };
          const r = await call(srv, 'PUT', `${BASE}/${name}`, body);
          if (r.status !== 200) throw new Error(`update answered ${r.status}: ${JSON.stringify(r.body)}`);
          ack(name, { data, rv: r.body.metadata.resourceVersion });
        } else {
          tracked.set(name, { acked: t.acked, pending: { data: null } });
          const r = await call(srv, 'DELETE', `${BASE}/${name}`);
          if (r.status !== 200) throw new Error(`delete answered ${r.status}: ${JSON.stringify(r.body)}`);
          ack(name, null);
        }
      }
    } catch (err) {
      // A transport failure is the kill; the write stays pending. An answer we did not expect fails the test.
      if ((err as Error).message.includes('answered')) throw err;
      return;
    }
  }
}

/** An informer-like watcher: lists, then watches from the list's version; relists on 410 or a broken stream. */
class Watcher {
  view = new Map<string, { rv: string; data: unknown }>();
  rv = '0';
  duplicates = 0;
  relists = 0;
  events = 0;
  private stream?: ReturnType<typeof httpsStream>;
  private stopped = false;

  /** Follow `srv` until stopped; after a stop it may run again (against a restarted server) from where it was. */
  async run(srv: ServerProcess): Promise<void> {
    this.stopped = false;
    while (!this.stopped) {
      try {
        if (this.rv === '0') await this.relist(srv);
        await this.follow(srv);
      } catch {
        if (this.stopped) return;
        await sleep(50);
      }
    }
  }

  private async relist(srv: ServerProcess): Promise<void> {
    const r = await call(srv, 'GET', BASE);
    if (r.status !== 200) throw new Error(`list answered ${r.status}`);
    this.view = new Map(r.body.items.map((o: any) => [o.metadata.name, { rv: o.metadata.resourceVersion, data: o.data }]));
    this.rv = r.body.metadata.resourceVersion;
    this.relists++;
  }

  private async follow(srv: ServerProcess): Promise<void> {
    const s = httpsStream(`${srv.url}${BASE}?watch=true&resourceVersion=${this.rv}&allowWatchBookmarks=true`, srv.admin);
    this.stream = s;
    await s.opened;
    let read = 0;
    for (;;) {
      if (this.stopped) return;
      while (read < s.lines.length) {
        const event = JSON.parse(s.lines[read++]!);
        if (event.type === 'ERROR') {
          this.rv = '0'; // 410: start over from a list, as informers do.
          return;
        }
        const rv = event.object.metadata.resourceVersion;
        if (Number(rv) <= Number(this.rv)) this.duplicates++;
        this.rv = rv;
        if (event.type === 'BOOKMARK') continue;
        this.events++;
        const name = event.object.metadata.name;
        if (event.type === 'DELETED') this.view.delete(name);
        else this.view.set(name, { rv, data: event.object.data });
      }
      if (s.ended) throw new Error('stream ended');
      await sleep(10);
    }
  }

  stop(): void {
    this.stopped = true;
    this.stream?.close();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-crash-'));
  server = await start();
  const r = await call(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  expect(r.status).toBe(201);
});

afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

test(`${CYCLES} kill -9 cycles lose no acknowledged write and half-apply none`, async () => {
  const watcher = new Watcher();
  let watching = watcher.run(server);
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const writers = Array.from({ length: WRITERS }, (_, k) => writer(k, server, cycle));
    await sleep(150 + Math.random() * 450);
    await server.kill();
    await Promise.all(writers);
    watcher.stop();
    await watching;

    server = await start();
    const list = await call(server, 'GET', BASE);
    expect(list.status).toBe(200);
    expect(Number(list.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(maxAckedRv);
    const stored = new Map<string, any>(list.body.items.map((o: any) => [o.metadata.name, o]));
    for (const [name, t] of tracked) {
      const o = stored.get(name);
      const observed: State = o ? { data: o.data, rv: o.metadata.resourceVersion } : null;
      const same = (s: State | undefined) => (s === null ? observed === null : !!observed && JSON.stringify(observed.data) === JSON.stringify(s!.data));
      if (t.pending) {
        inFlightAtKill++;
        const intended: State = t.pending.data ? { data: t.pending.data, rv: '' } : null;
        if (!same(t.acked) && !same(intended)) throw new Error(`${name}: neither the acknowledged nor the in-flight state: ${JSON.stringify({ observed, t })}`);
        if (!same(t.acked)) inFlightApplied++;
      } else {
        if (!same(t.acked)) throw new Error(`${name}: acknowledged ${JSON.stringify(t.acked)} lost: ${JSON.stringify(observed)}`);
        if (observed && observed.rv !== t.acked!.rv) throw new Error(`${name}: resourceVersion ${observed.rv}, acknowledged ${t.acked!.rv}`);
      }
      if (observed && Number(observed.rv) > maxAckedRv) maxAckedRv = Number(observed.rv);
      tracked.set(name, { acked: observed });
    }
    for (const name of stored.keys()) if (!tracked.has(name)) throw new Error(`${name} is stored but was never written`);

    // The watcher resumes from its last version against the restarted server.
    watching = watcher.run(server);
    const end = Date.now() + 10_000;
    const expected = () => JSON.stringify([...stored.entries()].map(([n, o]) => [n, o.metadata.resourceVersion]).sort());
    const seen = () => JSON.stringify([...watcher.view.entries()].map(([n, v]) => [n, v.rv]).sort());
    while (seen() !== expected() && Date.now() < end) await sleep(20);
    expect(seen()).toBe(expected());
  }
  watcher.stop();
  await watching;
  expect(watcher.duplicates).toBe(0);
  summary('crash-embedded', { cycles: CYCLES, acknowledgedWrites: acknowledged, inFlightAtKill, inFlightApplied, objects: tracked.size, watchEvents: watcher.events, relists: watcher.relists, duplicates: watcher.duplicates });
});
