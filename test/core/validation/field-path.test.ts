import { FieldPath, fieldErrors } from '../../../src/core/validation/field-errors';

describe('FieldPath', () => {
  it('prints Go field paths: dots between names, brackets for indexes and keys', () => {
    const spec = FieldPath.root('spec');
    expect(spec.child('template', 'spec').child('containers').index(0).child('image').toString()).toBe('spec.template.spec.containers[0].image');
    expect(FieldPath.root('metadata').child('labels').key('app.kubernetes.io/name').toString()).toBe('metadata.labels[app.kubernetes.io/name]');
    expect(FieldPath.root('metadata', 'annotations').toString()).toBe('metadata.annotations');
    expect(FieldPath.root('').child('items').toString()).toBe('items');
    expect(FieldPath.root('').index(2).child('name').toString()).toBe('[2].name');
  });

  it('shares a parent between its children and prints each the same way every time', () => {
    const containers = FieldPath.root('spec').child('containers');
    const first = containers.index(0).child('name');
    const second = containers.index(1).child('name');
    expect([String(first), String(second), String(first)]).toEqual(['spec.containers[0].name', 'spec.containers[1].name', 'spec.containers[0].name']);
    expect(fieldErrors.required(second, '').message).toBe('spec.containers[1].name: Required value');
  });
});
