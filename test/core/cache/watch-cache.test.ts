/**
 * The watch cache's own life: loading (reads fall back to the store, watches wait), a lost store
 * watch (resumed from the next revision, watchers kept), a watch that fell behind compaction
 * (relist, watchers ended, old versions 410), and the immutability that makes sharing safe.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCore, type ApiObject, type Core } from '../../../src/core';
import { encodeOnce } from '../../../src/core/cache';
import { encodeForStorage } from '../../../src/core/storage/object-codec';
import { createStore, StoreError, type Store, type WatchHandlers } from '../../../src/store';
import { ManualClock } from '../../../src/clock';
import { cm, createConfigMap, createNamespace, ctx, flush, naming, namesOf, Recorder, rvOf } from '../registry/core-backends';

/** A store whose watches can be failed on demand and whose first list and next revision read can be held back. */
function controllable(store: Store) {
  const watches: Array<{ handlers: WatchHandlers; cancel(): void }> = [];
  let release: () => void = () => undefined;
  let gate: Promise<void> | undefined;
  let revisionGate: Promise<void> | undefined;
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'watch') {
        return (prefix: string, options: Parameters<Store['watch']>[1], handlers: WatchHandlers) => {
          const inner = target.watch(prefix, options, handlers);
          watches.push({ handlers, cancel: () => inner.cancel() });
          return inner;
        };
      }
      if (prop === 'currentRevision') {
        return async () => {
          const wait = revisionGate;
          revisionGate = undefined;
          if (wait) await wait;
          return target.currentRevision();
        };
      }
      if (prop === 'list') {
        return async (...args: Parameters<Store['list']>) => {
          if (gate && args[0] === '/registry/') {
            const wait = gate;
            gate = undefined;
            await wait;
          }
          return target.list(...args);
        };
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    store: proxy,
    holdFirstList() {
      gate = new Promise<void>((resolve) => (release = resolve));
    },
    release: () => release(),
    /** The next revision read answers only once the returned function is called. */
    holdNextRevision(): () => void {
      let open: () => void = () => undefined;
      revisionGate = new Promise<void>((resolve) => (open = resolve));
      return () => open();
    },
    failWatch(err: StoreError) {
      const w = watches[watches.length - 1]!;
      w.cancel();
      w.handlers.onError(err);
    },
  };
}

