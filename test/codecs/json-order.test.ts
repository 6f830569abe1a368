/**
 * Schema-ordered JSON reproduces upstream's JSON bytes: Go struct field order, sorted maps,
 * Go's escaping, json.Indent layout — whatever order the object's keys arrive in.
 */
import { encodeOrderedJson, encodeOrderedJsonAs, encodeOrderedJsonBytes, createOrderedJsonCodec } from '../../src/codecs/json-order';
import { compareGoStrings, goJsonString } from '../../src/codecs/go-strings';
import { createProtobufCodec } from '../../src/codecs/protobuf';
import { schemaRegistry } from '../../src/schema';
import { createNaming } from '../../src/naming';
import { fixtureRows, parseFixtureYaml } from './wire-fixtures';

const naming = createNaming('kubernetes');
const registry = schemaRegistry(naming);
const protobuf = createProtobufCodec(naming);

function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).reverse();
  return Object.fromEntries(entries.map(([k, v]) => [k, reversedKeys(v)]));
}

describe('JSON fixtures', () => {
  describe.each(fixtureRows())('%s', (_name, fixture) => {
    const expected = fixture.json.toString('utf8');

    it('encodes the parsed .json to the fixture bytes', () => {
      expect(encodeOrderedJson(registry, JSON.parse(expected), { indent: '  ' })).toBe(expected);
    });

    it('encodes the parsed .yaml (keys sorted) to the fixture bytes', () => {
      expect(encodeOrderedJson(registry, parseFixtureYaml(fixture.yaml), { indent: '  ' })).toBe(expected);
    });

    it('encodes an object with every key order reversed to the fixture bytes', () => {
      expect(encodeOrderedJson(registry, reversedKeys(JSON.parse(expected)), { indent: '  ' })).toBe(expected);
    });

    it('encodes the object decoded from the .pb to the fixture bytes', () => {
      expect(encodeOrderedJson(registry, protobuf.decode(fixture.pb), { indent: '  ' })).toBe(expected);
    });

    it('writes compact JSON equal to JSON.stringify of the fixture', () => {
      const parsed = JSON.parse(expected);
      expect(encodeOrderedJson(registry, reversedKeys(parsed))).toBe(JSON.stringify(parsed));
    });
  });
});

