/**
 * A member removed from a three-member etcd cluster and added back while writes run, through
 * the store's own client holding all three endpoints: as an operator replaces a member (etcdctl
 * member remove, member add, the member started again on an empty data directory). The removed
 * member shuts itself down; the client's calls on it fail, and its next calls go to the others.
 *
 * Afterwards: every acknowledged write is in etcd as acknowledged; a write whose answer was lost
 * is wholly there or not at all, and never there twice; a watch that resumes from where it was
 * whenever its stream breaks saw every change once, in order, and holds what etcd lists.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { StoreError, type Store } from '../../src/store';
import { createEtcdStore } from '../../src/store/etcd/store';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { FAULT_TIMEOUT_MS, FULL, sleep, summary } from './support';

jest.setTimeout(FAULT_TIMEOUT_MS);

const ROUNDS = FULL ? 3 : 1;
const WRITERS = 6;
const PREFIX = '/registry/membership/';

/** A three-member cluster whose members can be removed and added back. */
class Cluster {
  private readonly children: Array<ChildProcess | undefined> = [];
  private readonly dirs: string[] = [];

  constructor(readonly members: Array<{ name: string; client: string; peer: string }>) {}

  static async start(): Promise<Cluster> {
    const ports: number[] = [];
    while (ports.length < 6) {
      const p = await freePort();
      if (!ports.includes(p)) ports.push(p);
    }
    const cluster = new Cluster(
      [0, 1, 2].map((i) => ({ name: `m${i}`, client: `http://127.0.0.1:${ports[2 * i]}`, peer: `http://127.0.0.1:${ports[2 * i + 1]}` })),
    );
    process.once('exit', cluster.killAll);
    await Promise.all([0, 1, 2].map((i) => cluster.launch(i, 'new')));
    return cluster;
  }

  get endpoints(): string[] {
    return this.members.map((m) => m.client);
  }

  /** Starts member `i` on a new, empty data directory. */
  async launch(i: number, state: 'new' | 'existing'): Promise<void> {
    const m = this.members[i]!;
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-etcd-member-'));
    this.dirs.push(dir);
    const child = spawn(
      process.env.ETCD_BIN ?? 'etcd',
      [
        ...['--name', m.name, '--data-dir', dir],
        ...['--listen-client-urls', m.client, '--advertise-client-urls', m.client],
        ...['--listen-peer-urls', m.peer, '--initial-advertise-peer-urls', m.peer],
        ...['--initial-cluster', this.members.map((x) => `${x.name}=${x.peer}`).join(','), '--initial-cluster-state', state],
        ...['--initial-cluster-token', 'keelson-membership', '--logger', 'zap', '--log-outputs', 'stderr', '--log-level', 'error'],
      ],
      { stdio: ['ignore', 'ignore', 'ignore'] },
    );
    child.unref();
    this.children[i] = child;
    await eventually(() => this.healthy(i), { what: `${m.name} to be healthy`, timeoutMs: 30_000, intervalMs: 100 });
  }

