/**
 * CRD validation rules through the core (issue 53): a definition whose rule does not compile is
 * refused with the rule's path; a served definition's rules refuse creates and updates with 422
 * Invalid, one cause per failed rule, and ratchet unchanged values.
 */
import type { ApiObject, ResourceTarget } from '../../../src/core';
import { coreBackend, ctx, naming, statusOf, type TestCore } from '../registry/core-backends';
import { eventually } from '../../support/eventually';
import { objectKey } from '../../../src/core/storage/keys';

const GROUP = 'rules.example.com';
const crdTarget = (name?: string): ResourceTarget => ({ group: naming.groups.apiextensions, version: 'v1', resource: 'customresourcedefinitions', name });
const gadgets = (name?: string): ResourceTarget => ({ group: GROUP, version: 'v1', resource: 'gadgets', namespace: 'default', name });
const V = naming.extension('validations');

/** A namespaced definition of `kind` served as `plural`, with one version, v1 (and `version`'s other fields). */
const definition = (kind: string, plural: string, openAPIV3Schema: Record<string, unknown>, version: Record<string, unknown> = {}) => ({
  apiVersion: `${naming.groups.apiextensions}/v1`,
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema }, ...version }],
  },
});

const crd = (specSchema: Record<string, unknown>) => definition('Gadget', 'gadgets', { type: 'object', properties: { spec: specSchema } });

const SPEC = {
  type: 'object',
  [V]: [
    { rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must not exceed maxReplicas' },
    { rule: "quantity(self.memory).compareTo(quantity('64Gi')) <= 0", messageExpression: "'memory ' + self.memory + ' is over 64Gi'" },
  ],
  properties: {
    minReplicas: { type: 'integer' },
    maxReplicas: { type: 'integer' },
    memory: { type: 'string', maxLength: 32 },
    class: { type: 'string', maxLength: 63, [V]: [{ rule: 'self == oldSelf', message: 'class is immutable', reason: 'FieldValueForbidden' }] },
  },
};

const gadget = (name: string, spec: Record<string, unknown>): ApiObject => ({ apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name }, spec });

describe('validation rules through the core', () => {
  const backend = coreBackend('embedded');
  let t: TestCore;
  beforeAll(async () => {
    t = await backend.open({ compactionIntervalMs: 0 });
  });
  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
  });

  test('a rule that does not compile refuses the definition at its path', async () => {
    const bad = crd({ ...SPEC, [V]: [{ rule: 'self.minReplicas <=' }] });
    const err = await statusOf(t.core.create(crdTarget(), bad, {}, ctx), 422, 'Invalid');
    expect(err.status.details?.causes?.map((c) => c.field)).toEqual([`spec.validation.openAPIV3Schema.properties[spec].${V}[0].rule`]);
    expect(err.status.message).toContain('compilation failed: ERROR: <input>:1:');
  });

  test('creates and updates are refused by failed rules with one cause each; unchanged values ratchet', async () => {
    await t.core.create(crdTarget(), crd(SPEC), {}, ctx);
    await eventually(() => t.core.resources.some((d) => d.group === GROUP && d.resource === 'gadgets'), { what: 'gadgets served' });
    const err = await statusOf(
      t.core.create(gadgets(), gadget('g1', { minReplicas: 3, maxReplicas: 1, memory: '128Gi', class: 'a' }), {}, ctx),
      422,
      'Invalid',
    );
    expect(err.status.details?.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "object": minReplicas must not exceed maxReplicas', field: 'spec' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: "object": memory 128Gi is over 64Gi', field: 'spec' },
    ]);
    const created = (await t.core.create(gadgets(), gadget('g1', { minReplicas: 1, maxReplicas: 3, memory: '1Gi', class: 'a' }), {}, ctx)).object;
    const changed = await statusOf(t.core.update(gadgets('g1'), { ...created, spec: { ...(created.spec as object), class: 'b' } }, {}, ctx), 422, 'Invalid');
    expect(err.status.code).toBe(422);
    expect(changed.status.details?.causes).toEqual([{ reason: 'FieldValueForbidden', message: 'Forbidden: class is immutable', field: 'spec.class' }]);
    const updated = (await t.core.update(gadgets('g1'), { ...created, spec: { ...(created.spec as object), maxReplicas: 5 } }, {}, ctx)).object;
    expect((updated.spec as { maxReplicas: number }).maxReplicas).toBe(5);
  });
});

