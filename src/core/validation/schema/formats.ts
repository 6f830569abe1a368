/**
 * The string formats kube-openapi's strfmt.Default registry validates (kube-openapi at
 * the version Kubernetes 1.32 pins, with govalidator's 2019 checks), each a predicate on the
 * string as upstream's: names are matched without dashes (`date-time` is `datetime`).
 *
 * For custom resources apiextensions keeps only the formats of its supportedFormats list and
 * drops every other (StripUnsupportedFormatsPostProcess): `int32`, `int64`, `float`, `double`
 * and unknown names validate nothing. The registry is the same list, so a format here is
 * always checked when the schema names it.
 */
import { parseAddr } from '../../../util/go-netip';
import { isRequestUrl } from '../../../util/go-url';

export type FormatCheck = (s: string) => boolean;

/** Go's regexp `\s` is ASCII only; `\d` too. */
const GO_SPACE = '[\\t\\n\\f\\r ]';

/** The name strfmt looks a format up by: dashes removed (DefaultNameNormalizer). */
export function normalizeFormatName(name: string): string {
  return name.replace(/-/g, '');
}

/** Whether apiextensions keeps `format` for a custom resource's validation (supportedFormats). */
export function isSupportedFormat(format: string): boolean {
  return FORMATS.has(normalizeFormatName(format));
}

/** The check for `format`, if strfmt.Default knows it. */
export function formatCheck(format: string): FormatCheck | undefined {
  return FORMATS.get(normalizeFormatName(format));
}

// ---- uuid, hexcolor, rgbcolor, byte, ssn, isbn, creditcard: govalidator's patterns ----

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const OCTET = '(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])';
const RGBCOLOR = new RegExp(`^rgb\\(${GO_SPACE}*${OCTET}${GO_SPACE}*,${GO_SPACE}*${OCTET}${GO_SPACE}*,${GO_SPACE}*${OCTET}${GO_SPACE}*\\)$`);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const SSN = /^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$/;
const ISBN10 = /^(?:[0-9]{9}X|[0-9]{10})$/;
const ISBN13 = /^(?:[0-9]{13})$/;
const CREDIT_CARD =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$/;
const SPACES_AND_MINUS = new RegExp(`(?:${GO_SPACE}|-)+`, 'g');

/** Go's len(): UTF-8 bytes. */
function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

function isISBN10(str: string): boolean {
  const s = str.replace(SPACES_AND_MINUS, '');
  if (!ISBN10.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (i + 1) * (s.charCodeAt(i) - 48);
  sum += s[9] === 'X' ? 100 : 10 * (s.charCodeAt(9) - 48);
  return sum % 11 === 0;
}

function isISBN13(str: string): boolean {
  const s = str.replace(SPACES_AND_MINUS, '');
  if (!ISBN13.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += (i % 2 === 0 ? 1 : 3) * (s.charCodeAt(i) - 48);
  return s.charCodeAt(12) - 48 - ((10 - (sum % 10)) % 10) === 0;
}

/** govalidator.IsCreditCard: the digits alone, one of the card patterns, then Luhn's sum. */
function isCreditCard(str: string): boolean {
  const s = str.replace(/[^0-9]+/g, '');
  if (!CREDIT_CARD.test(s)) return false;
  let sum = 0;
  let double = false;
  for (let i = s.length - 1; i >= 0; i--) {
    let d = s.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      sum += d >= 10 ? (d % 10) + 1 : d;
    } else {
      sum += d;
    }
    double = !double;
  }
  return sum % 10 === 0;
}

// ---- hostname: strfmt's pattern (Unicode symbols and letters allowed), 255 bytes, labels of 63 ----

const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;

function isHostname(s: string): boolean {
  // Bounded before the pattern runs: nothing over 255 bytes passes anyway.
  if (utf8Length(s) > 255 || !HOSTNAME.test(s)) return false;
  return s.split('.').every((p) => utf8Length(p) <= 63);
}

// ---- email: net/mail.ParseAddress ----

/** net/mail's isAtext: visible ASCII but RFC 5322's specials, and any non-ASCII rune. */
function isAtext(c: string, dot: boolean): boolean {
  if (c === '.') return dot;
  if (c.charCodeAt(0) > 0x7f) return true;
  return /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]$/.test(c);
}

