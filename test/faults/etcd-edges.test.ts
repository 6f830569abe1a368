/**
 * etcd's edges, against a real etcd, through the store's own client (and, where it reads a lot,
 * checked against etcd3 by the differential oracle, test/store/etcd/oracle/):
 * - a value at etcd's request limit (1.5 MiB by default) is stored, read and watched; a byte more
 *   is refused by etcd ("request is too large"); a message past the client's 2 MiB send limit is
 *   refused before a byte of it is sent;
 * - a range of many keys (100,000 with KEELSON_FAULTS=full) spans many flow-control windows and
 *   reads back whole, in one answer and in pages;
 * - 10,000 watch events written in one burst arrive once each, in order, live and replayed;
 * - a watch that has fallen behind when etcd compacts delivers a gap-free prefix of the history,
 *   then ends as compacted at the compaction's revision, never skipping what was compacted;
 * - TLS with client certificates: the same, and what a client without its certificate sees.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GrpcCode } from '../../src/status';
import { StoreError, type Store, type StoreEvent } from '../../src/store';
import { EtcdCallError, EtcdClient } from '../../src/store/etcd/client';
import { createEtcdStore } from '../../src/store/etcd/store';
import { createTestPki } from '../grpc/fixtures/certs';
import { differentialStore, ORACLE_SEED } from '../store/etcd/oracle/backend';
import { startEtcd, type EtcdInstance } from '../support/etcd';
import { eventually } from '../support/eventually';
import { startTcpProxy } from '../support/tcp-proxy';
import { FAULT_TIMEOUT_MS, FULL, summary } from './support';

jest.setTimeout(FAULT_TIMEOUT_MS);

const SIZES = FULL
  ? { rangeKeys: 100_000, rangeValue: 400, burst: 10_000, behind: 10_000 }
  : { rangeKeys: 20_000, rangeValue: 600, burst: 10_000, behind: 3_000 };
const MiB = 1024 * 1024;

let etcd: EtcdInstance;
const stores: Store[] = [];
const open = (endpoint = etcd.endpoint) => {
  const store = createEtcdStore({ endpoints: [endpoint] });
  stores.push(store);
  return store;
};

beforeAll(async () => {
  etcd = await startEtcd();
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await etcd?.stop();
});

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (err: unknown) => err as Error,
  );

/** Writes `count` keys under `prefix` in transactions of 128 puts (etcd's default --max-txn-ops), a few at a time. */
async function load(
  endpoint: string,
  prefix: string,
  count: number,
  value: (i: number) => Buffer,
  tls?: { ca: string; cert: string; key: string },
): Promise<void> {
  const client = new EtcdClient({ endpoints: [endpoint], tls, timeoutMs: 60_000 });
  try {
    const batches = Math.ceil(count / 128);
    let next = 0;
    const worker = async () => {
      for (let b = next++; b < batches; b = next++) {
        const success = [];
        for (let i = b * 128; i < Math.min(count, (b + 1) * 128); i++)
          success.push({ requestPut: { key: Buffer.from(keyOf(prefix, i)), value: value(i), lease: 0, prevKv: false } });
        await client.txn({ compare: [], success, failure: [] });
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
  } finally {
    client.close();
  }
}

const keyOf = (prefix: string, i: number) => `${prefix}${String(i).padStart(6, '0')}`;
const valueFor = (i: number, size: number) => Buffer.alloc(size, `value ${i};`);

/** Resolves once `condition` holds, or after `ms` (a bound for a loaded machine; the test then says what it saw). */
const until = (condition: () => boolean, ms: number) =>
  eventually(condition, { timeoutMs: ms }).then(
    () => undefined,
    () => undefined,
  );

describe("etcd's request limit", () => {
  it('stores, reads and watches a value at the limit; refuses a byte more (etcd) and a message past 2 MiB (before sending)', async () => {
    const proxy = await startTcpProxy(etcd.endpoint);
    const store = open(proxy.endpoint);
    const prefix = '/registry/edges/limit/';
    let attempt = 0;
    const tryCreate = (size: number) => store.create(keyOf(prefix, attempt++), Buffer.alloc(size, 'x'));
    // The largest value etcd takes under a key of this length: its limit counts the whole raft
    // request (the Txn, the key, etcd's own header), so it is found by bisection.
    let fits = 1_400_000;
    let refused = 1_572_864 + 1;
    while (refused - fits > 1) {
      const mid = Math.floor((fits + refused) / 2);
      if ((await failure(tryCreate(mid))) === undefined) fits = mid;
      else refused = mid;
    }
    const events: StoreEvent[] = [];
    const watch = store.watch(prefix, { startRevision: (await store.currentRevision()) + 1 }, { onEvents: (e) => events.push(...e), onError: () => undefined });
    const key = keyOf(prefix, attempt++);
    const stored = await store.create(key, Buffer.alloc(fits, 'y'));
    expect(Buffer.from((await store.get(key)).kv!.value).equals(Buffer.alloc(fits, 'y'))).toBe(true);
    await until(() => events.length > 0, 10_000);
    watch.cancel();
    expect(events.map((e) => [e.kv.key, e.revision, e.kv.value.length])).toEqual([[key, stored.modRevision, fits]]);

    const before = await store.currentRevision();
    const oneMore = await failure(store.create(keyOf(prefix, attempt++), Buffer.alloc(fits + 1, 'z')));
    expect(oneMore).not.toBeInstanceOf(StoreError); // not the store being unavailable: clients must not retry it
    expect(oneMore).toMatchObject({ code: GrpcCode.INVALID_ARGUMENT, message: 'etcdserver: request is too large' });
    expect(await store.currentRevision()).toBe(before);

    const sentBefore = proxy.bytesUp;
    const tooLarge = await failure(store.create(keyOf(prefix, attempt++), Buffer.alloc(2 * MiB, 'w')));
    expect(tooLarge).toBeInstanceOf(EtcdCallError);
    expect(tooLarge).toMatchObject({
      code: GrpcCode.RESOURCE_EXHAUSTED,
      message: expect.stringMatching(/^rpc error: code = ResourceExhausted desc = trying to send message larger than max \(\d+ vs\. 2097152\)$/),
    });
    expect(proxy.bytesUp - sentBefore).toBe(0);
    summary('etcd-edges request limit', { largestValue: fits, refusedAt: refused, bisectionWrites: attempt });
    await proxy.close();
  });
});

describe('a range of many keys', () => {
  it(`reads ${SIZES.rangeKeys} keys back whole in one answer and in pages, over many flow-control windows, as etcd3 reads them`, async () => {
    const prefix = '/registry/edges/range/';
    const size = SIZES.rangeValue;
    let started = Date.now();
    await load(etcd.endpoint, prefix, SIZES.rangeKeys, (i) => valueFor(i, size));
    const loadMs = Date.now() - started;
    const { store, calls } = differentialStore(etcd.endpoint, ORACLE_SEED);
    stores.push(store);
    started = Date.now();
    const all = await store.list(prefix);
    const wholeMs = Date.now() - started;
    expect(all.count).toBe(SIZES.rangeKeys);
    expect(all.more).toBe(false);
    expect(all.kvs).toHaveLength(SIZES.rangeKeys);
    const wrong = all.kvs.findIndex((kv, i) => kv.key !== keyOf(prefix, i) || !Buffer.from(kv.value).equals(valueFor(i, size)));
    expect(wrong).toBe(-1);
    // In pages, as the watch cache loads: every page at the first page's revision.
    const paged: string[] = [];
    let startKey: string | undefined;
    for (;;) {
      const page = await store.list(prefix, { limit: 5_000, revision: all.revision, startKey });
      paged.push(...page.kvs.map((kv) => kv.key));
      if (!page.more) break;
      startKey = `${page.kvs[page.kvs.length - 1]!.key}\0`;
    }
    expect(paged).toEqual(all.kvs.map((kv) => kv.key));
    await calls.settled();
    expect(calls.mismatches).toEqual([]);
    const bytes = all.kvs.reduce((n, kv) => n + kv.key.length + kv.value.length, 0);
    summary('etcd-edges range', {
      keys: SIZES.rangeKeys,
      mib: +(bytes / MiB).toFixed(1),
      streamWindows: +(bytes / (4 * MiB)).toFixed(1),
      loadMs,
      wholeMs,
      readsCompared: calls.figures.readsCompared,
    });
  });
});

describe('a burst of watch events', () => {
  it(`delivers ${SIZES.burst} events written at once, each once and in order, live and replayed, as etcd3 sees them`, async () => {
    const prefix = '/registry/edges/burst/';
    const { store, calls } = differentialStore(etcd.endpoint, ORACLE_SEED + 1);
    stores.push(store);
    const writer = open();
    const from = (await writer.currentRevision()) + 1;
    const live: StoreEvent[] = [];
    const errors: StoreError[] = [];
    const liveWatch = store.watch(prefix, { startRevision: from }, { onEvents: (e) => live.push(...e), onError: (err) => errors.push(err) });
    const started = Date.now();
    const revisions: number[] = [];
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < SIZES.burst; i = next++) revisions.push((await writer.create(keyOf(prefix, i), valueFor(i, 100))).modRevision);
    };
    await Promise.all(Array.from({ length: 256 }, worker));
    const writeMs = Date.now() - started;
    await until(() => live.length >= SIZES.burst || errors.length > 0, 60_000);
    const liveMs = Date.now() - started;
    const replayed: StoreEvent[] = [];
    const replay = store.watch(prefix, { startRevision: from }, { onEvents: (e) => replayed.push(...e), onError: (err) => errors.push(err) });
    await until(() => replayed.length >= SIZES.burst || errors.length > 0, 60_000);
    liveWatch.cancel();
    replay.cancel();
    expect(errors).toEqual([]);
    revisions.sort((a, b) => a - b);
    expect(live.map((e) => e.revision)).toEqual(revisions);
    expect(replayed.map((e) => e.revision)).toEqual(revisions);
    expect(new Set(live.map((e) => e.kv.key)).size).toBe(SIZES.burst);
    await calls.settled();
    expect(calls.mismatches).toEqual([]);
    summary('etcd-edges burst', { events: SIZES.burst, writeMs, liveMs, eventsComparedWithEtcd3: calls.figures.eventsCompared });
  });
});

