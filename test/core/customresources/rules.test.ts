/**
 * CRD validation rules through the core (issue 53): a definition whose rule does not compile is
 * refused with the rule's path; a served definition's rules refuse creates and updates with 422
 * Invalid, one cause per failed rule, and ratchet unchanged values.
 */
import type { ApiObject, ResourceTarget } from '../../../src/core';
import { coreBackend, ctx, naming, statusOf, type TestCore } from '../registry/core-backends';
import { eventually } from '../../support/eventually';

const GROUP = 'rules.example.com';
const crdTarget = (name?: string): ResourceTarget => ({ group: naming.groups.apiextensions, version: 'v1', resource: 'customresourcedefinitions', name });
const gadgets = (name?: string): ResourceTarget => ({ group: GROUP, version: 'v1', resource: 'gadgets', namespace: 'default', name });
const V = naming.extension('validations');

const crd = (specSchema: Record<string, unknown>) => ({
  apiVersion: `${naming.groups.apiextensions}/v1`,
  kind: 'CustomResourceDefinition',
  metadata: { name: `gadgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: specSchema } } } }],
  },
});

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
