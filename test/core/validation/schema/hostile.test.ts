/**
 * Hostile schemas and values: deep and wide schemas, huge enums, long lists with uniqueItems and
 * list types, patterns written to make a backtracking engine stall. Every call must finish
 * quickly, within the stack, without a blowup; and an ordinary create must cost microseconds.
 */
import { MAX_NESTING_DEPTH } from '../../../../src/codecs/limits';
import { type JSONSchemaProps, SchemaTooDeep, compileSchema } from '../../../../src/core/validation/schema';
import { K8S, compile, messages, objectWith } from './support';

/** `{spec: {spec: … {leaf}}}` schema and value, `depth` properties deep. */
function deep(depth: number, leaf: unknown, leafValue: unknown) {
  let schema: unknown = leaf;
  let value: unknown = leafValue;
  for (let i = 0; i < depth; i++) {
    schema = { type: 'object', properties: { n: schema }, required: ['n'] };
    value = { n: value };
  }
  return { schema, value: value as Record<string, unknown> };
}

/**
 * Linear work at these sizes takes well under a second on a quiet machine; a quadratic walk would
 * take minutes. The bound is generous because the test machine is shared.
 */
const BOUND_MS = 20_000;

const within = (ms: number, f: () => void) => {
  const started = performance.now();
  f();
  expect(performance.now() - started).toBeLessThan(ms);
};

describe('deep schemas and values', () => {
  it('prunes, defaults and validates as deep as the decode limits allow', () => {
    // Each level is two JSON levels of schema (properties, name), so this is at the limit.
    const { schema, value } = deep(MAX_NESTING_DEPTH / 2 - 2, { type: 'string', default: 'd', maxLength: 1 }, 'too long');
    within(BOUND_MS, () => {
      const c = compileSchema(schema as JSONSchemaProps, K8S);
      (value as Record<string, unknown>).extra = 1;
      expect(c.prune(value, { isResourceRoot: false }).unknownFields).toEqual(['extra']);
      c.default(value);
      const errs = c.validate(value);
      expect(errs).toHaveLength(1);
      expect(errs[0]!.message).toMatch(/^n(\.n)+: Too long: may not be more than 1 bytes$/);
    });
  });

  it('refuses a schema nested past the limit, without overflowing the stack', () => {
    const { schema } = deep(MAX_NESTING_DEPTH + 10, { type: 'string' }, '');
    expect(() => compileSchema(schema as JSONSchemaProps, K8S)).toThrow(SchemaTooDeep);
  });

  it('walks deep values where the schema stops without recursing into them', () => {
    let v: unknown = 'x';
    for (let i = 0; i < MAX_NESTING_DEPTH; i++) v = { a: v };
    let list: unknown = [];
    for (let i = 0; i < MAX_NESTING_DEPTH; i++) list = [list];
    const c = compile(objectWith({ loose: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, list: { type: 'array' } }));
    const value = { loose: v, list };
    within(BOUND_MS, () => {
      expect(c.prune(value).unknownFields).toEqual([]);
      c.default(value);
      expect(c.validate(value)).toEqual([]);
      expect(c.validateUpdate(value, structuredClone(value))).toEqual([]);
    });
  });
});

describe('wide schemas', () => {
  it('compiles and runs 20,000 properties in linear time', () => {
    const props: Record<string, unknown> = {};
    const value: Record<string, unknown> = {};
    for (let i = 0; i < 20_000; i++) {
      props[`p${i}`] = { type: 'integer', maximum: 10, default: 1 };
      if (i % 2 === 0) value[`p${i}`] = i % 4 === 0 ? 5 : 50;
      value[`u${i}`] = 1;
    }
    within(BOUND_MS, () => {
      const c = compile({ type: 'object', properties: props });
      expect(c.prune(value, { isResourceRoot: false }).unknownFields).toHaveLength(20_000);
      c.default(value);
      expect(c.validate(value)).toHaveLength(5_000);
    });
  });
});

describe('huge enums', () => {
  it('looks values up instead of scanning the enum', () => {
    const values = Array.from({ length: 100_000 }, (_, i) => `v${i}`);
    const c = compile(objectWith({ e: { type: 'string', enum: values } }));
    within(BOUND_MS, () => {
      for (let i = 0; i < 10_000; i++) expect(c.validateSchema({ e: `v${i * 7}` })).toEqual([]);
    });
    expect(messages(c.validateSchema({ e: 'nope' }))[0]).toMatch(/^e: Unsupported value: "nope": supported values: "v0", "v1", /);
  });

  it('matches objects against an enum of objects by value', () => {
    const values = Array.from({ length: 20_000 }, (_, i) => ({ k: i, v: [i] }));
    const c = compile(objectWith({ e: { enum: values } }));
    within(BOUND_MS, () => {
      for (let i = 0; i < 2_000; i++) expect(c.validateSchema({ e: { v: [i], k: i } })).toEqual([]);
    });
  });
});

