/**
 * A custom resource's value as upstream holds and prints it. apiextensions decodes a custom
 * resource into Go's `interface{}` values (apimachinery's util/json: a JSON number that parses
 * as an int64 is an `int64`, any other a `float64`), and its error messages print them with
 * Go's fmt verbs: `%v` for numbers and booleans, `%q` for strings, `%#v` for maps and slices
 * (field.Error's ErrorBody), `%v` of the schema's float64 bounds in kube-openapi's messages,
 * `%q` of paths in its composite messages, encoding/json for an enum's values.
 *
 * JSON.parse gives one number type, so an integral number within int64's range stands for
 * Go's int64 and any other for float64 (`1.0` in the body is a float64 upstream and an integer
 * here: the two print alike and compare alike everywhere but in an enum of objects).
 */
import { escapeGoHtml } from '../../../codecs/go-strings';

export type GoKind = 'null' | 'bool' | 'string' | 'int' | 'float' | 'slice' | 'map';

const TWO_63 = 2 ** 63;

/** Whether a JSON number is an int64 upstream (util/json's ParseInt succeeded). */
export function isInt64(n: number): boolean {
  return Number.isInteger(n) && n >= -TWO_63 && n < TWO_63;
}

/** The Go kind `reflect` reports for a decoded JSON value. */
export function goKind(v: unknown): GoKind {
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return isInt64(v) ? 'int' : 'float';
    case 'boolean':
      return 'bool';
    case 'object':
      if (v === null) return 'null';
      return Array.isArray(v) ? 'slice' : 'map';
    default:
      return 'null';
  }
}

/** An int64 as Go prints it: exact digits past 2^53, where `String()` would round. */
export function formatInt64(n: number): string {
  return Number.isSafeInteger(n) ? String(n) : BigInt(n).toString();
}

/**
 * Go's `%v` of a float64: strconv's shortest 'g', exponent form below 1e-4 and from 1e6 on
 * (`1e+06`, `1.5e-05`), the exponent signed and of at least two digits.
 */
