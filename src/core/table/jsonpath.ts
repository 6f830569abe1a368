/**
 * client-go's JSONPath (client-go util/jsonpath, v0.32) over decoded JSON, as the
 * apiserver runs it for a CustomResourceDefinition's `additionalPrinterColumns` (the CRD table
 * convertor) and `selectableFields` (the custom resource strategy): the template is parsed once,
 * and every object is evaluated against the parsed tree.
 *
 * The grammar and its quirks are upstream's, messages included:
 * - a template is text with `{...}` actions; the apiserver wraps a column's or selectable field's
 *   `jsonPath` in `{` `}` itself (`parseJsonPath`), so `{.spec.x}` given as a jsonPath is the
 *   template `{{.spec.x}}` and fails to parse. kubectl's relaxed form (`metadata.name`,
 *   `{.metadata.name}`, ...) is `relaxedJsonPathExpression`, which the server never applies;
 * - `.a.b`, `.*`, `..` (recursive descent: every non-empty map, slice and string below, the
 *   value itself first), `[0]`, `[-1]`, `[1:3]`, `[::2]`, `[*]`, unions `[0,2]`,
 *   `['a','b']`, filters `[?(@.type=="Ready")]` with `==` `!=` `<` `>` `<=` `>=`, and existence
 *   `[?(@.x)]`, literals (`"text"`, `'text'`, `3`, `1.5`, `true`), `range` / `end`;
 * - `['a.b']` is not a quoted key: the quoted text is parsed as `.a.b`, two fields. A key with a
 *   dot is written with a backslash, `.a\.b` or `['a\.b']` (backslashes are dropped from fields);
 * - `[i]` and slices out of range are errors, not empty results (`[i:i]` is empty); a filter
 *   compares integers with integers, floats with floats, strings with strings, else it is an
 *   error (`incompatible types for comparison`); a filter's existence test counts a null value as
 *   present.
 *
 * Values are Go's view of decoded JSON: a number is an int64 when it is an integer below 2^63,
 * else a float64 (Go keeps `2.0` a float; JSON text is not seen here). Where Go walks a map in
 * random order (`.*`, `..`), keys are taken in Go's sorted order, as its printers and tests do.
 * A string's children (`.*` on a string) are its UTF-8 bytes, as numbers.
 *
 * Divergence, on purpose: upstream's `FindResults` leaves its parsed tree truncated after a
 * `range`, so a second evaluation of the same template differs; here each evaluation starts
 * afresh.
 */
import { compareGoStrings, goJsonString } from '../../codecs/go-strings';

/** A parse or evaluation error, with upstream's message. */
export class JsonPathError extends Error {
  override name = 'JsonPathError';
}

/** An evaluation error carrying what upstream's failing step returned with it (an existence filter counts those). */
class StepError extends JsonPathError {
  constructor(
    message: string,
    readonly values: unknown[],
  ) {
    super(message);
  }
}

/** A float64 written in the template (`1.5`, `2.0`): compares as a float, not as an integer. */
class GoFloat {
  constructor(readonly value: number) {}
}

// ---------------------------------------------------------------------------------------------
// The parse tree (client-go's node.go).

enum T {
  List,
  Text,
  Field,
  Identifier,
  Array,
  Filter,
  Int,
  Float,
  Bool,
  Wildcard,
  Recursive,
  Union,
}

interface ListNode {
  t: T.List;
  nodes: Node[];
}

/** One index of `[start:end:step]`: `derived` marks the end of `[i]` (i + 1, taken from the length when i is -1). */
interface Param {
  value: number;
  known: boolean;
  derived: boolean;
}

type Node =
  | ListNode
  | { t: T.Text; text: string }
  | { t: T.Field; name: string }
  | { t: T.Identifier; name: string }
  | { t: T.Array; params: readonly [Param, Param, Param] }
  | { t: T.Filter; left: ListNode; right: ListNode; op: string }
  | { t: T.Int; value: number }
  | { t: T.Float; value: GoFloat }
  | { t: T.Bool; value: boolean }
  | { t: T.Wildcard }
  | { t: T.Recursive }
  | { t: T.Union; nodes: ListNode[] };

const newList = (): ListNode => ({ t: T.List, nodes: [] });

// ---------------------------------------------------------------------------------------------
// The parser (client-go's parser.go), with upstream's error messages.

