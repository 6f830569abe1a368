/**
 * An update starts from the watch cache's copy of the object, without reading the store, as
 * upstream's cacher hands GuaranteedUpdate its cached object; the store is read only where that
 * copy may be stale. A stale copy is made by a write straight to the store while the cache has
 * not seen it: on the embedded store by holding the store's watch events back for a moment (as
 * a slow watch would), on etcd as it happens, the cache seeing a write a moment after it is
 * acknowledged. The update still builds on the stored object, a result equal to the stale copy
 * is checked against the store before nothing is written, and a refusal made on the stale copy
 * is tried again on the stored one.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCore, type Core, type ApiObject } from '../../../src/core';
import { type Store, type WatchHandlers, type WatchOptions, createStore } from '../../../src/store';
import { objectKey } from '../../../src/core/storage/keys';
import { createNaming } from '../../../src/naming';
import { startEtcd, type EtcdInstance } from '../../support/etcd';
import { eventually } from '../../support/eventually';

const ctx = () => ({ user: { username: 'admin', groups: ['system:masters'] } });
const configMaps = (name?: string) => ({ group: '', version: 'v1', resource: 'configmaps', namespace: 'default', name });
const key = (name: string) => objectKey('configmaps', 'default', name);

/** Rewrites the stored object's data straight in the store, past the core; its new revision. */
async function writeStraight(store: Store, name: string, data: Record<string, string>): Promise<number> {
  const { kv } = await store.get(key(name));
  const stored = JSON.parse(Buffer.from(kv!.value).toString('utf8')) as ApiObject;
  stored.data = { ...(stored.data as object), ...data };
  return (await store.update(key(name), Buffer.from(JSON.stringify(stored)), kv!.modRevision)).modRevision;
}

async function storedData(store: Store, name: string): Promise<Record<string, string>> {
  const { kv } = await store.get(key(name));
  return (JSON.parse(Buffer.from(kv!.value).toString('utf8')) as { data: Record<string, string> }).data;
}

/** Until the core's cache holds `name` at `revision` or later. */
async function cacheHas(core: Core, name: string, revision: number): Promise<void> {
  await eventually(async () => Number((await core.get(configMaps(name), { resourceVersion: '0' }, ctx())).metadata?.resourceVersion) >= revision, {
    what: `the cache to reach ${revision}`,
  });
}