/** RFC 5322 VCHAR as net/mail reads it: visible ASCII or any non-ASCII rune. */
function isVchar(c: string): boolean {
  const n = c.charCodeAt(0);
  return (n >= 0x21 && n <= 0x7e) || n > 0x7f;
}

/**
 * net/mail's ParseAddress, as far as it accepts or refuses: an addr-spec (dot-atom or quoted
 * local part, dot-atom or IP domain literal) optionally followed by a comment, or a display
 * name (atoms, quoted strings, comments between words) followed by `<addr-spec>`; comments and
 * blanks may follow. Groups (`name: addr;`) and RFC 2047 words are read as net/mail reads
 * plain ones, which refuses a group.
 */
class MailParser {
  private i = 0;
  private readonly s: string[];
  constructor(text: string) {
    this.s = [...text];
  }
  private get empty(): boolean {
    return this.i >= this.s.length;
  }
  private peek(): string | undefined {
    return this.s[this.i];
  }
  private consume(c: string): boolean {
    if (this.s[this.i] !== c) return false;
    this.i++;
    return true;
  }
  private skipSpace(): void {
    while (!this.empty && (this.peek() === ' ' || this.peek() === '\t')) this.i++;
  }
  /** consumeComment, the '(' consumed: nested parentheses, backslash escapes. */
  private comment(): boolean {
    let depth = 1;
    while (!this.empty && depth > 0) {
      if (this.peek() === '\\' && this.i + 1 < this.s.length) this.i++;
      else if (this.peek() === '(') depth++;
      else if (this.peek() === ')') depth--;
      this.i++;
    }
    return depth === 0;
  }
  skipCFWS(): boolean {
    this.skipSpace();
    while (this.consume('(')) {
      if (!this.comment()) return false;
      this.skipSpace();
    }
    return true;
  }
  private atom(permissive: boolean): string | undefined {
    const start = this.i;
    while (!this.empty && isAtext(this.peek()!, true)) this.i++;
    if (this.i === start) return undefined;
    const a = this.s.slice(start, this.i).join('');
    if (!permissive && (a.startsWith('.') || a.endsWith('.') || a.includes('..'))) return undefined;
    return a;
  }
  /** consumeQuotedString, at the opening quote. */
  private quotedString(): string | undefined {
    this.i++;
    let out = '';
    let escaped = false;
    for (;;) {
      if (this.empty) return undefined;
      const c = this.s[this.i]!;
      if (escaped) {
        if (!isVchar(c) && c !== ' ' && c !== '\t') return undefined;
        out += c;
        escaped = false;
      } else if ((isVchar(c) && c !== '\\' && c !== '"') || c === ' ' || c === '\t') {
        out += c;
      } else if (c === '"') {
        this.i++;
        return out;
      } else if (c === '\\') {
        escaped = true;
      } else {
        return undefined;
      }
      this.i++;
    }
  }
  private domainLiteral(): string | undefined {
    this.i++;
    let text = '';
    for (;;) {
      if (this.empty) return undefined;
      const c = this.peek()!;
      if (c === ']') break;
      if (c === '[' || c === '\\' || !isVchar(c)) return undefined;
      text += c;
      this.i++;
    }
    this.i++;
    // Go's net.ParseIP: netip without a zone.
    try {
      if (parseAddr(text).zone !== '') return undefined;
    } catch {
      return undefined;
    }
    return `[${text}]`;
  }
  /** consumeAddrSpec; the position is restored on failure. */
  private addrSpec(): string | undefined {
    const start = this.i;
    const fail = () => {
      this.i = start;
      return undefined;
    };
    this.skipSpace();
    if (this.empty) return fail();
    let local: string | undefined;
    if (this.peek() === '"') {
      local = this.quotedString();
      if (local === '') return fail();
    } else {
      local = this.atom(false);
    }
    if (local === undefined || !this.consume('@')) return fail();
    this.skipSpace();
    if (this.empty) return fail();
    const domain = this.peek() === '[' ? this.domainLiteral() : this.atom(false);
    if (domain === undefined) return fail();
    return `${local}@${domain}`;
  }
  /** consumePhrase: at least one word; a word that does not parse ends it. */
  private phrase(): boolean {
    let words = 0;
    for (;;) {
      if (words > 0 && !this.skipCFWS()) return false;
      this.skipSpace();
      if (this.empty) break;
      const word = this.peek() === '"' ? this.quotedString() : this.atom(true);
      if (word === undefined) break;
      words++;
    }
    return words > 0;
  }
  parse(): string | undefined {
    this.skipSpace();
    if (this.empty) return undefined;
    let spec = this.addrSpec();
    if (spec !== undefined) {
      this.skipSpace();
      if (this.consume('(') && !this.comment()) return undefined;
    } else {
      if (this.peek() !== '<' && !this.phrase()) return undefined;
      this.skipSpace();
      if (!this.consume('<')) return undefined;
      spec = this.addrSpec();
      if (spec === undefined || !this.consume('>')) return undefined;
    }
    if (!this.skipCFWS() || !this.empty) return undefined;
    return spec;
  }
}

