/**
 * One conformance suite for every Store backend: the same operations, revisions, errors and
 * watch guarantees on real etcd and on the embedded SQLite store.
 */
import { StoreError, type KeyValue, type Store } from '../../src/store';
import { embeddedBackend, etcdBackend, type BackendUnderTest } from './backends';
import { etcdDifferentialBackend } from './etcd/oracle/backend';
import { checkRandomHistory } from './random-history';
import { dec, enc, storeError, yieldTurn } from './store-test-helpers';
import { WatchRecorder } from './watch-recorder';
import { eventually } from '../support/eventually';

describe.each<[string, () => BackendUnderTest]>([
  ['etcd', etcdBackend],
  // Every call through the store's own client and through etcd3 on the same etcd, compared.
  ['etcd, own client checked against etcd3', etcdDifferentialBackend],
  ['embedded', () => embeddedBackend()],
  ['embedded in memory', () => embeddedBackend(true)],
])('%s store conformance', (_name, makeBackend) => {
  const backend = makeBackend();
  let store: Store;
  let prefixCount = 0;
  /** A fresh key prefix per test, so tests sharing the store never see each other's keys. */
  const freshPrefix = () => `/registry/conformance-${++prefixCount}/`;

  beforeAll(async () => {
    store = await backend.open();
  });
  afterEach(() => backend.check?.());
  afterAll(() => backend.teardown());

  test(`reports its kind (${backend.name})`, () => {
    expect(store.kind).toBe(backend.name);
  });

  test('get returns the latest value and the value at an earlier revision', async () => {
    const key = `${freshPrefix()}a`;
    await store.create(`${key}-earlier`, enc('so that revision 0, meaning "latest", is not in play'));
    const created = await store.create(key, enc('v1'));
    expect(created).toMatchObject({ key, createRevision: created.modRevision });
    expect(dec(created.value)).toBe('v1');
    const updated = await store.update(key, enc('v2'), created.modRevision);
    expect(updated).toMatchObject({ key, createRevision: created.modRevision });
    expect(updated.modRevision).toBeGreaterThan(created.modRevision);

    const latest = await store.get(key);
    expect(latest.kv).toMatchObject({ key, createRevision: created.modRevision, modRevision: updated.modRevision });
    expect(dec(latest.kv?.value)).toBe('v2');
    expect(latest.revision).toBeGreaterThanOrEqual(updated.modRevision);

    const atCreate = await store.get(key, { revision: created.modRevision });
    expect(atCreate.revision).toBe(created.modRevision);
    expect(dec(atCreate.kv?.value)).toBe('v1');
    expect((await store.get(key, { revision: created.modRevision - 1 })).kv).toBeUndefined();
    expect((await store.get(`${key}-missing`)).kv).toBeUndefined();
  });

  test('currentRevision is the revision of the latest write', async () => {
    const before = await store.currentRevision();
    const kv = await store.create(`${freshPrefix()}r`, enc('x'));
    expect(kv.modRevision).toBeGreaterThan(before);
    expect(await store.currentRevision()).toBe(kv.modRevision);
  });

  test('create-if-absent fails with exists, carrying the current value', async () => {
    const key = `${freshPrefix()}a`;
    const first = await store.create(key, enc('one'));
    const err = await storeError(store.create(key, enc('two')));
    expect(err.code).toBe('exists');
    expect(err.key).toBe(key);
    expect(err.current).toMatchObject({ key, modRevision: first.modRevision, createRevision: first.createRevision });
    expect(dec(err.current?.value)).toBe('one');
    expect(dec((await store.get(key)).kv?.value)).toBe('one');
  });

  test('guarded update: conflict carries the current value, absent keys are not-found', async () => {
    const prefix = freshPrefix();
    const key = `${prefix}a`;
    const created = await store.create(key, enc('v1'));
    const updated = await store.update(key, enc('v2'), created.modRevision);

    const conflict = await storeError(store.update(key, enc('stale'), created.modRevision));
    expect(conflict.code).toBe('conflict');
    expect(conflict.current).toMatchObject({ key, modRevision: updated.modRevision });
    expect(dec(conflict.current?.value)).toBe('v2');

    expect((await storeError(store.update(`${prefix}missing`, enc('x'), 5))).code).toBe('not-found');
    // etcd compares an absent key's mod revision as 0: a guard of 0 must not create it.
    expect((await storeError(store.update(`${prefix}missing`, enc('x'), 0))).code).toBe('not-found');
    expect((await store.get(`${prefix}missing`)).kv).toBeUndefined();
    expect((await storeError(store.update(key, enc('x'), 0))).code).toBe('conflict');
  });

  test('delete: guarded and unguarded, conflict, not-found, and re-creation', async () => {
    const prefix = freshPrefix();
    const key = `${prefix}a`;
    const created = await store.create(key, enc('v1'));
    const updated = await store.update(key, enc('v2'), created.modRevision);

    const conflict = await storeError(store.delete(key, created.modRevision));
    expect(conflict.code).toBe('conflict');
    expect(conflict.current?.modRevision).toBe(updated.modRevision);

    const deleted = await store.delete(key, updated.modRevision);
    expect(deleted.prev).toMatchObject({ key, modRevision: updated.modRevision, createRevision: created.modRevision });
    expect(dec(deleted.prev.value)).toBe('v2');
    expect(deleted.revision).toBeGreaterThan(updated.modRevision);
    expect((await store.get(key)).kv).toBeUndefined();
    expect((await storeError(store.delete(key))).code).toBe('not-found');
    expect((await storeError(store.delete(key, updated.modRevision))).code).toBe('not-found');
    expect((await storeError(store.update(key, enc('x'), updated.modRevision))).code).toBe('not-found');

    const recreated = await store.create(key, enc('v3'));
    expect(recreated.createRevision).toBeGreaterThan(deleted.revision);
    const plain = await store.delete(key);
    expect(dec(plain.prev.value)).toBe('v3');
  });

  test('list pages with limit and startKey all at the first page revision, with count and more', async () => {
    const prefix = freshPrefix();
    const kvs: Record<string, KeyValue> = {};
    for (const name of ['a', 'b', 'c', 'd', 'e']) kvs[name] = await store.create(prefix + name, enc(name));
    // Neighbours that share the prefix's characters but are not under it.
    await store.create(prefix.slice(0, -1), enc('parent'));
    await store.create(`${prefix.slice(0, -1)}0`, enc('sibling'));

    const page1 = await store.list(prefix, { limit: 2 });
    expect(page1.kvs.map((kv) => kv.key)).toEqual([`${prefix}a`, `${prefix}b`]);
    expect(page1).toMatchObject({ more: true, count: 5 });
    expect(page1.kvs[0]).toMatchObject({ createRevision: kvs.a.modRevision, modRevision: kvs.a.modRevision });

    // Writes after the first page must not show in later pages read at its revision.
    await store.create(`${prefix}bb`, enc('bb'));
    await store.delete(`${prefix}d`);
    await store.update(`${prefix}c`, enc('c2'), kvs.c.modRevision);

    const page2 = await store.list(prefix, { limit: 2, revision: page1.revision, startKey: `${page1.kvs[1].key}\0` });
    expect(page2.revision).toBe(page1.revision);
    expect(page2.kvs.map((kv) => [kv.key, dec(kv.value)])).toEqual([
      [`${prefix}c`, 'c'],
      [`${prefix}d`, 'd'],
    ]);
    expect(page2).toMatchObject({ more: true, count: 3 });
    const page3 = await store.list(prefix, { limit: 2, revision: page1.revision, startKey: `${prefix}d\0` });
    expect(page3.kvs.map((kv) => kv.key)).toEqual([`${prefix}e`]);
    expect(page3).toMatchObject({ more: false, count: 1 });

    const now = await store.list(prefix);
    expect(now.kvs.map((kv) => [kv.key, dec(kv.value)])).toEqual([
      [`${prefix}a`, 'a'],
      [`${prefix}b`, 'b'],
      [`${prefix}bb`, 'bb'],
      [`${prefix}c`, 'c2'],
      [`${prefix}e`, 'e'],
    ]);
    expect(now).toMatchObject({ more: false, count: 5 });
    expect(now.revision).toBe(await store.currentRevision());
    expect(await store.count(prefix)).toBe(5);
    expect(await store.count(`${prefix}b`)).toBe(2);
    expect(await store.count(`${prefix}zzz`)).toBe(0);
    expect((await store.list(`${prefix}zzz`)).kvs).toEqual([]);
  });

  test('reads at a revision newer than the current one fail with future-revision', async () => {
    const key = `${freshPrefix()}a`;
    await store.create(key, enc('x'));
    const current = await store.currentRevision();
    const getErr = await storeError(store.get(key, { revision: current + 1000 }));
    expect(getErr.code).toBe('future-revision');
    expect(getErr.revision).toBeGreaterThanOrEqual(current);
    expect((await storeError(store.list(key, { revision: current + 1000 }))).code).toBe('future-revision');
    expect((await storeError(store.compact(current + 1000))).code).toBe('future-revision');
  });

  test('sizeBytes reports the bytes on disk, which grow as values are written', async () => {
    const before = await store.sizeBytes();
    expect(before).toBeGreaterThan(0);
    const prefix = freshPrefix();
    const big = enc('x'.repeat(64 * 1024));
    for (let i = 0; i < 32; i++) await store.create(`${prefix}${i}`, big);
    // etcd reports the size its backend has committed (every 100 ms by default).
    await eventually(async () => (await store.sizeBytes()) > before, { what: 'the size to grow', intervalMs: 100 });
  });

  test('compaction: reads and watches below it fail with compacted, reads at it still work', async () => {
    const prefix = freshPrefix();
    const a1 = await store.create(`${prefix}a`, enc('1'));
    const a2 = await store.update(`${prefix}a`, enc('2'), a1.modRevision);
    await store.create(`${prefix}b`, enc('b'));
    const bDeleted = await store.delete(`${prefix}b`);
    const mid = bDeleted.revision;
    const a3 = await store.update(`${prefix}a`, enc('3'), a2.modRevision);

    await store.compact(mid);
    expect(await store.compactedRevision()).toBe(mid);

    const getErr = await storeError(store.get(`${prefix}a`, { revision: a1.modRevision }));
    expect(getErr).toMatchObject({ code: 'compacted', revision: mid });
    expect((await storeError(store.list(prefix, { revision: mid - 1 }))).code).toBe('compacted');
    expect(dec((await store.get(`${prefix}a`, { revision: mid })).kv?.value)).toBe('2');
    const atMid = await store.list(prefix, { revision: mid });
    expect(atMid.kvs.map((kv) => [kv.key, dec(kv.value), kv.modRevision])).toEqual([[`${prefix}a`, '2', a2.modRevision]]);
    expect(dec((await store.get(`${prefix}a`)).kv?.value)).toBe('3');

    for (const startRevision of [a1.modRevision, mid]) {
      const recorder = new WatchRecorder();
      store.watch(prefix, { startRevision }, recorder.handlers);
      const err = await recorder.untilError();
      expect(err).toMatchObject({ code: 'compacted', revision: mid });
      expect(recorder.events).toEqual([]);
    }
    const after = new WatchRecorder();
    const watch = store.watch(prefix, { startRevision: mid + 1 }, after.handlers);
    await after.untilRevision(a3.modRevision);
    expect(after.events.map((e) => [e.type, e.revision, dec(e.kv.value), dec(e.prevKv?.value)])).toEqual([['put', a3.modRevision, '3', '2']]);
    watch.cancel();

    await store.compact(mid - 1); // at or below the compacted revision: a no-op
    await store.compact(mid);
    expect(await store.compactedRevision()).toBe(mid);
  });

  test('watch replays from an old revision, then goes live: in order, once each, with prevKv', async () => {
    const prefix = freshPrefix();
    const created = await store.create(`${prefix}k`, enc('v1'));
    const updated = await store.update(`${prefix}k`, enc('v2'), created.modRevision);
    await store.create(`${prefix.slice(0, -1)}0`, enc('not under the prefix'));
    const other = await store.create(`${prefix}j`, enc('j'));
    const deleted = await store.delete(`${prefix}k`, updated.modRevision);

    const recorder = new WatchRecorder();
    const watch = store.watch(prefix, { startRevision: created.modRevision }, recorder.handlers);
    await recorder.untilRevision(deleted.revision);
    const live = await store.create(`${prefix}live`, enc('x'));
    await recorder.untilRevision(live.modRevision);
    watch.cancel();

    expect(recorder.events.map((e) => [e.type, e.revision, e.kv.key, dec(e.kv.value)])).toEqual([
      ['put', created.modRevision, `${prefix}k`, 'v1'],
      ['put', updated.modRevision, `${prefix}k`, 'v2'],
      ['put', other.modRevision, `${prefix}j`, 'j'],
      ['delete', deleted.revision, `${prefix}k`, ''],
      ['put', live.modRevision, `${prefix}live`, 'x'],
    ]);
    const [create, update, , del] = recorder.events;
    expect(create.prevKv).toBeUndefined();
    expect(create.kv).toMatchObject({ createRevision: created.modRevision, modRevision: created.modRevision });
    expect(update.prevKv).toMatchObject({ key: `${prefix}k`, modRevision: created.modRevision, createRevision: created.modRevision });
    expect(dec(update.prevKv?.value)).toBe('v1');
    expect(del.kv.modRevision).toBe(deleted.revision);
    expect(del.prevKv).toMatchObject({ modRevision: updated.modRevision, createRevision: created.modRevision });
    expect(dec(del.prevKv?.value)).toBe('v2');
    expect(recorder.error).toBeUndefined();
  });

  test('a watch asked for no previous values delivers the same events (etcd then attaches none)', async () => {
    const prefix = freshPrefix();
    const created = await store.create(`${prefix}k`, enc('v1'));
    const updated = await store.update(`${prefix}k`, enc('v2'), created.modRevision);
    const deleted = await store.delete(`${prefix}k`, updated.modRevision);
    const recorder = new WatchRecorder();
    const watch = store.watch(prefix, { startRevision: created.modRevision, prevKv: false }, recorder.handlers);
    await recorder.untilRevision(deleted.revision);
    watch.cancel();
    expect(recorder.events.map((e) => [e.type, e.revision, dec(e.kv.value)])).toEqual([
      ['put', created.modRevision, 'v1'],
      ['put', updated.modRevision, 'v2'],
      ['delete', deleted.revision, ''],
    ]);
    if (backend.name === 'etcd') expect(recorder.events.map((e) => e.prevKv)).toEqual([undefined, undefined, undefined]);
    expect(recorder.error).toBeUndefined();
  });

  test('a watch without a start revision sees only writes after it starts', async () => {
    const prefix = freshPrefix();
    const before = await store.create(`${prefix}before`, enc('x'));
    const recorder = new WatchRecorder();
    const watch = store.watch(prefix, {}, recorder.handlers);
    // When the server has registered the watch is not observable, so probe until one shows up.
    const probes: number[] = [];
    for (let i = 0; recorder.events.length === 0 && i < 5000; i++) {
      probes.push((await store.create(`${prefix}probe-${i}`, enc('p'))).modRevision);
      await yieldTurn();
    }
    await recorder.untilRevision(probes[probes.length - 1]);
    watch.cancel();
    const seen = recorder.events.map((e) => e.revision);
    expect(seen).not.toContain(before.modRevision);
    expect(seen).toEqual(probes.slice(probes.indexOf(seen[0])));
  });

  test('cancel stops delivery and is idempotent', async () => {
    const prefix = freshPrefix();
    const startRevision = (await store.currentRevision()) + 1;
    const canceled = new WatchRecorder();
    const witness = new WatchRecorder();
    const watch = store.watch(prefix, { startRevision }, canceled.handlers);
    store.watch(prefix, { startRevision }, witness.handlers);
    const first = await store.create(`${prefix}1`, enc('1'));
    await canceled.untilRevision(first.modRevision);
    watch.cancel();
    watch.cancel();
    await store.create(`${prefix}2`, enc('2'));
    const last = await store.create(`${prefix}3`, enc('3'));
    await witness.untilRevision(last.modRevision);
    expect(canceled.events.map((e) => e.revision)).toEqual([first.modRevision]);
    expect(canceled.error).toBeUndefined();
  });

  test('of 20 concurrent guarded updates at one revision exactly one wins, the rest conflict', async () => {
    const key = `${freshPrefix()}contended`;
    const base = await store.create(key, enc('base'));
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.update(key, enc(`writer-${i}`), base.modRevision)));
    const winners = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(winners).toHaveLength(1);
    const [winner] = winners;
    for (const result of results) {
      if (result.status === 'fulfilled') continue;
      expect(result.reason).toBeInstanceOf(StoreError);
      expect(result.reason).toMatchObject({ code: 'conflict', current: { modRevision: winner.modRevision } });
      expect(dec((result.reason as StoreError).current?.value)).toBe(dec(winner.value));
    }
    expect((await store.get(key)).kv?.modRevision).toBe(winner.modRevision);
  });

  test('of 20 concurrent creates of one key exactly one wins, the rest get exists', async () => {
    const key = `${freshPrefix()}contended`;
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.create(key, enc(`c-${i}`))));
    const winners = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(winners).toHaveLength(1);
    const losers = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as StoreError] : []));
    expect(losers.every((err) => err.code === 'exists' && err.current?.modRevision === winners[0].modRevision)).toBe(true);
  });

  test('a watch started at an old revision while writes race sees every event once, in order', async () => {
    const prefix = freshPrefix();
    const startRevision = (await store.currentRevision()) + 1;
    const written: number[] = [];
    const backlog = Array.from({ length: 300 }, (_, i) => i);
    for (let i = 0; i < backlog.length; i += 30) {
      const batch = await Promise.all(backlog.slice(i, i + 30).map((n) => store.create(`${prefix}backlog-${n}`, enc(`${n}`))));
      written.push(...batch.map((kv) => kv.modRevision));
    }

    const recorder = new WatchRecorder();
    const watch = store.watch(prefix, { startRevision }, recorder.handlers);
    const lastBacklog = written[written.length - 1];
    const caughtUpBeforeWrites = recorder.lastRevision() >= lastBacklog;
    let writesDuringReplay = 0;
    const writer = async (id: number) => {
      for (let i = 0; i < 40; i++) {
        if (recorder.events.length > 0 && recorder.lastRevision() < lastBacklog) writesDuringReplay++;
        const kv = await store.create(`${prefix}racer-${id}-${i}`, enc('r'));
        written.push(kv.modRevision);
        if (i % 5 === 0) written.push((await store.update(kv.key, enc('r2'), kv.modRevision)).modRevision);
        await yieldTurn(); // let the replay (and etcd's stream) run between writes
      }
    };
    await Promise.all([0, 1, 2, 3].map(writer));
    const expected = [...written].sort((a, b) => a - b);
    await recorder.untilRevision(expected[expected.length - 1]);
    watch.cancel();

    expect(caughtUpBeforeWrites).toBe(false);
    // etcd replays inside the server; the embedded replay is observable, and must have raced.
    if (backend.name === 'embedded') expect(writesDuringReplay).toBeGreaterThan(0);
    expect(recorder.events.map((e) => e.revision)).toEqual(expected);
    expect(recorder.error).toBeUndefined();
  });

  test('a second client sees the same history: watches, reads, guards', async () => {
    const peer = await backend.peer();
    const prefix = freshPrefix();
    const recorder = new WatchRecorder();
    const watch = peer.watch(prefix, { startRevision: (await store.currentRevision()) + 1 }, recorder.handlers);
    const created = await store.create(`${prefix}a`, enc('from the first client'));
    await recorder.untilRevision(created.modRevision);
    watch.cancel();
    expect(recorder.events.map((e) => [e.kv.key, dec(e.kv.value)])).toEqual([[`${prefix}a`, 'from the first client']]);
    expect((await peer.get(`${prefix}a`)).kv?.modRevision).toBe(created.modRevision);
    expect(await peer.currentRevision()).toBeGreaterThanOrEqual(created.modRevision);
    const updated = await peer.update(`${prefix}a`, enc('from the peer'), created.modRevision);
    expect((await storeError(store.update(`${prefix}a`, enc('stale'), created.modRevision))).current?.modRevision).toBe(updated.modRevision);
  });

  test('compactedRevision agrees across clients', async () => {
    const peer = await backend.peer();
    const kv = await store.create(`${freshPrefix()}a`, enc('x'));
    await peer.compact(kv.modRevision);
    expect(await store.compactedRevision()).toBe(kv.modRevision);
    expect(await peer.compactedRevision()).toBe(kv.modRevision);
    expect((await storeError(store.get(kv.key, { revision: kv.modRevision - 1 }))).code).toBe('compacted');
  });

  test('random histories read back exactly at every revision, before and after compaction', async () => {
    await checkRandomHistory(store, freshPrefix(), 20240601);
  });

  test('a lost connection or closed store fails operations and watches with unavailable', async () => {
    const { store: fragile, cut, cleanup } = await backend.breakable();
    try {
      const kv = await fragile.create('/registry/fragile/a', enc('x'));
      const recorder = new WatchRecorder();
      fragile.watch('/registry/fragile/', { startRevision: kv.modRevision }, recorder.handlers);
      await recorder.untilRevision(kv.modRevision);
      await cut();
      expect((await recorder.untilError()).code).toBe('unavailable');
      expect((await storeError(fragile.get(kv.key))).code).toBe('unavailable');
      expect((await storeError(fragile.create('/registry/fragile/b', enc('y')))).code).toBe('unavailable');
    } finally {
      await cleanup();
    }
  });
});