const EOF = -1;
const C = {
  tab: 0x09,
  lf: 0x0a,
  cr: 0x0d,
  space: 0x20,
  dquote: 0x22,
  dollar: 0x24,
  squote: 0x27,
  rparen: 0x29,
  plus: 0x2b,
  comma: 0x2c,
  minus: 0x2d,
  dot: 0x2e,
  at: 0x40,
  lbracket: 0x5b,
  backslash: 0x5c,
  rbracket: 0x5d,
  underscore: 0x5f,
  lbrace: 0x7b,
  rbrace: 0x7d,
} as const;

const LETTER = /^\p{L}$/u;
const DIGIT = /^\p{Nd}$/u;
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** unicode.IsDigit. */
function isDigit(r: number): boolean {
  if (r < 0x80) return r >= 0x30 && r <= 0x39;
  return r !== EOF && DIGIT.test(String.fromCodePoint(r));
}

/** isAlphaNumeric: `_`, a letter or a digit. */
function isAlphaNumeric(r: number): boolean {
  if (r < 0x80) return r === C.underscore || (r >= 0x30 && r <= 0x39) || (r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a);
  return LETTER.test(String.fromCodePoint(r)) || DIGIT.test(String.fromCodePoint(r));
}

/** What may follow an identifier or a field name. */
function isTerminator(r: number): boolean {
  switch (r) {
    case EOF:
    case C.space:
    case C.tab:
    case C.cr:
    case C.lf:
    case C.dot:
    case C.comma:
    case C.lbracket:
    case C.rbracket:
    case C.dollar:
    case C.at:
    case C.lbrace:
    case C.rbrace:
      return true;
  }
  return false;
}

/** Go's `%#U`: `U+002A '*'`, or just `U+0009` for a rune that does not print. */
function formatRune(r: number): string {
  const hex = `U+${r.toString(16).toUpperCase().padStart(4, '0')}`;
  const ch = String.fromCodePoint(r);
  return r === C.space || PRINTABLE.test(ch) ? `${hex} '${ch}'` : hex;
}

const DICT_KEY = /^'([^']*)'$/;
const SLICE = /^(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?$/;
const FILTER = /^([^!<>=]+)([!<>=]+)([^\n]+?)$/;
const INT = /^[+-]?[0-9]+$/;
const FLOAT = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** strconv.Atoi: a decimal int64, or undefined. */
function atoi(text: string): number | undefined {
  if (!INT.test(text)) return undefined;
  const n = BigInt(text);
  return n < INT64_MIN || n > INT64_MAX ? undefined : Number(n);
}

class Parser {
  pos = 0;
  start = 0;
  width = 0;

  constructor(readonly input: string) {}

  next(): number {
    if (this.pos >= this.input.length) {
      this.width = 0;
      return EOF;
    }
    const r = this.input.codePointAt(this.pos)!;
    this.width = r > 0xffff ? 2 : 1;
    this.pos += this.width;
    return r;
  }

  peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }

  backup(): void {
    this.pos -= this.width;
  }

  consumeText(): string {
    const value = this.input.slice(this.start, this.pos);
    this.start = this.pos;
    return value;
  }

  /** The character before the one just read (the escape check on a closing quote). */
  escaped(): boolean {
    return this.input.charCodeAt(this.pos - 2) === C.backslash;
  }
}

/** Parse: text and `{...}` actions into the root list. */
function parseTemplate(input: string): ListNode {
  const p = new Parser(input);
  const root = newList();
  for (;;) {
    let action = false;
    for (;;) {
      if (input.charCodeAt(p.pos) === C.lbrace) {
        action = true;
        break;
      }
      if (p.next() === EOF) break;
    }
    if (p.pos > p.start) root.nodes.push({ t: T.Text, text: p.consumeText() });
    if (!action) return root;
    p.pos += 1;
    p.consumeText();
    const cur = newList();
    root.nodes.push(cur);
    parseInsideAction(p, cur);
  }
}

/** parseAction: `{text}` parsed on its own, its first list (unions, quoted keys, filter sides). */
function parseAction(text: string): ListNode {
  return parseTemplate(`{${text}}`).nodes[0] as ListNode;
}

/** The tokens of one action, up to and including its `}`. */
function parseInsideAction(p: Parser, cur: ListNode): void {
  const input = p.input;
  for (;;) {
    if (input.charCodeAt(p.pos) === C.rbrace) {
      p.pos += 1;
      p.consumeText();
      return;
    }
    if (input.startsWith('[?(', p.pos)) {
      parseFilter(p, cur);
      continue;
    }
    if (input.startsWith('..', p.pos)) {
      parseRecursive(p, cur);
      continue;
    }
    const r = p.next();
    if (r === EOF || r === C.cr || r === C.lf) throw new JsonPathError('unclosed action');
    if (r === C.space || r === C.at || r === C.dollar) {
      p.consumeText();
    } else if (r === C.lbracket) {
      parseArray(p, cur);
    } else if (r === C.dquote || r === C.squote) {
      parseQuote(p, cur, r);
    } else if (r === C.dot) {
      parseField(p, cur);
    } else if (r === C.plus || r === C.minus || isDigit(r)) {
      p.backup();
      parseNumber(p, cur);
    } else if (isAlphaNumeric(r)) {
      p.backup();
      parseIdentifier(p, cur);
    } else {
      throw new JsonPathError(`unrecognized character in action: ${formatRune(r)}`);
    }
  }
}

