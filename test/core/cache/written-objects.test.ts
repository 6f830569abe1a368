/**
 * The watch cache takes the object a door's write was made from instead of decoding the bytes
 * it was stored as; anything else is decoded as before (written-objects.ts). On both backends:
 * the embedded store delivers the event before the write's caller resumes, etcd after.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCore, type Core } from '../../../src/core';
import { handOver, type ApiObject } from '../../../src/core/api';
import { type Store, createStore } from '../../../src/store';
import { objectKey } from '../../../src/core/storage/keys';
import { decodeFromStorage } from '../../../src/core/storage/object-codec';
import { createNaming } from '../../../src/naming';
import { WrittenObjects } from '../../../src/core/cache/written-objects';
import { freezeForAdoption } from '../../../src/core/cache/cached-object';
import { isPlainJson } from '../../../src/util/json-values';
import { schemaRegistry } from '../../../src/schema';
import { encodeOrderedJson, orderedJsonBeforeVersion } from '../../../src/codecs/json-order';
import { startEtcd, type EtcdInstance } from '../../support/etcd';

const ctx = () => ({ user: { username: 'admin', groups: ['system:masters'] } });
const target = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };
const configMap = (name: string, data: Record<string, unknown> = { a: '1' }): ApiObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data }) as ApiObject;

describe.each(['embedded', 'etcd'] as const)('on the %s store', (backend) => {
  let dir: string;
  let etcd: EtcdInstance | undefined;
  let core: Core;
  let store: Store;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-written-'));
    if (backend === 'etcd') etcd = await startEtcd();
    store = etcd ? createStore({ kind: 'etcd', endpoints: [etcd.endpoint] }) : createStore({ kind: 'embedded', dataDir: dir });
    core = createCore({ store, naming: createNaming('kubernetes'), compactionIntervalMs: 0 });
    await core.ready();
  });

  afterAll(async () => {
    await core.close();
    await etcd?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  /** The cache's object for `name`, once the cache has seen everything written so far. */
  async function cached(name: string): Promise<ApiObject> {
    await core.get({ ...target, name }, {}, ctx());
    return core.get({ ...target, name }, { resourceVersion: '0' }, ctx());
  }

  it("a door's create is the cache's object: frozen, with the write's resourceVersion, equal to its stored bytes' decode", async () => {
    const { object } = await core.create(target, handOver(configMap('door')), {}, ctx());
    const held = await cached('door');
    expect(held).toBe(object);
    expect(Object.isFrozen(held)).toBe(true);
    expect(Object.isFrozen(held.metadata)).toBe(true);
    expect(held.metadata?.resourceVersion).toBe(object.metadata?.resourceVersion);
    // What a decode of the stored value would have given. A create is stored in upstream's
    // field order while the object keeps its body's key order; every wire encoder writes a typed
    // object in its schema's order, so both answer the same bytes.
    const { kv } = await store.get(objectKey('configmaps', 'default', 'door'));
    const decoded = decodeFromStorage(kv!);
    expect(decoded).toEqual(held);
    const registry = schemaRegistry(createNaming('kubernetes'));
    expect(encodeOrderedJson(registry, decoded)).toBe(encodeOrderedJson(registry, held));
    expect(Buffer.from(kv!.value).toString('utf8')).toBe(
      encodeOrderedJson(registry, { ...decoded, metadata: { ...decoded.metadata, resourceVersion: undefined } }),
    );
  });

  it("a door's update is taken the same way", async () => {
    const { object: created } = await core.create(target, handOver(configMap('door-update')), {}, ctx());
    const body = handOver({
      ...configMap('door-update', { a: '2' }),
      metadata: { name: 'door-update', resourceVersion: created.metadata!.resourceVersion },
    } as ApiObject);
    const { object } = await core.update({ ...target, name: 'door-update' }, body, {}, ctx());
    const held = await cached('door-update');
    expect(held).toBe(object);
    expect(held.data).toEqual({ a: '2' });
  });

  it("a door's patch and apply make the cache's object; an in-process caller's stay its own", async () => {
    await core.create(target, handOver(configMap('patched')), {}, ctx());
    const merge = await core.patch({ ...target, name: 'patched' }, handOver({ type: 'merge', body: { data: { b: '2' } } }), {}, ctx());
    expect(await cached('patched')).toBe(merge.object);
    expect(merge.object.data).toEqual({ a: '1', b: '2' });
    const json = await core.patch({ ...target, name: 'patched' }, handOver({ type: 'json', body: [{ op: 'add', path: '/data/c', value: '3' }] }), {}, ctx());
    expect(await cached('patched')).toBe(json.object);
    const applied = await core.patch(
      { ...target, name: 'patched' },
      handOver({ type: 'apply', body: { ...configMap('patched', { d: '4' }) } }),
      { fieldManager: 'tool' },
      ctx(),
    );
    expect(await cached('patched')).toBe(applied.object);
    expect(applied.object.data).toEqual({ a: '1', b: '2', c: '3', d: '4' });
    // An apply that creates.
    const made = await core.patch(
      { ...target, name: 'applied-new' },
      handOver({ type: 'apply', body: configMap('applied-new') }),
      { fieldManager: 'tool' },
      ctx(),
    );
    expect(await cached('applied-new')).toBe(made.object);
    // In process: the caller's to change, the cache's a decoded copy.
    const mine = await core.patch({ ...target, name: 'patched' }, { type: 'merge', body: { data: { e: '5' } } }, {}, ctx());
    const mineApplied = await core.patch(
      { ...target, name: 'applied-mine' },
      { type: 'apply', body: configMap('applied-mine') },
      { fieldManager: 'tool' },
      ctx(),
    );
    for (const [name, object] of [
      ['patched', mine.object],
      ['applied-mine', mineApplied.object],
    ] as const) {
      const held = await cached(name);
      expect(held).not.toBe(object);
      expect(Object.isFrozen(object)).toBe(false);
      object.data = { changed: 'yes' };
      expect(held.data).not.toEqual({ changed: 'yes' });
    }
  });

  it("an in-process caller's object stays its own: not frozen, and the cache holds a decoded copy", async () => {
    const { object } = await core.create(target, configMap('mine'), {}, ctx());
    const held = await cached('mine');
    expect(held).not.toBe(object);
    expect(Object.isFrozen(object)).toBe(false);
    object.data = { changed: 'yes' };
    expect(held.data).toEqual({ a: '1' });
  });

  it('an object holding what JSON would not give back is decoded instead', async () => {
    // undefined is dropped by the stored JSON: the cache must not keep the key.
    const body = handOver(configMap('odd', { a: '1', b: undefined }));
    const { object } = await core.create(target, body, {}, ctx());
    const held = await cached('odd');
    expect(held).not.toBe(object);
    expect(Object.keys(held.data as object)).toEqual(['a']);
  });
});

