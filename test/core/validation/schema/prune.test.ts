/**
 * Pruning as apiextensions' decoder does it: structural pruning with the dropped paths (the
 * cases marked "upstream" are pruning.TestPrune's), non-nullable nulls, embedded resources'
 * metadata.
 */
import { unknownFieldMessage } from '../../../../src/core/validation/schema';
import { K8S, PLATFORM, compile, objectWith } from './support';

function prune(schema: unknown, json: string, isResourceRoot = false, ext = K8S) {
  const value = JSON.parse(json) as Record<string, unknown>;
  const result = compile(schema, ext).prune(value, { isResourceRoot });
  return { value, paths: result.unknownFields, error: result.error };
}

describe('structural pruning (upstream cases)', () => {
  it('prunes list elements by the items schema', () => {
    const r = prune({ items: { properties: { a: {}, c: {} } } }, '[{"a":1},{"b":1},{"a":1,"b":2,"c":3}]');
    expect(r.value).toEqual([{ a: 1 }, {}, { a: 1, c: 3 }]);
    expect(r.paths).toEqual(['[1].b', '[2].b']);
  });

  it('prunes everything below a list without an items schema', () => {
    const r = prune({}, '[{"a":1},{"b":1},{"a":1,"b":2,"c":3}]');
    expect(r.value).toEqual([{}, {}, {}]);
    expect(r.paths).toEqual(['[0].a', '[1].b', '[2].a', '[2].b', '[2].c']);
  });

  it('prunes objects in lists in objects', () => {
    const schema = { properties: { array: { items: { properties: { a: {}, c: {} } } }, specified: { properties: { a: {}, c: {} } } } };
    const r = prune(schema, '{"array":[{"a":1},{"b":1},{"a":1,"b":2,"c":3}],"unspecified":{"a":1},"specified":{"a":1,"b":2,"c":3}}');
    expect(r.value).toEqual({ array: [{ a: 1 }, {}, { a: 1, c: 3 }], specified: { a: 1, c: 3 } });
    expect(r.paths).toEqual(['array[1].b', 'array[2].b', 'specified.b', 'unspecified']);
  });

  it('keeps unknown fields under preserve-unknown-fields but prunes the known ones', () => {
    const schema = {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: {
        alpha: { type: 'string' },
        beta: { type: 'number' },
        pruning: {
          type: 'object',
          properties: { preserving: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, pruning: { type: 'object' } },
        },
        preserving: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: {
            preserving: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            preservingUnknownType: { 'x-kubernetes-preserve-unknown-fields': true },
            pruning: { type: 'object' },
          },
        },
        preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields: {
          'x-kubernetes-preserve-unknown-fields': true,
          type: 'object',
          additionalProperties: { type: 'object', properties: { specified: { type: 'object' } } },
        },
        preservingAdditionalPropertiesKeyPruneValues: {
          type: 'object',
          additionalProperties: { type: 'object', properties: { specified: { type: 'object' } } },
        },
      },
    };
    const r = prune(
      schema,
      `{
        "unspecified":"bar", "alpha": "abc", "beta": 42.0, "unspecifiedObject": {"unspecified": "bar"},
        "pruning": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"}, "pruning": {"unspecified": "bar"}, "apiVersion": "unknown", "preserving": {"unspecified": "bar"}},
        "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"}, "pruning": {"unspecified": "bar"}, "preserving": {"unspecified": "bar"}, "preservingUnknownType": [{"foo":true},{"bar":true}]},
        "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {"foo": {"specified": {"unspecified":"bar"}, "unspecified": "bar"}},
        "preservingAdditionalPropertiesKeyPruneValues": {"foo": {"specified": {"unspecified":"bar"}, "unspecified": "bar"}}
      }`,
    );
    expect(r.value).toEqual({
      unspecified: 'bar',
      alpha: 'abc',
      beta: 42,
      unspecifiedObject: { unspecified: 'bar' },
      pruning: { pruning: {}, preserving: { unspecified: 'bar' } },
      preserving: {
        unspecified: 'bar',
        unspecifiedObject: { unspecified: 'bar' },
        pruning: {},
        preserving: { unspecified: 'bar' },
        preservingUnknownType: [{ foo: true }, { bar: true }],
      },
      preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields: { foo: { specified: {} } },
      preservingAdditionalPropertiesKeyPruneValues: { foo: { specified: {} } },
    });
    expect(r.paths).toEqual([
      'preserving.pruning.unspecified',
      'preservingAdditionalPropertiesKeyPruneValues.foo.specified.unspecified',
      'preservingAdditionalPropertiesKeyPruneValues.foo.unspecified',
      'preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.specified.unspecified',
      'preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.unspecified',
      'pruning.apiVersion',
      'pruning.pruning.unspecified',
      'pruning.unspecified',
      'pruning.unspecifiedObject',
    ]);
  });

  it('walks additionalProperties values with their schema, or none for a boolean', () => {
    let r = prune({ properties: { a: {}, c: { additionalProperties: { type: 'integer' } } } }, '{"a":1,"b":1,"c":{"a":1,"b":2,"c":{"a":1}}}');
    expect(r.value).toEqual({ a: 1, c: { a: 1, b: 2, c: {} } });
    expect(r.paths).toEqual(['b', 'c.c.a']);
    r = prune({ properties: { a: {}, c: { additionalProperties: false } } }, '{"a":1,"b":1,"c":{"a":1,"b":2,"c":{"a":1, "apiVersion": "unknown"}}}');
    expect(r.value).toEqual({ a: 1, c: { a: 1, b: 2, c: {} } });
    expect(r.paths).toEqual(['b', 'c.c.a', 'c.c.apiVersion']);
  });

  it('keeps TypeMeta and ObjectMeta of embedded resources, and drops them unrecorded at a plain root', () => {
    const embedded = (props: Record<string, unknown> = {}, preserve = false) => ({
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      ...(preserve ? { 'x-kubernetes-preserve-unknown-fields': true } : {}),
      properties: props,
    });
    const schema = {
      type: 'object',
      properties: {
        pruned: embedded({ spec: { type: 'object' } }),
        preserving: embedded({}, true),
        nested: embedded({ spec: { type: 'object', properties: { embedded: embedded({ spec: { type: 'object' } }) } } }),
      },
    };
    const resource = (inner: Record<string, unknown> = {}) => ({
      apiVersion: 'foo/v1',
      kind: 'Foo',
      unspecified: 'bar',
      metadata: { name: 'instance', unspecified: 'bar' },
      spec: { unspecified: 'bar', ...inner },
    });
    const { spec: _, ...top } = resource();
    const input = { ...top, pruned: resource(), preserving: resource(), nested: resource({ embedded: resource() }) };
    const r = prune(schema, JSON.stringify(input));
    const kept = (spec: Record<string, unknown> = {}) => ({ apiVersion: 'foo/v1', kind: 'Foo', metadata: { name: 'instance', unspecified: 'bar' }, spec });
    // Structural pruning alone leaves metadata: the embedded metadata is coerced after (below).
    expect(r.paths.slice(0, 7)).toEqual([
      'nested.spec.embedded.spec.unspecified',
      'nested.spec.embedded.unspecified',
      'nested.spec.unspecified',
      'nested.unspecified',
      'pruned.spec.unspecified',
      'pruned.unspecified',
      'unspecified',
    ]);
    expect(r.value.pruned).toEqual({ ...kept(), metadata: { name: 'instance' } });
    expect(r.value.nested).toEqual({ ...kept({ embedded: { ...kept(), metadata: { name: 'instance' } } }), metadata: { name: 'instance' } });
    expect(r.value.preserving).toEqual({ ...resource(), metadata: { name: 'instance' } });
    expect(r.value).not.toHaveProperty('apiVersion');
    expect(r.paths.slice(7)).toEqual([
      'nested.metadata.unspecified',
      'nested.spec.embedded.metadata.unspecified',
      'preserving.metadata.unspecified',
      'pruned.metadata.unspecified',
    ]);
  });
});