  /** Removes member `i` (asked of another), and waits for its process to end. */
  async remove(i: number): Promise<void> {
    const asked = this.members.findIndex((_, k) => k !== i && this.running(k));
    const list = await post(this.members[asked]!.client, '/v3/cluster/member/list', {});
    const id = list.members.find((m: { name: string; peerURLs: string[] }) => m.peerURLs.includes(this.members[i]!.peer)).ID;
    // etcd refuses a reconfiguration until every member has been connected for a while (its strict reconfiguration check).
    await eventually(() => post(this.members[asked]!.client, '/v3/cluster/member/remove', { ID: id }), {
      what: `${this.members[i]!.name}'s removal`,
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    const child = this.children[i]!;
    // A removed member shuts itself down; one that has not heard yet is stopped.
    const exited = new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
    const stop = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(stop);
  }

  /** Adds member `i` back (asked of another) and starts it on an empty data directory. */
  async addBack(i: number): Promise<void> {
    const asked = this.members.findIndex((_, k) => k !== i && this.running(k));
    await eventually(() => post(this.members[asked]!.client, '/v3/cluster/member/add', { peerURLs: [this.members[i]!.peer] }), {
      what: `${this.members[i]!.name} to be added`,
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    await this.launch(i, 'existing');
  }

  async leader(): Promise<number> {
    for (const [k, m] of this.members.entries()) {
      if (!this.running(k)) continue;
      const status = await post(m.client, '/v3/maintenance/status', {}).catch(() => undefined);
      if (!status?.leader) continue;
      for (const [j, x] of this.members.entries()) {
        if (this.running(j) && (await post(x.client, '/v3/maintenance/status', {}).catch(() => undefined))?.header?.member_id === status.leader) return j;
      }
    }
    throw new Error('no member knows a leader');
  }

  running(i: number): boolean {
    const c = this.children[i];
    return !!c && c.exitCode === null && c.signalCode === null;
  }

  private async healthy(i: number): Promise<boolean> {
    return new Promise((resolve) => {
      const req = http.get(`${this.members[i]!.client}/health`, { timeout: 1_000 }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve(res.statusCode === 200 && body.includes('"true"')));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
    });
  }

  readonly killAll = (): void => {
    for (const c of this.children) c?.kill('SIGKILL');
  };

  async stop(): Promise<void> {
    process.removeListener('exit', this.killAll);
    await Promise.all(
      this.children.map((c) =>
        c && c.exitCode === null && c.signalCode === null ? new Promise<void>((resolve) => (c.once('exit', () => resolve()), c.kill('SIGKILL'))) : undefined,
      ),
    );
    await Promise.all(this.dirs.map((d) => fs.rm(d, { recursive: true, force: true })));
  }
}

/** POST JSON to etcd's gRPC gateway. */
function post(endpoint: string, route: string, body: unknown): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${endpoint}${route}`, { method: 'POST', timeout: 5_000, headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`${route}: ${res.statusCode} ${text}`))));
    });
    req.on('timeout', () => req.destroy(new Error(`${route}: timeout`)));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

interface KeyState {
  acked: { value: string; rev: number } | null;
  /** A write whose answer never came: applied or not, to be found out by reading. */
  pending?: string | null;
}

/** What the writers were told, and what they found out about writes whose answers were lost. */
class StoreLedger {
  readonly keys = new Map<string, KeyState>();
  acknowledged = 0;
  unknown = 0;
  unknownApplied = 0;

  check(key: string, stored: { value: string; rev: number } | null): void {
    const state = this.keys.get(key) ?? { acked: null };
    const same = (a: { value: string } | null) => (a === null ? stored === null : stored?.value === a.value);
    if (state.pending !== undefined) {
      this.unknown++;
      const intended = state.pending === null ? null : { value: state.pending };
      if (!same(state.acked) && !same(intended)) throw new Error(`${key}: neither acknowledged nor in flight: ${JSON.stringify({ stored, state })}`);
      if (!same(state.acked)) this.unknownApplied++;
    } else {
      if (!same(state.acked)) throw new Error(`${key}: acknowledged ${JSON.stringify(state.acked)}, stored ${JSON.stringify(stored)}`);
      if (stored && stored.rev !== state.acked!.rev) throw new Error(`${key}: stored at ${stored.rev}, acknowledged at ${state.acked!.rev} (written twice?)`);
    }
    this.keys.set(key, { acked: stored });
  }
}

const text = (v: Uint8Array) => Buffer.from(v).toString();

async function writer(store: Store, ledger: StoreLedger, id: number, stopped: () => boolean): Promise<void> {
  const mine = () => [...ledger.keys.entries()].filter(([k, s]) => k.startsWith(`${PREFIX}w${id}-`) && s.acked && s.pending === undefined);
  let seq = 0;
  while (!stopped()) {
    const owned = mine();
    const roll = Math.random();
    const value = `w${id}-v${seq++}`;
    let key: string;
    let write: () => Promise<{ value: string; rev: number } | null>;
    let intended: string | null;
    if (owned.length < 5 || roll < 0.3) {
      key = `${PREFIX}w${id}-${seq}`;
      intended = value;
      write = async () => ({ value, rev: (await store.create(key, Buffer.from(value))).modRevision });
    } else {
      const [picked, state] = owned[Math.floor(Math.random() * owned.length)]!;
      key = picked;
      if (roll < 0.85) {
        intended = value;
        write = async () => ({ value, rev: (await store.update(picked, Buffer.from(value), state.acked!.rev)).modRevision });
      } else {
        intended = null;
        write = async () => (await store.delete(picked, state.acked!.rev), null);
      }
    }
    const before = ledger.keys.get(key) ?? { acked: null };
    try {
      const result = await write();
      ledger.keys.set(key, { acked: result });
      ledger.acknowledged++;
    } catch (err) {
      // Only the store being unavailable leaves the outcome open; a guard failing is a bug here (one writer per key).
      if (!StoreError.is(err, 'unavailable')) throw err;
      ledger.keys.set(key, { acked: before.acked, pending: intended });
      for (;;) {
        try {
          const { kv } = await store.get(key);
          ledger.check(key, kv ? { value: text(kv.value), rev: kv.modRevision } : null);
          break;
        } catch {
          await sleep(100); // a client's pause before it asks a failing store again
        }
      }
    }
  }
}

/** A watch that resumes from its last revision whenever its stream ends, as the watch cache does. */
class ResumingWatch {
  readonly view = new Map<string, { value: string; rev: number }>();
  rev: number;
  events = 0;
  duplicates = 0;
  resumes = 0;
  private current?: { cancel(): void };
  private stopped = false;

  constructor(
    private readonly store: Store,
    from: number,
  ) {
    this.rev = from - 1;
    this.open();
  }

  private open(): void {
    if (this.stopped) return;
    this.current = this.store.watch(
      PREFIX,
      { startRevision: this.rev + 1 },
      {
        onEvents: (events) => {
          for (const e of events) {
            if (e.revision <= this.rev) this.duplicates++; // one key per write: one event per revision
            this.rev = e.revision;
            this.events++;
            if (e.type === 'delete') this.view.delete(e.kv.key);
            else this.view.set(e.kv.key, { value: text(e.kv.value), rev: e.kv.modRevision });
          }
        },
        onError: (err) => {
          if (err.code === 'compacted') throw err; // nothing compacts here
          this.resumes++;
          setTimeout(() => this.open(), 100);
        },
      },
    );
  }

  stop(): void {
    this.stopped = true;
    this.current?.cancel();
  }
}

let cluster: Cluster | undefined;
const stores: Store[] = [];
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await cluster?.stop();
});

test(`a member removed and added back ${ROUNDS === 1 ? 'once' : `${ROUNDS} times`} while writes run: nothing acknowledged lost, nothing written twice, the watch whole`, async () => {
  cluster = await Cluster.start();
  const store = createEtcdStore({ endpoints: cluster.endpoints, requestTimeoutMs: 5_000, keepaliveMs: 1_000, keepaliveTimeoutMs: 2_000 });
  const reader = createEtcdStore({ endpoints: cluster.endpoints, requestTimeoutMs: 5_000 });
  stores.push(store, reader);
  const ledger = new StoreLedger();
  let stopped = false;
  const watch = new ResumingWatch(store, (await store.currentRevision()) + 1);
  const writers = Array.from({ length: WRITERS }, (_, id) => writer(store, ledger, id, () => stopped));
  const rounds: Array<{ removed: string; wasLeader: boolean }> = [];
  try {
    await sleep(1_000);
    const removed = new Set<number>();
    for (let round = 0; round < ROUNDS; round++) {
      // First the member the client dialled first, then the leader, then one not removed yet.
      const leader = await cluster.leader();
      const i = round === 0 ? 0 : round === 1 ? leader : ([0, 1, 2].find((k) => !removed.has(k)) ?? (leader + 1) % 3);
      removed.add(i);
      await cluster.remove(i);
      await sleep(1_500);
      await cluster.addBack(i);
      await sleep(1_500);
      rounds.push({ removed: cluster.members[i]!.name, wasLeader: i === leader });
    }
  } finally {
    stopped = true;
    await Promise.all(writers).catch(() => undefined);
  }
  await Promise.all(writers); // a writer that failed (a guard that should have held) fails the test
  const listed = await reader.list(PREFIX);
  const stored = new Map(listed.kvs.map((kv) => [kv.key, { value: text(kv.value), rev: kv.modRevision }]));
  for (const key of new Set([...ledger.keys.keys(), ...stored.keys()])) ledger.check(key, stored.get(key) ?? null);
  await eventually(() => watch.rev >= listed.revision || watch.view.size === stored.size, { what: 'the watch to catch up', timeoutMs: 30_000 }).catch(
    () => undefined,
  );
  await sleep(500);
  watch.stop();
  expect(watch.duplicates).toBe(0);
  expect(Object.fromEntries(watch.view)).toEqual(Object.fromEntries(stored));
  summary('etcd-membership', {
    rounds,
    acknowledged: ledger.acknowledged,
    unknownOutcomes: ledger.unknown,
    unknownApplied: ledger.unknownApplied,
    keys: stored.size,
    watchEvents: watch.events,
    watchResumes: watch.resumes,
  });
});
