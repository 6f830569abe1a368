/**
 * The watch cache shares identical managedFields field sets between the objects it holds
 * (cached-object.ts): the content each object shows is unchanged, identical sets are one frozen
 * value, different sets stay apart.
 */
import { tryDecodeCached } from '../../../src/core/cache/resource-cache';
import { CachedObject } from '../../../src/core/cache/cached-object';

const fields = (extra: Record<string, unknown> = {}) => ({ 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, ...extra });

function stored(name: string, revision: number, fieldsV1: Record<string, unknown>, time: string) {
  const obj = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', labels: { app: 'web' }, managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1 }] },
    data: { a: '1' },
  };
  return { key: `/registry/configmaps/default/${name}`, value: Buffer.from(JSON.stringify(obj)), createRevision: revision, modRevision: revision };
}

function decoded(kv: ReturnType<typeof stored>): CachedObject {
  const out = tryDecodeCached(kv);
  if (!(out instanceof CachedObject)) throw new Error(`not decoded: ${JSON.stringify(out)}`);
  return out;
}

const fieldsOf = (o: CachedObject) => o.object.metadata!.managedFields![0]!.fieldsV1;

describe('field sets in the watch cache', () => {
  it('are one frozen value for objects with the same set, whatever else differs', () => {
    const a = decoded(stored('a', 10, fields(), '2026-11-26T10:00:00Z'));
    const b = decoded(stored('b', 11, fields(), '2026-11-26T11:00:00Z'));
    expect(fieldsOf(a)).toBe(fieldsOf(b));
    expect(Object.isFrozen(fieldsOf(a))).toBe(true);
    expect(Object.isFrozen((fieldsOf(a) as Record<string, Record<string, unknown>>)['f:data'])).toBe(true);
    expect(a.object.metadata!.managedFields![0]!.time).toBe('2026-11-26T10:00:00Z');
    expect(b.object.metadata!.managedFields![0]!.time).toBe('2026-11-26T11:00:00Z');
  });

  it('leave each object showing exactly what was stored', () => {
    const kv = stored('c', 12, fields({ 'f:binaryData': {} }), '2026-11-26T12:00:00Z');
    const c = decoded(kv);
    const expected = JSON.parse(kv.value.toString());
    expected.metadata.resourceVersion = '12';
    expect(JSON.parse(JSON.stringify(c.object))).toEqual(expected);
  });

  it('keep different sets apart', () => {
    const d = decoded(stored('d', 13, fields(), '2026-11-26T13:00:00Z'));
    const e = decoded(stored('e', 14, fields({ 'f:immutable': {} }), '2026-11-26T13:00:00Z'));
    expect(fieldsOf(d)).not.toBe(fieldsOf(e));
    expect(fieldsOf(e)).toHaveProperty('f:immutable');
    expect(fieldsOf(d)).not.toHaveProperty('f:immutable');
  });

  it('pass over managedFields that are not what they should be', () => {
    const kv = stored('f', 15, fields(), '2026-11-26T14:00:00Z');
    const odd = JSON.parse(kv.value.toString());
    odd.metadata.managedFields = [null, 'x', { manager: 'm', fieldsV1: 'not an object' }];
    const f = decoded({ ...kv, value: Buffer.from(JSON.stringify(odd)) });
    expect(f.object.metadata!.managedFields).toEqual([null, 'x', { manager: 'm', fieldsV1: 'not an object' }]);
  });
});

describe('field sets compared with the last one shared', () => {
  it('tell apart sets that differ only in key order, or in a value deep down', () => {
    const first = decoded(stored('g', 16, { 'f:data': { 'f:a': {}, 'f:b': {} } }, '2026-11-26T15:00:00Z'));
    const reordered = decoded(stored('h', 17, { 'f:data': { 'f:b': {}, 'f:a': {} } }, '2026-11-26T15:00:00Z'));
    const deeper = decoded(stored('i', 18, { 'f:data': { 'f:a': {}, 'f:b': { '.': {} } } }, '2026-11-26T15:00:00Z'));
    const again = decoded(stored('j', 19, { 'f:data': { 'f:a': {}, 'f:b': {} } }, '2026-11-26T15:00:00Z'));
    expect(fieldsOf(reordered)).not.toBe(fieldsOf(first));
    expect(Object.keys((fieldsOf(reordered) as Record<string, object>)['f:data']!)).toEqual(['f:b', 'f:a']);
    expect(fieldsOf(deeper)).not.toBe(fieldsOf(first));
    expect(fieldsOf(again)).toBe(fieldsOf(first));
  });
});
