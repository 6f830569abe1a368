/**
 * Strings as Go writes and sorts them. Upstream's encoders and its field-path, managed-fields and
 * error messages are Go code, so wherever our bytes or orderings must equal theirs we follow
 * Go's rules rather than JavaScript's: encoding/json's HTML-safe escaping and sort.Strings'
 * byte-wise UTF-8 order.
 */

const HTML_UNSAFE = /[<>&\u2028\u2029]/;
const HTML_UNSAFE_ALL = /[<>&\u2028\u2029]/g;
const HTML_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/**
 * Go's encoding/json escapes `<`, `>`, `&`, U+2028 and U+2029 in every string it writes;
 * `JSON.stringify` does not. Apply to JSON text (the characters can only occur inside strings).
 */
export function escapeGoHtml(json: string): string {
  return HTML_UNSAFE.test(json) ? json.replace(HTML_UNSAFE_ALL, (c) => HTML_ESCAPES[c]!) : json;
}

/** A JSON string literal as Go's encoding/json writes it (HTML-safe). */
export function goJsonString(value: string): string {
  return escapeGoHtml(JSON.stringify(value));
}

/** Go's sort.Strings order: byte-wise over UTF-8, i.e. by code point. */
export function compareGoStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after every BMP character in UTF-8.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** A code unit at or above U+D800: a surrogate, or a BMP character UTF-16 would order before one. */
const ABOVE_D7FF = /[\ud800-\uffff]/;

/**
 * Go's order by JavaScript's own comparison, for comparisons it agrees on. JavaScript compares
 * UTF-16 code units, which is the code point order (UTF-8's byte order, Go's) except where a
 * surrogate meets a code unit at or above U+E000. So where one of the two strings has no unit
 * at or above U+D800 (keys, almost always ASCII), the first unit that differs is below U+D800 on
 * that side, and both orders agree. `compareGoStrings` walks the strings unit by unit in
 * JavaScript.
 */
export const goStringsFastOrder = {
  accepts: (s: string): boolean => !ABOVE_D7FF.test(s),
  before: (a: string, b: string): boolean => a < b,
};

/** `parent.key`, the field path Go's decoders name in their errors. */
export function joinKey(parent: string, key: string): string {
  return parent ? `${parent}.${key}` : key;
}

/** `parent[index]`. */
export function joinIndex(parent: string, index: number): string {
  return `${parent}[${index}]`;
}