describe('watch cache lifecycle (embedded store)', () => {
  let dir: string;
  let raw: Store;
  let core: Core;
  let clock: ManualClock;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-wc-'));
    raw = createStore({ kind: 'embedded', dataDir: dir });
    clock = new ManualClock();
  });
  afterEach(async () => {
    await core.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('serves reads from the store while loading, and holds watches until loaded', async () => {
    const obj: ApiObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default', uid: 'u1' } };
    await raw.create('/registry/configmaps/default/x', encodeForStorage(obj));
    const c = controllable(raw);
    c.holdFirstList();
    core = createCore({ store: c.store, naming, clock, compactionIntervalMs: 0 });
    expect(namesOf((await core.list(cm('default'), {}, ctx)).items)).toEqual(['x']);
    expect((await core.get(cm('default', 'x'), { resourceVersion: '0' }, ctx)).metadata!.uid).toBe('u1');
    let started = false;
    const pending = core.watch(cm('default'), {}, ctx).then((s) => {
      started = true;
      return s;
    });
    await flush();
    expect(started).toBe(false);
    c.release();
    const w = new Recorder(await pending);
    await w.waitFor(1);
    expect(w.summary()).toEqual(['ADDED x']);
    w.stream.close();
  });

  it('resumes a lost store watch from the next revision, keeping its watchers and missing nothing; the loss is reported', async () => {
    const c = controllable(raw);
    const reported: string[] = [];
    core = createCore({
      store: c.store,
      naming,
      clock,
      compactionIntervalMs: 0,
      watchCache: { retryMs: 500 },
      onBackgroundError: (what, err) => reported.push(`${what}: ${(err as Error).message}`),
    });
    await core.ready();
    const start = await createConfigMap(core, 'default', 'start');
    const w = new Recorder(await core.watch(cm('default'), { resourceVersion: start.metadata!.resourceVersion }, ctx));
    c.failWatch(new StoreError('unavailable', 'connection lost'));
    // Written behind the cache's back (a consistent read through the core would wait for it to recover).
    const put = (name: string) =>
      raw.create(`/registry/configmaps/default/${name}`, encodeForStorage({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } }));
    await put('a');
    await put('b');
    await flush();
    expect(w.events).toHaveLength(0);
    clock.advance(500);
    await w.waitFor(2);
    await createConfigMap(core, 'default', 'c');
    await w.waitFor(3);
    expect(w.summary()).toEqual(['ADDED a', 'ADDED b', 'ADDED c']);
    expect(w.ended).toBe(false);
    expect(reported).toEqual([`watch cache: the store's watch ended at revision ${rvOf(start)}: connection lost`]);
    w.stream.close();
  });

  it('a store probe that timed out after the cache resumed does not end its watches or refuse new ones', async () => {
    const c = controllable(raw);
    core = createCore({ store: c.store, naming, clock, compactionIntervalMs: 0, watchCache: { retryMs: 500 } });
    await core.ready();
    const start = await createConfigMap(core, 'default', 'start');
    const w = new Recorder(await core.watch(cm('default'), { resourceVersion: start.metadata!.resourceVersion }, ctx));
    // The probe made when the watch broke hangs (a member mid-election); the retry's probe 500 ms
    // later is answered and the cache follows the store again.
    const answerFirstProbe = c.holdNextRevision();
    c.failWatch(new StoreError('unavailable', 'connection lost'));
    await flush();
    clock.advance(500);
    await flush();
    await createConfigMap(core, 'default', 'a');
    await w.waitFor(1);
    // The first probe's 2 s run out: it must not count against a store the cache follows again.
    clock.advance(1500);
    answerFirstProbe();
    await flush();
    await createConfigMap(core, 'default', 'b');
    await w.waitFor(2);
    expect(w.summary()).toEqual(['ADDED a', 'ADDED b']);
    expect(w.ended).toBe(false);
    const later = new Recorder(await core.watch(cm('default'), { resourceVersion: start.metadata!.resourceVersion }, ctx));
    await later.waitFor(2);
    expect(later.summary()).toEqual(['ADDED a', 'ADDED b']);
    w.stream.close();
    later.stream.close();
  });

  it('relists when its watch fell behind a compaction: watchers end, older versions come from the store until it compacts them, then 410', async () => {
    const c = controllable(raw);
    core = createCore({ store: c.store, naming, clock, compactionIntervalMs: 0 });
    await core.ready();
    const start = await createConfigMap(core, 'default', 'start');
    const w = new Recorder(await core.watch(cm('default'), { resourceVersion: start.metadata!.resourceVersion }, ctx));
    await createConfigMap(core, 'default', 'a');
    await w.waitFor(1);
    c.failWatch(new StoreError('compacted', 'behind', { revision: rvOf(start) }));
    await w.waitEnded();
    const relisted = await raw.currentRevision();
    const listed = await core.list(cm('default'), {}, ctx);
    expect(namesOf(listed.items)).toEqual(['a', 'start']);
    // Older than the relist: from the store's history while the store has it, then 410.
    const older = new Recorder(await core.watch(cm('default'), { resourceVersion: start.metadata!.resourceVersion }, ctx));
    await older.waitFor(1);
    expect(older.summary()).toEqual(['ADDED a']);
    older.stream.close();
    await raw.compact(relisted);
    const old = new Recorder(await core.watch(cm('default'), { resourceVersion: start.metadata!.resourceVersion }, ctx));
    await old.waitEnded();
    expect(old.events.map((e) => [e.type, e.object.kind === 'Status' ? e.object.message : ''])).toEqual([
      ['ERROR', `too old resource version: ${rvOf(start)} (${relisted})`],
    ]);
    const fresh = new Recorder(await core.watch(cm('default'), { resourceVersion: String(relisted) }, ctx));
    await createConfigMap(core, 'default', 'b');
    await fresh.waitFor(1);
    expect(fresh.summary()).toEqual(['ADDED b']);
    fresh.stream.close();
  });

  it('loads a store of several pages whole, and stops loading when closed midway', async () => {
    // Past two of the load's pages (5,000 keys each), so it decodes while the next one comes.
    const count = 11_000;
    for (let i = 0; i < count; i++) {
      const name = `cm-${String(i).padStart(5, '0')}`;
      await raw.create(
        `/registry/configmaps/default/${name}`,
        encodeForStorage({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', uid: `u${i}` } }),
      );
    }
    const revision = await raw.currentRevision();
    core = createCore({ store: raw, naming, clock, compactionIntervalMs: 0 });
    await core.ready();
    const listed = await core.list(cm('default'), { resourceVersion: '0' }, ctx);
    expect(listed.items).toHaveLength(count);
    // At least the store's revision: the core's start writes its own objects too (namespaces, the Service ranges).
    expect(Number(listed.metadata.resourceVersion)).toBeGreaterThanOrEqual(revision);
    expect(namesOf(listed.items.slice(-2))).toEqual(['cm-10998', 'cm-10999']);
    await core.close();

    const errors: string[] = [];
    raw = createStore({ kind: 'embedded', dataDir: dir });
    core = createCore({ store: raw, naming, clock, compactionIntervalMs: 0, onBackgroundError: (what) => errors.push(what) });
    let loaded = false;
    void core.ready().then(() => (loaded = true));
    await flush(3);
    expect(loaded).toBe(false);
    await core.close();
    await flush(20);
    expect(errors).toEqual([]);
  });

  it('hands out frozen, shared objects; only those are memoised by encodeOnce', async () => {
    core = createCore({ store: raw, naming, clock, compactionIntervalMs: 0 });
    await core.ready();
    await createConfigMap(core, 'default', 'x');
    const one = await core.get(cm('default', 'x'), {}, ctx);
    const two = await core.get(cm('default', 'x'), { resourceVersion: '0' }, ctx);
    expect(two).toBe(one);
    expect(() => {
      (one.metadata as { name: string }).name = 'y';
    }).toThrow(TypeError);
    const listed = await core.list(cm('default'), {}, ctx);
    expect(Object.isFrozen(listed.items[0])).toBe(true);
    expect(listed.items[0]!.kind).toBeUndefined();
    let calls = 0;
    const encode = (v: object) => {
      calls++;
      return JSON.stringify(v);
    };
    encodeOnce(one, 'json', encode);
    encodeOnce(one, 'json', encode);
    const mutable = { a: 1 };
    encodeOnce(mutable, 'json', encode);
    encodeOnce(mutable, 'json', encode);
    expect(calls).toBe(3);
  });

  it("lists of one collection share one frozen selection until the resource changes; a limited list or another namespace's has its own", async () => {
    core = createCore({ store: raw, naming, clock, compactionIntervalMs: 0 });
    await core.ready();
    for (const name of ['a', 'b', 'c']) await createConfigMap(core, 'default', name);
    await createNamespace(core, 'other');
    await createConfigMap(core, 'other', 'z');
    await flush();
    const first = await core.list(cm('default'), {}, ctx);
    const second = await core.list(cm('default'), { resourceVersion: '0' }, ctx);
    expect(second.items).toBe(first.items);
    expect(Object.isFrozen(first.items)).toBe(true);
    expect(namesOf(first.items)).toEqual(['a', 'b', 'c']);
    // Another collection, or a page of this one: arrays of their own, and the shared one is kept or remade as asked.
    expect(namesOf((await core.list(cm('other'), {}, ctx)).items)).toEqual(['z']);
    const page = await core.list(cm('default'), { limit: 2 }, ctx);
    expect(namesOf(page.items)).toEqual(['a', 'b']);
    expect(page.items).not.toBe(first.items);
    // A change anywhere in the resource: the next list selects afresh, with the change.
    await createConfigMap(core, 'default', 'd');
    await flush();
    const third = await core.list(cm('default'), {}, ctx);
    expect(third.items).not.toBe(first.items);
    expect(namesOf(third.items)).toEqual(['a', 'b', 'c', 'd']);
    expect(namesOf(first.items)).toEqual(['a', 'b', 'c']);
    expect(Number(third.metadata.resourceVersion)).toBeGreaterThan(Number(first.metadata.resourceVersion));
  });

  describe('memory that follows the live data (issue 50)', () => {
    const secrets = (ns: string) => ({ group: '', version: 'v1', resource: 'secrets', namespace: ns });
    const historyOf = (resource: string) =>
      core.state!()
        .resources()
        .find((r) => r.resource === resource)!;
    const totalBytes = () =>
      core.state!()
        .resources()
        .reduce((n, r) => n + r.cachedEventBytes, 0);

    it('keeps every history within the byte budget, trimming the busiest first; a quiet resource keeps its few changes', async () => {
      core = createCore({ store: raw, naming, clock, compactionIntervalMs: 0, watchCache: { maxHistoryBytes: 200_000 } });
      await core.ready();
      const quiet = await core.create(secrets('default'), { metadata: { name: 's' }, stringData: { k: 'v' } }, {}, ctx);
      const first = await createConfigMap(core, 'default', 'cm-0');
      for (let i = 1; i < 300; i++) await core.create(cm('default'), { metadata: { name: `cm-${i}` }, data: { v: 'x'.repeat(500) } }, {}, ctx);
      await core.list(cm('default'), {}, ctx);
      expect(totalBytes()).toBeLessThanOrEqual(200_000);
      expect(historyOf('secrets').cachedEvents).toBe(1);
      expect(historyOf('configmaps').cachedEvents).toBeLessThan(300);
      expect(historyOf('configmaps').cachedEvents).toBeGreaterThan(20);
      // Resuming from before the trimmed history still works: from the store's history.
      const w = new Recorder(await core.watch(cm('default'), { resourceVersion: first.metadata!.resourceVersion }, ctx));
      await w.waitFor(299);
      expect(w.summary()).toEqual(Array.from({ length: 299 }, (_, i) => `ADDED cm-${i + 1}`));
      w.stream.close();
      const s = new Recorder(await core.watch(secrets('default'), { resourceVersion: String(rvOf(quiet.object) - 1) }, ctx));
      await s.waitFor(1);
      expect(s.summary()).toEqual(['ADDED s']);
      s.stream.close();
    });

    it("gives a quiet resource's history back once it is older than the window, with no new change to prompt it", async () => {
      core = createCore({ store: raw, naming, clock, compactionIntervalMs: 0, watchCache: { windowMs: 60_000 } });
      await core.ready();
      for (let i = 0; i < 20; i++) await createConfigMap(core, 'default', `cm-${i}`);
      await core.list(cm('default'), {}, ctx);
      expect(historyOf('configmaps').cachedEvents).toBe(20);
      clock.advance(60_000 + 6_000);
      expect([historyOf('configmaps').cachedEvents, historyOf('configmaps').cachedEventBytes]).toEqual([0, 0]);
    });

    it("a watch catching up from the store's history gets the live changes of meanwhile after it, in order, and no bookmark before them", async () => {
      core = createCore({ store: raw, naming, clock, compactionIntervalMs: 0, watchCache: { maxHistoryBytes: 1 } });
      await core.ready();
      const start = await createConfigMap(core, 'default', 'start');
      for (let i = 0; i < 50; i++) await createConfigMap(core, 'default', `old-${i}`);
      await core.list(cm('default'), {}, ctx);
      expect(historyOf('configmaps').cachedEvents).toBe(0);
      const w = new Recorder(await core.watch(cm('default'), { resourceVersion: start.metadata!.resourceVersion, allowWatchBookmarks: true }, ctx));
      // Due before the history is read: a bookmark now would carry the cache's revision ahead of it.
      clock.advance(60_000);
      // Written before the history is read: held back until it has been delivered.
      await createConfigMap(core, 'default', 'live-0');
      await createConfigMap(core, 'default', 'live-1');
      await w.waitFor(52);
      expect(w.summary().slice(0, 52)).toEqual([...Array.from({ length: 50 }, (_, i) => `ADDED old-${i}`), 'ADDED live-0', 'ADDED live-1']);
      const rvs = w.events.slice(0, 52).map((e) => rvOf(e.object as ApiObject));
      expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
      await createConfigMap(core, 'default', 'live-2');
      await w.waitFor(53);
      expect(w.summary().filter((e) => !e.startsWith('BOOKMARK'))[52]).toBe('ADDED live-2');
      // Once caught up, bookmarks flow again.
      clock.advance(60_000);
      await flush();
      expect(w.summary().at(-1)).toMatch(/^BOOKMARK /);
      w.stream.close();
    });
  });
});