describe('a resource root', () => {
  const schema = objectWith({
    spec: objectWith({
      replicas: { type: 'integer' },
      selector: objectWith({ app: { type: 'string' } }),
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      nullableName: { type: 'string', nullable: true },
      defaulted: { type: 'string', default: 'x' },
      plain: { type: 'string' },
      list: { type: 'array', items: objectWith({ a: { type: 'string' } }) },
    }),
  });

  it('keeps apiVersion, kind and metadata for the generic code, prunes the rest, and sorts the paths', () => {
    const value: Record<string, unknown> = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w', whatever: 1 },
      zeta: 1,
      spec: { replicas: 2, foo: 1, selector: { app: 'a', bar: 2 }, list: [{ a: 'x', b: 1 }], 'a.b': 3 },
      alpha: { x: 1 },
    };
    const result = compile(schema).prune(value);
    expect(result.unknownFields).toEqual(['alpha', 'spec.a.b', 'spec.foo', 'spec.list[0].b', 'spec.selector.bar', 'zeta']);
    expect(value).toEqual({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w', whatever: 1 },
      spec: { replicas: 2, selector: { app: 'a' }, list: [{ a: 'x' }] },
    });
    expect(result.unknownFields.map(unknownFieldMessage)).toContain('unknown field "spec.foo"');
  });

  it('reports without removing when asked (Strict fails on the paths)', () => {
    const value = { apiVersion: 'v1', kind: 'W', spec: { foo: 1, plain: null } };
    const copy = structuredClone(value);
    expect(compile(schema).prune(value, { remove: false }).unknownFields).toEqual(['spec.foo']);
    expect(value).toEqual(copy);
  });

  it('removes non-nullable nulls without defaults, keeps nullable ones and defaulted ones', () => {
    const value = { spec: { plain: null, nullableName: null, defaulted: null, labels: { a: null }, list: [null] } };
    expect(compile(schema).prune(value).unknownFields).toEqual([]);
    expect(value).toEqual({ spec: { nullableName: null, defaulted: null, labels: {}, list: [null] } });
  });

  it('quotes the path as it is in the strict message', () => {
    expect(unknownFieldMessage('spec.a"b')).toBe('unknown field "spec.a"b"');
  });

  it('reads the platform profile names', () => {
    const loose = { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } };
    expect(prune(loose, '{"spec":{"a":1}}', true, PLATFORM).paths).toEqual([]);
    // The other profile's name is only an unknown schema key.
    const foreign = { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } };
    const value = { spec: { a: 1 } };
    const { compileSchema } = require('../../../../src/core/validation/schema') as typeof import('../../../../src/core/validation/schema');
    expect(compileSchema(foreign, PLATFORM).prune(value).unknownFields).toEqual(['spec.a']);
  });
});

