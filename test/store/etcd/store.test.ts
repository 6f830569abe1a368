/**
 * etcd-only behaviour beyond the conformance suite: the compaction bookkeeping key shared with
 * upstream, compactions done by other tools, key prefixes, and how the store's KV client picks
 * and leaves endpoints.
 */
import net from 'node:net';
import { Etcd3 } from 'etcd3';
import { createStore, StoreError, type Store } from '../../../src/store';
import { COMPACT_REV_KEY, createEtcdStore } from '../../../src/store/etcd/store';
import { grpcTimeout } from '../../../src/store/etcd/client';
import { startEtcd, type EtcdInstance } from '../../support/etcd';
import { WatchRecorder } from '../watch-recorder';

const enc = (text: string): Uint8Array => Buffer.from(text);

/**
 * A TCP proxy to `target` that can go silent: frozen, it keeps every connection open and
 * forwards nothing either way (a member behind a partition, not a crashed one).
 */
async function freezableProxy(target: string): Promise<{ endpoint: string; freeze(): void; close(): void }> {
  const { hostname, port } = new URL(target);
  let frozen = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on('data', (chunk) => frozen || to.write(chunk));
      from.on('error', () => to.destroy());
      from.on('close', () => frozen || to.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    freeze: () => {
      frozen = true;
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

describe('etcd store specifics', () => {
  let etcd: EtcdInstance;
  let raw: Etcd3;
  const stores: Store[] = [];
  const open = (prefix?: string) => {
    const store = createStore({ kind: 'etcd', endpoints: [etcd.endpoint], prefix });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    etcd = await startEtcd();
    raw = new Etcd3({ hosts: etcd.endpoint });
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    raw.close();
    await etcd.stop();
  });

  test('records the compacted revision in compact_rev_key at the etcd root, as upstream does', async () => {
    const store = open('/keelson-a');
    const kv = await store.create('/registry/x', enc('x'));
    await store.compact(kv.modRevision);
    expect(await raw.get(COMPACT_REV_KEY).string()).toBe(String(kv.modRevision));
    expect(await open('/keelson-b').compactedRevision()).toBe(kv.modRevision);
  });

  test('racing compactions from several clients never move the compacted revision backwards', async () => {
    const clients = [open(), open(), open()];
    const revisions: number[] = [];
    for (let i = 0; i < 6; i++) revisions.push((await clients[0].create(`/registry/race/${i}`, enc('x'))).modRevision);
    await Promise.all(revisions.map((revision, i) => clients[i % clients.length].compact(revision)));
    const highest = Math.max(...revisions);
    for (const client of clients) expect(await client.compactedRevision()).toBe(highest);
  });

  test("a compaction done outside Keelson (etcdctl) still yields compacted errors with etcd's revision", async () => {
    const store = open();
    const first = await store.create('/registry/outside/a', enc('1'));
    const later = await store.update('/registry/outside/a', enc('2'), first.modRevision);
    await raw.kv.compact({ revision: later.modRevision, physical: true }); // compact_rev_key untouched
    expect(await store.compactedRevision()).toBeLessThan(later.modRevision);

    expect((await store.get(first.key, { revision: first.modRevision }).catch((err: unknown) => err)) as StoreError).toMatchObject({
      code: 'compacted',
    });
    // The watch passes the store's own check (compact_rev_key is older) and etcd cancels it
    // with its compact revision, which only the raw watch stream reports.
    const recorder = new WatchRecorder();
    store.watch('/registry/outside/', { startRevision: first.modRevision }, recorder.handlers);
    expect(await recorder.untilError()).toMatchObject({ code: 'compacted', revision: later.modRevision });
    expect(recorder.events).toEqual([]);
  });

  test('a store prefix namespaces every key, list and watch', async () => {
    const a = open('/tenant-a');
    const b = open('/tenant-b');
    const recorder = new WatchRecorder();
    const watch = b.watch('/registry/', { startRevision: (await b.currentRevision()) + 1 }, recorder.handlers);
    await a.create('/registry/pods/p', enc('a'));
    const mine = await b.create('/registry/pods/p', enc('b'));
    await recorder.untilRevision(mine.modRevision);
    watch.cancel();
    expect(recorder.events.map((e) => [e.kv.key, Buffer.from(e.kv.value).toString()])).toEqual([['/registry/pods/p', 'b']]);
    expect((await a.list('/registry/')).kvs.map((kv) => Buffer.from(kv.value).toString())).toEqual(['a']);
    expect(await raw.get('/tenant-a/registry/pods/p').string()).toBe('a');
  });

  describe("the store's KV client and its endpoints", () => {
    /** A port that refuses connections (bound, then closed). */
    async function refusedEndpoint(): Promise<string> {
      const server = net.createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as net.AddressInfo;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return `http://127.0.0.1:${port}`;
    }

    test('an endpoint that refuses connections is passed over: nothing was sent, the call goes to the next', async () => {
      const store = createStore({ kind: 'etcd', endpoints: [await refusedEndpoint(), etcd.endpoint] });
      stores.push(store);
      const kv = await store.create('/registry/failover/a', enc('a'));
      expect(Buffer.from((await store.get(kv.key)).kv!.value).toString()).toBe('a');
    });

    test('only refusing endpoints: unavailable, once each was tried', async () => {
      const store = createStore({ kind: 'etcd', endpoints: [await refusedEndpoint(), await refusedEndpoint()] });
      stores.push(store);
      expect((await store.get('/registry/nowhere').catch((err: unknown) => err)) as StoreError).toMatchObject({ code: 'unavailable' });
    });

    test('a member that accepts but never answers fails the call at its deadline; the next call dials the next endpoint', async () => {
      const sockets = new Set<net.Socket>();
      const silent = net.createServer((socket) => sockets.add(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const { port } = silent.address() as net.AddressInfo;
      try {
        const store = createEtcdStore({ endpoints: [`http://127.0.0.1:${port}`, etcd.endpoint], requestTimeoutMs: 300 });
        stores.push(store);
        const started = Date.now();
        expect((await store.get('/registry/silent').catch((err: unknown) => err)) as StoreError).toMatchObject({ code: 'unavailable' });
        expect(Date.now() - started).toBeGreaterThanOrEqual(250);
        const kv = await store.create('/registry/silent/a', enc('a'));
        expect(kv.modRevision).toBeGreaterThan(0);
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => silent.close(() => resolve()));
      }
    });

    test('a watch on a member gone silent (connection open, nothing answered) fails at an unanswered keepalive ping; calls move on', async () => {
      const proxy = await freezableProxy(etcd.endpoint);
      try {
        const store = createEtcdStore({ endpoints: [proxy.endpoint, etcd.endpoint], keepaliveMs: 150, keepaliveTimeoutMs: 1500 });
        stores.push(store);
        const a = await store.create('/registry/keepalive/a', enc('a'));
        let seen: () => void = () => {};
        const firstEvent = new Promise<void>((resolve) => (seen = resolve));
        // From the next revision, not from "now": the watch may reach etcd after b is written.
        const from = { startRevision: a.modRevision + 1 };
        const failed = new Promise<StoreError>((resolve) => store.watch('/registry/keepalive/', from, { onEvents: () => seen(), onError: resolve }));
        await store.create('/registry/keepalive/b', enc('b'));
        // A watch that failed before the freeze (a ping missed on a loaded machine) fails here, not by hanging.
        expect(await Promise.race([firstEvent.then(() => 'event'), failed.then((err) => `failed early: ${err.message}`)])).toBe('event');
        proxy.freeze();
        const err = await failed;
        expect(err).toMatchObject({ code: 'unavailable' });
        expect(err.message).toContain('keepalive ping');
        // The session through the silent member is gone: the next call dials the next endpoint.
        expect((await store.create('/registry/keepalive/c', enc('c'))).modRevision).toBeGreaterThan(0);
      } finally {
        proxy.close();
      }
    });

    test('sends its deadline as gRPC spells it: at most 8 digits and a unit', () => {
      expect(grpcTimeout(30_000)).toBe('30000m');
      expect(grpcTimeout(99_999_999)).toBe('99999999m');
      expect(grpcTimeout(100_000_000)).toBe('100000S');
      expect(grpcTimeout(1e15)).toBe('99999999S');
    });

    test("etcd's own errors keep their meaning: a future revision, a request too large", async () => {
      const store = open();
      const now = await store.currentRevision();
      expect((await store.get('/registry/x', { revision: now + 1000 }).catch((err: unknown) => err)) as StoreError).toMatchObject({
        code: 'future-revision',
      });
      // etcd's default request limit is 1.5 MiB: InvalidArgument, which is not a store condition.
      const tooLarge = await store.create('/registry/huge', Buffer.alloc(1800 * 1024, 120)).catch((err: unknown) => err);
      expect(tooLarge).not.toBeInstanceOf(StoreError);
      expect(String((tooLarge as Error).message)).toContain('request is too large');
    });
  });
});
