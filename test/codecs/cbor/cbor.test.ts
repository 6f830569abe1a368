/**
 * CBOR as upstream's serializer writes and reads it: self-described, byte strings for strings,
 * schema (Go) field order, sorted map keys, tag 22 for []byte, shortest integers and floats;
 * decoding refuses duplicate keys, bad UTF-8 and non-finite floats. Checked against cbor-x as an
 * independent decoder and against every upstream wire fixture.
 */
import { Decoder, Tag } from 'cbor-x';
import { CborDecoder, CborEncoder, CborWriter, readCbor, readCborSequence, sortedKeys } from '../../../src/codecs/cbor';
import { schemaRegistry } from '../../../src/schema';
import { createNaming } from '../../../src/naming';
import { realisticReplicaSet } from '../sample-objects';
import { fixtureRows } from '../wire-fixtures';

const registry = schemaRegistry(createNaming('kubernetes'));
const encoder = new CborEncoder(registry);
const decoder = new CborDecoder(registry);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** cbor-x's reading, byte-string keys and strings turned back into text, tag 22 into base64. */
function independent(bytes: Uint8Array): unknown {
  const raw = new Decoder({ mapsAsObjects: false } as never).decode(Buffer.from(bytes));
  const plain = (v: unknown): unknown => {
    if (v instanceof Tag) return v.tag === 22 ? Buffer.from(v.value as Uint8Array).toString('base64') : plain(v.value);
    if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
    if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [Buffer.isBuffer(k) ? k.toString('utf8') : String(k), plain(x)]));
    if (Array.isArray(v)) return v.map(plain);
    return v;
  };
  return plain(raw);
}

/** Keys of every encoded map, in order, as cbor-x reads them. */
function keyOrder(bytes: Uint8Array, path: string[]): string[] {
  let v: unknown = new Decoder({ mapsAsObjects: false } as never).decode(Buffer.from(bytes));
  for (const p of path) v = (v as Map<Buffer, unknown>).get([...(v as Map<Buffer, unknown>).keys()].find((k) => k.toString() === p)!);
  return [...(v as Map<Buffer, unknown>).keys()].map((k) => k.toString());
}

describe('CBOR encoding', () => {
  it('encloses objects in the self-described tag and writes strings as byte strings', () => {
    const bytes = encoder.encode({ kind: 'X', a: 'b' });
    expect(hex(bytes.subarray(0, 3))).toBe('d9d9f7');
    // map(2) {h'a': h'b', h'kind': h'X'}: byte strings (major type 2), keys sorted bytewise.
    expect(hex(bytes.subarray(3))).toBe('a2' + '4161' + '4162' + '446b696e64' + '4158');
  });

  it('writes struct fields in Go declaration order, kind and apiVersion first', () => {
    const rs = realisticReplicaSet();
    const bytes = encoder.encode(rs);
    expect(keyOrder(bytes, [])).toEqual(['kind', 'apiVersion', 'metadata', 'spec', 'status']);
    expect(keyOrder(bytes, ['metadata'])).toEqual([
      'name',
      'namespace',
      'uid',
      'resourceVersion',
      'generation',
      'creationTimestamp',
      'labels',
      'annotations',
      'ownerReferences',
      'managedFields',
    ]);
  });

  it('sorts map keys by their encoding: shorter first, then bytewise', () => {
    const bytes = encoder.encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { bb: '1', a: '2', c: '3', é: '4', Z: '5' } });
    expect(keyOrder(bytes, ['data'])).toEqual(['Z', 'a', 'c', 'bb', 'é']);
    expect(sortedKeys(['aaa', 'b', 'x'.repeat(30), 'y'.repeat(24), 'aa'])).toEqual(['b', 'aa', 'aaa', 'y'.repeat(24), 'x'.repeat(30)]);
  });

  it('writes []byte fields as tag 22 byte strings of the decoded base64', () => {
    const bytes = encoder.encode({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'aGk=' }, type: 'Opaque' });
    expect(hex(bytes)).toContain('416bd6426869'); // h'k': 22(h'6869') — "hi"
    expect(independent(bytes)).toEqual({ kind: 'Secret', apiVersion: 'v1', metadata: { name: 's' }, data: { k: 'aGk=' }, type: 'Opaque' });
  });

  it('writes integers in their shortest form and floats in the narrowest exact width', () => {
    const w = new CborWriter();
    for (const n of [0, 23, 24, 255, 256, 65535, 65536, -1, -25, 4294967296]) w.number(n);
    expect(hex(w.finish())).toBe('00171818' + '18ff' + '190100' + '19ffff' + '1a00010000' + '20' + '3818' + '1b0000000100000000');
    const f = new CborWriter();
    for (const n of [1.5, 0.1, 1e-7, 2 ** -24, 100000.5]) f.number(n);
    f.float(65504).float(-0);
    expect(hex(f.finish())).toBe('f93e00' + 'fb3fb999999999999a' + 'fb3e7ad7f29abcaf48' + 'f90001' + 'fa47c35040' + 'f97bff' + 'f98000');
    expect(() => new CborWriter().number(NaN)).toThrow(/NaN/);
  });

  it('keeps null and booleans, and untyped objects (fieldsV1) with sorted keys', () => {
    const bytes = encoder.encode({ a: null, b: true, c: false });
    expect(hex(bytes.subarray(3))).toBe('a34161f64162f54163f4');
    const rs = realisticReplicaSet();
    const back = decoder.decode(encoder.encode(rs));
    expect(back).toEqual(rs);
  });

  it('frames watch events as self-described {type, object} maps with the object bytes inside', () => {
    const object = encoder.encode({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } });
    const event = encoder.encodeEvent('ADDED', object);
    expect(hex(event).startsWith('d9d9f7a2447479706545414444454446' + '6f626a656374' + 'd9d9f7')).toBe(true);
    const seq = Buffer.concat([event, encoder.encodeEvent('DELETED', object)]);
    expect(decoder.decodeEvents(seq)).toEqual([
      { type: 'ADDED', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } } },
      { type: 'DELETED', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } } },
    ]);
    expect(readCborSequence(seq)).toHaveLength(2);
  });
});

