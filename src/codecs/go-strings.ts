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

/** `parent.key`, the field path Go's decoders name in their errors. */
export function joinKey(parent: string, key: string): string {
  return parent ? `${parent}.${key}` : key;
}

/** `parent[index]`. */
export function joinIndex(parent: string, index: number): string {
  return `${parent}[${index}]`;
}
