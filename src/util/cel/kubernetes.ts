/**
 * The Kubernetes CEL libraries a 1.32 API server adds to CEL's standard functions, as functions
 * of `@bufbuild/cel`:
 *
 * - lists: `<list>.isSorted()`, `.sum()`, `.min()`, `.max()`, `.indexOf(<value>)`,
 *   `.lastIndexOf(<value>)` (the order, sums and equality are CEL's own operators);
 * - regex: `<string>.find(<regex>)`, `<string>.findAll(<regex>)`, `<string>.findAll(<regex>, <int>)`
 *   (RE2, as Go's regexp);
 * - sets: `sets.contains(<list>, <list>)`, `sets.equivalent(...)`, `sets.intersects(...)`;
 * - quantity: `quantity(<string>)`, `isQuantity(<string>)` and the Quantity methods
 *   (util/quantity.ts);
 * - urls: `url(<string>)`, `isURL(<string>)`, and on a URL `getScheme`, `getHost`,
 *   `getHostname`, `getPort`, `getEscapedPath`, `getQuery` (Go's net/url semantics, util/go-url.ts).
 *
 * - ip and cidr: `ip(<string>)`, `isIP`, `ip.isCanonical`, on an IP `family` and the address
 *   classes, `cidr(<string>)`, `isCIDR`, on a CIDR `containsIP`, `containsCIDR`, `ip`,
 *   `prefixLength`, `masked`, and `string()` of either (Go's net/netip, util/go-netip.ts).
 *
 * Not offered (an expression using them fails with "unbound function"): the format and
 * authorizer libraries, optional types and `cel.bind` (docs/ARCHITECTURE.md, "Known gaps").
 */
import type * as CelLibrary from '@bufbuild/cel';
import type { CelFunc, CelValue } from '@bufbuild/cel';
import { create, createFileRegistry, createRegistry, type DescMessage, type Registry } from '@bufbuild/protobuf';
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import type * as Re2js from 're2js';

type RE2 = Re2js.RE2JS;
import * as q from '../quantity';
import * as u from '../go-url';
import * as n from '../go-netip';

type Lib = typeof CelLibrary;

export interface KubernetesLibraries {
  readonly funcs: CelFunc[];
  /** The Quantity and URL types' descriptors, for the environment's registry. */
  readonly registry: Registry;
  /**
   * CEL's own `matches` with each pattern compiled once (compileRegex's memo), as upstream
   * compiles a constant pattern once with its program; the library's default compiles on every
   * evaluation (docs/BENCHMARKS.md, scenario 15).
   */
  readonly re2: { compile(pattern: string): RE2 };
}

/** A binary CEL operator as a function of two CEL values (CEL's semantics, errors included). */
function operator(lib: Lib, expression: string): (a: CelValue, b: CelValue) => unknown {
  const run = lib.plan(lib.celEnv(), lib.parse(expression));
  return (a, b) => run({ a, b } as never);
}

/**
 * The libraries' value types, as CEL object types (protobuf messages, which is what
 * `@bufbuild/cel` knows objects as), each holding one string field `text`: `<vendor>.Quantity`
 * its canonical decimal text, `<vendor>.URL` the text it was made from, `net.IP` and `net.CIDR`
 * their canonical text. CEL's `==` on them compares that text.
 */
function valueTypes(word: string): { registry: Registry; quantity: DescMessage; url: DescMessage; ip: DescMessage; cidr: DescMessage } {
  const text = (name: string) => ({ name, jsonName: name, number: 1, type: FieldDescriptorProto_Type.STRING, label: FieldDescriptorProto_Label.OPTIONAL });
  const file = create(FileDescriptorProtoSchema, {
    name: `keelson/cel/${word}.proto`,
    package: word,
    syntax: 'proto3',
    messageType: [
      { name: 'Quantity', field: [text('text')] },
      { name: 'URL', field: [text('text')] },
    ],
  });
  // Upstream names the address types after Go's package, whatever the vendor: `net.IP`, `net.CIDR`.
  const net = create(FileDescriptorProtoSchema, {
    name: 'keelson/cel/net.proto',
    package: 'net',
    syntax: 'proto3',
    messageType: [
      { name: 'IP', field: [text('text')] },
      { name: 'CIDR', field: [text('text')] },
    ],
  });
  const files = createFileRegistry(file, () => undefined);
  const netFiles = createFileRegistry(net, () => undefined);
  return {
    registry: createRegistry(files, netFiles),
    quantity: files.getMessage(`${word}.Quantity`)!,
    url: files.getMessage(`${word}.URL`)!,
    ip: netFiles.getMessage('net.IP')!,
    cidr: netFiles.getMessage('net.CIDR')!,
  };
}

