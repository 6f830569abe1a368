/**
 * Writes of objects an earlier storage version wrote (issue 53): after a definition's storage
 * version moves from v1 to v2, an object still stored as v1 is decoded into the request's
 * version before any write starts from it (update, merge and JSON patch, server-side apply,
 * `/status`, `/scale`, a delete that marks it Terminating), as upstream's store decodes the
 * stored object through the converter before its update function runs, and the result is
 * stored as v2. Through a real HTTPS conversion webhook (v1 `spec.color` ⇄ v2
 * `spec.paint.color`), and with conversion `None` (apiVersion rewritten, the object pruned and
 * defaulted to v2's schema). A webhook that fails during a write leaves the stored object as it was.
 */
import type { ApiObject, ResourceTarget } from '../../../src/core';
import { objectKey } from '../../../src/core/storage/keys';
import { coreBackend, ctx, naming, statusOf, type TestCore } from '../registry/core-backends';
import { eventually } from '../../support/eventually';
import { type ConversionWebhook, startConversionWebhook } from '../../support/conversion-webhook';

type Json = Record<string, any>;

const HOOKED = 'svw.example.com';
const PLAIN = 'svn.example.com';
const NS = 'sv';
const crdTarget = (name?: string): ResourceTarget => ({ group: naming.groups.apiextensions, version: 'v1', resource: 'customresourcedefinitions', name });
const widgets = (group: string, version: string, name?: string, subresource?: string): ResourceTarget => ({
  group,
  version,
  resource: 'widgets',
  namespace: NS,
  name,
  ...(subresource ? { subresource } : {}),
});

const STATUS = { type: 'object', properties: { replicas: { type: 'integer' }, phase: { type: 'string' } } };
const SUBRESOURCES = { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } };

/** Webhook conversion: v1 names the color `spec.color`, v2 `spec.paint.color`. */
const hookedV1 = {
  type: 'object',
  properties: { spec: { type: 'object', properties: { color: { type: 'string' }, size: { type: 'integer' }, replicas: { type: 'integer' } } }, status: STATUS },
};
const hookedV2 = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: { paint: { type: 'object', properties: { color: { type: 'string' } } }, size: { type: 'integer' }, replicas: { type: 'integer' } },
    },
    status: STATUS,
  },
};
/** Conversion None: v2 drops `spec.color` and adds `spec.shade`, defaulted. */
const plainV1 = hookedV1;
const plainV2 = {
  type: 'object',
  properties: {
    spec: { type: 'object', properties: { size: { type: 'integer' }, replicas: { type: 'integer' }, shade: { type: 'string', default: 'dark' } } },
    status: STATUS,
  },
};