/** Keywords (`range`, `end`; anything else fails when evaluated) and `true` / `false`. */
function parseIdentifier(p: Parser, cur: ListNode): void {
  while (!isTerminator(p.next()));
  p.backup();
  const value = p.consumeText();
  if (value === 'true' || value === 'false') cur.nodes.push({ t: T.Bool, value: value === 'true' });
  else cur.nodes.push({ t: T.Identifier, name: value });
}

function parseRecursive(p: Parser, cur: ListNode): void {
  const last = cur.nodes[cur.nodes.length - 1];
  if (last?.t === T.Recursive) throw new JsonPathError('invalid multiple recursive descent');
  p.pos += 2;
  p.consumeText();
  cur.nodes.push({ t: T.Recursive });
  if (isAlphaNumeric(p.peek())) parseField(p, cur);
}

function parseNumber(p: Parser, cur: ListNode): void {
  const sign = p.peek();
  if (sign === C.plus || sign === C.minus) p.next();
  for (;;) {
    const r = p.next();
    if (r !== C.dot && !isDigit(r)) {
      p.backup();
      break;
    }
  }
  const value = p.consumeText();
  const i = atoi(value);
  if (i !== undefined) {
    cur.nodes.push({ t: T.Int, value: i === 0 ? 0 : i });
    return;
  }
  const f = FLOAT.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(f)) throw new JsonPathError(`cannot parse number ${value}`);
  cur.nodes.push({ t: T.Float, value: new GoFloat(f) });
}

/** `[...]`: a union, a quoted key (parsed as a path), or an index / slice. */
function parseArray(p: Parser, cur: ListNode): void {
  for (;;) {
    const r = p.next();
    if (r === EOF || r === C.lf) throw new JsonPathError('unterminated array');
    if (r === C.rbracket) break;
  }
  let text = p.consumeText().slice(1, -1);
  if (text === '*') text = ':';

  const parts = text.split(',');
  if (parts.length > 1) {
    cur.nodes.push({ t: T.Union, nodes: parts.map((part) => parseAction(`[${trimSpaces(part)}]`)) });
    return;
  }

  const key = DICT_KEY.exec(text);
  if (key) {
    cur.nodes.push(...parseAction(`.${key[1]}`).nodes);
    return;
  }

  const m = SLICE.exec(text);
  if (!m) throw new JsonPathError(`invalid array index ${text}`);
  const params: Param[] = [];
  for (let i = 0; i < 3; i++) {
    let value = m[i + 1] ?? '';
    if (value !== '') {
      if (i > 0) value = value.slice(1);
      if (i > 0 && value === '') {
        params.push({ value: 0, known: false, derived: false });
      } else {
        const n = atoi(value);
        if (n === undefined) throw new JsonPathError(`array index ${value} is not a number`);
        params.push({ value: n, known: true, derived: false });
      }
    } else if (i === 1) {
      params.push({ value: params[0]!.value + 1, known: true, derived: true });
    } else {
      params.push({ value: 0, known: false, derived: false });
    }
  }
  cur.nodes.push({ t: T.Array, params: params as unknown as readonly [Param, Param, Param] });
}

/** strings.Trim(s, " "). */
function trimSpaces(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s.charCodeAt(a) === C.space) a++;
  while (b > a && s.charCodeAt(b - 1) === C.space) b--;
  return s.slice(a, b);
}

/** `[?(left op right)]` or `[?(path)]`: quotes pair once, the first `)` outside them closes. */
function parseFilter(p: Parser, cur: ListNode): void {
  p.pos += 3;
  p.consumeText();
  let begin = false;
  let end = false;
  let pair = 0;
  for (;;) {
    const r = p.next();
    if (r === EOF || r === C.lf) throw new JsonPathError('unterminated filter');
    if (r === C.dquote || r === C.squote) {
      if (!begin) {
        begin = true;
        pair = r;
        continue;
      }
      if (!p.escaped() && r === pair) end = true;
    } else if (r === C.rparen && begin === end) {
      break;
    }
  }
  if (p.next() !== C.rbracket) throw new JsonPathError('unclosed array expect ]');
  const text = p.consumeText().slice(0, -2);
  const m = FILTER.exec(text);
  if (!m) cur.nodes.push({ t: T.Filter, left: parseAction(text), right: newList(), op: 'exists' });
  else cur.nodes.push({ t: T.Filter, left: parseAction(m[1]!), right: parseAction(m[3]!), op: m[2]! });
}

