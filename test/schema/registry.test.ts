/** The schema registry: every definition resolves, kinds are looked up per naming profile. */
import { compileSchema, SchemaError, schemaRegistry, schemaTypes, type ValueType } from '../../src/schema';
import { definePackage, f, listOf, msg, ref, STRING } from '../../src/schema/dsl';
import { createNaming } from '../../src/naming';

const kube = createNaming('kubernetes');
const platform = createNaming('platform');

function refsOf(type: ValueType): string[] {
  if (type.kind === 'message') return [type.type];
  if (type.kind === 'list') return refsOf(type.item);
  if (type.kind === 'map') return refsOf(type.value);
  return [];
}

describe('schema registry', () => {
  it('resolves every reference to a defined, qualified type', () => {
    const types = schemaTypes(kube);
    expect(types.size).toBeGreaterThan(200);
    for (const type of types.values()) {
      for (const field of type.fields) for (const name of refsOf(field.type)) expect(types.has(name)).toBe(true);
    }
  });

  it('orders fields by number for protobuf and by declaration for JSON', () => {
    const spec = schemaRegistry(kube).type('apps.v1.ReplicaSetSpec');
    expect(spec.properties.map((p) => p.name)).toEqual(['replicas', 'minReadySeconds', 'selector', 'template']);
    expect(spec.protoFields.map((f) => f.name)).toEqual(['replicas', 'selector', 'template', 'minReadySeconds']);
  });

  it('expands inline structs into the JSON properties, keeping the path', () => {
    const volume = schemaRegistry(kube).type('core.v1.Volume');
    expect(volume.properties[0]!.name).toBe('name');
    const configMap = volume.property.get('configMap')!;
    expect(configMap.via.map((f) => f.name)).toEqual(['volumeSource']);
    const ephemeral = schemaRegistry(kube).type('core.v1.EphemeralContainer');
    expect(ephemeral.property.has('image')).toBe(true);
    expect(ephemeral.properties.at(-1)!.name).toBe('targetContainerName');
  });

  it('looks up kinds by apiVersion and kind under each profile', () => {
    for (const naming of [kube, platform]) {
      const registry = schemaRegistry(naming);
      expect(registry.kind(`${naming.groups.rbac}/v1`, 'ClusterRoleBinding')?.type.name).toBe('rbac.v1.ClusterRoleBinding');
      expect(registry.kind(`${naming.groups.events}/v1`, 'EventList')?.type.name).toBe('events.v1.EventList');
      expect(registry.kind(`${naming.groups.authorization}/v1`, 'SelfSubjectRulesReview')?.group).toBe(naming.groups.authorization);
      expect(registry.kind(`${naming.groups.meta}/v1`, 'PartialObjectMetadataList')?.type.name).toBe('meta.v1.PartialObjectMetadataList');
      expect(registry.kind('v1', 'Status')?.type.name).toBe('meta.v1.Status');
      expect(registry.kind('autoscaling/v1', 'Scale')?.type.name).toBe('autoscaling.v1.Scale');
      expect(registry.groupName('core')).toBe('');
    }
  });

  it('accepts DeleteOptions and WatchEvent under any served group version, nothing else', () => {
    const registry = schemaRegistry(kube);
    expect(registry.kind('apps/v1', 'DeleteOptions')).toMatchObject({ apiVersion: 'apps/v1', group: 'apps', version: 'v1', kind: 'DeleteOptions' });
    expect(registry.kind(`${kube.groups.rbac}/v1`, 'WatchEvent')?.type.name).toBe('meta.v1.WatchEvent');
    expect(registry.kind('apps/v2', 'DeleteOptions')).toBeUndefined();
    expect(registry.kind('apps/v1', 'Status')).toBeUndefined();
    expect(registry.kind('apps/v1', 'Pod')).toBeUndefined();
  });

  it('throws on an unknown type name', () => {
    expect(() => schemaRegistry(kube).type('core.v1.Nope')).toThrow(SchemaError);
    expect(schemaRegistry(kube).findType('core.v1.Nope')).toBeUndefined();
  });

  it('is memoized per profile', () => {
    expect(schemaRegistry(createNaming('kubernetes'))).toBe(schemaRegistry(kube));
    expect(schemaRegistry(platform)).not.toBe(schemaRegistry(kube));
  });
});

describe('schema checks', () => {
  const check =
    (...types: Parameters<typeof definePackage>[1]) =>
    () =>
      compileSchema([definePackage('x.v1', types)]);

  it('rejects unknown references, reused numbers and names, bad markers', () => {
    expect(check(msg('A', [f('b', 1, ref('B'))]))).toThrow(/unknown type B/);
    expect(check(msg('A', [f('a', 1, STRING), f('b', 1, STRING)]))).toThrow(/field number 1 used twice/);
    expect(check(msg('A', [f('a', 1, STRING), f('a', 2, STRING)]))).toThrow(/JSON name a used twice/);
    expect(check(msg('A', [f('a', 1, listOf(STRING), { listType: 'map' })]))).toThrow(/needs listMapKeys/);
    expect(check(msg('A', [f('a', 1, listOf(STRING), { listMapKeys: ['k'] })]))).toThrow(/without listType map/);
    expect(check(msg('A', [f('a', 1, STRING, { inline: true })]))).toThrow(/only messages can be inline/);
    expect(check(msg('A', [f('kind', 1, STRING)], { typeMeta: true }))).toThrow(/clash with TypeMeta/);
    expect(check(msg('A', [f('b', 1, ref('B'), { inline: true })]), msg('B', [f('a', 1, ref('A'), { inline: true })]))).toThrow(/inline cycle/);
  });

  it('accepts a well-formed package', () => {
    expect(
      check(msg('A', [f('b', 1, ref('B'), { inline: true }), f('c', 2, STRING)]), msg('B', [f('d', 1, STRING)]))()
        .get('x.v1.A')!
        .properties.map((p) => p.name),
    ).toEqual(['d', 'c']);
  });
});