describe('on the embedded store', () => {
  let dir: string;
  let core: Core;
  let real: Store;
  /** Store reads of the test's object, by the core. */
  let reads: number;
  /** While set, the store's watch events wait here instead of reaching the cache. */
  let held: Array<() => void> | undefined;
  const hold = () => void (held = []);
  const release = () => {
    const waiting = held ?? [];
    held = undefined;
    for (const deliver of waiting) deliver();
  };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-update-cache-'));
    real = createStore({ kind: 'embedded', dataDir: dir });
    reads = 0;
    // The real store; its reads of the test's key are counted on their way, and its watch
    // events wait while `held` is set, then arrive in order.
    const store = new Proxy(real, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop === 'get') {
          return (k: string, ...rest: unknown[]) => {
            if (k === key('counted')) reads++;
            return (value as (...a: unknown[]) => unknown).call(target, k, ...rest);
          };
        }
        if (prop === 'watch') {
          return (prefix: string, options: WatchOptions, handlers: WatchHandlers) =>
            target.watch(prefix, options, {
              onEvents: (events) => (held ? held.push(() => handlers.onEvents(events)) : handlers.onEvents(events)),
              onError: (err) => handlers.onError(err),
            });
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Store;
    core = createCore({ store, naming: createNaming('kubernetes'), compactionIntervalMs: 0 });
    await core.ready();
  });

  afterAll(async () => {
    await core.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('updates and patches from the cached object without reading the store; a dry run reads it', async () => {
    const created = await core.create(configMaps(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'counted' }, data: { a: '1' } }, {}, ctx());
    await cacheHas(core, 'counted', Number(created.object.metadata!.resourceVersion));
    reads = 0;
    const updated = await core.update(configMaps('counted'), { ...created.object, data: { a: '2' } }, {}, ctx());
    await cacheHas(core, 'counted', Number(updated.object.metadata!.resourceVersion));
    const patched = await core.patch(configMaps('counted'), { type: 'merge', body: { data: { b: '3' } } }, {}, ctx());
    expect(patched.object.data).toEqual({ a: '2', b: '3' });
    expect(reads).toBe(0);
    await core.patch(configMaps('counted'), { type: 'merge', body: { data: { c: '4' } } }, { dryRun: ['All'] }, ctx());
    expect(reads).toBe(1);
  });

  it('answers an unchanged update with the stored object, writing nothing', async () => {
    const created = await core.create(configMaps(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'same' }, data: { a: '1' } }, {}, ctx());
    await cacheHas(core, 'same', Number(created.object.metadata!.resourceVersion));
    const again = await core.patch(configMaps('same'), { type: 'merge', body: { data: { a: '1' } } }, {}, ctx());
    expect(again.object.metadata?.resourceVersion).toBe(created.object.metadata?.resourceVersion);
    // The answer is the caller's to change, not the cache's frozen copy.
    expect(Object.isFrozen(again.object)).toBe(false);
  });

  it('answers a PUT that changes nothing, started from the store (the cache has not seen the object yet), with an object the caller may change', async () => {
    hold();
    try {
      const created = await core.create(configMaps(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unseen' }, data: { a: '1' } }, {}, ctx());
      const again = await core.update(configMaps('unseen'), { ...created.object }, {}, ctx());
      expect(again.object.metadata?.resourceVersion).toBe(created.object.metadata?.resourceVersion);
      expect(Object.isFrozen(again.object)).toBe(false);
    } finally {
      release();
    }
  });

  /**
   * `name` created with `data` and seen by the cache; then, with the cache's events held back,
   * `straight` written past the core and `act` run while the cache still holds what was created.
   */
  async function whileStale<T>(
    name: string,
    data: Record<string, string>,
    straight: Record<string, string>,
    act: (straightRevision: number, created: ApiObject) => Promise<T>,
  ): Promise<T> {
    const created = await core.create(configMaps(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data }, {}, ctx());
    await cacheHas(core, name, Number(created.object.metadata!.resourceVersion));
    hold();
    try {
      return await act(await writeStraight(real, name, straight), created.object);
    } finally {
      release();
    }
  }

  it('builds a patch on the stored object while the cache holds an older one', async () => {
    const patched = await whileStale('held-build', { n: '0' }, { n: '1' }, () =>
      core.patch(configMaps('held-build'), { type: 'merge', body: { data: { m: '1' } } }, {}, ctx()),
    );
    expect(patched.object.data).toEqual({ n: '1', m: '1' });
    expect(await storedData(real, 'held-build')).toEqual({ n: '1', m: '1' });
  });

  it('writes a result equal to the stale copy when the store holds something else', async () => {
    // The cache still says a=y, which is what the patch asks for.
    const patched = await whileStale('held-same', { a: 'y' }, { a: 'x' }, () =>
      core.patch(configMaps('held-same'), { type: 'merge', body: { data: { a: 'y' } } }, {}, ctx()),
    );
    expect(patched.object.data).toEqual({ a: 'y' });
    expect(await storedData(real, 'held-same')).toEqual({ a: 'y' });
  });

  it("starts a PUT without a resourceVersion over from the body as sent when its write on the stale copy failed, leaving the caller's body as it was", async () => {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held-put', labels: { l: '1' } }, data: { a: 'put' } };
    const sent = JSON.stringify(body);
    const updated = await whileStale('held-put', { a: '0' }, { a: 'straight' }, () => core.update(configMaps('held-put'), body, {}, ctx()));
    expect(updated.object.data).toEqual({ a: 'put' });
    expect(updated.object.metadata?.labels).toEqual({ l: '1' });
    expect(JSON.stringify(body)).toBe(sent);
    expect(await storedData(real, 'held-put')).toEqual({ a: 'put' });
  });

  it("accepts an update whose resourceVersion is the store's while the cache holds an older one, and refuses one the store moved past", async () => {
    await whileStale('held-rv', { a: '0' }, { a: 'straight' }, async (revision, created) => {
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held-rv', resourceVersion: String(revision) }, data: { a: 'put' } };
      const updated = await core.update(configMaps('held-rv'), body, {}, ctx());
      expect(updated.object.data).toEqual({ a: 'put' });
      // The cache still holds the created object's version: the refusal is checked against the store's.
      const late = { ...body, metadata: { ...body.metadata, resourceVersion: created.metadata!.resourceVersion } };
      await expect(core.update(configMaps('held-rv'), late, {}, ctx())).rejects.toMatchObject({ status: { code: 409, reason: 'Conflict' } });
    });
    expect(await storedData(real, 'held-rv')).toEqual({ a: 'put' });
  });
});

describe('on etcd, while the cache has not seen a write yet', () => {
  let etcd: EtcdInstance;
  let core: Core;
  let store: Store;

  beforeAll(async () => {
    etcd = await startEtcd();
    store = createStore({ kind: 'etcd', endpoints: [etcd.endpoint] });
    core = createCore({ store, naming: createNaming('kubernetes'), compactionIntervalMs: 0 });
    await core.ready();
  });

  afterAll(async () => {
    await core.close();
    await etcd.stop();
  });

  async function createSettled(name: string, data: Record<string, string>): Promise<void> {
    const created = await core.create(configMaps(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data }, {}, ctx());
    await cacheHas(core, name, Number(created.object.metadata!.resourceVersion));
  }

  it('builds a patch on the stored object, not the cached one', async () => {
    await createSettled('build', { n: '0' });
    for (let i = 1; i <= 20; i++) {
      await writeStraight(store, 'build', { n: String(i) });
      const patched = await core.patch(configMaps('build'), { type: 'merge', body: { data: { m: String(i) } } }, {}, ctx());
      expect(patched.object.data).toEqual({ n: String(i), m: String(i) });
      expect(await storedData(store, 'build')).toEqual({ n: String(i), m: String(i) });
    }
  });

  it('writes a result equal to the stale copy when the store holds something else', async () => {
    await createSettled('unchanged', { a: 'y' });
    for (let i = 1; i <= 20; i++) {
      await writeStraight(store, 'unchanged', { a: `x${i}` });
      // The cache may still say a=y, which is what the patch asks for.
      const patched = await core.patch(configMaps('unchanged'), { type: 'merge', body: { data: { a: 'y' } } }, {}, ctx());
      expect(patched.object.data).toEqual({ a: 'y' });
      expect(await storedData(store, 'unchanged')).toEqual({ a: 'y' });
    }
  });

  it("accepts an update whose resourceVersion is the store's, though the cache holds an older one", async () => {
    await createSettled('precondition', { a: '0' });
    for (let i = 1; i <= 20; i++) {
      const revision = await writeStraight(store, 'precondition', { a: `straight-${i}` });
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'precondition', resourceVersion: String(revision) }, data: { a: `put-${i}` } };
      const updated = await core.update(configMaps('precondition'), body, {}, ctx());
      expect(updated.object.data).toEqual({ a: `put-${i}` });
    }
    // A resourceVersion the store has moved past is still a conflict.
    const stale = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'precondition', resourceVersion: '2' }, data: { a: 'late' } };
    await expect(core.update(configMaps('precondition'), stale, {}, ctx())).rejects.toMatchObject({ status: { code: 409, reason: 'Conflict' } });
    expect(await storedData(store, 'precondition')).toEqual({ a: 'put-20' });
  });
});