describe('CBOR decoding', () => {
  it('reads text and byte strings alike, with or without the self-described tag', () => {
    // {"kind": "Pod"} with a text key and a byte-string value, no tag.
    expect(decoder.decode(Buffer.from('a1646b696e6443506f64', 'hex'))).toEqual({ kind: 'Pod' });
    expect(decoder.decode(Buffer.from('d9d9f7a1646b696e6443506f64', 'hex'))).toEqual({ kind: 'Pod' });
  });

  it('turns bytes under a []byte field, or under tag 22, into base64', () => {
    const w = new CborWriter();
    w.head(5, 3).string('apiVersion', 3).string('v1', 3).string('kind', 3).string('Secret', 3).string('data', 3);
    w.head(5, 1)
      .string('k', 3)
      .bytes(Buffer.from([0xff, 0x00]));
    expect(decoder.decode(w.finish())).toEqual({ apiVersion: 'v1', kind: 'Secret', data: { k: '/wA=' } });
    expect(decoder.decode(Buffer.from('a14161d6426869', 'hex'))).toEqual({ a: 'aGk=' });
  });

  it('refuses duplicate map keys, invalid UTF-8, non-finite floats and trailing bytes', () => {
    expect(() => readCbor(Buffer.from('a2416101416102', 'hex'))).toThrow('cbor: found duplicate map key "a" at map element index 1');
    expect(() => readCbor(Buffer.from('62c328', 'hex'))).toThrow('cbor: invalid UTF-8 string');
    expect(() => readCbor(Buffer.from('f97e00', 'hex'))).toThrow(/not allowed/);
    expect(() => readCbor(Buffer.from('0000', 'hex'))).toThrow(/extraneous data/);
    expect(() => readCbor(Buffer.from('a1', 'hex'))).toThrow('cbor: unexpected EOF');
    expect(() => readCbor(Buffer.alloc(0))).toThrow('cbor: unexpected EOF');
  });

  it('accepts indefinite lengths and reads through unknown tags', () => {
    // {_ "a": [_ 1, 2], "b": 0("x")}
    expect(readCbor(Buffer.from('bf41619f0102ff4162c06178ff', 'hex'))).toEqual({ a: [1, 2], b: 'x' });
    expect(readCbor(Buffer.from('5f41614162ff', 'hex'))).toBe('ab');
  });
});

describe('upstream wire fixtures through CBOR', () => {
  describe.each(fixtureRows())('%s', (_name, fixture) => {
    it('round-trips the .json object, and cbor-x reads the same object', () => {
      const object = JSON.parse(fixture.json.toString('utf8'));
      const bytes = encoder.encode(object);
      expect(decoder.decode(bytes)).toEqual(object);
      expect(independent(bytes)).toEqual(object);
      expect(encoder.encode(decoder.decode(bytes)).equals(bytes)).toBe(true);
    });
  });
});
