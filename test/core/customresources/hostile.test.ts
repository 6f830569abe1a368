/**
 * Bad input to custom resources (issue 52): schema bombs, a definition too large, a kind that
 * collides with a built-in one, many definitions from one client, and objects that no longer
 * fit a changed schema. No 5xx, nothing stored lost or half-written.
 */
import type { ApiObject, ResourceTarget } from '../../../src/core';
import { StatusError } from '../../../src/status';
import { coreBackend, ctx, naming, type TestCore } from '../registry/core-backends';
import { eventually } from '../../support/eventually';

const crds = (name?: string): ResourceTarget => ({ group: naming.groups.apiextensions, version: 'v1', resource: 'customresourcedefinitions', name });

function crd(group: string, plural: string, kind: string, schema: Record<string, unknown>, extra: Record<string, unknown> = {}): ApiObject {
  return {
    apiVersion: `${naming.groups.apiextensions}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, ...extra },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, kind },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    },
  };
}

/** The write's outcome: ok, or the Status code it failed with (never a 5xx, never a throw of anything else). */
async function outcome(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (err) {
    if (!(err instanceof StatusError)) throw err;
    return err.code;
  }
}

describe('custom resources under bad input', () => {
  const backend = coreBackend('embedded');
  let t: TestCore;
  beforeAll(async () => {
    t = await backend.open();
  });
  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
  });

  test('schema bombs are refused or served, never a 5xx', async () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 2_000; i++) deep = { type: 'object', properties: { a: deep } };
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    const enumBomb = { type: 'object', properties: { spec: { type: 'string', enum: Array.from({ length: 100_000 }, (_, i) => `v${i}`) } } };
    const bigDefault = {
      type: 'object',
      properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, default: { blob: 'x'.repeat(500_000) } } },
    };
    const codes = [];
    for (const [plural, schema] of [
      ['deeps', { type: 'object', properties: { spec: deep } }],
      ['wides', wide],
      ['enums', enumBomb],
      ['defaults', bigDefault],
    ] as const) {
      codes.push(
        await outcome(
          t.core.create(
            crds(),
            crd(
              'bombs.example.com',
              plural,
              plural.slice(0, -1).replace(/^./, (c) => c.toUpperCase()),
              schema,
            ),
            {},
            ctx,
          ),
        ),
      );
    }
    for (const code of codes) expect(code === 200 || (code >= 400 && code < 500)).toBe(true);
    // The server still answers, and what was accepted is served.
    expect((await t.core.list(crds(), {}, ctx)).items.length).toBe(codes.filter((c) => c === 200).length);
  }, 120_000);

  test('a definition naming a built-in resource of a built-in group is not served over it', async () => {
    const group = naming.groups.events;
    const shadow = crd(
      group,
      'events',
      'Event',
      { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      {
        annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes/kubernetes/pull/1' },
      },
    );
    const code = await outcome(t.core.create(crds(), shadow, {}, ctx));
    expect(code === 200 || code === 422).toBe(true);
    // The built-in type still answers as itself.
    const builtin = t.core.resources.filter((d) => d.group === group && d.resource === 'events');
    expect(builtin.every((d) => !d.custom)).toBe(true);
  });

  test('many definitions from one client are all established and served', async () => {
    const n = 200;
    for (let i = 0; i < n; i++) {
      await t.core.create(
        crds(),
        crd('many.example.com', `things${i}`, `Thing${i}`, { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } } }),
        {},
        ctx,
      );
    }
    await eventually(() => t.core.resources.filter((d) => d.group === 'many.example.com').length === n, { what: `${n} definitions served`, timeoutMs: 60_000 });
  }, 120_000);

  test('an object that no longer fits a changed schema still reads, with the new defaults; writes are validated, an unchanged invalid value ratcheted', async () => {
    const group = 'change.example.com';
    const target = (name?: string): ResourceTarget => ({ group, version: 'v1', resource: 'gadgets', namespace: 'default', name });
    const loose = { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, note: { type: 'string' } } } } };
    await t.core.create(crds(), crd(group, 'gadgets', 'Gadget', loose), {}, ctx);
    await eventually(() => t.core.resources.some((d) => d.group === group), { what: 'gadgets served' });
    await t.core.create(target(), { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 50 } }, {}, ctx);
    const current = await t.core.get(crds(`gadgets.${group}`), {}, ctx);
    const strict = {
      type: 'object',
      properties: { spec: { type: 'object', properties: { size: { type: 'integer', maximum: 10 }, note: { type: 'string', default: 'none' } } } },
    };
    const spec = current.spec as { versions: { schema: unknown }[] };
    await t.core.update(
      crds(`gadgets.${group}`),
      { ...current, spec: { ...spec, versions: [{ ...spec.versions[0], schema: { openAPIV3Schema: strict } }] } },
      {},
      ctx,
    );
    await eventually(
      () => {
        const def = t.core.resources.find((d) => d.group === group);
        return JSON.stringify((def?.custom?.served as { schema?: unknown })?.schema).includes('"maximum":10');
      },
      { what: 'the stricter schema served' },
    );
    const read = await t.core.get(target('g'), {}, ctx);
    // Read as stored, with the new schema's defaults (upstream defaults on every read).
    expect(read.spec).toEqual({ size: 50, note: 'none' });
    expect((await t.core.list(target(), { resourceVersion: '0' }, ctx)).items[0]!.spec).toEqual({ size: 50, note: 'none' });
    // Ratcheting: the invalid size is left as it was, another field changes.
    const noted = await t.core.update(target('g'), { ...read, spec: { size: 50, note: 'kept' } }, {}, ctx);
    expect((noted.object.spec as { note: string }).note).toBe('kept');
    // A changed invalid value is refused.
    const refused = await outcome(t.core.update(target('g'), { ...noted.object, spec: { size: 51, note: 'kept' } }, {}, ctx));
    expect(refused).toBe(422);
  });
});
