/**
 * Several versions of a custom resource and its conversion webhook, through the core (issue 53):
 * a real HTTPS webhook started here (loopback, its own CA) converts Widgets between v1 (stored)
 * and v2; gets, lists (one call per list), watch events and writes in v2 are converted; a
 * webhook that hangs, or answers another uid, count or kind, is a 500 naming it; the storage
 * version moves to v2 for new writes only, and `status.storedVersions` keeps both.
 */
import type { ApiObject, ResourceTarget, WatchEvent } from '../../../src/core';
import { objectKey } from '../../../src/core/storage/keys';
import { coreBackend, ctx, naming, statusOf, type TestCore } from '../registry/core-backends';
import { eventually } from '../../support/eventually';
import { type ConversionWebhook, startConversionWebhook } from '../../support/conversion-webhook';

const GROUP = 'conv.example.com';
const crdTarget = (name?: string): ResourceTarget => ({ group: naming.groups.apiextensions, version: 'v1', resource: 'customresourcedefinitions', name });
const widgets = (version: string, ns: string | undefined, name?: string): ResourceTarget => ({
  group: GROUP,
  version,
  resource: 'widgets',
  namespace: ns,
  name,
});
const TIMEOUT_MS = 2_000;

const schemaV1 = { type: 'object', properties: { spec: { type: 'object', properties: { color: { type: 'string' }, size: { type: 'integer' } } } } };
const schemaV2 = {
  type: 'object',
  properties: { spec: { type: 'object', properties: { paint: { type: 'object', properties: { color: { type: 'string' } } }, size: { type: 'integer' } } } },
};