describe('embedded resources', () => {
  const schema = objectWith({
    template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
    templates: {
      type: 'object',
      additionalProperties: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
    },
  });

  it('prunes metadata to ObjectMeta, after the schema paths, with field.Path keys', () => {
    const value: Record<string, unknown> = {
      zz: 1,
      template: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', foo: 1, generation: 0, labels: {}, ownerReferences: [{ name: 'o', bogus: true }], creationTimestamp: null },
        spec: { anything: true },
      },
      templates: { a: { apiVersion: 'v1', kind: 'Pod', metadata: { bar: 2 } } },
    };
    const result = compile(schema).prune(value);
    expect(result.unknownFields).toEqual(['zz', 'template.metadata.foo', 'template.metadata.ownerReferences[0].bogus', 'templates[a].metadata.bar']);
    expect(value.template).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', ownerReferences: [{ name: 'o' }] }, spec: { anything: true } });
    expect((value.templates as Record<string, unknown>).a).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: {} });
  });

  it('fails on metadata that does not decode, or a non-string apiVersion', () => {
    const bad = { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 5 } } };
    expect(compile(schema).prune(bad).error?.message).toBe(
      'template.metadata: Invalid value: map[string]interface {}{"name":5}: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string',
    );
    expect(compile(schema).prune({ template: { apiVersion: 1 } }).error?.message).toBe('template.apiVersion: Invalid value: 1: must be a string');
    expect(compile(schema).prune({ template: { metadata: [] } }).error?.message).toBe(
      'template.metadata: Invalid value: []interface {}{}: json: cannot unmarshal array into Go value of type v1.ObjectMeta',
    );
  });

  it('drops what does not decode when reading from storage', () => {
    const stored: Record<string, unknown> = { template: { apiVersion: 1, kind: 'Pod', metadata: { name: 5, namespace: 'ns', labels: { a: 1 } } } };
    const result = compile(schema).prune(stored, { dropInvalidMetadata: true });
    expect(result.error).toBeUndefined();
    expect(stored.template).toEqual({ kind: 'Pod', metadata: { namespace: 'ns' } });
  });

  it('makes null metadata empty, and removes a zero creation time', () => {
    const value: Record<string, unknown> = { template: { apiVersion: 'v1', kind: 'Pod', metadata: null } };
    compile(schema).prune(value);
    expect(value.template).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: {} });
    const zero: Record<string, unknown> = { template: { metadata: { name: 'a', creationTimestamp: '0001-01-01T00:00:00Z' } } };
    compile(schema).prune(zero);
    expect(zero.template).toEqual({ metadata: { name: 'a' } });
  });

  it('reports embedded metadata unknown fields without removing them', () => {
    const value = { template: { metadata: { name: 'a', foo: 1 } } };
    expect(compile(schema).prune(value, { remove: false }).unknownFields).toEqual(['template.metadata.foo']);
    expect(value.template.metadata).toEqual({ name: 'a', foo: 1 });
  });
});
