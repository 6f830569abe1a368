/**
 * Custom resources through the core on both backends (issue 52): a CustomResourceDefinition
 * established by the core's own controller, its objects served from the watch cache with every
 * read rule of a built-in type, its subresources, validation from the schema, a restart that
 * serves what was stored, and deletion with the cleanup finalizer.
 */
import type { ApiObject, ResourceTarget, WatchEvent } from '../../../src/core';
import { BACKENDS, Recorder, coreBackend, ctx, naming, statusOf, type TestCore } from '../registry/core-backends';
import { eventually } from '../../support/eventually';
import { createGrpcCoreClient, startGrpcCoreServer } from '../../../src/grpc';

const GROUP = 'stable.example.com';
const crdTarget = (name?: string): ResourceTarget => ({ group: naming.groups.apiextensions, version: 'v1', resource: 'customresourcedefinitions', name });
const widgets = (ns: string | undefined, name?: string, subresource?: string): ResourceTarget => ({
  group: GROUP,
  version: 'v1',
  resource: 'widgets',
  namespace: ns,
  name,
  ...(subresource ? { subresource } : {}),
});

const WIDGET_CRD = {
  apiVersion: `${naming.groups.apiextensions}/v1`,
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  color: { type: 'string', enum: ['red', 'blue'] },
                  replicas: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
                  tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
                  extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                },
              },
              status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
            },
          },
        },
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
        },
        selectableFields: [{ jsonPath: '.spec.color' }],
      },
    ],
  },
};

const widget = (name: string, spec: Record<string, unknown> = {}, labels?: Record<string, string>): ApiObject => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Widget',
  metadata: { name, ...(labels ? { labels } : {}) },
  spec,
});

async function served(t: TestCore): Promise<void> {
  await eventually(() => t.core.resources.some((d) => d.group === GROUP && d.resource === 'widgets'), { what: 'widgets served' });
}