describe('Go JSON details', () => {
  it('escapes HTML characters and line separators as Go does', () => {
    expect(goJsonString('<a href="x">&\u2028\u2029</a>')).toBe('"\\u003ca href=\\"x\\"\\u003e\\u0026\\u2028\\u2029\\u003c/a\\u003e"');
    expect(goJsonString('tab\tnew\nline\u0001')).toBe('"tab\\tnew\\nline\\u0001"');
  });

  it('sorts map keys bytewise, not as JS orders integer-like keys', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', data: { b: '1', '10': '2', '9': '3', a: '4' } };
    expect(encodeOrderedJson(registry, cm)).toBe('{"kind":"ConfigMap","apiVersion":"v1","data":{"10":"2","9":"3","a":"4","b":"1"}}');
  });

  it('sorts maps of every size and starting order as sort.Strings does', () => {
    const alphabet = ['a', 'B', '10', '9', 'é', '\u{1F600}', 'z-1', 'z_1', ''];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (const size of [0, 1, 2, 3, 5, 31, 32, 33, 80]) {
      for (let round = 0; round < 5; round++) {
        const data: Record<string, string> = {};
        while (Object.keys(data).length < size) data[`${alphabet[Math.floor(random() * alphabet.length)]}${Math.floor(random() * 1000)}`] = 'v';
        const keys = Object.keys(data);
        const ordered = [...keys].sort(compareGoStrings);
        // Unordered as it came, and already in order (the common case the encoder checks for first).
        for (const input of [data, Object.fromEntries(ordered.map((k) => [k, 'v']))]) {
          const text = encodeOrderedJson(registry, { apiVersion: 'v1', kind: 'ConfigMap', data: input });
          expect(text).toBe(`{"kind":"ConfigMap","apiVersion":"v1","data":{${ordered.map((k) => `${JSON.stringify(k)}:"v"`).join(',')}}}`);
        }
      }
    }
  });

  it('writes integer-like and __proto__ map keys in Go order, compact and indented', () => {
    const plain = { apiVersion: 'v1', kind: 'ConfigMap', data: { b: 'x<y', a: '&' } };
    const awkward = { apiVersion: 'v1', kind: 'ConfigMap', data: { b: 'x<y', a: '&', '7': '' } };
    expect(encodeOrderedJson(registry, plain, { indent: '  ' })).toBe(
      '{\n  "kind": "ConfigMap",\n  "apiVersion": "v1",\n  "data": {\n    "a": "\\u0026",\n    "b": "x\\u003cy"\n  }\n}',
    );
    expect(encodeOrderedJson(registry, awkward, { indent: '  ' })).toBe(
      '{\n  "kind": "ConfigMap",\n  "apiVersion": "v1",\n  "data": {\n    "7": "",\n    "a": "\\u0026",\n    "b": "x\\u003cy"\n  }\n}',
    );
    const proto = JSON.parse('{"apiVersion":"v1","kind":"ConfigMap","data":{"__proto__":"p","a":"b"}}');
    expect(encodeOrderedJson(registry, proto)).toBe('{"kind":"ConfigMap","apiVersion":"v1","data":{"__proto__":"p","a":"b"}}');
  });

  it('writes TypeMeta first, inline structs in place, unknown keys last', () => {
    const vol = { configMap: { items: [], name: 'cm' }, name: 'v', zzz: 1 };
    expect(encodeOrderedJsonAs(registry, vol, 'core.v1.Volume')).toBe('{"name":"v","configMap":{"name":"cm","items":[]},"zzz":1}');
    const ns = { spec: {}, metadata: { name: 'n' }, apiVersion: 'v1', kind: 'Namespace', extra: true };
    expect(encodeOrderedJson(registry, ns)).toBe('{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"n"},"spec":{},"extra":true}');
  });

  it('counts known keys holding undefined, so unknown keys are found and undefined values left out', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: undefined, spec: { finalizers: undefined }, zzz: 1, yyy: undefined };
    expect(encodeOrderedJson(registry, ns)).toBe('{"kind":"Namespace","apiVersion":"v1","spec":{},"zzz":1}');
    const shadow = JSON.parse('{"apiVersion":"v1","kind":"Namespace","__proto__":{"a":1},"metadata":{"name":"n"}}');
    expect(encodeOrderedJson(registry, shadow)).toBe('{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"n"},"__proto__":{"a":1}}');
  });

  it('writes values of the wrong shape as they are', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: 'x', data: ['b', 'a'], binaryData: null, immutable: { b: 1, a: 2 } };
    expect(encodeOrderedJson(registry, cm)).toBe(
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":"x","immutable":{"b":1,"a":2},"data":["b","a"],"binaryData":null}',
    );
    const pod = { apiVersion: 'v1', kind: 'Pod', spec: { containers: { name: 'c' }, volumes: [null, 'v', { name: 'w' }] } };
    expect(encodeOrderedJson(registry, pod)).toBe('{"kind":"Pod","apiVersion":"v1","spec":{"volumes":[null,"v",{"name":"w"}],"containers":{"name":"c"}}}');
  });

  it('keeps raw JSON (FieldsV1) in its own key order', () => {
    const cm = {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { managedFields: [{ fieldsV1: { 'f:data': { 'f:b': {}, 'f:a': {} } }, manager: 'm' }] },
    };
    expect(encodeOrderedJson(registry, cm)).toBe(
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"managedFields":[{"manager":"m","fieldsV1":{"f:data":{"f:b":{},"f:a":{}}}}]}}',
    );
  });

  it('writes an unknown kind in its own key order', () => {
    const apiVersion = `${naming.groups.meta}/v1`;
    expect(encodeOrderedJson(registry, { kind: 'Table', apiVersion, rows: [] })).toBe(`{"kind":"Table","apiVersion":"${apiVersion}","rows":[]}`);
  });

  it('is a codec record: one document per line, pretty on request, watch events', () => {
    const codec = createOrderedJsonCodec(naming);
    const pod = { metadata: { name: 'p' }, kind: 'Pod', apiVersion: 'v1' };
    expect(codec.encode(pod).toString()).toBe('{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}\n');
    expect(codec.encode(pod, { pretty: true }).toString()).toBe('{\n  "kind": "Pod",\n  "apiVersion": "v1",\n  "metadata": {\n    "name": "p"\n  }\n}\n');
    expect(codec.stream!.encodeEvent({ type: 'ADDED', object: pod }).toString()).toBe(
      '{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}}\n',
    );
    expect(codec.decode(Buffer.from('{"a":1}'))).toEqual({ a: 1 });
    expect(() => codec.decode(Buffer.from('{'))).toThrow();
  });
});

