/**
 * The gateway's JSON: upstream's key order and escapes, written once per object version (frozen
 * cache objects keep their text), lists from their items' texts, Tables with each row's object in
 * its own order, pretty output as Go's json.Indent; and the protobuf and CBOR records beside it.
 */
import { deepFreeze } from '../../../src/util/frozen';
import { encodeOnce, viewWithoutTypeMeta } from '../../../src/codecs/encode-once';
import { encodeOrderedJson, indentJson, indentJsonPieces } from '../../../src/codecs/json-order';
import { schemaRegistry } from '../../../src/schema';
import { createCborCodec, createJsonCodec, gatewayCodecs } from '../../../src/gateway/codecs';
import { createNaming } from '../../../src/naming';
import { STREAMED_LIST_ITEMS } from '../../../src/gateway/codecs/json';
import { realisticReplicaSet } from '../../codecs/sample-objects';
import { fixtureRows } from '../../codecs/wire-fixtures';

const naming = createNaming('kubernetes');
const registry = schemaRegistry(naming);
const json = createJsonCodec(naming);

/** The same object with its keys in reverse order (what a client may send). */
function shuffled(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shuffled);
  if (typeof value !== 'object' || value === null) return value;
  // fieldsV1 is raw JSON upstream copies as it is: its order is its own.
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, k === 'fieldsV1' ? v : shuffled(v)]),
  );
}