describe.each(BACKENDS)('custom resources on %s', (name) => {
  const backend = coreBackend(name);
  let t: TestCore;

  beforeAll(async () => {
    t = await backend.open({ compactionIntervalMs: 0 });
    for (const ns of ['lists', 'watch', 'scale'])
      await t.core.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: ns } }, {}, ctx);
    await t.core.create(crdTarget(), WIDGET_CRD, {}, ctx);
    await served(t);
  });
  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
  });

  test('the definition is established with its accepted names and stored version', async () => {
    const crd = (await t.core.get(crdTarget(`widgets.${GROUP}`), {}, ctx)) as ApiObject & { status: Record<string, any> };
    expect(crd.status.acceptedNames).toMatchObject({ plural: 'widgets', kind: 'Widget', listKind: 'WidgetList', singular: 'widget' });
    expect(crd.status.storedVersions).toEqual(['v1']);
    expect(crd.status.conditions.map((c: { type: string; status: string; reason: string }) => `${c.type}=${c.status}/${c.reason}`)).toEqual(
      expect.arrayContaining(['NamesAccepted=True/NoConflicts', 'Established=True/InitialNamesAccepted']),
    );
  });

  test('create defaults and prunes from the schema; the cache serves gets at resourceVersion 0; generation counts everything but metadata and status', async () => {
    const warnings: string[] = [];
    const created = (
      await t.core.create(widgets('default'), widget('w1', { color: 'red', bogus: 1, extra: { any: { thing: true } } }), {}, { ...ctx, warnings })
    ).object as ApiObject & { spec: Record<string, unknown> };
    expect(warnings).toEqual(['unknown field "spec.bogus"']);
    expect(created.spec).toEqual({ color: 'red', replicas: 1, extra: { any: { thing: true } } });
    expect(created.metadata?.generation).toBe(1);
    const cached = await t.core.get(widgets('default', 'w1'), { resourceVersion: '0' }, ctx);
    expect(cached.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
    const updated = (
      await t.core.update(widgets('default', 'w1'), { ...cached, spec: { ...(cached.spec as object), color: 'blue' }, status: { replicas: 9 } }, {}, ctx)
    ).object;
    expect(updated.metadata?.generation).toBe(2);
    // The main resource ignores status (the status subresource owns it).
    expect(updated.status).toBeUndefined();
    const withStatus = (
      await t.core.update(widgets('default', 'w1', 'status'), { ...updated, spec: { color: 'red' }, status: { replicas: 2, selector: 'app=w' } }, {}, ctx)
    ).object;
    expect(withStatus.status).toEqual({ replicas: 2, selector: 'app=w' });
    expect((withStatus.spec as { color: string }).color).toBe('blue');
    expect(withStatus.metadata?.generation).toBe(2);
  });

  test('schema validation is 422 with upstream paths; an update leaving an invalid value unchanged is not refused for it', async () => {
    const err = await statusOf(t.core.create(widgets('default'), widget('bad', { color: 'green', replicas: 20 }), {}, ctx), 422, 'Invalid');
    expect(err.status.details?.causes?.map((c) => c.field)).toEqual(expect.arrayContaining(['spec.color', 'spec.replicas']));
    expect(err.status.message).toContain('spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10');
    expect(err.status.message).toContain('spec.color: Unsupported value: "green": supported values: "red", "blue"');
    await statusOf(t.core.create(widgets('default'), widget('dup', { tags: ['a', 'a'] }), {}, ctx), 422, 'Invalid');
    await statusOf(t.core.get(widgets('default', 'bad'), {}, ctx), 404, 'NotFound');
  });

  test('lists select by labels and by selectable fields, in pages; an unknown field label is refused', async () => {
    for (const [n, color] of [
      ['l1', 'red'],
      ['l2', 'blue'],
      ['l3', 'red'],
    ] as const) {
      await t.core.create(widgets('lists'), widget(n, { color }, { team: color === 'red' ? 'a' : 'b' }), {}, ctx);
    }
    const byField = await t.core.list(widgets('lists'), { fieldSelector: 'spec.color=red' }, ctx);
    expect(byField.items.map((i) => i.metadata?.name)).toEqual(['l1', 'l3']);
    expect(byField.kind).toBe('WidgetList');
    expect(byField.items[0]!.kind).toBe('Widget');
    const byLabel = await t.core.list(widgets('lists'), { labelSelector: 'team=b' }, ctx);
    expect(byLabel.items.map((i) => i.metadata?.name)).toEqual(['l2']);
    const page = await t.core.list(widgets('lists'), { limit: 2 }, ctx);
    expect(page.items).toHaveLength(2);
    const rest = await t.core.list(widgets('lists'), { limit: 2, continue: page.metadata.continue }, ctx);
    expect(rest.items.map((i) => i.metadata?.name)).toEqual(['l3']);
    await statusOf(t.core.list(widgets('lists'), { fieldSelector: 'spec.size=1' }, ctx), 400, 'BadRequest');
  });

  test('watches see changes, resume from a resourceVersion and start with the initial events', async () => {
    const start = await t.core.list(widgets('watch'), {}, ctx);
    const rec = new Recorder(await t.core.watch(widgets('watch'), { resourceVersion: start.metadata.resourceVersion }, ctx));
    const a = (await t.core.create(widgets('watch'), widget('a'), {}, ctx)).object;
    await t.core.delete(widgets('watch', 'a'), {}, ctx);
    await eventually(() => rec.events.length >= 2, { what: 'two events' });
    expect(rec.events.map((e: WatchEvent) => `${e.type} ${(e.object as ApiObject).metadata?.name}`)).toEqual(['ADDED a', 'DELETED a']);
    rec.stream.close();
    const resumed = new Recorder(await t.core.watch(widgets('watch'), { resourceVersion: a.metadata!.resourceVersion }, ctx));
    await eventually(() => resumed.events.length >= 1, { what: 'the deletion replayed' });
    expect(resumed.events[0]!.type).toBe('DELETED');
    resumed.stream.close();
    await t.core.create(widgets('watch'), widget('b'), {}, ctx);
    const initial = new Recorder(
      await t.core.watch(widgets('watch'), { sendInitialEvents: true, allowWatchBookmarks: true, resourceVersionMatch: 'NotOlderThan' }, ctx),
    );
    await eventually(() => initial.events.some((e) => e.type === 'BOOKMARK'), { what: 'the initial-events-end bookmark' });
    expect(initial.events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'b' } } });
    initial.stream.close();
  });

  test('the scale subresource reads and writes the schema paths', async () => {
    await t.core.create(widgets('scale'), widget('s', { replicas: 2 }), {}, ctx);
    const scale = await t.core.get(widgets('scale', 's', 'scale'), {}, ctx);
    expect(scale).toMatchObject({ kind: 'Scale', spec: { replicas: 2 }, status: { replicas: 0 } });
    await t.core.update(widgets('scale', 's', 'scale'), { ...scale, spec: { replicas: 5 } }, {}, ctx);
    const after = await t.core.get(widgets('scale', 's'), {}, ctx);
    expect((after.spec as { replicas: number }).replicas).toBe(5);
    await statusOf(
      t.core.update(
        widgets('scale', 's', 'scale'),
        { ...scale, metadata: { ...scale.metadata, resourceVersion: after.metadata?.resourceVersion }, spec: { replicas: 50 } },
        {},
        ctx,
      ),
      422,
      'Invalid',
    );
  });

  test('a dry run stores nothing; a strategic merge patch is refused', async () => {
    await t.core.create(widgets('default'), widget('dry'), { dryRun: ['All'] }, ctx);
    await statusOf(t.core.get(widgets('default', 'dry'), {}, ctx), 404, 'NotFound');
    await t.core.create(widgets('default'), widget('patched', { color: 'red' }), {}, ctx);
    const merged = await t.core.patch(widgets('default', 'patched'), { type: 'merge', body: { spec: { color: 'blue' } } }, {}, ctx);
    expect((merged.object.spec as { color: string }).color).toBe('blue');
    await statusOf(t.core.patch(widgets('default', 'patched'), { type: 'strategic', body: { spec: { color: 'red' } } }, {}, ctx), 415, 'UnsupportedMediaType');
  });

  test('another core on the same data serves the stored definitions and objects once ready', async () => {
    const again = await backend.open(name === 'embedded' ? { shareWith: t } : {});
    if (name === 'embedded') {
      // One SQLite file takes one process: the second core opened on it reads through the same store.
      expect(again.core.resources.some((d) => d.group === GROUP)).toBe(true);
    } else {
      expect(again.core.resources.some((d) => d.group === GROUP)).toBe(true);
      expect((await again.core.get(widgets('default', 'w1'), { resourceVersion: '0' }, ctx)).metadata?.name).toBe('w1');
    }
  });

  test('deleting the definition removes its objects, then itself, and its path answers 404', async () => {
    await t.core.delete(crdTarget(`widgets.${GROUP}`), {}, ctx);
    await eventually(
      async () => {
        try {
          await t.core.get(crdTarget(`widgets.${GROUP}`), {}, ctx);
          return false;
        } catch {
          return true;
        }
      },
      { what: 'the definition gone' },
    ).catch(async (err) => {
      const crd = await t.core.get(crdTarget(`widgets.${GROUP}`), {}, ctx);
      throw new Error(`${err.message}: ${JSON.stringify({ metadata: crd.metadata, status: crd.status })}`);
    });
    await eventually(() => !t.core.resources.some((d) => d.group === GROUP), { what: 'widgets no longer served' });
    await statusOf(t.core.get(widgets('default', 'w1'), {}, ctx), 404, 'NotFound');
    // The objects are gone from the store too: a definition made again starts empty.
    await t.core.create(crdTarget(), WIDGET_CRD, {}, ctx);
    await served(t);
    expect((await t.core.list(widgets(undefined), {}, ctx)).items).toEqual([]);
  });
});