const SPROCKETS = 'sprockets';
const sprockets = (name?: string, subresource?: string): ResourceTarget => ({
  group: GROUP,
  version: 'v1',
  resource: SPROCKETS,
  namespace: 'default',
  name,
  ...(subresource ? { subresource } : {}),
});

/** A definition with the status and scale subresources; `replicasRule` is a rule on `status.replicas`. */
const sprocketCrd = (replicasRule?: Record<string, unknown>) =>
  definition(
    'Sprocket',
    SPROCKETS,
    {
      type: 'object',
      // A rule across spec and status: a /status update runs it.
      [V]: [{ rule: '!has(self.status) || !has(self.status.ready) || self.status.ready <= self.spec.replicas', message: 'ready exceeds replicas' }],
      properties: {
        spec: { type: 'object', properties: { replicas: { type: 'integer' } } },
        status: {
          type: 'object',
          [V]: [{ rule: "!has(self.phase) || self.phase != 'Broken' || has(self.reason)", message: 'a Broken phase needs a reason', fieldPath: '.phase' }],
          properties: {
            phase: { type: 'string', enum: ['Pending', 'Running', 'Broken'] },
            reason: { type: 'string' },
            ready: { type: 'integer' },
            replicas: { type: 'integer', ...(replicasRule ? { [V]: [replicasRule] } : {}) },
          },
        },
      },
    },
    { subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } } },
  );

describe('rules and schema on the status and scale subresources', () => {
  const backend = coreBackend('embedded');
  let t: TestCore;
  const sprocket = (name: string, replicas: number): ApiObject => ({ apiVersion: `${GROUP}/v1`, kind: 'Sprocket', metadata: { name }, spec: { replicas } });
  const putStatus = async (name: string, status: Record<string, unknown>) => {
    const current = await t.core.get(sprockets(name), {}, ctx);
    return t.core.update(sprockets(name, 'status'), { ...current, status }, {}, ctx);
  };

  beforeAll(async () => {
    t = await backend.open({ compactionIntervalMs: 0 });
    await t.core.create(crdTarget(), sprocketCrd(), {}, ctx);
    await eventually(() => t.core.resources.some((d) => d.group === GROUP && d.resource === SPROCKETS), { what: 'sprockets served' });
  });
  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
  });

  test('x-validations under allOf, oneOf or not refuse the definition, as under anyOf', async () => {
    for (const junctor of ['allOf', 'oneOf', 'not'] as const) {
      const clause = { [V]: [{ rule: 'self.size() > 0' }] };
      const bad = crd({ type: 'object', properties: { name: { type: 'string', [junctor]: junctor === 'not' ? clause : [clause] } } });
      const err = await statusOf(t.core.create(crdTarget(), bad, {}, ctx), 422, 'Invalid');
      const at = junctor === 'not' ? 'not' : `${junctor}[0]`;
      expect(err.status.details?.causes).toContainEqual({
        reason: 'FieldValueForbidden',
        message: 'Forbidden: must be empty to be structural',
        field: `spec.validation.openAPIV3Schema.properties[spec].properties[name].${at}.${V}`,
      });
    }
  });

  test("a /status update is checked against the status's schema and every rule of the object", async () => {
    await t.core.create(sprockets(), sprocket('s1', 2), {}, ctx);
    const schema = await statusOf(putStatus('s1', { phase: 'Gone' }), 422, 'Invalid');
    expect(schema.status.details?.causes).toEqual([
      { reason: 'FieldValueNotSupported', message: 'Unsupported value: "Gone": supported values: "Pending", "Running", "Broken"', field: 'status.phase' },
      // An unsupported value blocks the rules, as upstream's hasBlockingErr.
      {
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
        field: '',
      },
    ]);
    const rule = await statusOf(putStatus('s1', { phase: 'Broken' }), 422, 'Invalid');
    expect(rule.status.details?.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "object": a Broken phase needs a reason', field: 'status.phase' },
    ]);
    const across = await statusOf(putStatus('s1', { phase: 'Running', ready: 3 }), 422, 'Invalid');
    expect(across.status.details?.causes).toEqual([{ reason: 'FieldValueInvalid', message: 'Invalid value: "object": ready exceeds replicas', field: '' }]);
    const ok = (await putStatus('s1', { phase: 'Broken', reason: 'gears', ready: 2 })).object;
    expect(ok.status).toEqual({ phase: 'Broken', reason: 'gears', ready: 2 });
  });

  test("the scale subresource's paths must hold replicas from 0 to 2^31-1 (upstream's ValidateScaleSpec and ValidateScaleStatus)", async () => {
    const spec = await statusOf(t.core.create(sprockets(), sprocket('s2', -1), {}, ctx), 422, 'Invalid');
    expect(spec.status.details?.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: -1: should be a non-negative integer', field: '.spec.replicas' },
    ]);
    const created = (await t.core.create(sprockets(), sprocket('s2', 1), {}, ctx)).object;
    await statusOf(t.core.update(sprockets('s2'), { ...created, spec: { replicas: 2 ** 31 } }, {}, ctx), 422, 'Invalid');
    const status = await statusOf(putStatus('s2', { replicas: 2 ** 31 }), 422, 'Invalid');
    expect(status.status.details?.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: 2147483648: should be less than or equal to 2147483647', field: '.status.replicas' },
    ]);
    expect((await putStatus('s2', { replicas: 1 })).object.status).toEqual({ replicas: 1 });
  });

  test('a /status update ratchets: a value a newer rule refuses may stay as it is', async () => {
    await t.core.create(sprockets(), sprocket('s3', 9), {}, ctx);
    await putStatus('s3', { replicas: 9, phase: 'Running' });
    const current = await t.core.get(crdTarget(`${SPROCKETS}.${GROUP}`), {}, ctx);
    const rule = { rule: 'self <= 5', message: 'at most 5 replicas' };
    await t.core.update(crdTarget(`${SPROCKETS}.${GROUP}`), { ...current, spec: sprocketCrd(rule).spec }, {}, ctx);
    await eventually(
      async () => {
        await statusOf(putStatus('s3', { replicas: 8, phase: 'Running' }), 422, 'Invalid');
        return true;
      },
      { what: 'the new rule served' },
    );
    // replicas unchanged: its rule is not run again; the phase may change.
    expect((await putStatus('s3', { replicas: 9, phase: 'Pending' })).object.status).toEqual({ replicas: 9, phase: 'Pending' });
    const changed = await statusOf(putStatus('s3', { replicas: 7, phase: 'Pending' }), 422, 'Invalid');
    expect(changed.status.details?.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "integer": at most 5 replicas', field: 'status.replicas' },
    ]);
  });
});