describe('bytes', () => {
  const cm = (data: unknown, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', data, ...extra });

  it('writes strings as Go does: escapes, non-ASCII, HTML characters, lone surrogates, in values and keys', () => {
    const data = { 'k<&>': 'a"b\\c\n\u0001\u007f', é: 'ü\u{1F600}\u2028\u2029', lone: '\ud800x', plain: 'abc' };
    const text = encodeOrderedJson(registry, cm(data, { 'x<y': '&' }));
    expect(text).toBe(
      '{"kind":"ConfigMap","apiVersion":"v1","data":{"k\\u003c\\u0026\\u003e":"a\\"b\\\\c\\n\\u0001\u007f","lone":"\\ud800x","plain":"abc","é":"ü\u{1F600}\\u2028\\u2029"},"x\\u003cy":"\\u0026"}',
    );
    expect(encodeOrderedJsonBytes(registry, cm(data, { 'x<y': '&' })).toString('utf8')).toBe(text);
  });

  it('writes numbers, booleans and what JSON.stringify leaves out as it does', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', generation: Number.NaN, labels: { f: (() => 1) as unknown as string } },
      spec: { activeDeadlineSeconds: -0, hostNetwork: true, priority: Infinity, volumes: [undefined, () => 1, Symbol('s')], containers: [] },
      zzz: () => 1,
      when: new Date(0),
    };
    expect(encodeOrderedJson(registry, pod)).toBe(
      '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","generation":null,"labels":{}},"spec":{"volumes":[null,null,null],"containers":[],"activeDeadlineSeconds":0,"hostNetwork":true,"priority":null},"when":"1970-01-01T00:00:00.000Z"}',
    );
  });

  it('writes a frozen raw value from bytes made once, equal to encoding a copy', () => {
    const fieldsV1 = Object.freeze({ 'f:data': Object.freeze({ 'f:<b>': Object.freeze({}), 'f:a': Object.freeze({}) }) });
    const object = (fields: unknown) => cm({ a: 'b' }, { metadata: { name: 'x', managedFields: [{ manager: 'm', fieldsV1: fields }] } });
    const fresh = encodeOrderedJson(registry, object(JSON.parse(JSON.stringify(fieldsV1))));
    expect(fresh).toContain('"fieldsV1":{"f:data":{"f:\\u003cb\\u003e":{},"f:a":{}}}');
    expect(encodeOrderedJson(registry, object(fieldsV1))).toBe(fresh);
    expect(encodeOrderedJson(registry, object(fieldsV1))).toBe(fresh);
  });

  it('grows its buffer for a large value, and each encode is its own', () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    const first = encodeOrderedJsonBytes(registry, cm({ big }), { suffix: 0x0a });
    expect(first.length).toBe(`{"kind":"ConfigMap","apiVersion":"v1","data":{"big":""}}`.length + big.length + 1);
    expect(first.subarray(0, 48).toString()).toBe('{"kind":"ConfigMap","apiVersion":"v1","data":{"b');
    const small = encodeOrderedJsonBytes(registry, cm({ a: 'b' }));
    expect(small.toString()).toBe('{"kind":"ConfigMap","apiVersion":"v1","data":{"a":"b"}}');
    // Kept bytes have a buffer of their own; others may be a slice of Buffer's shared pool.
    expect(small.buffer.byteLength).toBe(small.length);
    expect(encodeOrderedJsonBytes(registry, cm({ a: 'b' }), { own: false }).equals(small)).toBe(true);
    // The first result is a buffer of its own: the next encode did not write over it.
    expect(first.subarray(first.length - 6).toString()).toBe('xx"}}\n');
    expect(() => encodeOrderedJson(registry, cm({ a: 1n as unknown as string }))).toThrow(TypeError);
    expect(encodeOrderedJson(registry, cm({ a: 'b' }))).toBe('{"kind":"ConfigMap","apiVersion":"v1","data":{"a":"b"}}');
  });
});
