/**
 * The watch cache shares identical managedFields field sets between the objects it holds
 * (cached-object.ts): the content each object shows is unchanged, identical sets are one frozen
 * value, different sets stay apart; each watch cache (each server) has a table of its own.
 */
import { tryDecodeCached } from '../../../src/core/cache/resource-cache';
import { CachedObject, SharedFieldSets } from '../../../src/core/cache/cached-object';

/** One watch cache's table, shared by the tests below as one cache's objects share it. */
const fieldSets = new SharedFieldSets();

const fields = (extra: Record<string, unknown> = {}) => ({
  'f:data': { '.': {}, 'f:a': {} },
  'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
  ...extra,
});

function stored(name: string, revision: number, fieldsV1: Record<string, unknown>, time: string) {
  const obj = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: 'default',
      labels: { app: 'web' },
      managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1 }],
    },
    data: { a: '1' },
  };
  return { key: `/registry/configmaps/default/${name}`, value: Buffer.from(JSON.stringify(obj)), createRevision: revision, modRevision: revision };
}

function decoded(kv: ReturnType<typeof stored>, table = fieldSets): CachedObject {
  const out = tryDecodeCached(kv, table);
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

  it("are one cache's: another table (another server's cache) shares nothing with this one", () => {
    const other = new SharedFieldSets();
    const here = decoded(stored('k', 20, fields(), '2026-11-26T13:00:00Z'));
    const there = decoded(stored('k', 20, fields(), '2026-11-26T13:00:00Z'), other);
    const againThere = decoded(stored('l', 21, fields(), '2026-11-26T13:00:00Z'), other);
    expect(fieldsOf(there)).toEqual(fieldsOf(here));
    expect(fieldsOf(there)).not.toBe(fieldsOf(here));
    expect(fieldsOf(againThere)).toBe(fieldsOf(there));
    // Nor does the other table's text path know this one's sets.
    const parse = jest.spyOn(JSON, 'parse');
    new SharedFieldSets().parse(stored('m', 22, fields(), '2026-11-26T13:00:00Z').value.toString());
    const seen = String(parse.mock.calls[0]![0]);
    parse.mockRestore();
    expect(seen).toContain(JSON.stringify(fields()));
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

describe('field sets found in the stored text', () => {
  /** The cache's decode must equal a plain JSON.parse of the same text, whatever the text holds. */
  function sameAsParse(name: string, text: string): CachedObject {
    const kv = { key: `/registry/configmaps/default/${name}`, value: Buffer.from(text), createRevision: 30, modRevision: 30 };
    const got = decoded(kv);
    const expected = JSON.parse(text);
    expected.metadata.resourceVersion = '30';
    expect(JSON.stringify(got.object)).toBe(JSON.stringify(expected));
    return got;
  }

  const set = fields({ 'f:text': {} });
  const setText = JSON.stringify(set);
  const cm = (metadata: string, rest = '') => `{"apiVersion":"v1","kind":"ConfigMap","metadata":${metadata}${rest}}`;
  const entry = (fieldsV1: string) => `{"manager":"m","operation":"Update","fieldsType":"FieldsV1","fieldsV1":${fieldsV1}}`;

  beforeAll(() => {
    // Share the set once the ordinary way, so the text path knows its text.
    sameAsParse('seed', cm(`{"name":"seed","managedFields":[${entry(setText)}]}`));
  });

  it('points matching sets at the shared value, in every entry, without parsing them', () => {
    const seed = sameAsParse('seed2', cm(`{"name":"seed2","managedFields":[${entry(setText)}]}`));
    const parse = jest.spyOn(JSON, 'parse');
    const two = sameAsParse('two', cm(`{"name":"two","managedFields":[${entry(setText)},${entry('{"f:data":{}}')},${entry(setText)}]}`));
    // The cache's parse (the first call; the second is the check's own) never saw the set's text.
    const seen = String(parse.mock.calls[0]![0]);
    parse.mockRestore();
    expect(seen).toContain('"fieldsV1":"\\u0000"');
    expect(seen).not.toContain(setText);
    const entries = two.object.metadata!.managedFields!;
    expect(entries[0]!.fieldsV1).toBe(fieldsOf(seed));
    expect(entries[2]!.fieldsV1).toBe(fieldsOf(seed));
    expect(entries[1]!.fieldsV1).toEqual({ 'f:data': {} });
  });

  it('parses whole a text where a matching set sits outside managedFields', () => {
    const elsewhere = sameAsParse(
      'elsewhere',
      cm(`{"name":"elsewhere","managedFields":[${entry(setText)}]}`, `,"data":{"x":"1"},"extra":{"fieldsV1":${setText}}`),
    );
    expect((elsewhere.object as unknown as { extra: { fieldsV1: unknown } }).extra.fieldsV1).toEqual(set);
    // Inside a key that ends in `"fieldsV1`, and as a duplicate key whose last value wins.
    sameAsParse('in-key', cm(`{"name":"in-key","managedFields":[${entry(setText)}],"annotations":{"a\\"fieldsV1":${setText}}}`));
    sameAsParse('duplicate', cm(`{"name":"duplicate","managedFields":[{"manager":"m","fieldsV1":${setText},"fieldsV1":{"f:spec":{}}}]}`));
  });

  it('parses whole a text that already holds the placeholder, or NUL strings', () => {
    const nul = sameAsParse('nul', cm(`{"name":"nul","managedFields":[{"manager":"m","fieldsV1":"\\u0000"},${entry(setText)}]}`));
    expect(nul.object.metadata!.managedFields![0]!.fieldsV1).toBe('\u0000');
    sameAsParse('escaped', cm(`{"name":"escaped","labels":{"a":"\\\\u0000"},"managedFields":[${entry(setText)}]}`));
  });

  it('leaves a set alone when only its start matches, or its spacing differs', () => {
    const longer = JSON.stringify(fields({ 'f:text': {}, 'f:zzz': {} }));
    sameAsParse('prefix', cm(`{"name":"prefix","managedFields":[${entry(`${setText.slice(0, -1)},"f:more":{}}`)}]}`));
    sameAsParse('longer', cm(`{"name":"longer","managedFields":[${entry(longer)}]}`));
    sameAsParse('spaced', cm(`{"name":"spaced","managedFields":[{"manager":"m","fieldsV1": ${setText}}]}`));
  });

  it('reports text that is not JSON as before', () => {
    const out = tryDecodeCached(
      {
        key: '/registry/configmaps/default/bad',
        value: Buffer.from(`{"metadata":{"managedFields":[{"fieldsV1":${setText}}]`),
        createRevision: 31,
        modRevision: 31,
      },
      fieldSets,
    );
    expect(out).not.toBeInstanceOf(CachedObject);
  });
});