function isEmail(s: string): boolean {
  const addr = new MailParser(s).parse();
  return addr !== undefined && addr !== '';
}

// ---- ipv4, cidr: upstream's utils/net sloppy parsers (Go 1.16's net, leading zeros allowed) ----

const BIG = 0xffffff;

/** dtoi: decimal digits from `i`; [value, end] or undefined without a digit or past `big`. */
function dtoi(s: string, i: number): [number, number] | undefined {
  let n = 0;
  let j = i;
  for (; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
    if (n >= BIG) return undefined;
  }
  return j === i ? undefined : [n, j];
}

/** xtoi: hex digits from `i`. */
function xtoi(s: string, i: number): [number, number] | undefined {
  let n = 0;
  let j = i;
  for (; j < s.length; j++) {
    const c = s.charCodeAt(j);
    let d: number;
    if (c >= 48 && c <= 57) d = c - 48;
    else if (c >= 97 && c <= 102) d = c - 87;
    else if (c >= 65 && c <= 70) d = c - 55;
    else break;
    n = n * 16 + d;
    if (n >= BIG) return undefined;
  }
  return j === i ? undefined : [n, j];
}

/** Go 1.16 parseIPv4 over s[i:], to the end. */
function sloppyIPv4(s: string, i: number): boolean {
  let at = i;
  for (let part = 0; part < 4; part++) {
    if (at >= s.length) return false;
    if (part > 0) {
      if (s[at] !== '.') return false;
      at++;
    }
    const d = dtoi(s, at);
    if (!d || d[0] > 0xff) return false;
    at = d[1];
  }
  return at === s.length;
}

/** Go 1.16 parseIPv6 (no zone). */
function sloppyIPv6(s: string): boolean {
  let at = 0;
  let ellipsis = -1;
  if (s.length >= 2 && s[0] === ':' && s[1] === ':') {
    ellipsis = 0;
    at = 2;
    if (at === s.length) return true;
  }
  let i = 0;
  while (i < 16) {
    const x = xtoi(s, at);
    if (!x || x[0] > 0xffff) return false;
    const c = x[1];
    if (c < s.length && s[c] === '.') {
      if (ellipsis < 0 && i !== 12) return false;
      if (i + 4 > 16) return false;
      if (!sloppyIPv4(s, at)) return false;
      at = s.length;
      i += 4;
      break;
    }
    i += 2;
    at = c;
    if (at === s.length) break;
    if (s[at] !== ':' || at + 1 === s.length) return false;
    at++;
    if (s[at] === ':') {
      if (ellipsis >= 0) return false;
      ellipsis = i;
      at++;
      if (at === s.length) break;
    }
  }
  if (at !== s.length) return false;
  if (i < 16) return ellipsis >= 0;
  return ellipsis < 0;
}

/** netutils.ParseIPSloppy: IPv4 at the first '.', IPv6 at the first ':'. */
function parseIPSloppy(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '.') return sloppyIPv4(s, 0);
    if (s[i] === ':') return sloppyIPv6(s);
  }
  return false;
}

function isIPv4(s: string): boolean {
  return parseIPSloppy(s) && s.includes('.');
}

/** netutils.ParseCIDRSloppy. */
function isCIDR(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const addr = s.slice(0, slash);
  const mask = s.slice(slash + 1);
  let bits = 32;
  if (!sloppyIPv4(addr, 0)) {
    if (!sloppyIPv6(addr)) return false;
    bits = 128;
  }
  const d = dtoi(mask, 0);
  return d !== undefined && d[1] === mask.length && d[0] <= bits;
}

