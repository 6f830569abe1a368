import { CodecError, createCodecs, jsonCodec, mediaTypesOf, streamMediaTypesOf, yamlCodec } from '../../../src/gateway/codecs';

describe('codecs', () => {
  it('are kept in a Map keyed by media type, JSON first', () => {
    const codecs = createCodecs([jsonCodec, yamlCodec]);
    expect(codecs.get('application/yaml')).toBe(yamlCodec);
    expect(mediaTypesOf(codecs)).toEqual(['application/json', 'application/yaml']);
    expect(streamMediaTypesOf(codecs)).toEqual(['application/json']);
  });

  it('JSON encodes compactly with a trailing newline, or indented without one when pretty (MarshalIndent)', () => {
    expect(jsonCodec.encode({ a: 1, b: [true] }).toString()).toBe('{"a":1,"b":[true]}\n');
    expect(jsonCodec.encode({ a: 1 }, { pretty: true }).toString()).toBe('{\n  "a": 1\n}');
  });

  it('JSON frames watch events one per line', () => {
    expect(jsonCodec.stream!.encodeEvent({ type: 'ADDED', object: { kind: 'Pod' } }).toString()).toBe('{"type":"ADDED","object":{"kind":"Pod"}}\n');
  });

  it('JSON decoding reports malformed input as a CodecError', () => {
    expect(jsonCodec.decode(Buffer.from('{"a":[1]}'))).toEqual({ a: [1] });
    expect(() => jsonCodec.decode(Buffer.from('{nope'))).toThrow(CodecError);
  });

  it('YAML encodes as upstream: sorted keys, unindented sequences, quoted ambiguous strings', () => {
    const text = yamlCodec
      .encode({ metadata: { name: 'x', creationTimestamp: '2026-01-01T00:00:00Z' }, kind: 'Pod', items: [{ b: 'yes', a: null }] })
      .toString();
    expect(text).toBe('items:\n- a: null\n  b: "yes"\nkind: Pod\nmetadata:\n  creationTimestamp: "2026-01-01T00:00:00Z"\n  name: x\n');
  });

  it('YAML decodes with YAML 1.1 scalars, as upstream (go-yaml v2), but keeps timestamps as strings', () => {
    expect(yamlCodec.decode(Buffer.from('a: yes\nt: 2026-01-01T00:00:00Z\nm: 3\nq: "no"\n'))).toEqual({ a: true, t: '2026-01-01T00:00:00Z', m: 3, q: 'no' });
    // The YAML 1.1 "Norway problem" applies to keys too, exactly as sigs.k8s.io/yaml behaves.
    expect(yamlCodec.decode(Buffer.from('n: 1\n'))).toEqual({ false: 1 });
    expect(() => yamlCodec.decode(Buffer.from('a: [1\n'))).toThrow(CodecError);
    expect(yamlCodec.stream).toBeUndefined();
  });
});
