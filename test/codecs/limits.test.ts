/**
 * The decoded-body limits: nesting, value count and string length, each refused with its own
 * LimitExceeded; a JSON value whose text was counted within them is not walked. (A body a door
 * checked is handed to the core saying so, test/core/registry/hand-over.test.ts.)
 */
import {
  LimitExceeded,
  MAX_DECODED_VALUES,
  MAX_NESTING_DEPTH,
  MAX_STRING_LENGTH,
  checkDecodedLimits,
  checkJsonDecodeLimits,
  checkJsonNesting,
  checkJsonText,
} from '../../src/codecs/limits';
import { decodeStrictJson } from '../../src/codecs/strict-json';

function nested(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { v };
  return v;
}

const limitOf = (value: unknown): string | undefined => {
  try {
    checkDecodedLimits(value);
    return undefined;
  } catch (err) {
    return err instanceof LimitExceeded ? err.limit : String(err);
  }
};

test('each limit is refused, and what is within them passes', () => {
  expect(limitOf(nested(MAX_NESTING_DEPTH))).toBeUndefined();
  expect(limitOf(nested(MAX_NESTING_DEPTH + 1))).toBe('depth');
  expect(limitOf({ s: 'x'.repeat(MAX_STRING_LENGTH) })).toBeUndefined();
  expect(limitOf({ s: 'x'.repeat(MAX_STRING_LENGTH + 1) })).toBe('string');
  expect(limitOf(new Array(MAX_DECODED_VALUES).fill(0))).toBe('values');
  expect(limitOf({ a: [1, 'two', null, true, { b: new Uint8Array(4) }] })).toBeUndefined();
});

test('only own properties count, as Object.values counts them', () => {
  const proto = { inherited: nested(MAX_NESTING_DEPTH + 5) };
  expect(limitOf(Object.assign(Object.create(proto), { own: 1 }))).toBeUndefined();
});

describe('JSON text before parsing', () => {
  it('counts object members outside strings, skipping escaped quotes', () => {
    expect(checkJsonNesting('{"a":1,"b":{"c":[{"d":":"}]}}')).toBe(4);
    expect(checkJsonNesting('{"a\\"":"b\\\\","c":"\\"}:[{"}')).toBe(2);
    expect(checkJsonNesting('[1, 2, {"x" : null}]')).toBe(1);
    expect(checkJsonNesting('"unterminated: {')).toBe(0);
  });

  it('refuses nesting past the limit outside strings, whatever the indentation', () => {
    expect(checkJsonNesting(`${'['.repeat(MAX_NESTING_DEPTH)}${']'.repeat(MAX_NESTING_DEPTH)}`)).toBe(0);
    expect(() => checkJsonNesting('['.repeat(MAX_NESTING_DEPTH + 1))).toThrow(LimitExceeded);
    expect(checkJsonNesting(`{"s":"${'['.repeat(MAX_NESTING_DEPTH + 1)}"}`)).toBe(1);
    expect(checkJsonNesting(`{\n${' '.repeat(MAX_NESTING_DEPTH + 1)}"a": 1}`)).toBe(1);
  });

  it('gives decodeStrictJson what it needs to parse with JSON.parse and still find repeated keys', () => {
    for (const text of [
      '{"a":{"b":[{"c":1,"c":2}]},"m":{"k":"1","k":"2"},"a":{"x":1}}',
      '[{"op":"add","op":"remove"}]',
      '{"__proto__":{"x":1},"y":[]}',
      '{"a":"x:y","b":{}}',
    ]) {
      expect(decodeStrictJson(text, checkJsonNesting(text))).toEqual(decodeStrictJson(text));
    }
    expect(decodeStrictJson('{"a":1,"a":2}', checkJsonNesting('{"a":1,"a":2}')).duplicates.map((d) => d.path)).toEqual(['a']);
    expect(() => decodeStrictJson('{"a":', checkJsonNesting('{"a":'))).toThrow(SyntaxError);
  });
});

describe('values counted from JSON text', () => {
  /** Every value in a decoded JSON value, containers included. */
  const valuesIn = (v: unknown): number =>
    typeof v !== 'object' || v === null ? 1 : 1 + (Array.isArray(v) ? v : Object.values(v)).reduce((n: number, x) => n + valuesIn(x), 0);

  it.each(['0', '"a,b[{"', '[]', '{}', '[1,2,3]', '{"a":[1,{"b":null}],"c":"x,y"}', '[[],{},[[]]]', '{"a\\",":[true,false]}'])(
    '%s: at least its values',
    (text) => {
      const counts = checkJsonText(text);
      const actual = valuesIn(JSON.parse(text));
      expect(counts.values).toBeGreaterThanOrEqual(actual);
      // Only an empty container is counted once more than it holds.
      const empties = (text.match(/\[\]|\{\}/g) ?? []).length;
      expect(counts.values - actual).toBe(empties);
    },
  );

  it('a value counted within the limit is not walked', () => {
    const text = '{"spec":{"a":1}}';
    const body = JSON.parse(text) as { spec: Record<string, unknown> };
    // Not what the text decodes to (no door does this): only a walk would find the depth.
    body.spec.deep = nested(MAX_NESTING_DEPTH + 1);
    expect(() => checkJsonDecodeLimits(body, text, checkJsonText(text))).not.toThrow();
    expect(limitOf(body)).toBe('depth');
  });

  it('a value counted past the limit is walked, and refused only when it is past it', () => {
    const text = `[${'0,'.repeat(MAX_DECODED_VALUES - 1)}0]`;
    expect(() => checkJsonDecodeLimits(JSON.parse(text), text, checkJsonText(text))).toThrow(expect.objectContaining({ limit: 'values' }));
    // Counted past it by the bound (the text's empty lists), within it in fact.
    const empties = `[${'[],'.repeat(MAX_DECODED_VALUES / 2 - 1)}[]]`;
    expect(checkJsonText(empties).values).toBeGreaterThan(MAX_DECODED_VALUES);
    expect(() => checkJsonDecodeLimits(JSON.parse(empties), empties, checkJsonText(empties))).not.toThrow();
  });
});