describe("a definition's update does not refuse rules of an unchanged schema for their own cost", () => {
  const backend = coreBackend('embedded');
  let t: TestCore;
  const NAME = `costlies.${GROUP}`;
  /** A rule whose estimated cost is 2.4 times the per-rule limit (and within the per-schema one). */
  const costly = (description?: string) =>
    definition('Costly', 'costlies', {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          ...(description ? { description } : {}),
          properties: { l: { type: 'array', maxItems: 2000, items: { type: 'string', maxLength: 10 }, [V]: [{ rule: 'self.all(x, self.all(y, x == y))' }] } },
        },
      },
    });
  const ruleCost = `spec.validation.openAPIV3Schema.properties[spec].properties[l].${V}[0].rule`;

  beforeAll(async () => {
    t = await backend.open({ compactionIntervalMs: 0 });
  });
  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
  });

  test('written by an earlier server, it may be updated while its schema stays; a changed schema is checked in full', async () => {
    const created = await statusOf(t.core.create(crdTarget(), costly(), {}, ctx), 422, 'Invalid');
    expect(created.status.details?.causes?.map((c) => c.field)).toEqual([ruleCost]);
    // As an earlier server (with another cost estimate) would have stored it.
    const stored = {
      ...costly(),
      metadata: { name: NAME, uid: 'e7c1b2a4-0000-4000-8000-000000000001', creationTimestamp: '2026-01-01T12:00:00Z', generation: 1 },
    };
    await t.store.create(objectKey(`customresourcedefinitions`, undefined, NAME), Buffer.from(JSON.stringify(stored)));
    // Merge patches, so the definition's controller may write its status meanwhile.
    const labelled = (await t.core.patch(crdTarget(NAME), { type: 'merge', body: { metadata: { labels: { team: 'a' } } } }, {}, ctx)).object;
    expect(labelled.metadata?.labels).toEqual({ team: 'a' });
    const changed = await statusOf(
      t.core.patch(crdTarget(NAME), { type: 'merge', body: { spec: { versions: costly('the spec').spec.versions } } }, {}, ctx),
      422,
      'Invalid',
    );
    expect(changed.status.details?.causes?.map((c) => c.field)).toEqual([ruleCost]);
  });
});