/** govalidator.IsIPv6: Go's current net.ParseIP (netip, no zone) and a ':' in the text. */
function isIPv6(s: string): boolean {
  if (!s.includes(':')) return false;
  try {
    return parseAddr(s).zone === '';
  } catch {
    return false;
  }
}

// ---- mac: net.ParseMAC ----

function isMAC(s: string): boolean {
  // Every byte of a valid address is a hex digit or the separator: anything else fails.
  if (!/^[\x00-\x7f]*$/.test(s) || s.length < 14) return false;
  const hex2 = (at: number, sep: string) => {
    if (at + 2 > s.length || !/^[0-9a-fA-F]{2}$/.test(s.slice(at, at + 2))) return false;
    return at + 2 === s.length || sep === '' || s[at + 2] === sep;
  };
  if (s[2] === ':' || s[2] === '-') {
    if ((s.length + 1) % 3 !== 0) return false;
    const n = (s.length + 1) / 3;
    if (n !== 6 && n !== 8 && n !== 20) return false;
    for (let i = 0, x = 0; i < n; i++, x += 3) if (!hex2(x, s[2])) return false;
    return true;
  }
  if (s[4] === '.') {
    if ((s.length + 1) % 5 !== 0) return false;
    const n = (2 * (s.length + 1)) / 5;
    if (n !== 6 && n !== 8 && n !== 20) return false;
    for (let i = 0, x = 0; i < n; i += 2, x += 5) {
      if (!/^[0-9a-fA-F]{2}$/.test(s.slice(x, x + 2))) return false;
      if (!hex2(x + 2, '.')) return false;
    }
    return true;
  }
  return false;
}

// ---- date, datetime, duration ----