function crd(group: string, storage: 'v1' | 'v2', schemas: [object, object], hook?: ConversionWebhook): Json {
  return {
    apiVersion: `${naming.groups.apiextensions}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      conversion: hook
        ? { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: hook.url, caBundle: hook.caBundle } } }
        : { strategy: 'None' },
      versions: [
        { name: 'v1', served: true, storage: storage === 'v1', schema: { openAPIV3Schema: schemas[0] }, subresources: SUBRESOURCES },
        { name: 'v2', served: true, storage: storage === 'v2', schema: { openAPIV3Schema: schemas[1] }, subresources: SUBRESOURCES },
      ],
    },
  };
}

async function raw(t: TestCore, group: string, name: string): Promise<{ object: Json; modRevision: number }> {
  const { kv } = await t.store.get(objectKey(`${group}/widgets`, NS, name));
  return { object: JSON.parse(Buffer.from(kv!.value).toString('utf8')), modRevision: kv!.modRevision };
}

const v1Widget = (group: string, name: string, color: string): ApiObject => ({
  apiVersion: `${group}/v1`,
  kind: 'Widget',
  metadata: { name, labels: { keep: 'me' }, annotations: { note: 'old' } },
  spec: { color, size: 1, replicas: 1 },
});

/** Objects written while v1 was the storage version, each with a status, then the storage version moved to v2. */
async function writeThenMoveStorage(t: TestCore, group: string, names: readonly string[], schemas: [object, object], hook?: ConversionWebhook) {
  await t.core.create(crdTarget(), crd(group, 'v1', schemas, hook), {}, ctx);
  await eventually(() => t.core.resources.some((d) => d.group === group && d.version === 'v2'), { what: `${group} served` });
  const uids: Record<string, string> = {};
  for (const name of names) {
    const created = (await t.core.create(widgets(group, 'v1'), v1Widget(group, name, `c-${name}`), {}, ctx)).object;
    uids[name] = created.metadata!.uid!;
    await t.core.update(widgets(group, 'v1', name, 'status'), { ...created, status: { replicas: 1, phase: 'Ready' } }, {}, ctx);
  }
  const current = await t.core.get(crdTarget(`widgets.${group}`), {}, ctx);
  await t.core.update(crdTarget(`widgets.${group}`), { ...current, spec: crd(group, 'v2', schemas, hook).spec }, {}, ctx);
  await eventually(
    () =>
      t.core.resources.some((d) => d.group === group && d.version === 'v2' && !d.storedAs && d.custom?.readsOthers) &&
      t.core.resources.some((d) => d.group === group && d.version === 'v1' && d.storedAs?.apiVersion === `${group}/v2`),
    { what: `${group} stored as v2` },
  );
  for (const name of names) expect((await raw(t, group, name)).object.apiVersion).toBe(`${group}/v1`);
  return uids;
}

/** What every write below must keep of the v1 object it started from. */
function expectKept(object: Json, uid: string): void {
  expect(object.metadata).toMatchObject({ uid, labels: { keep: 'me' }, annotations: { note: 'old' } });
}

describe('writes of objects an earlier storage version wrote, through a conversion webhook', () => {
  const backend = coreBackend('embedded');
  let t: TestCore;
  let hook: ConversionWebhook;
  let uids: Record<string, string>;
  const G = HOOKED;
  const names = [
    'put2',
    'put1',
    'merge2',
    'merge1',
    'json2',
    'json1',
    'apply2',
    'apply1',
    'status2',
    'status1',
    'scale2',
    'scale1',
    'del2',
    'fail',
    'noop2',
    'noop1',
  ];

  beforeAll(async () => {
    hook = await startConversionWebhook();
    t = await backend.open({ conversionWebhookTimeoutMs: 2_000 });
    await t.core.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: NS } }, {}, ctx);
    uids = await writeThenMoveStorage(t, G, names, [hookedV1, hookedV2], hook);
  });
  afterEach(() => {
    hook.mode = 'ok';
  });
  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
    await hook.close();
  });

  /** The stored object is v2's, with the v1 color converted and everything else kept. */
  async function expectStoredV2(name: string, spec: Json, status: Json = { replicas: 1, phase: 'Ready' }): Promise<Json> {
    const { object } = await raw(t, G, name);
    expect(object.apiVersion).toBe(`${G}/v2`);
    expect(object.spec).toEqual(spec);
    expect(object.status).toEqual(status);
    expectKept(object, uids[name]!);
    return object;
  }

  test('an update through v2 (the storage version) starts from the object converted to v2', async () => {
    const got = await t.core.get(widgets(G, 'v2', 'put2'), {}, ctx);
    expect(got.spec).toEqual({ paint: { color: 'c-put2' }, size: 1, replicas: 1 });
    const result = (await t.core.update(widgets(G, 'v2', 'put2'), { ...got, spec: { ...(got.spec as Json), size: 2 }, status: { replicas: 7 } }, {}, ctx))
      .object;
    expect(result.apiVersion).toBe(`${G}/v2`);
    // The status subresource keeps the stored status on a main-resource update.
    await expectStoredV2('put2', { paint: { color: 'c-put2' }, size: 2, replicas: 1 });
  });

  test('an update through v1 is stored as v2', async () => {
    const got = await t.core.get(widgets(G, 'v1', 'put1'), {}, ctx);
    await t.core.update(widgets(G, 'v1', 'put1'), { ...got, spec: { ...(got.spec as Json), size: 2 } }, {}, ctx);
    await expectStoredV2('put1', { paint: { color: 'c-put1' }, size: 2, replicas: 1 });
  });

  test("an update that changes nothing still rewrites the object in the storage version (upstream's storage migration)", async () => {
    for (const [version, name] of [
      ['v2', 'noop2'],
      ['v1', 'noop1'],
    ] as const) {
      const before = await raw(t, G, name);
      const got = await t.core.get(widgets(G, version, name), {}, ctx);
      const result = (await t.core.update(widgets(G, version, name), got, {}, ctx)).object;
      expect(Number(result.metadata!.resourceVersion)).toBeGreaterThan(before.modRevision);
      await expectStoredV2(name, { paint: { color: `c-${name}` }, size: 1, replicas: 1 });
      // Once migrated, the same update is not written again.
      const again = (await t.core.update(widgets(G, version, name), await t.core.get(widgets(G, version, name), {}, ctx), {}, ctx)).object;
      expect(again.metadata!.resourceVersion).toBe(result.metadata!.resourceVersion);
    }
  });

  test('a merge patch through either version applies to the converted object', async () => {
    const v2 = (await t.core.patch(widgets(G, 'v2', 'merge2'), { type: 'merge', body: { spec: { size: 3 }, metadata: { labels: { added: 'x' } } } }, {}, ctx))
      .object;
    expect(v2).toMatchObject({ apiVersion: `${G}/v2`, spec: { paint: { color: 'c-merge2' }, size: 3 } });
    const stored = await expectStoredV2('merge2', { paint: { color: 'c-merge2' }, size: 3, replicas: 1 });
    expect(stored.metadata.labels).toEqual({ keep: 'me', added: 'x' });
    const v1 = (await t.core.patch(widgets(G, 'v1', 'merge1'), { type: 'merge', body: { spec: { color: 'new' } } }, {}, ctx)).object;
    expect(v1).toMatchObject({ apiVersion: `${G}/v1`, spec: { color: 'new', size: 1 } });
    await expectStoredV2('merge1', { paint: { color: 'new' }, size: 1, replicas: 1 });
  });

  test("a JSON patch addresses the request version's fields", async () => {
    await t.core.patch(widgets(G, 'v2', 'json2'), { type: 'json', body: [{ op: 'replace', path: '/spec/paint/color', value: 'teal' }] }, {}, ctx);
    await expectStoredV2('json2', { paint: { color: 'teal' }, size: 1, replicas: 1 });
    // The v1 field does not exist in v2: upstream's JSON patch error, nothing written.
    const before = await raw(t, G, 'json1');
    await statusOf(
      t.core.patch(widgets(G, 'v2', 'json1'), { type: 'json', body: [{ op: 'replace', path: '/spec/color', value: 'x' }] }, {}, ctx),
      422,
      'Invalid',
    );
    expect((await raw(t, G, 'json1')).modRevision).toBe(before.modRevision);
    await t.core.patch(widgets(G, 'v1', 'json1'), { type: 'json', body: [{ op: 'replace', path: '/spec/color', value: 'lime' }] }, {}, ctx);
    await expectStoredV2('json1', { paint: { color: 'lime' }, size: 1, replicas: 1 });
  });

  test('server-side apply through either version merges into the converted object', async () => {
    const applied = (
      await t.core.patch(
        widgets(G, 'v2', 'apply2'),
        { type: 'apply', body: { apiVersion: `${G}/v2`, kind: 'Widget', metadata: { name: 'apply2' }, spec: { size: 5 } } },
        { fieldManager: 'tool', force: true },
        ctx,
      )
    ).object;
    expect(applied.spec).toEqual({ paint: { color: 'c-apply2' }, size: 5, replicas: 1 });
    const stored = await expectStoredV2('apply2', { paint: { color: 'c-apply2' }, size: 5, replicas: 1 });
    expect((stored.metadata.managedFields as Json[]).map((e) => e.manager)).toContain('tool');
    await t.core.patch(
      widgets(G, 'v1', 'apply1'),
      { type: 'apply', body: { apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name: 'apply1' }, spec: { color: 'plum' } } },
      { fieldManager: 'tool', force: true },
      ctx,
    );
    await expectStoredV2('apply1', { paint: { color: 'plum' }, size: 1, replicas: 1 });
  });

  test('a /status update through either version keeps the converted rest of the object', async () => {
    for (const [version, name] of [
      ['v2', 'status2'],
      ['v1', 'status1'],
    ] as const) {
      const got = await t.core.get(widgets(G, version, name, 'status'), {}, ctx);
      const result = (await t.core.update(widgets(G, version, name, 'status'), { ...got, status: { replicas: 4, phase: 'Scaled' } }, {}, ctx)).object;
      expect(result.apiVersion).toBe(`${G}/${version}`);
      await expectStoredV2(name, { paint: { color: `c-${name}` }, size: 1, replicas: 1 }, { replicas: 4, phase: 'Scaled' });
    }
  });

  test('/scale through either version sets the replicas of the converted object', async () => {
    for (const [version, name] of [
      ['v2', 'scale2'],
      ['v1', 'scale1'],
    ] as const) {
      const scale = await t.core.get(widgets(G, version, name, 'scale'), {}, ctx);
      await t.core.update(widgets(G, version, name, 'scale'), { ...scale, spec: { replicas: 6 } }, {}, ctx);
      await expectStoredV2(name, { paint: { color: `c-${name}` }, size: 1, replicas: 6 });
    }
  });

  test('a delete with preconditions that marks the object Terminating stores it as v2', async () => {
    await t.core.patch(widgets(G, 'v1', 'del2'), { type: 'merge', body: { metadata: { finalizers: ['example.com/hold'] } } }, {}, ctx);
    // The patch through v1 stored it as v2 already; put it back as v1 to delete an object the old storage version wrote.
    const v1 = await raw(t, G, 'del2');
    const asV1 = { ...v1.object, apiVersion: `${G}/v1`, spec: { color: 'c-del2', size: 1, replicas: 1 } };
    await t.store.update(objectKey(`${G}/widgets`, NS, 'del2'), Buffer.from(JSON.stringify(asV1)), v1.modRevision);
    await statusOf(t.core.delete(widgets(G, 'v2', 'del2'), { preconditions: { uid: 'another' } }, ctx), 409, 'Conflict');
    const { modRevision } = await raw(t, G, 'del2');
    await t.core.delete(widgets(G, 'v2', 'del2'), { preconditions: { uid: uids.del2, resourceVersion: String(modRevision) } }, ctx);
    const stored = await expectStoredV2('del2', { paint: { color: 'c-del2' }, size: 1, replicas: 1 });
    expect(stored.metadata.deletionTimestamp).toBeDefined();
    expect(stored.metadata.finalizers).toEqual(['example.com/hold']);
  });

  test('a webhook that fails during a write answers 500 naming it and stores nothing', async () => {
    const before = await raw(t, G, 'fail');
    hook.mode = 'fail';
    const message = `Internal error occurred: conversion webhook for ${G}/v1, Kind=Widget failed: cannot convert this widget`;
    for (const version of ['v2', 'v1']) {
      const merge = await statusOf(t.core.patch(widgets(G, version, 'fail'), { type: 'merge', body: { spec: { size: 9 } } }, {}, ctx), 500, 'InternalError');
      expect(merge.status.message).toBe(message);
    }
    const status = await statusOf(
      t.core.update(
        widgets(G, 'v2', 'fail', 'status'),
        { apiVersion: `${G}/v2`, kind: 'Widget', metadata: { name: 'fail' }, status: { replicas: 2 } },
        {},
        ctx,
      ),
      500,
      'InternalError',
    );
    expect(status.status.message).toBe(message);
    await statusOf(t.core.delete(widgets(G, 'v2', 'fail'), { gracePeriodSeconds: 0 }, ctx), 500, 'InternalError');
    const after = await raw(t, G, 'fail');
    expect(after.modRevision).toBe(before.modRevision);
    expect(after.object).toEqual(before.object);
  });
});

describe('writes of objects an earlier storage version wrote, conversion None', () => {
  const backend = coreBackend('embedded');
  let t: TestCore;
  let uids: Record<string, string>;
  const G = PLAIN;

  beforeAll(async () => {
    t = await backend.open();
    await t.core.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: NS } }, {}, ctx);
    uids = await writeThenMoveStorage(t, G, ['merge', 'status', 'scale', 'apply'], [plainV1, plainV2]);
  });
  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
  });

  async function expectStoredV2(name: string, spec: Json, status: Json): Promise<void> {
    const { object } = await raw(t, G, name);
    expect(object.apiVersion).toBe(`${G}/v2`);
    expect(object.spec).toEqual(spec);
    expect(object.status).toEqual(status);
    expectKept(object, uids[name]!);
  }

  test("reads and writes through v2 see the object pruned and defaulted to v2's schema", async () => {
    expect((await t.core.get(widgets(G, 'v2', 'merge'), {}, ctx)).spec).toEqual({ size: 1, replicas: 1, shade: 'dark' });
    const merged = (await t.core.patch(widgets(G, 'v2', 'merge'), { type: 'merge', body: { spec: { size: 2 } } }, {}, ctx)).object;
    expect(merged).toMatchObject({ apiVersion: `${G}/v2`, spec: { size: 2, replicas: 1, shade: 'dark' } });
    await expectStoredV2('merge', { size: 2, replicas: 1, shade: 'dark' }, { replicas: 1, phase: 'Ready' });
    const got = await t.core.get(widgets(G, 'v2', 'status', 'status'), {}, ctx);
    await t.core.update(widgets(G, 'v2', 'status', 'status'), { ...got, status: { replicas: 3, phase: 'Up' } }, {}, ctx);
    await expectStoredV2('status', { size: 1, replicas: 1, shade: 'dark' }, { replicas: 3, phase: 'Up' });
    const scale = await t.core.get(widgets(G, 'v2', 'scale', 'scale'), {}, ctx);
    await t.core.update(widgets(G, 'v2', 'scale', 'scale'), { ...scale, spec: { replicas: 4 } }, {}, ctx);
    await expectStoredV2('scale', { size: 1, replicas: 4, shade: 'dark' }, { replicas: 1, phase: 'Ready' });
  });

  test("server-side apply through v1 is stored as v2, pruned to its schema (v2's defaults are a read's and a v2 write's)", async () => {
    await t.core.patch(
      widgets(G, 'v1', 'apply'),
      { type: 'apply', body: { apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name: 'apply' }, spec: { size: 8 } } },
      { fieldManager: 'tool', force: true },
      ctx,
    );
    await expectStoredV2('apply', { size: 8, replicas: 1 }, { replicas: 1, phase: 'Ready' });
  });
});