describe('custom resources at the gRPC door', () => {
  const backend = coreBackend('embedded');
  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
  });

  test('a custom resource is created, read, listed and watched through the gRPC door as an unstructured object', async () => {
    const t = await backend.open();
    await t.core.create(crdTarget(), WIDGET_CRD, {}, ctx);
    await served(t);
    const server = await startGrpcCoreServer(t.core, { address: '127.0.0.1:0', authentication: 'trust-caller' });
    const client = createGrpcCoreClient(server.address);
    try {
      const rec = new Recorder(await client.watch(widgets('default'), {}, ctx));
      const created = (await client.create(widgets('default'), widget('g1', { color: 'red' }), {}, ctx)).object;
      expect(created).toMatchObject({ apiVersion: `${GROUP}/v1`, kind: 'Widget', spec: { color: 'red', replicas: 1 } });
      expect((await client.get(widgets('default', 'g1'), {}, ctx)).metadata?.uid).toBe(created.metadata?.uid);
      const list = await client.list(widgets('default'), {}, ctx);
      expect(list.kind).toBe('WidgetList');
      await eventually(() => rec.events.some((e) => e.type === 'ADDED'), { what: 'the ADDED event over gRPC' });
      rec.stream.close();
      await statusOf(client.create(widgets('default'), widget('g2', { color: 'pink' }), {}, ctx), 422, 'Invalid');
    } finally {
      client.close();
      await server.close();
    }
  });
});