export function kubernetesLibraries(lib: Lib, word: string): KubernetesLibraries {
  const { celFunc, celMethod, celError, isCelError, celList, celMap, CelScalar, listType, mapType, objectType } = lib;
  const DYN = CelScalar.DYN;
  const LIST = listType(DYN);
  const less = operator(lib, 'a < b');
  const equal = operator(lib, 'a == b');
  const plus = operator(lib, 'a + b');

  const items = (list: Iterable<CelValue>) => Array.from(list);
  /** The one string field every value type of these libraries holds (valueTypes). */
  const textOf = (v: CelValue) => (v as unknown as { message: { text: string } }).message.text;
  /** A CEL error from an operator, thrown: a function's throw is its call's error value. */
  const ok = <T>(value: T | CelLibrary.CelError): T => {
    if (isCelError(value)) throw value;
    return value;
  };
  const indexOf = (list: Iterable<CelValue>, value: CelValue, last: boolean): bigint => {
    const all = items(list);
    for (let k = 0; k < all.length; k++) {
      const i = last ? all.length - 1 - k : k;
      if (ok(equal(all[i]!, value)) === true) return BigInt(i);
    }
    return -1n;
  };
  const extreme = (name: 'min' | 'max') =>
    function (this: Iterable<CelValue>) {
      const all = items(this);
      if (all.length === 0) throw celError(`${name} called on empty list`);
      let best: CelValue = all[0]!;
      for (const next of all.slice(1)) {
        if (ok(name === 'min' ? less(next, best) : less(best, next)) === true) best = next;
      }
      return best as never;
    };
  const contains = (list: Iterable<CelValue>, value: CelValue): boolean => {
    for (const item of list) if (ok(equal(item, value)) === true) return true;
    return false;
  };
  const everyIn = (whole: Iterable<CelValue>, part: Iterable<CelValue>): boolean => {
    for (const item of part) if (!contains(whole, item)) return false;
    return true;
  };

  const lists: CelFunc[] = [
    celMethod('isSorted', LIST, [], CelScalar.BOOL, function () {
      const all = items(this);
      for (let i = 1; i < all.length; i++) if (ok(less(all[i]!, all[i - 1]!)) === true) return false;
      return true;
    }),
    celMethod('sum', LIST, [], DYN, function () {
      const all = items(this);
      if (all.length === 0) return 0n;
      let total: unknown = all[0];
      for (const next of all.slice(1)) total = ok(plus(total as CelValue, next));
      return total as never;
    }),
    celMethod('min', LIST, [], DYN, extreme('min') as never),
    celMethod('max', LIST, [], DYN, extreme('max') as never),
    celMethod('indexOf', LIST, [DYN], CelScalar.INT, function (value) {
      return indexOf(this, value, false) as never;
    }),
    celMethod('lastIndexOf', LIST, [DYN], CelScalar.INT, function (value) {
      return indexOf(this, value, true) as never;
    }),
  ];

  const sets: CelFunc[] = [
    celFunc('sets.contains', [LIST, LIST], CelScalar.BOOL, (whole, part) => everyIn(whole, part)),
    celFunc('sets.equivalent', [LIST, LIST], CelScalar.BOOL, (a, b) => everyIn(a, b) && everyIn(b, a)),
    celFunc('sets.intersects', [LIST, LIST], CelScalar.BOOL, (a, b) => items(b).some((item) => contains(a, item))),
  ];

  const regexFind = (text: string, pattern: string, limit: number): string[] => {
    const compiled = compileRegex(pattern);
    if (typeof compiled === 'string') throw celError(compiled);
    return findAll(compiled, text, limit);
  };
  const regex: CelFunc[] = [
    celMethod('find', CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function (pattern) {
      return regexFind(this, pattern, 1)[0] ?? '';
    }),
    celMethod('findAll', CelScalar.STRING, [CelScalar.STRING], listType(CelScalar.STRING), function (pattern) {
      return celList(regexFind(this, pattern, -1));
    }),
    celMethod('findAll', CelScalar.STRING, [CelScalar.STRING, CelScalar.INT], listType(CelScalar.STRING), function (pattern, n) {
      return celList(regexFind(this, pattern, n < 0n ? -1 : Number(n)));
    }),
  ];

  const types = valueTypes(word);
  const QUANTITY = objectType(types.quantity);
  const wrap = (d: q.Decimal) => create(types.quantity, { text: q.decimalText(d) }) as never;
  const amountOf = (v: CelValue): q.Decimal => q.parseQuantity(textOf(v));

  const fromInt = (n: bigint): q.Decimal => ({ digits: n, scale: 0 });
  const quantity: CelFunc[] = [
    // A parse error is thrown with its message: the call's error value.
    celFunc('quantity', [CelScalar.STRING], QUANTITY, (text) => wrap(q.parseQuantity(text))),
    celFunc('isQuantity', [CelScalar.STRING], CelScalar.BOOL, (text) => {
      try {
        q.parseQuantity(text);
        return true;
      } catch {
        return false;
      }
    }),
    celFunc('sign', [QUANTITY], CelScalar.INT, (a) => BigInt(q.sign(amountOf(a as never)))),
    celMethod('sign', QUANTITY, [], CelScalar.INT, function () {
      return BigInt(q.sign(amountOf(this as never)));
    }),
    celMethod('isGreaterThan', QUANTITY, [QUANTITY], CelScalar.BOOL, function (other) {
      return q.compare(amountOf(this as never), amountOf(other as never)) === 1;
    }),
    celMethod('isLessThan', QUANTITY, [QUANTITY], CelScalar.BOOL, function (other) {
      return q.compare(amountOf(this as never), amountOf(other as never)) === -1;
    }),
    celMethod('compareTo', QUANTITY, [QUANTITY], CelScalar.INT, function (other) {
      return BigInt(q.compare(amountOf(this as never), amountOf(other as never)));
    }),
    celMethod('asApproximateFloat', QUANTITY, [], CelScalar.DOUBLE, function () {
      return q.approximateFloat(amountOf(this as never));
    }),
    celMethod('isInteger', QUANTITY, [], CelScalar.BOOL, function () {
      return q.asInt64(amountOf(this as never)) !== undefined;
    }),
    celMethod('asInteger', QUANTITY, [], CelScalar.INT, function () {
      const n = q.asInt64(amountOf(this as never));
      if (n === undefined) throw celError('cannot convert value to integer');
      return n;
    }),
    celMethod('add', QUANTITY, [QUANTITY], QUANTITY, function (other) {
      return wrap(q.add(amountOf(this as never), amountOf(other as never)));
    }),
    celMethod('add', QUANTITY, [CelScalar.INT], QUANTITY, function (n) {
      return wrap(q.add(amountOf(this as never), fromInt(n)));
    }),
    celMethod('sub', QUANTITY, [QUANTITY], QUANTITY, function (other) {
      return wrap(q.add(amountOf(this as never), q.negate(amountOf(other as never))));
    }),
    celMethod('sub', QUANTITY, [CelScalar.INT], QUANTITY, function (n) {
      return wrap(q.add(amountOf(this as never), fromInt(-n)));
    }),
  ];

  const URL = objectType(types.url);
  const urlOf = (v: CelValue) => u.parseRequestUrl(textOf(v));
  const urlGetter = (name: string, get: (url: u.GoUrl) => string) =>
    celMethod(name, URL, [], CelScalar.STRING, function () {
      return get(urlOf(this as never));
    });
  const urls: CelFunc[] = [
    celFunc('url', [CelScalar.STRING], URL, (text) => {
      u.parseRequestUrl(text);
      return create(types.url, { text }) as never;
    }),
    celFunc('isURL', [CelScalar.STRING], CelScalar.BOOL, (text) => u.isRequestUrl(text)),
    urlGetter('getScheme', (url) => url.scheme),
    urlGetter('getHost', (url) => url.host),
    urlGetter('getHostname', u.hostname),
    urlGetter('getPort', u.port),
    urlGetter('getEscapedPath', u.escapedPath),
    celMethod('getQuery', URL, [], mapType(CelScalar.STRING, listType(CelScalar.STRING)), function () {
      const entries = [...u.query(urlOf(this as never))].map(([key, values]) => [key, celList(values)] as const);
      return celMap(new Map(entries)) as never;
    }),
  ];

  const IP = objectType(types.ip);
  const CIDR = objectType(types.cidr);
  const ipValue = (a: n.Addr) => create(types.ip, { text: n.addrText(a) }) as never;
  const cidrValue = (p: n.Prefix) => create(types.cidr, { text: n.prefixText(p) }) as never;
  const addrOf = (v: CelValue) => n.parseAddr(textOf(v));
  const prefixOf = (v: CelValue) => n.parsePrefix(textOf(v));
  /** upstream's parseIPAddr: netip's parse, then no zones and no IPv4-mapped IPv6 addresses. */
  const parseIP = (text: string): n.Addr => {
    let addr: n.Addr;
    try {
      addr = n.parseAddr(text);
    } catch (err) {
      throw celError(`IP Address ${JSON.stringify(text)} parse error during conversion from string: ${(err as Error).message}`);
    }
    if (addr.zone !== '') throw celError(`IP address ${JSON.stringify(text)} with zone value is not allowed`);
    if (n.is4In6(addr)) throw celError(`IPv4-mapped IPv6 address ${JSON.stringify(text)} is not allowed`);
    return addr;
  };
  /** upstream's parseCIDR, with the prefix its conversion wraps once more. */
  const parseCIDR = (text: string): n.Prefix => {
    const wrap = 'network address parse error during conversion from string: ';
    let prefix: n.Prefix;
    try {
      prefix = n.parsePrefix(text);
    } catch (err) {
      throw celError(`${wrap}${wrap}${(err as Error).message}`);
    }
    if (n.is4In6(prefix.addr)) throw celError(`${wrap}IPv4-mapped IPv6 address ${JSON.stringify(text)} is not allowed`);
    return prefix;
  };
  const succeeds = (fn: () => unknown) => {
    try {
      fn();
      return true;
    } catch {
      return false;
    }
  };
  const ipClass = (name: string, test: (a: n.Addr) => boolean) =>
    celMethod(name, IP, [], CelScalar.BOOL, function () {
      return test(addrOf(this as never));
    });
  const addresses: CelFunc[] = [
    celFunc('ip', [CelScalar.STRING], IP, (text) => ipValue(parseIP(text))),
    celFunc('isIP', [CelScalar.STRING], CelScalar.BOOL, (text) => succeeds(() => parseIP(text))),
    celFunc('ip.isCanonical', [CelScalar.STRING], CelScalar.BOOL, (text) => n.addrText(parseIP(text)) === text),
    celMethod('family', IP, [], CelScalar.INT, function () {
      return n.is4(addrOf(this as never)) ? 4n : 6n;
    }),
    ipClass('isUnspecified', n.isUnspecified),
    ipClass('isLoopback', n.isLoopback),
    ipClass('isLinkLocalMulticast', n.isLinkLocalMulticast),
    ipClass('isLinkLocalUnicast', n.isLinkLocalUnicast),
    ipClass('isGlobalUnicast', n.isGlobalUnicast),
    celFunc('string', [IP], CelScalar.STRING, (ip) => textOf(ip as never)),
    celFunc('cidr', [CelScalar.STRING], CIDR, (text) => cidrValue(parseCIDR(text))),
    celFunc('isCIDR', [CelScalar.STRING], CelScalar.BOOL, (text) => succeeds(() => parseCIDR(text))),
    celMethod('containsIP', CIDR, [CelScalar.STRING], CelScalar.BOOL, function (text) {
      return n.contains(prefixOf(this as never), parseIP(text));
    }),
    celMethod('containsIP', CIDR, [IP], CelScalar.BOOL, function (ip) {
      return n.contains(prefixOf(this as never), addrOf(ip as never));
    }),
    celMethod('containsCIDR', CIDR, [CelScalar.STRING], CelScalar.BOOL, function (text) {
      return n.containsPrefix(prefixOf(this as never), parseCIDR(text));
    }),
    celMethod('containsCIDR', CIDR, [CIDR], CelScalar.BOOL, function (other) {
      return n.containsPrefix(prefixOf(this as never), prefixOf(other as never));
    }),
    celMethod('ip', CIDR, [], IP, function () {
      return ipValue(prefixOf(this as never).addr);
    }),
    celMethod('prefixLength', CIDR, [], CelScalar.INT, function () {
      return BigInt(prefixOf(this as never).bits);
    }),
    celMethod('masked', CIDR, [], CIDR, function () {
      return cidrValue(n.masked(prefixOf(this as never)));
    }),
    celFunc('string', [CIDR], CelScalar.STRING, (cidr) => textOf(cidr as never)),
  ];

  return { funcs: [...lists, ...sets, ...regex, ...quantity, ...urls, ...addresses], registry: types.registry, re2: MEMO_RE2 };
}