describe('WrittenObjects', () => {
  const kv = (key: string, value: string) => ({ key, value: Buffer.from(value), createRevision: 1, modRevision: 1, version: 1 });

  it('gives an object back only for the very bytes written from it, once', () => {
    const written = new WrittenObjects();
    const obj = configMap('x');
    written.expect('/k', Buffer.from('{"a":1}'), obj);
    expect(written.take(kv('/k', '{"a":2}'))).toBeUndefined();
    written.expect('/k', Buffer.from('{"a":1}'), obj);
    expect(written.take(kv('/k', '{"a":1}'))?.object).toBe(obj);
    expect(written.take(kv('/k', '{"a":1}'))).toBeUndefined();
  });

  it("leaves a newer write's object waiting when an earlier write's event comes late", () => {
    const written = new WrittenObjects();
    const created = configMap('x');
    const updated = configMap('x', { a: '2' });
    written.expect('/k', Buffer.from('created'), created);
    written.expect('/k', Buffer.from('updated'), updated);
    expect(written.take(kv('/k', 'created'))).toBeUndefined();
    expect(written.take(kv('/k', 'updated'))?.object).toBe(updated);
    expect(written.size).toBe(0);
  });

  it('forgets a failed write, but not a newer write of the same key', () => {
    const written = new WrittenObjects();
    const first = configMap('x');
    const second = configMap('x');
    written.forget(written.expect('/k', Buffer.from('1'), first));
    expect(written.size).toBe(0);
    const pending = written.expect('/k', Buffer.from('1'), first);
    written.expect('/k', Buffer.from('2'), second);
    written.forget(pending);
    expect(written.take(kv('/k', '2'))?.object).toBe(second);
  });

  it("carries whether the write's encode found the object plain", () => {
    const written = new WrittenObjects();
    written.expect('/a', Buffer.from('1'), configMap('a'), true);
    written.expect('/b', Buffer.from('1'), configMap('b'));
    expect(written.take(kv('/a', '1'))?.plain).toBe(true);
    expect(written.take(kv('/b', '1'))?.plain).toBe(false);
  });

  it('keeps a bounded number of entries', () => {
    const written = new WrittenObjects();
    for (let i = 0; i < 10_000; i++) written.expect(`/k${i}`, Buffer.from('1'), configMap('x'));
    expect(written.size).toBeLessThanOrEqual(4096);
  });
});