export function goFloat(f: number): string {
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  if (!Number.isFinite(f)) return Number.isNaN(f) ? 'NaN' : f > 0 ? '+Inf' : '-Inf';
  const neg = f < 0;
  // toExponential() without an argument gives the shortest digits that read back as `f`, as Go's.
  const [mantissa, e] = Math.abs(f).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const exp = Number(e);
  let out: string;
  if (exp < -4 || exp >= 6) {
    const abs = Math.abs(exp);
    out = `${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ''}e${exp < 0 ? '-' : '+'}${abs < 10 ? `0${abs}` : abs}`;
  } else if (exp < 0) {
    out = `0.${'0'.repeat(-exp - 1)}${digits}`;
  } else if (digits.length <= exp + 1) {
    out = digits + '0'.repeat(exp + 1 - digits.length);
  } else {
    out = `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  }
  return neg ? `-${out}` : out;
}

/** Go's `%v` of a JSON number as upstream holds it (int64 or float64). */
export function goNumber(n: number): string {
  return isInt64(n) ? formatInt64(n) : goFloat(n);
}

/** Go's `int64(f)` on amd64: truncation, and the indefinite value -2^63 out of range. */
export function goInt64(f: number): number {
  return Number.isFinite(f) && f >= -TWO_63 && f < TWO_63 ? Math.trunc(f) : -TWO_63;
}

/**
 * swag.IsFloat64AJSONInteger, which kube-openapi asks of floats (the integer type check,
 * multipleOf): within ±2^53, and an integer or within a relative 1e-9 of the integer Go's
 * `uint64(f)` truncates it to — so 2.0000000001 counts as an integer, -2.5 and 0.5 do not.
 */
export function isJsonInteger(f: number): boolean {
  if (!Number.isFinite(f) || f < -(2 ** 53) || f > 2 ** 53) return false;
  if (Number.isInteger(f)) return true;
  // uint64(f) of a negative non-integer is far from f on amd64 (and 0 on arm64): never close.
  if (f < 0) return false;
  const g = Math.trunc(f);
  if (g === 0) return false;
  const diff = Math.abs(f - g);
  return diff / Math.min(f + g, Number.MAX_VALUE) < 1e-9;
}

/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

const SHORT_ESCAPES: Record<number, string> = { 7: '\\a', 8: '\\b', 12: '\\f', 10: '\\n', 13: '\\r', 9: '\\t', 11: '\\v' };

/** A plain-ASCII string strconv.Quote leaves as it is (inside the quotes). */
const QUOTE_PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * strconv.Quote (`%q`): printable runes as they are, `\a \b \f \n \r \t \v`, other control
 * bytes as `\xHH`, other unprintable runes as `\uHHHH` / `\UHHHHHHHH`. A lone surrogate is the
 * U+FFFD Go's JSON decoder would have made of it.
 */
export function goQuote(s: string): string {
  if (QUOTE_PLAIN.test(s)) return `"${s}"`;
  let out = '"';
  for (const ch of s) {
    let c = ch.codePointAt(0)!;
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c === 0x20 || (c > 0x7e && PRINTABLE.test(String.fromCodePoint(c))) || (c > 0x20 && c < 0x7f)) out += String.fromCodePoint(c);
    else if (SHORT_ESCAPES[c]) out += SHORT_ESCAPES[c];
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c < 0x10000) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += `\\U${c.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/**
 * Go's `%#v` of a decoded JSON value: `map[string]interface {}{"a":1, "b":"x"}` (keys sorted),
 * `[]interface {}{1, "x"}`, `interface {}(nil)` for a nil inside, numbers and booleans as `%v`.
 */
export function goSharpV(v: unknown, top = true): string {
  if (v === null || v === undefined) return top ? '<nil>' : 'interface {}(nil)';
  switch (typeof v) {
    case 'string':
      return goQuote(v);
    case 'number':
      return goNumber(v);
    case 'boolean':
      return String(v);
  }
  if (Array.isArray(v)) return `[]interface {}{${v.map((e) => goSharpV(e, false)).join(', ')}}`;
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj).sort(compareBytes);
  return `map[string]interface {}{${keys.map((k) => `${goQuote(k)}:${goSharpV(obj[k], false)}`).join(', ')}}`;
}

/** fmt sorts map keys as Go strings: by UTF-8 bytes, i.e. code points. */
function compareBytes(a: string, b: string): number {
  if (a === b) return 0;
  const x = [...a];
  const y = [...b];
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/**
 * How field.Error's ErrorBody prints a bad value: a nil as `"null"`, int64, float64 and bool
 * with `%v`, a string with `%q`, anything else (maps, slices) with `%#v`.
 */
export function goBadValue(v: unknown): string {
  if (v === null || v === undefined) return '"null"';
  switch (typeof v) {
    case 'string':
      return goQuote(v);
    case 'number':
      return goNumber(v);
    case 'boolean':
      return String(v);
  }
  return goSharpV(v);
}

/**
 * encoding/json's text of a decoded value (how apiextensions prints an enum's non-string
 * values): HTML-safe escaping, object keys sorted, numbers as upstream holds them.
 */
export function goJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'string':
      return escapeGoHtml(JSON.stringify(v));
    case 'number':
      return isInt64(v) ? formatInt64(v) : goJsonFloat(v);
    case 'boolean':
      return String(v);
  }
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj).sort(compareBytes);
  return `{${keys.map((k) => `${escapeGoHtml(JSON.stringify(k))}:${goJson(obj[k])}`).join(',')}}`;
}

/** encoding/json's float64: ES6's number text, which JavaScript's agrees with (`1e+21`, `1e-7`). */
function goJsonFloat(f: number): string {
  return JSON.stringify(f);
}

/**
 * A text equal for two decoded values exactly when their JSON is, object keys in any order: the
 * key a set, a uniqueness check or an enum of objects hashes values by (upstream compares them
 * with json.Marshal's text or reflect.DeepEqual). Cheaper than goJson: no HTML escaping, keys
 * sorted by JavaScript's order, which is as canonical as Go's.
 */
export function canonicalKey(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i ? ',' : '') + canonicalKey(v[i]);
    return `${out}]`;
  }
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj);
  if (keys.length > 1) keys.sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) out += `${i ? ',' : ''}${JSON.stringify(keys[i])}:${canonicalKey(obj[keys[i]!])}`;
  return `${out}}`;
}