/**
 * A regular expression as Go's regexp package reads it: RE2 syntax and semantics (`re2js`, a
 * port of RE2, linear in the input whatever the pattern, so no expression can stall a write),
 * kept once compiled. Returns the error message when it does not compile.
 */
function compileRegex(pattern: string): RE2 | string {
  let compiled = compiledRegexes.get(pattern);
  if (compiled === undefined) {
    const { RE2JS } = require('re2js') as typeof Re2js;
    try {
      compiled = RE2JS.compile(pattern);
    } catch (err) {
      compiled = `Illegal regex: ${(err as Error).message}`;
    }
    // A policy's patterns are few and fixed: a small bound keeps a stream of distinct ones from growing it.
    if (compiledRegexes.size >= 256) compiledRegexes.clear();
    compiledRegexes.set(pattern, compiled);
  }
  return compiled;
}

/** `matches` through the memo; a pattern that does not compile throws, which CEL reports as the call's error. */
const MEMO_RE2 = {
  compile(pattern: string): RE2 {
    const compiled = compileRegex(pattern);
    if (typeof compiled === 'string') throw new Error(compiled);
    return compiled;
  },
};

/** Shared by every server in the process: a pure memo of patterns (a compiled RE2 is never changed; a string is the pattern's error). */
const compiledRegexes = new Map<string, RE2 | string>();

/** Go's FindAllString: at most `limit` matches (all when negative), no empty match right after a match. */
function findAll(re: RE2, text: string, limit: number): string[] {
  const out: string[] = [];
  if (limit === 0) return out;
  const m = re.matcher(text);
  let at = 0;
  let previousEnd = -1;
  while (at <= text.length && m.find(at)) {
    const start = m.start();
    const end = m.end();
    const empty = start === end;
    // An empty match steps over one character (a whole surrogate pair), as Go steps over one rune.
    at = empty ? start + ((text.codePointAt(start) ?? 0) > 0xffff ? 2 : 1) : end;
    const accept = !(empty && start === previousEnd);
    previousEnd = end;
    if (!accept) continue;
    out.push(m.group() ?? '');
    if (out.length === limit) break;
  }
  return out;
}
