import { deepCopy } from '../../src/util/json-values';

/** What the copy must equal: JSON's own round trip. */
const viaJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

describe('deepCopy', () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      labels: { app: 'x' },
      managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {} } } } } }],
    },
    spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }], priority: 0, enableServiceLinks: true },
    status: { conditions: [], hostIP: null },
  };

  it('copies plain JSON to an equal value sharing no object with it', () => {
    const copy = deepCopy(pod);
    expect(copy).toEqual(pod);
    const shared: string[] = [];
    const compare = (a: unknown, b: unknown, path: string): void => {
      if (typeof a !== 'object' || a === null) return;
      if (a === b) shared.push(path);
      for (const key of Object.keys(a)) compare((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}.${key}`);
    };
    compare(pod, copy, '');
    expect(shared).toEqual([]);
  });

  it('copies a frozen value into one that can be changed', () => {
    const frozen = Object.freeze({ metadata: Object.freeze({ name: 'p', labels: Object.freeze({ a: 'b' }) }), list: Object.freeze([Object.freeze({ x: 1 })]) });
    const copy = deepCopy(frozen) as unknown as { metadata: { labels: Record<string, string> }; list: { x: number }[] };
    expect(Object.isFrozen(copy)).toBe(false);
    copy.metadata.labels.c = 'd';
    copy.list[0]!.x = 2;
    expect(frozen.metadata.labels).toEqual({ a: 'b' });
    expect(frozen.list[0]!.x).toBe(1);
  });

  it('changes and leaves out what JSON does', () => {
    const odd = {
      missing: undefined,
      fn: () => 1,
      sym: Symbol('s'),
      list: [undefined, () => 1, Symbol('s'), NaN, -0, Infinity, -Infinity, 1.5],
      holes: [1, , 3], // eslint-disable-line no-sparse-arrays
      date: new Date(0),
      map: new Map([[1, 2]]),
      boxed: new String('s'), // eslint-disable-line no-new-wrappers
      withToJson: { toJSON: () => 'T' },
      arrayToJson: Object.assign([1], { toJSON: () => 'A' }),
      noProto: Object.assign(Object.create(null) as object, { a: 1 }),
      negativeZero: -0,
    };
    const copy = deepCopy(odd);
    expect(copy).toEqual(viaJson(odd));
    expect(Object.is((copy as { negativeZero: number }).negativeZero, 0)).toBe(true);
    expect(Object.is((copy as { list: number[] }).list[4], 0)).toBe(true);
    expect(Object.getPrototypeOf((copy as { noProto: object }).noProto)).toBe(Object.prototype);
  });

  it('keeps __proto__ as an own member, as JSON.parse does', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copy = deepCopy(input);
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe(JSON.stringify(input));
  });

  it('copies no inherited member', () => {
    const child = Object.create({ inherited: 1 }) as Record<string, unknown>;
    child.own = 2;
    expect(deepCopy({ child })).toEqual({ child: { own: 2 } });
  });

  it('refuses a cycle and a BigInt as JSON does', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { back: cyclic };
    expect(() => deepCopy(cyclic)).toThrow(TypeError);
    expect(() => deepCopy({ n: 1n })).toThrow(TypeError);
  });

  it('copies deep values past the depth at which it hands over to JSON', () => {
    let deep: unknown = { leaf: [1, { x: 'y' }] };
    for (let i = 0; i < 1500; i++) deep = i % 2 === 0 ? { next: deep } : [deep];
    expect(deepCopy(deep)).toEqual(viaJson(deep));
  });

  it('passes scalars, null and undefined through', () => {
    for (const v of ['s', 3, true, null]) expect(deepCopy(v)).toBe(v);
    expect(deepCopy(undefined)).toBeUndefined();
  });
});