describe('ordered JSON codec', () => {
  it("writes upstream's order whatever order the object holds", () => {
    const rs = realisticReplicaSet();
    const text = json.encode(shuffled(rs)).toString();
    expect(text).toBe(`${encodeOrderedJson(registry, rs)}\n`);
    expect(text.startsWith('{"kind":"ReplicaSet","apiVersion":"apps/v1","metadata":{"name":"frontend","namespace":"default","uid"')).toBe(true);
  });

  it('escapes <, > and & as Go does', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '<b>&' } };
    expect(json.encode(cm).toString()).toBe('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c"},"data":{"a":"\\u003cb\\u003e\\u0026"}}\n');
  });

  it('indents pretty output as json.Indent: two spaces, empty containers on one line', () => {
    const value = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', details: { causes: [] }, message: 'a, "b": {c}', code: 1 };
    expect(json.encode(value, { pretty: true }).toString()).toBe(JSON.stringify(JSON.parse(json.encode(value).toString()), null, 2));
    expect(indentJson('{"a":[],"b":{},"c":[1,{"d":"x,y:{"}]}')).toBe('{\n  "a": [],\n  "b": {},\n  "c": [\n    1,\n    {\n      "d": "x,y:{"\n    }\n  ]\n}');
  });

  it('indents compact JSON given in pieces cut anywhere (inside strings and escapes, between a brace and its pair) as it indents the whole', () => {
    const text = encodeOrderedJson(registry, {
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '9' },
      items: [
        { metadata: { name: 'a', namespace: 'n', labels: {} }, data: { q: 'say "hi", {x}: [y]\\', u: 'ü🙂' } },
        { metadata: { name: 'b', namespace: 'n' }, binaryData: {}, data: { e: '' } },
      ],
    });
    const whole = indentJson(text);
    expect(whole).toBe(JSON.stringify(JSON.parse(text), null, 2));
    const bytes = Buffer.from(text, 'utf8');
    for (let size = 1; size <= 17; size++) {
      const pieces: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size));
      expect(Buffer.concat([...indentJsonPieces(pieces)]).toString('utf8')).toBe(whole);
      expect(Buffer.concat([...indentJsonPieces(pieces, '\t')]).toString('utf8')).toBe(JSON.stringify(JSON.parse(text), null, '\t'));
    }
  });

  it('indented pieces are filled to 64 KiB and never written again once given out', () => {
    const items = Array.from({ length: 2_000 }, (_, i) => ({ metadata: { name: `cm-${i}`, namespace: 'n' }, data: { v: 'z'.repeat(100) } }));
    const bytes = Buffer.from(encodeOrderedJson(registry, { kind: 'ConfigMapList', apiVersion: 'v1', metadata: {}, items }), 'utf8');
    const pieces: Uint8Array[] = [];
    // Copied as each is given out; compared once the rest were made.
    const copies: Buffer[] = [];
    for (const piece of indentJsonPieces([bytes.subarray(0, 1000), bytes.subarray(1000)])) {
      pieces.push(piece);
      copies.push(Buffer.from(piece));
    }
    expect(pieces.length).toBeGreaterThan(3);
    for (const piece of pieces.slice(0, -1)) expect(piece.length).toBeGreaterThan(60 * 1024);
    pieces.forEach((piece, i) => expect(Buffer.from(piece).equals(copies[i]!)).toBe(true));
    expect(Buffer.concat(pieces).toString('utf8')).toBe(indentJson(bytes.toString('utf8')));
  });

  it("memoises a frozen object's body: later changes to a copy do not leak, the same object is not re-encoded", () => {
    const rs = deepFreeze(shuffled(realisticReplicaSet()) as Record<string, unknown>);
    const body = json.encode(rs);
    const first = body.toString();
    expect(json.encode(rs)).toBe(body);
    // The memo holds the bytes: asking again never calls the encoder.
    expect(encodeOnce(rs, 'application/json#body', () => Buffer.from('not memoised'))).toBe(body);
    const copy = JSON.parse(first) as { metadata: { name: string } };
    copy.metadata.name = 'changed';
    expect(json.encode(copy).toString()).toContain('"name":"changed"');
    expect(json.encode(rs).toString()).toBe(first);
  });

  it("writes lists as kind, apiVersion, metadata, then each item's text", () => {
    const item = shuffled({ metadata: { name: 'a', namespace: 'n' }, data: { k: 'v' } });
    const list = { items: [item, item], metadata: { resourceVersion: '5', continue: 'c' }, apiVersion: 'v1', kind: 'ConfigMapList' };
    expect(json.encode(list).toString()).toBe(
      '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5","continue":"c"},"items":[{"metadata":{"name":"a","namespace":"n"},"data":{"k":"v"}},{"metadata":{"name":"a","namespace":"n"},"data":{"k":"v"}}]}\n',
    );
  });

  it('writes a list into its buffer piece by piece, the same bytes as its text, non-ASCII included', () => {
    const items = Array.from({ length: 300 }, (_, i) =>
      shuffled({ metadata: { name: `cm-${i}`, namespace: 'n' }, data: { k: `v ✓ ${'x'.repeat(i)}`, e: '\u{1F600}<&>' } }),
    );
    const list = { items, metadata: { resourceVersion: '9' }, apiVersion: 'v1', kind: 'ConfigMapList' };
    const bytes = json.encode(list);
    expect(bytes.toString()).toBe(`${encodeOrderedJson(registry, list)}\n`);
    expect(bytes.length).toBe(Buffer.byteLength(bytes.toString()));
    expect(json.encode(list, { pretty: true }).toString()).toBe(indentJson(encodeOrderedJson(registry, list)));
  });

  it('streams lists from 500 items or 512 KiB of item bytes, in the same bytes as the whole', () => {
    const cms = (n: number, size: number, text = 'y') => ({
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '9' },
      items: Array.from({ length: n }, (_, i) => ({ metadata: { name: `cm-${i}`, namespace: 'n' }, data: { v: text.repeat(size) } })),
    });
    expect(json.encodeChunks!(cms(10, 100))).toBeUndefined();
    expect(json.encodeChunks!(cms(100, 4096))).toBeUndefined();
    // 1,500 characters of 'é🙂<' are 10,500 bytes (the escaped '<' six of them): 50 items pass 512 KiB in bytes, not in characters.
    expect(json.encodeChunks!(cms(50, 1500, 'é🙂<'))).toBeDefined();
    for (const list of [cms(500, 10), cms(140, 4096), cms(50, 1500, 'é🙂<')]) {
      const pieces = json.encodeChunks!(list);
      expect(pieces).toBeDefined();
      const streamed = Buffer.concat([...pieces!]);
      expect(streamed.equals(json.encode(list))).toBe(true);
      expect(streamed.toString()).toBe(`${encodeOrderedJson(registry, list)}\n`);
    }
  });

  it('a typed list without items, or with an item that is not an object, has the same bytes as encoded whole', () => {
    for (const items of [[], [null], [{ metadata: { name: 'a' } }, null, { metadata: { name: 'b' } }]]) {
      const list = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '9' }, items };
      expect(json.encode(list).toString()).toBe(`${encodeOrderedJson(registry, list)}\n`);
    }
  });

  it('lists of shared (cached) items: each list its own bytes, the items the same, non-ASCII included', () => {
    const item = Object.freeze({ metadata: Object.freeze({ name: 'a', namespace: 'n' }), data: Object.freeze({ v: 'ü' }) });
    const list = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '9' }, items: [item, item] };
    const first = json.encode(list);
    expect(first.toString()).toBe(`${encodeOrderedJson(registry, list)}\n`);
    expect(json.encode({ ...list, metadata: { resourceVersion: '10' } }).toString()).toBe(
      `${encodeOrderedJson(registry, { ...list, metadata: { resourceVersion: '10' } })}\n`,
    );
  });

  it("cuts a cached object's list item and watch events from its one body: the same bytes as encoding them afresh", () => {
    // As the watch cache holds them: the object frozen, its list item the object without kind and apiVersion.
    const objects = ['ü <&> \u2028', 'plain'].map((text, i) => {
      const rs = realisticReplicaSet() as Record<string, unknown> & { metadata: Record<string, unknown> };
      rs.metadata.name = `rs-${i}`;
      rs.metadata.annotations = { note: text };
      return deepFreeze(shuffled(rs) as Record<string, unknown>);
    });
    const items = objects.map((o) => {
      const { kind: _k, apiVersion: _a, ...rest } = o;
      const view = Object.freeze(rest);
      viewWithoutTypeMeta(view, o);
      return view;
    });
    const fresh = (v: unknown) => JSON.parse(JSON.stringify(v)) as Record<string, unknown>;
    const list = { kind: 'ReplicaSetList', apiVersion: 'apps/v1', metadata: { resourceVersion: '9' }, items };
    const bodies = objects.map((o) => json.encode(o));
    expect(json.encode(list).toString()).toBe(json.encode(fresh(list)).toString());
    const streamed = json.encodeChunks!({ ...list, items: Array.from({ length: STREAMED_LIST_ITEMS }, (_, i) => items[i % 2]) })!;
    const pieces = [...streamed];
    expect(Buffer.concat(pieces).toString()).toBe(
      json.encode(fresh({ ...list, items: Array.from({ length: STREAMED_LIST_ITEMS }, (_, i) => items[i % 2]) })).toString(),
    );
    // The items' bytes are views of the bodies, not copies.
    expect(pieces.filter((p) => p.buffer === bodies[0].buffer).length).toBe(STREAMED_LIST_ITEMS / 2);
    for (const [i, o] of objects.entries()) {
      for (const type of ['ADDED', 'MODIFIED', 'DELETED']) {
        expect(json.stream!.encodeEvent({ type, object: o }).toString()).toBe(json.stream!.encodeEvent({ type, object: fresh(o) }).toString());
      }
      expect(json.encode(o, { pretty: true }).toString()).toBe(json.encode(fresh(o), { pretty: true }).toString());
      expect(bodies[i].toString()).toBe(json.encode(fresh(o)).toString());
    }
  });

  it("encodes a list item afresh when its source's body does not start with the item's kind and apiVersion", () => {
    const source = deepFreeze({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'n' }, data: { k: 'v' } });
    // A view claiming a source of another type: the ConfigMapList's items are not cut from a Secret's body.
    const secret = deepFreeze({ kind: 'Secret', apiVersion: 'v1', metadata: { name: 'a', namespace: 'n' }, data: { k: 'dg==' } });
    const { kind: _k, apiVersion: _a, ...rest } = source;
    const view = Object.freeze(rest);
    viewWithoutTypeMeta(view, secret);
    const list = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '9' }, items: [view] };
    expect(json.encode(list).toString()).toBe(
      `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"a","namespace":"n"},"data":{"k":"v"}}]}\n`,
    );
  });

  it("writes Tables in metav1.Table's order, each row's object in its own", () => {
    const table = {
      rows: [{ object: { metadata: { namespace: 'n', name: 'a' }, apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata' }, cells: ['a', 1] }],
      columnDefinitions: null,
      metadata: { resourceVersion: '9' },
      apiVersion: 'meta.k8s.io/v1',
      kind: 'Table',
    };
    expect(json.encode(table).toString()).toBe(
      '{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"9"},"columnDefinitions":null,"rows":[{"cells":["a",1],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","namespace":"n"}}}]}\n',
    );
  });

  it('orders meta v1beta1 PartialObjectMetadata like v1', () => {
    expect(json.encode({ metadata: { uid: 'u', name: 'n' }, apiVersion: 'meta.k8s.io/v1beta1', kind: 'PartialObjectMetadata' }).toString()).toBe(
      '{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1beta1","metadata":{"name":"n","uid":"u"}}\n',
    );
  });

  it('frames watch events one per line with the ordered object', () => {
    const text = json
      .stream!.encodeEvent({ type: 'ADDED', object: shuffled({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', uid: 'u' } }) })
      .toString();
    expect(text).toBe('{"type":"ADDED","object":{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"n","uid":"u"}}}\n');
  });
});

describe('gateway codecs', () => {
  it('serve JSON, YAML and protobuf, and CBOR last when its gate is on', () => {
    expect([...gatewayCodecs(naming).keys()]).toEqual(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
    expect([...gatewayCodecs(naming, { cbor: true, compression: true }).keys()]).toEqual([
      'application/json',
      'application/yaml',
      'application/vnd.kubernetes.protobuf',
      'application/cbor',
    ]);
    expect(gatewayCodecs(naming, { cbor: true, compression: false }).features).toEqual({ cbor: true, compression: false });
  });

  it('encode a shared object once per format and reuse the bytes in watch frames', () => {
    const codecs = gatewayCodecs(naming, { cbor: true, compression: true });
    const ns = deepFreeze({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } });
    for (const type of ['application/vnd.kubernetes.protobuf', 'application/cbor']) {
      const codec = codecs.get(type)!;
      const body = codec.encode(ns);
      expect(codec.encode(ns)).toBe(body);
      expect(codec.stream!.encodeEvent({ type: 'ADDED', object: ns }).includes(body)).toBe(true);
    }
  });

  it('CBOR: application/cbor bodies, application/cbor-seq watches, upstream-worded decode errors', () => {
    const cbor = createCborCodec(naming);
    const rs = realisticReplicaSet();
    expect(cbor.decode(cbor.encode(rs))).toEqual(rs);
    expect(cbor.stream!.mediaType).toBe('application/cbor-seq');
    const stream = Buffer.concat([cbor.stream!.encodeEvent({ type: 'ADDED', object: rs }), cbor.stream!.encodeEvent({ type: 'MODIFIED', object: rs })]);
    expect(cbor.decodeWatchStream(stream).map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
    expect(() => cbor.decode(Buffer.from('a1', 'hex'))).toThrow('unable to determine group/version/kind: cbor: unexpected EOF');
  });
});

describe('the gateway codecs on upstream fixtures', () => {
  const codecs = gatewayCodecs(naming, { cbor: true, compression: true });
  describe.each(fixtureRows())('%s', (_name, fixture) => {
    it('JSON (pretty) and YAML write the fixture bytes; protobuf and CBOR give back the object', () => {
      const object = JSON.parse(fixture.json.toString('utf8'));
      expect(codecs.get('application/json')!.encode(object, { pretty: true }).toString('utf8')).toBe(fixture.json.toString('utf8'));
      expect(codecs.get('application/yaml')!.encode(object).toString('utf8')).toBe(fixture.yaml.toString('utf8'));
      expect(codecs.get('application/vnd.kubernetes.protobuf')!.encode(object).equals(fixture.pb)).toBe(true);
      const cbor = codecs.get('application/cbor')!;
      expect(cbor.decode(cbor.encode(object))).toEqual(object);
    });
  });
});