describe('compaction while a watch is behind', () => {
  it('delivers a gap-free prefix of the history, then ends as compacted at the compaction revision', async () => {
    const prefix = '/registry/edges/behind/';
    const writer = open();
    const proxy = await startTcpProxy(etcd.endpoint);
    try {
      const store = open(proxy.endpoint);
      const from = (await writer.currentRevision()) + 1;
      // The watch's own request goes through; from then on its answers back up behind the proxy,
      // as behind a slow link: etcd fills the stream's window (4 MiB) and its send queue (128
      // answers), then sets the watcher aside and, as writes go on, leaves it behind the history.
      proxy.holdAnswersAfter(Buffer.from('/etcdserverpb.Watch/Watch'));
      const events: StoreEvent[] = [];
      let ended: StoreError | undefined;
      store.watch(prefix, { startRevision: from }, { onEvents: (e) => events.push(...e), onError: (err) => (ended = err) });
      await until(() => proxy.bytesUp > 0 && proxy.connections > 0, 5_000);
      await new Promise((resolve) => setTimeout(resolve, 200)); // etcd has the watch
      const size = 4096;
      const revisions: number[] = [];
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < SIZES.behind; i = next++) revisions.push((await writer.create(keyOf(prefix, i), valueFor(i, size))).modRevision);
      };
      await Promise.all(Array.from({ length: 32 }, worker));
      revisions.sort((a, b) => a - b);
      const compactAt = revisions[revisions.length - 10]!;
      await writer.compact(compactAt);
      await new Promise((resolve) => setTimeout(resolve, 300)); // etcd's watchers see the compaction (they sync every 100 ms)
      const deliveredWhileHeld = events.length;
      proxy.resume();
      await until(() => ended !== undefined, 30_000);
      // Never a gap: what arrived is the history from the start, in order, up to where it ended.
      expect(events.map((e) => e.revision)).toEqual(revisions.slice(0, events.length));
      expect(events.length).toBeLessThan(revisions.length - 10);
      expect(ended).toMatchObject({ code: 'compacted', revision: compactAt });
      summary('etcd-edges behind', {
        written: revisions.length,
        deliveredWhileHeld,
        deliveredBeforeCompactedEnd: events.length,
        compactedAt: revisions.length - 9,
      });
    } finally {
      await proxy.close();
    }
  });
});