function parseQuote(p: Parser, cur: ListNode, end: number): void {
  for (;;) {
    const r = p.next();
    if (r === EOF || r === C.lf) throw new JsonPathError('unterminated quoted string');
    if (r === end && !p.escaped()) break;
  }
  const value = p.consumeText();
  const text = unquoteExtend(value);
  if (text === undefined) throw new JsonPathError(`unquote string ${value} error invalid syntax`);
  cur.nodes.push({ t: T.Text, text });
}

/** `.name` (backslashes dropped, `\.` keeps a dot in the name) or `.*`. */
function parseField(p: Parser, cur: ListNode): void {
  p.consumeText();
  for (;;) {
    const r = p.next();
    if (r === C.backslash) p.next();
    else if (isTerminator(r)) {
      p.backup();
      break;
    }
  }
  const value = p.consumeText();
  if (value === '*') cur.nodes.push({ t: T.Wildcard });
  else cur.nodes.push({ t: T.Field, name: value.includes('\\') ? value.replace(/\\/g, '') : value });
}

function pushUtf8(bytes: number[], cp: number): void {
  const b = Buffer.from(String.fromCodePoint(cp), 'utf8');
  for (const x of b) bytes.push(x);
}

const HEX = /^[0-9a-fA-F]+$/;

/** strconv.Unquote that also takes single-quoted strings (upstream's UnquoteExtend); undefined on bad syntax. */
function unquoteExtend(s: string): string | undefined {
  const quote = s.charCodeAt(0);
  if (s.length < 2 || quote !== s.charCodeAt(s.length - 1)) return undefined;
  if (quote !== C.dquote && quote !== C.squote) return undefined;
  const body = s.slice(1, -1);
  const q = String.fromCharCode(quote);
  if (!body.includes('\\') && !body.includes(q)) return body;
  const bytes: number[] = [];
  let i = 0;
  while (i < body.length) {
    const c = body.charCodeAt(i);
    if (c === quote) return undefined;
    if (c >= 0x80) {
      const cp = body.codePointAt(i)!;
      pushUtf8(bytes, cp);
      i += cp > 0xffff ? 2 : 1;
      continue;
    }
    if (c !== C.backslash) {
      bytes.push(c);
      i++;
      continue;
    }
    if (i + 1 >= body.length) return undefined;
    const e = body[i + 1]!;
    i += 2;
    switch (e) {
      case 'a':
        bytes.push(7);
        break;
      case 'b':
        bytes.push(8);
        break;
      case 'f':
        bytes.push(12);
        break;
      case 'n':
        bytes.push(10);
        break;
      case 'r':
        bytes.push(13);
        break;
      case 't':
        bytes.push(9);
        break;
      case 'v':
        bytes.push(11);
        break;
      case 'x':
      case 'u':
      case 'U': {
        const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        const digits = body.slice(i, i + n);
        if (digits.length < n || !HEX.test(digits)) return undefined;
        i += n;
        const v = Number.parseInt(digits, 16);
        if (e === 'x') bytes.push(v);
        else if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return undefined;
        else pushUtf8(bytes, v);
        break;
      }
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7': {
        const digits = body.slice(i, i + 2);
        if (!/^[0-7]{2}$/.test(digits)) return undefined;
        i += 2;
        const v = Number.parseInt(e + digits, 8);
        if (v > 255) return undefined;
        bytes.push(v);
        break;
      }
      case '\\':
        bytes.push(C.backslash);
        break;
      case "'":
      case '"':
        if (e !== q) return undefined;
        bytes.push(quote);
        break;
      default:
        return undefined;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

// ---------------------------------------------------------------------------------------------
// Go's view of decoded JSON values.

const TWO_63 = 2 ** 63;

function isInt64(n: number): boolean {
  return Number.isInteger(n) && n >= -TWO_63 && n < TWO_63;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof GoFloat);
}

/** Map keys in Go's sorted order. */
function sortedKeys(map: Record<string, unknown>): string[] {
  return Object.keys(map).sort(compareGoStrings);
}

/** reflect.Value.Type() of a decoded value, as the errors name it. */
function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return isInt64(v) ? 'int64' : 'float64';
  if (v instanceof GoFloat) return 'float64';
  return Array.isArray(v) ? '[]interface {}' : 'map[string]interface {}';
}

