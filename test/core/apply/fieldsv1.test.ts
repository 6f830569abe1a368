/**
 * FieldsV1, byte for byte as upstream writes it: elements in upstream's order (fields, keys,
 * values, indexes), `"."` for a member with children, keys of map-list items as JSON with sorted
 * key names; and conflict paths as upstream prints them.
 */
import { FieldSet, type PathElement, pathString } from '../../../src/core/apply';

const f = (name: string): PathElement => ({ kind: 'field', name });
const k = (fields: Record<string, unknown>): PathElement => ({
  kind: 'key',
  fields: Object.keys(fields)
    .sort()
    .map((name) => ({ name, value: fields[name] })),
});
const v = (value: unknown): PathElement => ({ kind: 'value', value });
const i = (index: number): PathElement => ({ kind: 'index', index });

describe('FieldsV1', () => {
  it('writes elements in upstream order with "." for members that have children', () => {
    const set = FieldSet.of(
      [f('spec'), f('replicas')],
      [f('metadata'), f('labels')],
      [f('metadata'), f('labels'), f('b')],
      [f('metadata'), f('labels'), f('a')],
      [f('metadata'), f('finalizers'), v('z')],
      [f('metadata'), f('finalizers'), v('a')],
      [f('spec'), f('ports'), k({ protocol: 'TCP', containerPort: 80 })],
      [f('spec'), f('ports'), k({ protocol: 'TCP', containerPort: 80 }), f('name')],
      [f('spec'), f('ports'), k({ protocol: 'TCP', containerPort: 8080 })],
      [f('spec'), f('list'), i(1)],
    );
    const encoded = JSON.stringify(set.toFieldsV1());
    expect(encoded).toBe(
      '{"f:metadata":{"f:finalizers":{"v:\\"a\\"":{},"v:\\"z\\"":{}},"f:labels":{".":{},"f:a":{},"f:b":{}}},' +
        '"f:spec":{"f:list":{"i:1":{}},"f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:name":{}},' +
        '"k:{\\"containerPort\\":8080,\\"protocol\\":\\"TCP\\"}":{}},"f:replicas":{}}}',
    );
    expect(FieldSet.fromFieldsV1(JSON.parse(encoded)).equals(set)).toBe(true);
  });

  it('reads "." and {} as membership and drops elements it does not know', () => {
    const set = FieldSet.fromFieldsV1({ 'f:a': { '.': {}, 'f:b': {} }, 'f:c': {}, 'x:unknown': {} });
    expect(set.paths().map(pathString)).toEqual(['.a', '.a.b', '.c']);
  });

  it('prints paths as upstream conflict messages do', () => {
    expect(pathString([f('spec'), f('template'), f('spec'), f('containers'), k({ name: 'nginx' }), f('image')])).toBe(
      '.spec.template.spec.containers[name="nginx"].image',
    );
    expect(pathString([f('spec'), f('ports'), k({ protocol: 'TCP', containerPort: 80 })])).toBe('.spec.ports[containerPort=80,protocol="TCP"]');
    expect(pathString([f('metadata'), f('finalizers'), v('x')])).toBe('.metadata.finalizers[="x"]');
  });

  it('supports union, intersection, difference and recursive difference as upstream sets do', () => {
    const a = FieldSet.of([f('spec')], [f('spec'), f('a')], [f('spec'), f('b')]);
    const b = FieldSet.of([f('spec'), f('b')], [f('status')]);
    expect(a.union(b).paths().map(pathString)).toEqual(['.spec', '.spec.a', '.spec.b', '.status']);
    expect(a.intersection(b).paths().map(pathString)).toEqual(['.spec.b']);
    expect(a.difference(b).paths().map(pathString)).toEqual(['.spec', '.spec.a']);
    expect(a.recursiveDifference(FieldSet.of([f('spec')])).empty()).toBe(true);
  });

  it('answers an operation whose result has the paths of an operand with that operand', () => {
    const a = FieldSet.of([f('spec')], [f('spec'), f('a')], [f('status'), f('x')]);
    const within = FieldSet.of([f('spec'), f('a')]);
    const outside = FieldSet.of([f('metadata')]);
    expect(a.union(within)).toBe(a);
    expect(within.union(a)).toBe(a);
    expect(a.union(new FieldSet())).toBe(a);
    expect(a.difference(outside)).toBe(a);
    expect(a.difference(new FieldSet())).toBe(a);
    expect(a.recursiveDifference(FieldSet.of([f('other')]))).toBe(a);
    // Where the paths differ, the result is a new set and the operands keep theirs.
    const grown = a.union(outside);
    expect(grown).not.toBe(a);
    expect(grown.paths().map(pathString)).toEqual(['.metadata', '.spec', '.spec.a', '.status.x']);
    const less = a.difference(within);
    expect(less.paths().map(pathString)).toEqual(['.spec', '.status.x']);
    expect(
      a
        .recursiveDifference(FieldSet.of([f('spec')]))
        .paths()
        .map(pathString),
    ).toEqual(['.status.x']);
    expect(a.paths().map(pathString)).toEqual(['.spec', '.spec.a', '.status.x']);
    expect(within.paths().map(pathString)).toEqual(['.spec.a']);
    expect(a.equals(FieldSet.of([f('status'), f('x')], [f('spec'), f('a')], [f('spec')]))).toBe(true);
    expect(a.equals(grown)).toBe(false);
    expect(within.subsetOf(a)).toBe(true);
    expect(a.subsetOf(within)).toBe(false);
  });

  it('refuses to change a set once it may be shared: read from FieldsV1, an operand or a result', () => {
    const read = FieldSet.fromFieldsV1({ 'f:spec': {} });
    expect(() => read.insert([f('status')])).toThrow('a field set was changed after it was shared');
    const a = FieldSet.of([f('spec'), f('a')]);
    const b = FieldSet.of([f('status')]);
    const both = a.union(b);
    for (const set of [a, b, both]) expect(() => set.insert([f('metadata')])).toThrow('a field set was changed after it was shared');
    expect(() => both.descend(f('spec'))).toThrow('a field set was changed after it was shared');
    // A set being built is still open.
    const building = new FieldSet();
    building.insert([f('spec'), f('b')]);
    expect(building.paths().map(pathString)).toEqual(['.spec.b']);
  });

  it('reads a frozen FieldsV1 (the watch cache shares them) once, writes it back as the same object, and leaves the sets made from it unchanged', () => {
    const fields = Object.freeze({ 'f:metadata': Object.freeze({ 'f:labels': Object.freeze({ '.': {}, 'f:app': {} }) }), 'f:spec': Object.freeze({}) });
    const set = FieldSet.fromFieldsV1(fields);
    expect(FieldSet.fromFieldsV1(fields)).toBe(set);
    expect(set.toFieldsV1()).toBe(fields);
    const grown = set.union(FieldSet.of([f('status')]));
    expect(grown.toFieldsV1()).toEqual({ 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': {}, 'f:status': {} });
    expect(set.paths().map(pathString)).toEqual(['.metadata.labels', '.metadata.labels.app', '.spec']);
    // An object that is not frozen (a request's) is read each time and written afresh.
    const open = { 'f:spec': {} };
    expect(FieldSet.fromFieldsV1(open)).not.toBe(FieldSet.fromFieldsV1(open));
    expect(FieldSet.fromFieldsV1(open).toFieldsV1()).not.toBe(open);
  });
});
