/**
 * Every served type, under both naming profiles: its definition has a schema kind (without one,
 * unknown-field pruning and strategic merge would silently be skipped), and a sample with every
 * field of its schema set round-trips through every wire codec — JSON, YAML, protobuf and CBOR.
 */
import { builtinResources } from '../../../src/core/resources';
import { createNaming, VENDORS } from '../../../src/naming';
import { schemaRegistry, type SchemaRegistry, type SchemaType, type ValueType } from '../../../src/schema';
import { gatewayCodecs } from '../../../src/gateway/codecs';

const SPECIAL_SAMPLES: Record<string, unknown> = {
  Time: '2024-05-01T10:00:00Z',
  MicroTime: '2024-05-01T10:00:00.123456Z',
  Duration: '1m30s',
  Quantity: '250m',
  IntOrString: 'http',
  RawExtension: { apiVersion: 'v1', kind: 'Any', note: 'raw' },
  FieldsV1: { 'f:metadata': { 'f:name': {} } },
  JSON: { any: ['json', 1, true, null] },
};

/**
 * A value for every field of `type`, non-zero so that every codec must write it. A recursive
 * type (a JSONSchemaProps inside a JSONSchemaProps) is sampled in full twice on a path, then
 * empty: sampled on, its fan-out would never end.
 */
function sample(registry: SchemaRegistry, type: SchemaType, depth = 0, path: readonly string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const below = [...path, type.name];
  for (const prop of type.properties) out[prop.name] = sampleValue(registry, prop.field.type, depth + 1, below);
  return out;
}

function sampleValue(registry: SchemaRegistry, t: ValueType, depth: number, path: readonly string[]): unknown {
  switch (t.kind) {
    case 'scalar':
      return { string: 'text', bool: true, int32: 7, int64: 1234567890123, double: 1.5, bytes: 'Ynl0ZXM=' }[t.scalar];
    case 'special':
      return SPECIAL_SAMPLES[t.special];
    case 'message': {
      const type = registry.type(t.type);
      // A union type (UnionDef) is written as one of two shapes: its list form where it has one
      // (a list of schemas, of strings), else its object form.
      if (type.union) {
        const other = type.property.get(type.union.other)!.field.type;
        return sampleValue(registry, other.kind === 'list' ? other : type.property.get(type.union.object)!.field.type, depth, path);
      }
      if (depth > 12 || path.filter((n) => n === t.type).length >= 2) return {};
      return sample(registry, type, depth, path);
    }
    case 'list':
      return [sampleValue(registry, t.item, depth, path)];
    case 'map':
      return { key: sampleValue(registry, t.value, depth, path) };
  }
}

describe.each(VENDORS)('every served type (%s profile)', (vendor) => {
  const naming = createNaming(vendor);
  const registry = schemaRegistry(naming);
  const defs = builtinResources(naming);
  const codecs = gatewayCodecs(naming, { cbor: true, compression: false });

  it.each(defs.map((d) => [d.resource, d] as const))('%s has a schema kind (and a list kind when it is listed)', (_name, def) => {
    const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    expect(registry.kind(apiVersion, def.kind)).toBeDefined();
    if (!def.notStored) expect(registry.kind(apiVersion, `${def.kind}List`)).toBeDefined();
  });

  it.each(defs.map((d) => [d.resource, d] as const))('%s round-trips through every codec with every field set', (_name, def) => {
    const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    const served = registry.kind(apiVersion, def.kind)!;
    const object = { ...sample(registry, served.type), apiVersion, kind: def.kind };
    expect([...codecs.keys()].sort()).toEqual(['application/cbor', 'application/json', `application/vnd.${naming.word}.protobuf`, 'application/yaml'].sort());
    for (const [mediaType, codec] of codecs) {
      expect([mediaType, codec.decode(codec.encode(object))]).toEqual([mediaType, object]);
    }
  });
});