/** fmt's `%v` of a float64: shortest digits, exponent form below 1e-4 and from 1e+06. */
function goFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Number.POSITIVE_INFINITY) return '+Inf';
  if (n === Number.NEGATIVE_INFINITY) return '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mantissa, exponent] = n.toExponential().split('e') as [string, string];
  const exp = Number(exponent);
  if (exp >= -4 && exp < 6) return String(n);
  const abs = Math.abs(exp);
  return `${mantissa}e${exp < 0 ? '-' : '+'}${abs < 10 ? `0${abs}` : abs}`;
}

function goNumber(n: number): string {
  return isInt64(n) ? String(n) : goFloat(n);
}

/** fmt.Sprint of a decoded value: `map[a:1 b:[x y]]`, `<nil>`. */
function goSprint(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v instanceof GoFloat) return goFloat(v.value);
  if (Array.isArray(v)) return `[${v.map(goSprint).join(' ')}]`;
  const map = v as Record<string, unknown>;
  return `map[${sortedKeys(map)
    .filter((k) => map[k] !== undefined)
    .map((k) => `${k}:${goSprint(map[k])}`)
    .join(' ')}]`;
}

/** json.Marshal of a decoded value: keys sorted, HTML-safe strings. */
function goJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goJsonString(v);
  if (typeof v === 'number') return JSON.stringify(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v instanceof GoFloat) return JSON.stringify(v.value);
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  const map = v as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of sortedKeys(map)) if (map[k] !== undefined) parts.push(`${goJsonString(k)}:${goJson(map[k])}`);
  return `{${parts.join(',')}}`;
}

/**
 * One value as upstream's PrintResults writes it: maps and slices as JSON, anything else with
 * fmt (`nil` found in the data as `null`; `<no value>` for no value at all, as the table
 * convertor's string cells print a JSON null, which reaches PrintResults as no value).
 */
function printOne(v: unknown, nullText: string): string {
  if (v === null) return nullText;
  if (v === undefined) return '<no value>';
  if (Array.isArray(v) || isMap(v)) return goJson(v);
  return goSprint(v);
}

/** A string cell of the CRD table convertor: PrintResults of `reflect.ValueOf(value)` (a JSON null prints `<no value>`). */
export function printJsonPathValue(value: unknown): string {
  return printOne(value, '<no value>');
}

// ---------------------------------------------------------------------------------------------
// Comparisons (the text/template functions client-go forks).

enum K {
  Invalid,
  Bool,
  Int,
  Float,
  String,
}

function basicKind(v: unknown): K {
  if (typeof v === 'boolean') return K.Bool;
  if (typeof v === 'string') return K.String;
  if (typeof v === 'number') return isInt64(v) ? K.Int : K.Float;
  if (v instanceof GoFloat) return K.Float;
  return K.Invalid;
}

const BAD_TYPE = 'invalid type for comparison';
const BAD_COMPARISON = 'incompatible types for comparison';

function num(v: unknown): number {
  return v instanceof GoFloat ? v.value : (v as number);
}

/** template.Equal; a string on error. */
function goEqual(a: unknown, b: unknown): boolean | string {
  const k1 = basicKind(a);
  if (k1 === K.Invalid) return BAD_TYPE;
  const k2 = basicKind(b);
  if (k2 === K.Invalid) return BAD_TYPE;
  if (k1 !== k2) return BAD_COMPARISON;
  if (k1 === K.Int || k1 === K.Float) return num(a) === num(b);
  return a === b;
}

/** template.Less; a string on error. */
function goLess(a: unknown, b: unknown): boolean | string {
  const k1 = basicKind(a);
  if (k1 === K.Invalid) return BAD_TYPE;
  const k2 = basicKind(b);
  if (k2 === K.Invalid) return BAD_TYPE;
  if (k1 !== k2) return BAD_COMPARISON;
  if (k1 === K.Bool) return BAD_TYPE;
  if (k1 === K.String) return compareGoStrings(a as string, b as string) < 0;
  return num(a) < num(b);
}