describe('TLS with client certificates', () => {
  let dir: string;
  let tlsEtcd: EtcdInstance;
  let pem: { ca: string; cert: string; key: string };
  let otherCa: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-etcd-edges-tls-'));
    const pki = await createTestPki('keelson-etcd-edges-ca');
    const client = await pki.issueClient('CN=keelson-apiserver');
    otherCa = (await createTestPki('another-ca')).ca;
    pem = { ca: pki.ca, cert: client.cert, key: client.key };
    const files = { ca: path.join(dir, 'ca.pem'), cert: path.join(dir, 'server.pem'), key: path.join(dir, 'server-key.pem') };
    await writeFile(files.ca, pki.ca);
    await writeFile(files.cert, pki.server.cert);
    await writeFile(files.key, pki.server.key);
    tlsEtcd = await startEtcd({
      tls: { certFile: files.cert, keyFile: files.key, caFile: files.ca, clientCert: client.cert, clientKey: client.key, ca: pki.ca },
    });
  });
  afterAll(async () => {
    await tlsEtcd?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('carries writes, a large value, a large range and a burst of watch events as etcd3 does', async () => {
    const { store, calls } = differentialStore(tlsEtcd.endpoint, ORACLE_SEED + 2, pem);
    stores.push(store);
    const prefix = '/registry/edges/tls/';
    const from = (await store.currentRevision()) + 1;
    const events: StoreEvent[] = [];
    const watch = store.watch(prefix, { startRevision: from }, { onEvents: (e) => events.push(...e), onError: () => undefined });
    const a = await store.create(`${prefix}a`, Buffer.from('1'));
    await store.update(`${prefix}a`, Buffer.alloc(1_400_000, 'b'), a.modRevision);
    const keys = FULL ? 20_000 : 5_000;
    await load(tlsEtcd.endpoint, `${prefix}many/`, keys, (i) => valueFor(i, 300), pem);
    const list = await store.list(prefix);
    expect(list.count).toBe(keys + 1);
    await store.delete(`${prefix}a`);
    await until(() => events.length >= keys + 3, 30_000);
    watch.cancel();
    expect(events).toHaveLength(keys + 3);
    await calls.settled();
    expect(calls.mismatches).toEqual([]);
    summary('etcd-edges tls', { keys, events: events.length, readsCompared: calls.figures.readsCompared, eventsCompared: calls.figures.eventsCompared });
  });

  it.each([
    [
      'without its client certificate',
      () => ({ ca: pem.ca }),
      'etcd is unavailable: TLS with etcd failed: sslv3 alert bad certificate (ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE)',
    ],
    [
      'that does not trust the server’s CA',
      () => ({ ca: otherCa, cert: pem.cert, key: pem.key }),
      'etcd is unavailable: unable to verify the first certificate',
    ],
  ])('fails a client %s with an unavailable store error naming the TLS failure', async (_what, tls, message) => {
    const store = createEtcdStore({ endpoints: [tlsEtcd.endpoint], tls: tls(), requestTimeoutMs: 5_000 });
    stores.push(store);
    const err = await failure(store.get('/registry/edges/tls/a'));
    expect(err).toBeInstanceOf(StoreError);
    expect(err).toMatchObject({ code: 'unavailable', message });
  });
});