describe('isPlainJson', () => {
  it.each([
    [{ a: [1, 'x', true, null, { b: {} }] }, true],
    [{ a: undefined }, false],
    [[1, , 3], false],
    [{ a: Number.NaN }, false],
    [{ a: -0 }, false],
    [{ a: new Date(0) }, false],
    [{ a: Object.create(null) }, true],
    [{ a: 1n }, false],
  ])('%p → %p', (value, plain) => {
    expect(isPlainJson(value)).toBe(plain);
  });

  it('takes a frozen part as plain only when asked', () => {
    const frozen = Object.freeze({ at: Object.freeze(new Date(0)) });
    expect(isPlainJson({ a: frozen })).toBe(false);
    expect(isPlainJson({ a: frozen }, true)).toBe(true);
    expect(isPlainJson({ a: frozen, b: undefined }, true)).toBe(false);
  });
});

describe("the storage encode's plainness", () => {
  // The watch cache adopts a create's object without walking it when the encode that made its
  // stored bytes found it plain: that answer must be isPlainJson's (frozen parts taken as plain).
  const registry = schemaRegistry(createNaming('kubernetes'));
  class Selector {
    matchLabels = { app: 'x' };
  }
  const replicaSet = (change: (rs: Record<string, any>) => void = () => {}): Record<string, any> => {
    const rs: Record<string, any> = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: 'rs',
        namespace: 'default',
        uid: 'u-1',
        labels: { app: 'x' },
        managedFields: [{ manager: 'm', operation: 'Update', fieldsV1: { 'f:spec': {} } }],
      },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'x' } },
        template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    };
    change(rs);
    return rs;
  };

  it.each<[string, (rs: Record<string, any>) => void]>([
    ['a plain object', () => {}],
    ['an undefined map entry', (rs) => (rs.metadata.labels.gone = undefined)],
    ['an undefined typed field', (rs) => (rs.spec.minReadySeconds = undefined)],
    ['-0 in a typed field', (rs) => (rs.spec.replicas = -0)],
    ['NaN in a typed field', (rs) => (rs.spec.replicas = Number.NaN)],
    ['a hole in a typed list', (rs) => (rs.spec.template.spec.containers = [, { name: 'c', image: 'i' }])],
    ['a class instance where a message goes', (rs) => (rs.spec.selector = new Selector())],
    ['a class instance for a map', (rs) => (rs.metadata.labels = Object.assign(new Selector(), { app: 'x' }))],
    ['a null-prototype map', (rs) => (rs.metadata.annotations = Object.assign(Object.create(null), { a: 'b' }))],
    ['an unknown field holding JSON', (rs) => (rs.extra = { a: [1, { b: null }] })],
    ['an unknown field holding a Date', (rs) => (rs.extra = new Date(0))],
    ['an unknown field holding -0 deep down', (rs) => (rs.extra = { a: [-0] })],
    ['a field set that is not JSON', (rs) => (rs.metadata.managedFields[0].fieldsV1 = { at: new Date(0) })],
    ['a frozen field set (taken as plain, as the cache takes it)', (rs) => (rs.metadata.managedFields[0].fieldsV1 = Object.freeze({ at: new Date(0) }))],
  ])('%s', (_name, change) => {
    const rs = replicaSet(change);
    const layout = orderedJsonBeforeVersion(registry, rs);
    expect(layout).toBeDefined();
    expect(layout!.plain).toBe(isPlainJson(rs, true));
  });

  it('is found plain for a plain object, and each encode starts afresh', () => {
    expect(
      orderedJsonBeforeVersion(
        registry,
        replicaSet((rs) => (rs.spec.replicas = -0)),
      )!.plain,
    ).toBe(false);
    expect(orderedJsonBeforeVersion(registry, replicaSet())!.plain).toBe(true);
  });
});

describe('freezeForAdoption', () => {
  it('freezes all but what adoption and a retried write still change: the object, its metadata, its managedFields', () => {
    const obj = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x', labels: { a: 'b' }, ownerReferences: [{ name: 'o' }], managedFields: [{ manager: 'm', fieldsV1: { 'f:data': {} } }] },
      data: { a: '1' },
      nested: { list: [{ deep: {} }] },
    } as unknown as ApiObject;
    freezeForAdoption(obj);
    const o = obj as any;
    expect([Object.isFrozen(o), Object.isFrozen(o.metadata), Object.isFrozen(o.metadata.managedFields), Object.isFrozen(o.metadata.managedFields[0])]).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect([o.data, o.nested, o.nested.list, o.nested.list[0].deep, o.metadata.labels, o.metadata.ownerReferences[0]].every(Object.isFrozen)).toBe(true);
    // A generated name is chosen again after a collision, and adoption sets the version.
    o.metadata.name = 'y';
    o.metadata.resourceVersion = '2';
    expect(o.metadata).toMatchObject({ name: 'y', resourceVersion: '2' });
  });
});