function compare(op: string, a: unknown, b: unknown): boolean | string {
  switch (op) {
    case '<':
      return goLess(a, b);
    case '>': {
      const lessOrEqual = compare('<=', a, b);
      return typeof lessOrEqual === 'string' ? lessOrEqual : !lessOrEqual;
    }
    case '==':
      return goEqual(a, b);
    case '!=': {
      const equal = goEqual(a, b);
      return typeof equal === 'string' ? equal : !equal;
    }
    case '<=': {
      const less = goLess(a, b);
      return less === false ? goEqual(a, b) : less;
    }
    case '>=': {
      const less = goLess(a, b);
      return typeof less === 'string' ? less : !less;
    }
    default:
      return `unrecognized filter operator ${op}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Evaluation (client-go's jsonpath.go).

interface RangeState {
  beginRange: number;
  inRange: number;
  endRange: number;
  /** Index in the root's nodes of the last `end` met. */
  lastEnd: number;
}

class Evaluator {
  constructor(
    readonly allowMissingKeys: boolean,
    readonly range: RangeState,
  ) {}

  walk(input: unknown[], node: Node): unknown[] {
    switch (node.t) {
      case T.List:
        return this.list(input, node);
      case T.Text:
        return [node.text];
      case T.Field:
        return this.field(input, node.name);
      case T.Array:
        return this.array(input, node.params);
      case T.Filter:
        return this.filter(input, node);
      case T.Int:
      case T.Float:
      case T.Bool: {
        const value = node.value;
        return input.map(() => value);
      }
      case T.Wildcard:
        return this.wildcard(input);
      case T.Recursive:
        return this.recursive(input);
      case T.Union:
        return this.union(input, node.nodes);
      case T.Identifier:
        return this.identifier(input, node.name);
    }
  }

  list(input: unknown[], node: ListNode): unknown[] {
    let cur = input;
    for (const n of node.nodes) cur = this.walk(cur, n);
    return cur;
  }

  identifier(input: unknown[], name: string): unknown[] {
    if (name === 'range') {
      this.range.beginRange++;
      return input;
    }
    if (name === 'end') {
      if (this.range.inRange > 0) {
        this.range.endRange++;
        return [];
      }
      throw new StepError('not in range, nothing to end', []);
    }
    throw new StepError(`unrecognized identifier ${name}`, input);
  }

  field(input: unknown[], name: string): unknown[] {
    const results: unknown[] = [];
    if (input.length === 0) return results;
    for (const v of input) {
      if (isMap(v) && Object.hasOwn(v, name)) {
        const x = v[name];
        if (x !== undefined) results.push(x);
      }
    }
    if (results.length === 0 && !this.allowMissingKeys) throw new StepError(`${name} is not found`, results);
    return results;
  }

  array(input: unknown[], params: readonly [Param, Param, Param]): unknown[] {
    const result: unknown[] = [];
    const [p0, p1, p2] = params;
    for (const v of input) {
      if (v === null) continue;
      if (!Array.isArray(v)) throw new StepError(`${goTypeName(v)} is not array or slice`, input);
      const length = v.length;
      let start = p0.known ? p0.value : 0;
      if (start < 0) start += length;
      let end = p1.known ? p1.value : length;
      if (end < 0 || (end === 0 && p1.derived)) end += length;
      if (end === start) return result;
      if (start >= length || start < 0) throw new StepError(`array index out of bounds: index ${start}, length ${length}`, input);
      if (end > length || end < 0) throw new StepError(`array index out of bounds: index ${end - 1}, length ${length}`, input);
      if (start > end) throw new StepError(`starting index ${start} is greater than ending index ${end}`, input);
      let step = 1;
      if (p2.known) {
        if (p2.value <= 0) throw new StepError('step must be > 0', input);
        step = p2.value;
      }
      for (let i = start; i < end; i += step) result.push(v[i] ?? null);
    }
    return result;
  }

  union(input: unknown[], lists: ListNode[]): unknown[] {
    const result: unknown[] = [];
    for (const l of lists) {
      try {
        result.push(...this.list(input, l));
      } catch (e) {
        if (e instanceof StepError) throw new StepError(e.message, input);
        throw e;
      }
    }
    return result;
  }

  wildcard(input: unknown[]): unknown[] {
    const results: unknown[] = [];
    for (const v of input) pushChildren(results, v);
    return results;
  }

  recursive(input: unknown[]): unknown[] {
    const result: unknown[] = [];
    for (const v of input) {
      const children: unknown[] = [];
      pushChildren(children, v);
      if (children.length !== 0) {
        result.push(v);
        result.push(...this.recursive(children));
      }
    }
    return result;
  }

  filter(input: unknown[], node: Extract<Node, { t: T.Filter }>): unknown[] {
    const results: unknown[] = [];
    for (const v of input) {
      if (!Array.isArray(v)) {
        const shown = v === undefined ? '<invalid reflect.Value>' : goSprint(v);
        throw new StepError(`${shown} is not array or slice and cannot be filtered`, input);
      }
      for (const element of v) {
        const temp = [element];
        let lefts: unknown[];
        let failure: StepError | undefined;
        try {
          lefts = this.list(temp, node.left);
        } catch (e) {
          if (!(e instanceof StepError)) throw e;
          lefts = e.values;
          failure = e;
        }
        if (node.op === 'exists') {
          if (lefts.length > 0) results.push(element);
          continue;
        }
        if (failure) throw new StepError(failure.message, input);
        if (lefts.length === 0) continue;
        if (lefts.length > 1) throw new StepError('can only compare one element at a time', input);
        let rights: unknown[];
        try {
          rights = this.list(temp, node.right);
        } catch (e) {
          if (e instanceof StepError) throw new StepError(e.message, input);
          throw e;
        }
        if (rights.length === 0) continue;
        if (rights.length > 1) throw new StepError('can only compare one element at a time', input);
        const pass = compare(node.op, lefts[0], rights[0]);
        if (typeof pass === 'string') throw new StepError(pass, results);
        if (pass) results.push(element);
      }
    }
    return results;
  }
}

/** What `.*` and `..` see below a value: a map's values (sorted keys), a slice's elements, a string's bytes. */
function pushChildren(out: unknown[], v: unknown): void {
  if (typeof v === 'string') {
    for (const b of Buffer.from(v, 'utf8')) out.push(b);
  } else if (Array.isArray(v)) {
    for (const x of v) out.push(x ?? null);
  } else if (isMap(v)) {
    for (const k of sortedKeys(v)) if (v[k] !== undefined) out.push(v[k]);
  }
}

function unwrap(results: unknown[][]): unknown[][] {
  for (const list of results) for (let i = 0; i < list.length; i++) if (list[i] instanceof GoFloat) list[i] = (list[i] as GoFloat).value;
  return results;
}

/** FindResults: each top-level node from the data, `range` ... `end` repeating the nodes between. */
function findResults(nodes: readonly Node[], start: number, data: unknown, ev: Evaluator): unknown[][] {
  const st = ev.range;
  const full: unknown[][] = [];
  for (let i = start; i < nodes.length; i++) {
    const results = ev.walk([data], nodes[i]!);
    if (st.endRange > 0 && st.endRange <= st.inRange) {
      st.endRange--;
      st.lastEnd = i;
      break;
    }
    if (st.beginRange > 0) {
      st.beginRange--;
      st.inRange++;
      if (results.length > 0) {
        for (const value of results) full.push(...findResults(nodes, i + 1, value === null ? undefined : value, ev));
      } else {
        findResults(nodes, i + 1, undefined, ev);
      }
      st.inRange--;
      for (let k = i + 1; k < nodes.length; k++) {
        if (k === st.lastEnd) {
          i = k;
          break;
        }
      }
      continue;
    }
    full.push(results);
  }
  return full;
}

// ---------------------------------------------------------------------------------------------
// The API.

export interface JsonPathOptions {
  /** upstream's AllowMissingKeys: a missing key gives no result instead of `<key> is not found` (the table and selectable fields allow). */
  allowMissingKeys?: boolean;
}

/** A parsed template: evaluate it as often as needed. */
export interface JsonPath {
  /** The template parsed (the jsonPath in braces, for `parseJsonPath`). */
  readonly template: string;
  /** FindResults: one list of values per top-level node of the template; throws a JsonPathError. */
  findResults(data: unknown): unknown[][];
  /** The first value of the first list (what the CRD table convertor shows); undefined when there is none or evaluation fails. */
  firstResult(data: unknown): unknown;
  /** PrintResults of one list: maps and slices as JSON, scalars with fmt, a JSON null as `null`, joined by spaces. */
  printResults(values: readonly unknown[]): string;
  /** Execute: every list printed, concatenated; throws a JsonPathError. */
  execute(data: unknown): string;
}

const NO_RESULT = Symbol('none');

function compile(template: string, options: JsonPathOptions): JsonPath {
  const root = parseTemplate(template);
  const allowMissingKeys = options.allowMissingKeys ?? false;
  // One action of plain fields (`{.spec.replicas}`): walked without the evaluator.
  const only = root.nodes.length === 1 ? root.nodes[0] : undefined;
  const fields =
    only?.t === T.List && only.nodes.length > 0 && only.nodes.every((n) => n.t === T.Field) ? only.nodes.map((n) => (n as { name: string }).name) : undefined;

  const simple = (data: unknown): unknown => {
    let cur = data;
    for (const name of fields!) {
      const next = isMap(cur) && Object.hasOwn(cur, name) ? cur[name] : undefined;
      if (next === undefined) {
        if (allowMissingKeys) return NO_RESULT;
        throw new JsonPathError(`${name} is not found`);
      }
      cur = next;
    }
    return cur;
  };

  // Literal floats stay GoFloat for printing (fmt writes float64(1e6) as 1e+06); callers get numbers.
  const findRaw = (data: unknown): unknown[][] => {
    if (fields) {
      const value = simple(data);
      return [value === NO_RESULT ? [] : [value]];
    }
    return findResults(root.nodes, 0, data, new Evaluator(allowMissingKeys, { beginRange: 0, inRange: 0, endRange: 0, lastEnd: -1 }));
  };
  const find = (data: unknown): unknown[][] => (fields ? findRaw(data) : unwrap(findRaw(data)));

  const printResults = (values: readonly unknown[]): string => values.map((v) => printOne(v, 'null')).join(' ');

  return {
    template,
    findResults: find,
    firstResult(data) {
      if (fields) {
        try {
          const value = simple(data);
          return value === NO_RESULT ? undefined : value;
        } catch {
          return undefined;
        }
      }
      try {
        return find(data)[0]?.[0];
      } catch {
        return undefined;
      }
    },
    printResults,
    execute: (data) =>
      findRaw(data)
        .map((values) => printResults(values))
        .join(''),
  };
}

/** client-go's `New(name).Parse(template)`: a whole template, text and `{...}` actions; throws a JsonPathError with upstream's message. */
export function parseJsonPathTemplate(template: string, options: JsonPathOptions = {}): JsonPath {
  return compile(template, options);
}

/**
 * A CRD printer column's or selectable field's `jsonPath` as the apiserver parses it: wrapped in
 * `{` `}` (never relaxed). Throws a JsonPathError with upstream's parse message.
 */
export function parseJsonPath(jsonPath: string, options: JsonPathOptions = {}): JsonPath {
  return compile(`{${jsonPath}}`, options);
}

const RELAXED = /^\{\.?([^{}]+)\}$|^\.?([^{}]+)$/;

/** kubectl's RelaxedJSONPathExpression (custom-columns, sort-by): `a.b`, `.a.b`, `{a.b}`, `{.a.b}` all become `{.a.b}`. */
export function relaxedJsonPathExpression(expression: string): string {
  if (expression === '') return expression;
  const m = RELAXED.exec(expression);
  if (!m) throw new JsonPathError("unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'");
  return `{.${m[1] || m[2]}}`;
}

// ---------------------------------------------------------------------------------------------
// Selectable fields (apiextensions' customResourceStrategy.selectableFields).

/** A CRD `selectableFields` entry, parsed once: its field-selector name and its value in an object. */
export interface SelectableField {
  /** The jsonPath without its leading `.` (`spec.color`). */
  readonly name: string;
  /**
   * The value as a field selector compares it: fmt.Sprint of the one result (`blue`, `3`,
   * `true`), empty when missing or null. Throws upstream's errors: a jsonPath that did not parse,
   * a failed evaluation, more than one result.
   */
  value(obj: unknown): string;
}

export function selectableField(jsonPath: string): SelectableField {
  const name = jsonPath.startsWith('.') ? jsonPath.slice(1) : jsonPath;
  let path: JsonPath | undefined;
  let parseError: string | undefined;
  try {
    path = parseJsonPath(jsonPath, { allowMissingKeys: true });
  } catch (e) {
    parseError = (e as Error).message;
  }
  return {
    name,
    value(obj) {
      if (!path) throw new JsonPathError(`unexpected error parsing jsonPath: ${parseError}`);
      let results: unknown[][];
      try {
        results = path.findResults(obj);
      } catch (e) {
        throw new JsonPathError(`unexpected error finding value with jsonPath: ${(e as Error).message}`);
      }
      let value: unknown = null;
      if (results.length > 0 && results[0]!.length > 0) {
        if (results.length > 1 || results[0]!.length > 1) throw new JsonPathError('unexpectedly received more than one JSON path result');
        value = results[0]![0];
      }
      return value === null || value === undefined ? '' : goSprint(value);
    },
  };
}

const selectableCache = new Map<string, SelectableField>();

/** The selectable field's value of `obj` at `jsonPath` (parsed once per path, then cached); throws as `SelectableField.value`. */
export function selectableFieldValue(obj: unknown, jsonPath: string): string {
  let field = selectableCache.get(jsonPath);
  if (!field) {
    if (selectableCache.size >= 1024) selectableCache.clear();
    field = selectableField(jsonPath);
    selectableCache.set(jsonPath, field);
  }
  return field.value(obj);
}
