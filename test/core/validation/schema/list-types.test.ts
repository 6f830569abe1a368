/** x-kubernetes-list-type set and map invariants (listtype.ValidateListSetsAndMaps). */
import { K8S, PLATFORM, compile, messages, objectWith } from './support';

const setSchema = objectWith({ spec: objectWith({ s: { type: 'array', items: {}, 'x-kubernetes-list-type': 'set' } }) });
const mapSchema = (keys: string[]) =>
  objectWith({ spec: objectWith({ m: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys, items: { type: 'object' } } }) });

const check = (schema: unknown, value: unknown, ext = K8S) => messages(compile(schema, ext).validateListTypes(value));

describe('list-type set', () => {
  it('reports each repeated value once, at its second occurrence', () => {
    expect(check(setSchema, { spec: { s: [1, 2, 1, 1, 2] } })).toEqual(['spec.s[2]: Duplicate value: 1', 'spec.s[4]: Duplicate value: 2']);
    expect(compile(setSchema).validateListTypes({ spec: { s: ['a', 'a'] } })[0]).toMatchObject({
      type: 'FieldValueDuplicate',
      field: 'spec.s[1]',
      badValue: 'a',
    });
  });

  it('compares objects and lists by value, scalars by type too', () => {
    expect(
      check(setSchema, {
        spec: {
          s: [
            { a: 1, b: [true] },
            { b: [true], a: 1 },
          ],
        },
      }),
    ).toEqual(['spec.s[1]: Duplicate value: map[string]interface {}{"a":1, "b":[]interface {}{true}}']);
    expect(check(setSchema, { spec: { s: [1, '1', true, 'true', null, 'null', [1], [1]] } })).toEqual(['spec.s[7]: Duplicate value: []interface {}{1}']);
    expect(check(setSchema, { spec: { s: [null, null] } })).toEqual(['spec.s[1]: Duplicate value: "null"']);
  });
});

describe('list-type map', () => {
  it('finds repeated single keys, an absent key counting as one', () => {
    expect(
      check(mapSchema(['name']), {
        spec: {
          m: [
            { name: 'a', v: 1 },
            { name: 'a', v: 2 },
          ],
        },
      }),
    ).toEqual(['spec.m[1]: Duplicate value: map[string]interface {}{"name":"a"}']);
    expect(check(mapSchema(['name']), { spec: { m: [{ v: 1 }, null, { v: 2 }] } })).toEqual(['spec.m[1]: Duplicate value: map[string]interface {}{}']);
    expect(check(mapSchema(['name']), { spec: { m: [{ name: null }, { name: null }] } })).toEqual([
      'spec.m[1]: Duplicate value: map[string]interface {}{"name":interface {}(nil)}',
    ]);
  });

  it('compares several keys together', () => {
    const s = mapSchema(['port', 'protocol']);
    expect(
      check(s, {
        spec: {
          m: [
            { port: 80, protocol: 'TCP' },
            { port: 80, protocol: 'UDP' },
          ],
        },
      }),
    ).toEqual([]);
    expect(
      check(s, {
        spec: {
          m: [
            { port: 80, protocol: 'TCP' },
            { port: 80, protocol: 'TCP', name: 'x' },
          ],
        },
      }),
    ).toEqual(['spec.m[1]: Duplicate value: map[string]interface {}{"port":80, "protocol":"TCP"}']);
  });

  it('refuses elements that are not objects, and stops there', () => {
    expect(check(mapSchema(['name']), { spec: { m: [{ name: 'a' }, 'x', 3, { name: 'a' }] } })).toEqual([
      'spec.m[1]: Invalid value: "x": must be an object for an array of list-type map',
    ]);
  });
});

describe('paths', () => {
  it('follows items and additionalProperties with field.Path steps', () => {
    const s = objectWith({
      outer: { type: 'array', items: objectWith({ inner: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' } }) },
      byName: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' } },
      nested: { type: 'array', items: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' } },
    });
    expect(check(s, { outer: [{ inner: ['a', 'a'] }], byName: { 'k.x': ['b', 'b'] }, nested: [[], ['c', 'c']] })).toEqual([
      'outer[0].inner[1]: Duplicate value: "a"',
      'byName[k.x][1]: Duplicate value: "b"',
      'nested[1][1]: Duplicate value: "c"',
    ]);
  });

  it('reads the platform profile names', () => {
    expect(check(setSchema, { spec: { s: [1, 1] } }, PLATFORM)).toEqual(['spec.s[1]: Duplicate value: 1']);
  });
});

describe('large lists', () => {
  it('hashes instead of comparing pairs', () => {
    const list = Array.from({ length: 100_000 }, (_, i) => ({ id: i, name: `n${i}` }));
    list.push({ id: 5, name: 'n5' });
    const started = performance.now();
    expect(check(setSchema, { spec: { s: list } })).toEqual(['spec.s[100000]: Duplicate value: map[string]interface {}{"id":5, "name":"n5"}']);
    expect(check(mapSchema(['id']), { spec: { m: list } })).toEqual(['spec.m[100000]: Duplicate value: map[string]interface {}{"id":5}']);
    // Linear: well under a second on a quiet machine (pairwise comparison would take minutes); the machine is shared.
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});