function widgetCrd(hook: ConversionWebhook, storage: 'v1' | 'v2' = 'v1') {
  return {
    apiVersion: `${naming.groups.apiextensions}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: hook.url, caBundle: hook.caBundle } } },
      versions: [
        { name: 'v1', served: true, storage: storage === 'v1', deprecated: true, schema: { openAPIV3Schema: schemaV1 } },
        { name: 'v2', served: true, storage: storage === 'v2', schema: { openAPIV3Schema: schemaV2 } },
      ],
    },
  };
}

const v2Widget = (name: string, color: string): ApiObject => ({
  apiVersion: `${GROUP}/v2`,
  kind: 'Widget',
  metadata: { name },
  spec: { paint: { color }, size: 3 },
});

async function stored(t: TestCore, ns: string, name: string): Promise<Record<string, any>> {
  const { kv } = await t.store.get(objectKey(`${GROUP}/widgets`, ns, name));
  return JSON.parse(Buffer.from(kv!.value).toString('utf8'));
}

describe('conversion webhook through the core', () => {
  const backend = coreBackend('embedded');
  let t: TestCore;
  let hook: ConversionWebhook;

  beforeAll(async () => {
    hook = await startConversionWebhook();
    t = await backend.open({ conversionWebhookTimeoutMs: TIMEOUT_MS });
    for (const ns of ['conv', 'watch', 'bad']) await t.core.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: ns } }, {}, ctx);
    await t.core.create(crdTarget(), widgetCrd(hook), {}, ctx);
    await eventually(() => ['v1', 'v2'].every((v) => t.core.resources.some((d) => d.group === GROUP && d.version === v)), { what: 'widgets served' });
  });
  afterEach(() => {
    hook.mode = 'ok';
  });
  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
    await hook.close();
  });

  test("each version has its own schema; v1 is deprecated with upstream's default warning", () => {
    const v1 = t.core.resources.find((d) => d.group === GROUP && d.version === 'v1')!;
    const v2 = t.core.resources.find((d) => d.group === GROUP && d.version === 'v2')!;
    expect(v1.deprecation).toEqual({ warning: `${GROUP}/v1 Widget is deprecated; use ${GROUP}/v2 Widget` });
    expect(v2.deprecation).toBeUndefined();
    expect(v2.storedAs?.apiVersion).toBe(`${GROUP}/v1`);
  });

  test('a write in v2 is stored in v1 and answered in v2; a get in either version converts', async () => {
    hook.received.length = 0;
    const created = (await t.core.create(widgets('v2', 'conv'), v2Widget('w1', 'red'), {}, ctx)).object as Record<string, any>;
    expect(created.apiVersion).toBe(`${GROUP}/v2`);
    expect(created.spec).toEqual({ paint: { color: 'red' }, size: 3 });
    // There (v2 → v1) and back for the answer.
    expect(hook.received.map((r) => r.request.desiredAPIVersion)).toEqual([`${GROUP}/v1`, `${GROUP}/v2`]);
    expect(hook.received[0]!.apiVersion).toBe(`${naming.groups.apiextensions}/v1`);
    const raw = await stored(t, 'conv', 'w1');
    expect(raw.apiVersion).toBe(`${GROUP}/v1`);
    expect(raw.spec).toEqual({ color: 'red', size: 3 });
    const asV1 = (await t.core.get(widgets('v1', 'conv', 'w1'), {}, ctx)) as Record<string, any>;
    expect(asV1.spec).toEqual({ color: 'red', size: 3 });
    const asV2 = (await t.core.get(widgets('v2', 'conv', 'w1'), {}, ctx)) as Record<string, any>;
    expect(asV2).toMatchObject({ apiVersion: `${GROUP}/v2`, kind: 'Widget', spec: { paint: { color: 'red' }, size: 3 } });
    expect(asV2.metadata.uid).toBe(created.metadata.uid);
    // An update through v2 too.
    const updated = (await t.core.update(widgets('v2', 'conv', 'w1'), { ...asV2, spec: { paint: { color: 'blue' }, size: 4 } }, {}, ctx)).object as Record<
      string,
      any
    >;
    expect(updated.spec).toEqual({ paint: { color: 'blue' }, size: 4 });
    expect((await stored(t, 'conv', 'w1')).spec).toEqual({ color: 'blue', size: 4 });
  });

  test('a list converts all its objects in one webhook call', async () => {
    for (let i = 0; i < 20; i++)
      await t.core.create(widgets('v1', 'conv'), { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: `l${i}` }, spec: { color: 'green' } }, {}, ctx);
    hook.received.length = 0;
    const list = await t.core.list(widgets('v2', 'conv'), {}, ctx);
    expect(list.items).toHaveLength(21);
    expect(list.items.every((i) => (i.spec as { paint?: unknown }).paint !== undefined)).toBe(true);
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]!.request.objects).toHaveLength(21);
    // The converted objects are kept with the cache's: listing again calls no more.
    await t.core.list(widgets('v2', 'conv'), {}, ctx);
    expect(hook.received).toHaveLength(1);
    // The storage version's list calls nothing.
    await t.core.list(widgets('v1', 'conv'), {}, ctx);
    expect(hook.received).toHaveLength(1);
  });

  test('watch events are converted; watchers of one version share one conversion per event', async () => {
    const a = await t.core.watch(widgets('v2', 'watch'), {}, ctx);
    const b = await t.core.watch(widgets('v2', 'watch'), {}, ctx);
    const seen = async (stream: AsyncIterable<WatchEvent>): Promise<WatchEvent> => {
      for await (const event of stream) return event;
      throw new Error('watch ended');
    };
    hook.received.length = 0;
    const next = [seen(a), seen(b)];
    await t.core.create(widgets('v1', 'watch'), { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'x' }, spec: { color: 'teal' } }, {}, ctx);
    const [ea, eb] = await Promise.all(next);
    for (const e of [ea!, eb!]) {
      expect(e.type).toBe('ADDED');
      expect(e.object).toMatchObject({ apiVersion: `${GROUP}/v2`, spec: { paint: { color: 'teal' } } });
    }
    expect(hook.received).toHaveLength(1);
    a.close();
    b.close();
  });

  test('a webhook that hangs is cut at its timeout: a 500 naming it', async () => {
    await t.core.create(widgets('v1', 'bad'), { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'b1' }, spec: { color: 'red' } }, {}, ctx);
    hook.mode = 'hang';
    hook.received.length = 0;
    const pending = statusOf(t.core.get(widgets('v2', 'bad', 'b1'), {}, ctx), 500, 'InternalError');
    await eventually(() => hook.received.length === 1, { what: 'the webhook called' });
    t.clock.advance(TIMEOUT_MS);
    const err = await pending;
    expect(err.status.message).toBe(
      `Internal error occurred: conversion webhook for ${GROUP}/v1, Kind=Widget failed: Post "${hook.url}?timeout=2s": context deadline exceeded`,
    );
  });

  test.each([
    [
      'wrong-uid',
      /^Internal error occurred: conversion webhook for conv\.example\.com\/v1, Kind=Widget failed: expected response\.uid="[0-9a-f-]+", got "not-the-uid"$/,
    ],
    ['wrong-count', /^Internal error occurred: conversion webhook for conv\.example\.com\/v1, Kind=Widget returned 2 objects, expected 1$/],
    [
      'wrong-kind',
      /^Internal error occurred: conversion webhook for conv\.example\.com\/v1, Kind=Widget returned invalid object at index 0: invalid kind \(expected Widget, received Gadget\)$/,
    ],
    ['fail', /^Internal error occurred: conversion webhook for conv\.example\.com\/v1, Kind=Widget failed: cannot convert this widget$/],
  ] as const)('a webhook answering with %s is refused with a 500', async (mode, message) => {
    await t.core
      .create(widgets('v1', 'bad'), { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: mode }, spec: { color: 'red' } }, {}, ctx)
      .catch(() => undefined);
    hook.mode = mode;
    const err = await statusOf(t.core.get(widgets('v2', 'bad', mode), {}, ctx), 500, 'InternalError');
    expect(err.status.message).toMatch(message);
    // A list is refused whole, never answered with wrong objects; a write is not stored.
    await statusOf(t.core.list(widgets('v2', 'bad'), {}, ctx), 500, 'InternalError');
    await statusOf(t.core.create(widgets('v2', 'bad'), v2Widget(`${mode}-new`, 'red'), {}, ctx), 500, 'InternalError');
    hook.mode = 'ok';
    await statusOf(t.core.get(widgets('v1', 'bad', `${mode}-new`), {}, ctx), 404, 'NotFound');
    // The next read calls again and succeeds.
    expect(((await t.core.get(widgets('v2', 'bad', mode), {}, ctx)).spec as Record<string, unknown>).paint).toEqual({ color: 'red' });
  });

  test('a storage version change affects new writes only; storedVersions keeps both', async () => {
    const crd = (await t.core.get(crdTarget(`widgets.${GROUP}`), {}, ctx)) as ApiObject & { spec: Record<string, any> };
    await t.core.update(crdTarget(`widgets.${GROUP}`), { ...crd, spec: widgetCrd(hook, 'v2').spec }, {}, ctx);
    await eventually(
      async () => ((await t.core.get(crdTarget(`widgets.${GROUP}`), {}, ctx)).status as { storedVersions: string[] }).storedVersions.join() === 'v1,v2',
      { what: 'storedVersions v1,v2' },
    );
    await eventually(() => t.core.resources.some((d) => d.group === GROUP && d.version === 'v1' && d.storedAs?.apiVersion === `${GROUP}/v2`), {
      what: 'v2 stored',
    });
    await eventually(() => t.core.resources.some((d) => d.group === GROUP && d.version === 'v2' && (d.custom as { readsOthers?: unknown })?.readsOthers), {
      what: 'v2 reads v1 objects',
    });
    await t.core.create(widgets('v1', 'conv'), { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'after' }, spec: { color: 'pink' } }, {}, ctx);
    expect(await stored(t, 'conv', 'after')).toMatchObject({ apiVersion: `${GROUP}/v2`, spec: { paint: { color: 'pink' } } });
    // An object written before stays v1 in the store, and reads in v2 through the webhook.
    expect((await stored(t, 'conv', 'w1')).apiVersion).toBe(`${GROUP}/v1`);
    const w1 = await eventually(
      async () => {
        const got = await t.core.get(widgets('v2', 'conv', 'w1'), {}, ctx);
        return got.apiVersion === `${GROUP}/v2` && got;
      },
      { what: 'w1 as v2' },
    );
    expect((w1 as ApiObject).spec).toEqual({ paint: { color: 'blue' }, size: 4 });
    const list = await t.core.list(widgets('v2', 'conv'), {}, ctx);
    expect(list.items.every((i) => i.apiVersion === undefined || i.apiVersion === `${GROUP}/v2`)).toBe(true);
    expect(list.items.every((i) => (i.spec as { paint?: unknown }).paint !== undefined)).toBe(true);
  });
});