describe('errors about large values', () => {
  it('prints a large bad value once per call, and a long enum once', () => {
    const big: Record<string, unknown> = {};
    for (let i = 0; i < 20_000; i++) big[`k${i}`] = 'x'.repeat(20);
    const allOf = Array.from({ length: 300 }, (_, i) => ({ enum: [`e${i}`] }));
    const values = Array.from({ length: 10_000 }, (_, i) => `v${i}`);
    const c = compile(objectWith({ o: { allOf }, l: { type: 'array', items: { enum: values } } }));
    within(BOUND_MS, () => {
      const errs = c.validateSchema({ o: big, l: Array.from({ length: 10_000 }, (_, i) => `bad${i}`) });
      expect(errs).toHaveLength(301 + 10_000);
      expect(errs.find((e) => e.field === 'o')!.message.startsWith('o: Unsupported value: map[string]interface {}{"k0":"xxxxxxxxxxxxxxxxxxxx", ')).toBe(true);
    });
  });
});

describe('long lists', () => {
  it('checks uniqueItems by hashing', () => {
    const list = Array.from({ length: 200_000 }, (_, i) => ({ i }));
    const c = compile(objectWith({ l: { type: 'array', uniqueItems: true, items: { type: 'object' } } }));
    within(BOUND_MS, () => {
      expect(c.validateSchema({ l: list })).toEqual([]);
      list.push({ i: 3 });
      expect(messages(c.validateSchema({ l: list }))).toEqual([`l: Invalid value: "": l in body shouldn't contain duplicates`]);
    });
  });

  it('ratchets a long map list by key in linear time', () => {
    const ports = Array.from({ length: 50_000 }, (_, i) => ({ name: `p${i}`, port: i }));
    const c = compile(
      objectWith({
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: objectWith({ name: { type: 'string' }, port: { type: 'integer', maximum: 10 } }),
        },
      }),
    );
    const changed = structuredClone(ports).reverse();
    changed.push({ name: 'new', port: 99 });
    within(BOUND_MS, () => {
      expect(messages(c.validateUpdate({ ports: changed }, { ports }))).toEqual([
        `ports[50000].port: Invalid value: 99: ports[50000].port in body should be less than or equal to 10`,
      ]);
    });
  });
});

describe('patterns', () => {
  it('matches in linear time whatever the pattern (RE2)', () => {
    const c = compile(objectWith({ s: { type: 'string', pattern: '^(a+)+$' }, t: { type: 'string', pattern: '(x+x+)+y' } }));
    within(BOUND_MS, () => {
      expect(messages(c.validateSchema({ s: `${'a'.repeat(100_000)}!`, t: 'x'.repeat(100_000) }))).toHaveLength(2);
    });
  });

  it('compiles a pattern once per schema node', () => {
    const c = compile(objectWith({ s: { type: 'string', pattern: '^[a-z]+$' } }));
    c.validateSchema({ s: 'abc' });
    const compiled = c.node.properties!.get('s')!.regex;
    expect(compiled).toBeDefined();
    c.validateSchema({ s: 'def' });
    expect(c.node.properties!.get('s')!.regex).toBe(compiled);
    expect(compile(objectWith({ s: { type: 'string', pattern: '^[a-z]+$' } }))).not.toBe(c);
  });
});

describe('compiled once', () => {
  it('gives the same compiled schema for the same schema object and profile', () => {
    const schema = { type: 'object' };
    expect(compileSchema(schema, K8S)).toBe(compileSchema(schema, K8S));
  });
});

describe('cost of an ordinary create', () => {
  it('prunes, defaults and validates a 20-property object in microseconds', () => {
    const props: Record<string, unknown> = {};
    for (let i = 0; i < 20; i++) {
      props[`f${i}`] = [
        { type: 'string', maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
        { type: 'integer', minimum: 0, maximum: 100, default: 5 },
        { type: 'string', enum: ['a', 'b', 'c'] },
        { type: 'boolean' },
      ][i % 4];
    }
    const c = compile(objectWith({ spec: objectWith(props, { required: ['f0'] }), status: objectWith({ ready: { type: 'boolean' } }) }));
    const make = () => {
      const spec: Record<string, unknown> = {};
      for (let i = 0; i < 18; i++) spec[`f${i}`] = ['name-x', 7, 'b', true][i % 4];
      return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec, unknown: 1 };
    };
    const run = () => {
      const o = make();
      c.prune(o);
      c.default(o);
      return c.validate(o);
    };
    expect(run()).toEqual([]);
    for (let i = 0; i < 2_000; i++) run();
    const n = 20_000;
    const started = performance.now();
    for (let i = 0; i < n; i++) run();
    const perCall = ((performance.now() - started) * 1000) / n;
    // A few microseconds on a quiet machine; the bound leaves room for a loaded one.
    expect(perCall).toBeLessThan(100);
  });
});
