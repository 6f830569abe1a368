/** Structural defaulting (apiextensions' defaulting.Default). */
import { LimitExceeded } from '../../../../src/codecs/limits';
import { compileSchema } from '../../../../src/core/validation/schema';
import { K8S, PLATFORM, compile, objectWith } from './support';

const defaulted = (schema: unknown, value: unknown, ext = K8S) => {
  compile(schema, ext).default(value);
  return value;
};

describe('defaulting', () => {
  const schema = objectWith({
    spec: objectWith({
      replicas: { type: 'integer', default: 1 },
      mode: { type: 'string', default: 'fast' },
      nullableMode: { type: 'string', nullable: true, default: 'slow' },
      nested: objectWith({ a: { type: 'string', default: 'a' }, b: objectWith({ c: { type: 'integer', default: 3 } }, { default: {} }) }, { default: {} }),
      labels: { type: 'object', additionalProperties: { type: 'string', default: 'v' } },
      list: { type: 'array', items: objectWith({ x: { type: 'integer', default: 7 } }, { default: { y: 1 } }) },
      none: { type: 'string', default: null },
    }),
  });

  it('fills absent properties, leaves present ones', () => {
    expect(defaulted(schema, { spec: { replicas: 3 } })).toEqual({
      spec: { replicas: 3, mode: 'fast', nullableMode: 'slow', nested: { a: 'a', b: { c: 3 } } },
    });
  });

  it('defaults a default by its own schema, top-down', () => {
    expect(defaulted(schema, { spec: { nested: { b: {} } } })).toMatchObject({ spec: { nested: { a: 'a', b: { c: 3 } } } });
    expect(defaulted(schema, { spec: { list: [{}, null, { x: 0 }] } })).toMatchObject({ spec: { list: [{ x: 7 }, { y: 1, x: 7 }, { x: 0 }] } });
  });

  it('replaces non-nullable nulls with defaults, keeps nullable nulls', () => {
    expect(defaulted(schema, { spec: { mode: null, nullableMode: null, labels: { a: null, b: 'x' } } })).toMatchObject({
      spec: { mode: 'fast', nullableMode: null, labels: { a: 'v', b: 'x' } },
    });
  });

  it('takes a null default as no default', () => {
    expect(defaulted(schema, { spec: {} })).not.toHaveProperty('spec.none');
  });

  it('hands out copies: changing one changes neither the schema nor another', () => {
    const c = compile(schema);
    const a: { spec: { nested: { a: string } } } = { spec: {} } as never;
    const b: { spec: { nested: { a: string } } } = { spec: {} } as never;
    c.default(a);
    c.default(b);
    a.spec.nested.a = 'changed';
    expect(b.spec.nested.a).toBe('a');
    expect(c.schema.properties!.spec!.properties!.nested!.default).toEqual({});
  });

  it('defaults the root, metadata and embedded resources like any object', () => {
    const s = objectWith({
      spec: objectWith({
        tpl: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { metadata: objectWith({ name: { type: 'string', default: 'n' } }) } },
      }),
    });
    expect(defaulted(s, { metadata: { name: 'x' }, spec: { tpl: { metadata: {} } } })).toEqual({
      metadata: { name: 'x' },
      spec: { tpl: { metadata: { name: 'n' } } },
    });
  });

  it('sets own members only: an inherited name is absent, __proto__ becomes a member', () => {
    const s = JSON.parse('{"type":"object","properties":{"constructor":{"type":"string","default":"c"},"__proto__":{"type":"string","default":"p"}}}');
    const value: Record<string, unknown> = {};
    compileSchema(s, K8S).default(value);
    expect(Object.keys(value)).toEqual(['__proto__', 'constructor']);
    expect(JSON.stringify(value)).toBe('{"__proto__":"p","constructor":"c"}');
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });

  it('does nothing where the schema has no defaults', () => {
    const value = { spec: { a: null, b: [null] } };
    expect(defaulted(objectWith({ spec: objectWith({ a: { type: 'string' } }) }), value)).toEqual({ spec: { a: null, b: [null] } });
  });

  it('reads the platform profile names', () => {
    const s = objectWith({ spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { a: { type: 'string', default: 'x' } } } });
    expect(defaulted(s, { spec: {} }, PLATFORM)).toEqual({ spec: { a: 'x' } });
  });

  it('stops with LimitExceeded when defaults would multiply the object past the decode limit', () => {
    const big = Array.from({ length: 1000 }, (_, i) => i);
    const s = objectWith({ list: { type: 'array', items: { type: 'array', items: { type: 'integer' }, default: big } } });
    const value = { list: Array.from({ length: 2000 }, () => null) };
    const started = performance.now();
    expect(() => compile(s).default(value)).toThrow(LimitExceeded);
    expect(performance.now() - started).toBeLessThan(20_000);
    // Within the limit it applies.
    const small = { list: [null, null] };
    compile(s).default(small);
    expect(small.list[1]).toHaveLength(1000);
  });
});