function daysIn(month: number, year: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

/** time.Parse("2006-01-02", s): a 4-character year (Go's atoi takes a sign), 2-digit month and day in range. */
export function isDate(s: string): boolean {
  const m = /^([+-][0-9]{3}|[0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(s);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12) return false;
  return day >= 1 && day <= daysIn(month, year);
}

/** strfmt's pattern; its `.` is Go's, any rune but a newline. */
const DATE_TIME_REST = /^([0-9]{2}):([0-9]{2}):([0-9]{2})([^\n][0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/u;

/**
 * strfmt.IsDateTime: lowercased and split at every `t`, the first piece a date, the second
 * `hh:mm:ss[.frac](z|±hh:mm)` with hours, minutes and seconds compared as text (`23`, `59`);
 * what follows a further `t` is not looked at.
 */
function isDateTime(str: string): boolean {
  if (utf8Length(str) < 4) return false;
  const parts = str.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const m = DATE_TIME_REST.exec(parts[1]!);
  if (!m) return false;
  return m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

const GO_DURATION_UNITS = new Map<string, bigint>([
  ['ns', 1n],
  ['us', 1000n],
  ['\u00b5s', 1000n],
  ['\u03bcs', 1000n],
  ['ms', 1000000n],
  ['s', 1000000000n],
  ['m', 60000000000n],
  ['h', 3600000000000n],
]);
const TWO_63 = 1n << 63n;

/** time.ParseDuration's acceptance: `[-+]?([0-9]*(\.[0-9]*)?unit)+` or `0`, within int64 nanoseconds. */
function goParseDuration(orig: string): boolean {
  let s = orig;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return true;
  if (s === '') return false;
  let total = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || (s[0]! >= '0' && s[0]! <= '9'))) return false;
    const int = /^[0-9]*/.exec(s)![0];
    s = s.slice(int.length);
    let frac = '';
    if (s[0] === '.') {
      s = s.slice(1);
      frac = /^[0-9]*/.exec(s)![0];
      s = s.slice(frac.length);
    }
    if (int === '' && frac === '') return false;
    let u = 0;
    while (u < s.length && s[u] !== '.' && !(s[u]! >= '0' && s[u]! <= '9')) u++;
    if (u === 0) return false;
    const unit = GO_DURATION_UNITS.get(s.slice(0, u));
    if (unit === undefined) return false;
    s = s.slice(u);
    // Go's leadingInt fails past 2^63, its checks keep every step within 2^63.
    const significant = int.replace(/^0+/, '');
    if (significant.length > 19) return false;
    const v = significant === '' ? 0n : BigInt(significant);
    if (v > TWO_63 / unit) return false;
    let value = v * unit;
    if (frac !== '') {
      // leadingFraction stops taking digits once they would overflow; the fraction adds less than a unit.
      let scale = 1n;
      let f = 0n;
      for (const ch of frac) {
        if (f > TWO_63 / 10n) break;
        f = f * 10n + BigInt(ch.charCodeAt(0) - 48);
        scale *= 10n;
      }
      value += (f * unit) / scale;
      if (value > TWO_63) return false;
    }
    total += value;
    if (total > TWO_63) return false;
  }
  return neg || total <= TWO_63 - 1n;
}

const DURATION_UNITS: ReadonlyArray<readonly string[]> = [
  ['ns', 'nano'],
  ['us', '\u00b5s', 'micro'],
  ['ms', 'milli'],
  ['s', 'sec'],
  ['m', 'min'],
  ['h', 'hr', 'hour'],
  ['d', 'day'],
  ['w', 'wk', 'week'],
];

const isDigit = (c: number) => c >= 48 && c <= 57;
const isUnitChar = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 0xb5;
const isGoSpace = (c: number) => c === 9 || c === 10 || c === 12 || c === 13 || c === 32;

/**
 * The matches of strfmt's `((\d+)\s*([A-Za-zµ]+))` over `s`, leftmost first and not
 * overlapping, as Go's FindAllStringSubmatch finds them; scanned by hand in linear time (a
 * backtracking engine takes quadratic time on a long run of digits).
 */
function durationMatches(s: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let i = 0;
  while (i < s.length) {
    if (!isDigit(s.charCodeAt(i))) {
      i++;
      continue;
    }
    let j = i;
    while (j < s.length && isDigit(s.charCodeAt(j))) j++;
    let k = j;
    while (k < s.length && isGoSpace(s.charCodeAt(k))) k++;
    let l = k;
    while (l < s.length && isUnitChar(s.charCodeAt(l))) l++;
    // A match starting inside the run of digits would end where this one does: none if this fails.
    if (l > k) out.push([s.slice(i, j), s.slice(k, l)]);
    i = l > k ? l : j;
  }
  return out;
}

/**
 * strfmt.ParseDuration's acceptance: Go's time.ParseDuration, or else any `<digits><unit>` in
 * the text whose unit is one of its names (the last of each list as a prefix: `5 hours`), as
 * long as no number overflows an int64 (the loose form has no other rule: `in 5 days` passes).
 */
function isDuration(s: string): boolean {
  if (goParseDuration(s)) return true;
  let ok = false;
  for (const [digits, unitText] of durationMatches(s)) {
    // strconv.Atoi fails past int64; leading zeros are fine. Lengths first: BigInt of megabytes of digits is slow.
    const significant = digits.replace(/^0+/, '');
    if (significant.length > 19 || (significant.length === 19 && BigInt(significant) > TWO_63 - 1n)) return false;
    const unit = unitText.toLowerCase();
    for (const variants of DURATION_UNITS) {
      const last = variants.length - 1;
      for (let i = 0; i <= last; i++) {
        if ((i === last && unit.startsWith(variants[i]!)) || variants[i] === unit) ok = true;
      }
    }
  }
  return ok;
}

const FORMATS = new Map<string, FormatCheck>([
  ['bsonobjectid', (s) => /^[0-9a-fA-F]{24}$/.test(s)],
  ['uri', isRequestUrl],
  ['email', isEmail],
  ['hostname', isHostname],
  ['ipv4', isIPv4],
  ['ipv6', isIPv6],
  ['cidr', isCIDR],
  ['mac', isMAC],
  ['uuid', (s) => UUID.test(s)],
  ['uuid3', (s) => UUID3.test(s)],
  ['uuid4', (s) => UUID4.test(s)],
  ['uuid5', (s) => UUID5.test(s)],
  ['isbn', (s) => isISBN10(s) || isISBN13(s)],
  ['isbn10', isISBN10],
  ['isbn13', isISBN13],
  ['creditcard', isCreditCard],
  ['ssn', (s) => utf8Length(s) === 11 && SSN.test(s)],
  ['hexcolor', (s) => HEXCOLOR.test(s)],
  ['rgbcolor', (s) => RGBCOLOR.test(s)],
  ['byte', (s) => BASE64.test(s)],
  ['password', () => true],
  ['date', isDate],
  ['duration', isDuration],
  ['datetime', isDateTime],
]);
