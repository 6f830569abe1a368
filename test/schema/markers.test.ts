/**
 * The facts issue 5 (validation, strategic merge patch, server-side apply, OpenAPI) reads from
 * the schema, spot-checked against upstream's markers.
 */
import { effectiveListMapKeys, effectiveListType, effectiveMapType, effectiveStructType, type FieldDef, schemaRegistry } from '../../src/schema';
import { createNaming } from '../../src/naming';

const registry = schemaRegistry(createNaming('kubernetes'));
const field = (type: string, name: string) => registry.type(type).property.get(name)!.field;

describe('merge markers', () => {
  it('containers, volumes and env merge by name', () => {
    expect(field('core.v1.PodSpec', 'containers')).toMatchObject({
      listType: 'map',
      listMapKeys: ['name'],
      patchStrategy: 'merge',
      patchMergeKey: 'name',
      required: true,
    });
    expect(field('core.v1.PodSpec', 'volumes')).toMatchObject({
      listType: 'map',
      listMapKeys: ['name'],
      patchStrategy: 'merge,retainKeys',
      patchMergeKey: 'name',
    });
    expect(field('core.v1.Container', 'env')).toMatchObject({ listType: 'map', listMapKeys: ['name'], patchStrategy: 'merge', patchMergeKey: 'name' });
  });

  it('container ports are keyed by containerPort and protocol', () => {
    expect(field('core.v1.Container', 'ports')).toMatchObject({ listType: 'map', listMapKeys: ['containerPort', 'protocol'], patchMergeKey: 'containerPort' });
  });

  it('ReplicaSet status conditions merge by type; RoleBinding subjects are atomic', () => {
    expect(field('apps.v1.ReplicaSetStatus', 'conditions')).toMatchObject({
      listType: 'map',
      listMapKeys: ['type'],
      patchStrategy: 'merge',
      patchMergeKey: 'type',
    });
    const subjects = field('rbac.v1.RoleBinding', 'subjects');
    expect(subjects.listType).toBe('atomic');
    expect(subjects.patchStrategy).toBeUndefined();
  });

  it('metadata: finalizers a set, owner references keyed by uid, managed fields atomic', () => {
    expect(field('meta.v1.ObjectMeta', 'finalizers')).toMatchObject({ listType: 'set', patchStrategy: 'merge' });
    expect(field('meta.v1.ObjectMeta', 'ownerReferences')).toMatchObject({ listType: 'map', listMapKeys: ['uid'], patchMergeKey: 'uid' });
    expect(field('meta.v1.ObjectMeta', 'managedFields').listType).toBe('atomic');
  });

  it('atomic maps and structs', () => {
    expect(field('core.v1.PodSpec', 'nodeSelector').mapType).toBe('atomic');
    expect(registry.type('meta.v1.LabelSelector').structType).toBe('atomic');
    expect(registry.type('meta.v1.OwnerReference').structType).toBe('atomic');
    expect(registry.type('core.v1.LocalObjectReference').structType).toBe('atomic');
    expect(registry.type('core.v1.PodSpec').structType).toBeUndefined();
  });
});

describe('JSON and protobuf presence facts', () => {
  it('tells pointers, omitempty and required apart', () => {
    expect(field('apps.v1.ReplicaSetSpec', 'replicas')).toMatchObject({ pointer: true, omitEmpty: true, required: false });
    expect(field('apps.v1.ReplicaSetSpec', 'selector')).toMatchObject({ pointer: true, omitEmpty: false, required: true });
    expect(field('apps.v1.ReplicaSetStatus', 'replicas')).toMatchObject({ pointer: false, omitEmpty: false, required: true });
    expect(field('rbac.v1.PolicyRule', 'verbs')).toMatchObject({ omitEmpty: false, required: true });
    expect(field('core.v1.Container', 'name').required).toBe(true);
    expect(field('core.v1.Container', 'image').required).toBe(false);
  });

  it('special types', () => {
    expect(field('meta.v1.ObjectMeta', 'creationTimestamp').type).toEqual({ kind: 'special', special: 'Time' });
    expect(field('events.v1.Event', 'eventTime').type).toEqual({ kind: 'special', special: 'MicroTime' });
    expect(field('core.v1.HTTPGetAction', 'port').type).toEqual({ kind: 'special', special: 'IntOrString' });
    expect(field('core.v1.ResourceRequirements', 'limits').type).toEqual({ kind: 'map', value: { kind: 'special', special: 'Quantity' } });
    expect(field('meta.v1.ManagedFieldsEntry', 'fieldsV1').type).toEqual({ kind: 'special', special: 'FieldsV1' });
    expect(field('meta.v1.APIResource', 'verbs').type).toEqual({ kind: 'list', item: { kind: 'scalar', scalar: 'string' }, wrapped: true });
    expect(field('core.v1.Secret', 'data').type).toEqual({ kind: 'map', value: { kind: 'scalar', scalar: 'bytes' } });
  });
});

describe("effective markers (upstream's fallbacks, docs/API.md: Merge markers)", () => {
  it('prefers listType and falls back on patchStrategy, then atomic', () => {
    const base: FieldDef = {
      name: 'x',
      number: 1,
      type: { kind: 'list', item: { kind: 'message', type: 'core.v1.Container' } },
      pointer: false,
      omitEmpty: true,
      inline: false,
      required: false,
    };
    expect(effectiveListType({ ...base, patchStrategy: 'merge', patchMergeKey: 'name' })).toBe('map');
    expect(effectiveListMapKeys({ ...base, patchStrategy: 'merge', patchMergeKey: 'name' })).toEqual(['name']);
    expect(effectiveListType({ ...base, patchStrategy: 'merge' })).toBe('set');
    expect(effectiveListType({ ...base, patchStrategy: 'replace' })).toBe('atomic');
    expect(effectiveListType(base)).toBe('atomic');
    expect(effectiveListType({ ...base, listType: 'atomic', patchStrategy: 'merge', patchMergeKey: 'name' })).toBe('atomic');
    expect(effectiveListMapKeys(field('core.v1.Container', 'ports'))).toEqual(['containerPort', 'protocol']);
    expect(effectiveListMapKeys(field('rbac.v1.RoleBinding', 'subjects'))).toBeUndefined();
  });

  it('takes struct and map relationships from the field, then the type', () => {
    expect(effectiveStructType(field('apps.v1.ReplicaSetSpec', 'selector'), registry.type('meta.v1.LabelSelector'))).toBe('atomic');
    expect(effectiveStructType(field('apps.v1.ReplicaSetSpec', 'template'), registry.type('core.v1.PodTemplateSpec'))).toBe('granular');
    expect(effectiveMapType(field('core.v1.PodSpec', 'nodeSelector'))).toBe('atomic');
    expect(effectiveMapType(field('meta.v1.ObjectMeta', 'labels'))).toBe('granular');
  });
});
