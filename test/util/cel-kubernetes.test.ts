/**
 * Kubernetes' CEL libraries (src/util/cel): each function against the examples upstream's
 * library documents, the quantity grammar and its three errors, exact arithmetic where floats
 * would round, URLs as Go's net/url reads them, addresses and prefixes as net/netip does, and
 * the types named after the profile.
 */
import { compileExpression } from '../../src/core/admission/cel';
import { createNaming } from '../../src/naming';
import { QUANTITY_FORMAT_ERROR, QUANTITY_NUMERIC_ERROR, QUANTITY_SUFFIX_ERROR, decimalText, parseQuantity } from '../../src/util/quantity';

const kubernetes = createNaming('kubernetes');
const run = (expression: string, vars: Record<string, unknown> = {}) => compileExpression(expression, kubernetes).evaluate(vars);
const failure = (expression: string) => {
  try {
    run(expression);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`${expression} did not fail`);
};

describe('lists', () => {
  test.each([
    ['[1, 2, 3].isSorted()', true],
    ["['a', 'b', 'b', 'c'].isSorted()", true],
    ['[2.0, 1.0].isSorted()', false],
    ['[1].isSorted()', true],
    ['[].isSorted()', true],
    ['[1, 3].sum()', 4],
    ['[1.0, 3.0].sum()', 4],
    ["[duration('1m'), duration('1s')].sum() == duration('61s')", true],
    ['[].sum()', 0],
    ['[1, 3].min()', 1],
    ['[1, 3].max()', 3],
    ['[1].min()', 1],
    ["['b', 'a', 'c'].max()", 'c'],
    ['[1, 2, 2, 3].indexOf(2)', 1],
    ["['a', 'b', 'b', 'c'].lastIndexOf('b')", 2],
    ['[1.0].indexOf(1.1)', -1],
    ["[].indexOf('string')", -1],
  ])('%s', (expression, want) => expect(run(expression)).toEqual(want));

  test('min and max of an empty list fail, as upstream words it; mixed types are no overload', () => {
    expect(failure('[].min()')).toBe('min called on empty list');
    expect(failure('[].max()')).toBe('max called on empty list');
    expect(failure("[1, 'a'].isSorted()")).toMatch(/overload/);
  });

  test('on lists of the object being admitted', () => {
    expect(
      run('object.spec.ports.map(p, p.port).isSorted() && object.spec.ports.map(p, p.port).sum() == 523', {
        object: { spec: { ports: [{ port: 80 }, { port: 443 }] } },
      }),
    ).toBe(true);
  });
});

describe('regular expressions', () => {
  test.each([
    ["'abc 123 def 456'.find('[0-9]+')", '123'],
    ["'abc'.find('[0-9]+')", ''],
    ["'abc 123 def 456'.findAll('[0-9]+')", ['123', '456']],
    ["'abc 123 def 456'.findAll('[0-9]+', 1)", ['123']],
    ["'abc 123 def 456'.findAll('[0-9]+', 0)", []],
    ["'abc 123 def 456'.findAll('[0-9]+', -1)", ['123', '456']],
    // Go's FindAllString: no empty match right after a match.
    ["'baaac'.findAll('a*')", ['', 'aaa', '']],
    ["'ABC'.find('(?i)b')", 'B'],
    ["'key=value'.find('(?P<k>[a-z]+)=')", 'key='],
    ["'a\\nb'.findAll('(?m)^[a-z]$')", ['a', 'b']],
  ])('%s', (expression, want) => expect(run(expression)).toEqual(want));

  test("RE2's syntax, POSIX classes and inline flags included; a pattern RE2 refuses fails with Go's parser message", () => {
    expect(run("'12ab3'.find('[[:alpha:]]+')")).toBe('ab');
    expect(run("'aB'.findAll('a(?i)b')")).toEqual(['aB']);
    expect(run("'x😀y'.findAll('')")).toEqual(['', '', '', '']);
    expect(failure("'x'.find('(')")).toBe('Illegal regex: error parsing regexp: missing closing ): `(`');
    expect(failure("'x'.find('(?=x)')")).toBe('Illegal regex: error parsing regexp: invalid or unsupported Perl syntax: `(?=`');
  });

  test("CEL's own matches() reads RE2 through the same compiled patterns: Go's syntax, linear time, Go's parser message", () => {
    expect(run("'abc'.matches('^[[:alpha:]]+$')")).toBe(true);
    expect(run("'aB'.matches('a(?i)b')")).toBe(true);
    expect(run("'ab1'.matches('^[a-z]+$')")).toBe(false);
    expect(run(`'${'a'.repeat(30)}b'.matches('^(a+)+$')`)).toBe(false);
    expect(failure("'x'.matches('(')")).toContain('error parsing regexp: missing closing ): `(`');
  });

  test('matching takes time linear in the input: a pattern that backtracks exponentially elsewhere does not stall the server', () => {
    // A backtracking engine (JavaScript's RegExp) would not finish this test: 2^30 ways to split the a's.
    expect(run(`'${'a'.repeat(30)}b'.find('^(a+)+$')`)).toBe('');
  });
});

describe('sets', () => {
  test.each([
    ['sets.contains([1, 2, 3, 4], [2, 3])', true],
    ['sets.contains([1, 2], [3])', false],
    ['sets.contains([1], [])', true],
    ['sets.contains([1.0, 2u], [1, 2])', true],
    ['sets.equivalent([1, 2, 3], [3, 2, 1, 1])', true],
    ['sets.equivalent([1, 2], [1])', false],
    ['sets.intersects([1], [1, 2])', true],
    ['sets.intersects([1], [])', false],
  ])('%s', (expression, want) => expect(run(expression)).toBe(want));
});

describe('quantities', () => {
  test.each([
    ["quantity('200M').compareTo(quantity('0.2G'))", 0],
    ["quantity('50M').compareTo(quantity('50Mi'))", -1],
    ["quantity('50Mi').compareTo(quantity('50M'))", 1],
    ["quantity('150Mi').isGreaterThan(quantity('100Mi'))", true],
    ["quantity('50Mi').isGreaterThan(quantity('100Mi'))", false],
    ["quantity('50M').isLessThan(quantity('100M'))", true],
    ["quantity('50000000G').isInteger()", true],
    ["quantity('50k').isInteger()", true],
    ["quantity('9999999999999999999999999999999999999G').isInteger()", false],
    ["quantity('50k').asInteger() == 50000", true],
    ["quantity('50k').sub(20000).asApproximateFloat() == 30000.0", true],
    ["quantity('50k').add(quantity('20k')) == quantity('70k')", true],
    ["quantity('50k').add(20) == quantity('50020')", true],
    ["quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')", true],
    ["quantity('1') == quantity('1000m')", true],
    ["quantity('0.1') == quantity('100m')", true],
    ["quantity('-5').sign()", -1],
    ["quantity('0').sign()", 0],
    ["quantity('1.5Gi').asInteger()", 1610612736],
    ["isQuantity('1.3G')", true],
    ["isQuantity('1.3Gi')", true],
    ["isQuantity('1,3G')", false],
    ["isQuantity('10000k')", true],
    ["isQuantity('200K')", false],
    ["isQuantity('Three')", false],
    ["isQuantity('Mi')", false],
  ])('%s', (expression, want) => expect(run(expression)).toEqual(want));

  test("errors in the parser's words; an integer out of range", () => {
    expect(failure("quantity('200K')")).toBe(QUANTITY_SUFFIX_ERROR);
    expect(failure("quantity('Three')")).toBe(QUANTITY_FORMAT_ERROR);
    expect(QUANTITY_FORMAT_ERROR).toBe("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    expect(failure("quantity('9999999999999999999999999999999999999G').asInteger()")).toBe('cannot convert value to integer');
  });

  test('the grammar: exponents, rounding to nano-units away from zero, the binary cap', () => {
    const text = (q: string) => decimalText(parseQuantity(q));
    expect(text('1e3')).toBe('1000');
    expect(text('1E-3')).toBe('0.001');
    expect(text('1E')).toBe('1000000000000000000');
    expect(text('.5')).toBe('0.5');
    expect(text('1.')).toBe('1');
    expect(text('+2k')).toBe('2000');
    expect(text('0.1Ki')).toBe('102.4');
    expect(text('0.0000000001')).toBe('0.000000001');
    expect(text('-0.0000000001')).toBe('-0.000000001');
    expect(text('8Ei')).toBe('9223372036854775807');
    expect(text('-8Ei')).toBe('-9223372036854775807');
    expect(text('9E')).toBe('9000000000000000000');
    expect(text('90E')).toBe('90000000000000000000');
    expect(() => parseQuantity('')).toThrow(QUANTITY_FORMAT_ERROR);
    expect(() => parseQuantity('1e')).toThrow(QUANTITY_SUFFIX_ERROR);
    expect(() => parseQuantity('1ki')).toThrow(QUANTITY_SUFFIX_ERROR);
    expect(() => parseQuantity('1 Gi')).toThrow(QUANTITY_FORMAT_ERROR);
    expect(() => parseQuantity('1e1.5')).toThrow(QUANTITY_FORMAT_ERROR);
    expect(QUANTITY_NUMERIC_ERROR).toBe('unable to parse numeric part of quantity');
  });

  test("the type carries the profile's name", () => {
    const typeName = (naming: ReturnType<typeof createNaming>) => (compileExpression("type(quantity('1'))", naming).evaluate({}) as { name: string }).name;
    expect(typeName(kubernetes)).toBe('kubernetes.Quantity');
    expect(typeName(createNaming('platform'))).toBe('platform.Quantity');
  });
});

describe('urls', () => {
  test.each([
    ["isURL('https://user:pass@example.com:80/path?query=val#fragment')", true],
    ["isURL('/absolute-path')", true],
    ["isURL('https://a:b:c/')", false],
    ["isURL('../relative-path')", false],
    ["url('/path').getScheme()", ''],
    ["url('https://example.com/').getScheme()", 'https'],
    ["url('HTTPS://example.com/').getScheme()", 'https'],
    ["url('https://example.com:80/').getHost()", 'example.com:80'],
    ["url('https://example.com/').getHost()", 'example.com'],
    ["url('https://[::1]:80/').getHost()", '[::1]:80'],
    ["url('https://[::1]/').getHost()", '[::1]'],
    ["url('/path').getHost()", ''],
    ["url('https://example.com:80/').getHostname()", 'example.com'],
    ["url('https://127.0.0.1:80/').getHostname()", '127.0.0.1'],
    ["url('https://[::1]:80/').getHostname()", '::1'],
    ["url('/path').getHostname()", ''],
    ["url('https://example.com:80/').getPort()", '80'],
    ["url('https://example.com/').getPort()", ''],
    ["url('/path').getPort()", ''],
    ["url('https://example.com/path').getEscapedPath()", '/path'],
    ["url('https://example.com/path with spaces/').getEscapedPath()", '/path%20with%20spaces/'],
    ["url('https://example.com/a%2Fb').getEscapedPath()", '/a%2Fb'],
    ["url('https://example.com').getEscapedPath()", ''],
    ["url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()", { k1: ['a'], k2: ['b', 'c'] }],
    ["url('https://example.com/path?key with spaces=value with spaces').getQuery()", { 'key with spaces': ['value with spaces'] }],
    ["url('https://example.com/path?a=1+2&b=%zz&c').getQuery()", { a: ['1 2'], c: [''] }],
    ["url('https://example.com/path?').getQuery()", {}],
    ["url('https://example.com/path').getQuery()", {}],
    ["url('https://example.com/path#frag').getEscapedPath()", '/path'],
    ["url('https://example.com/') == url('https://example.com/')", true],
  ])('%s', (expression, want) => expect(run(expression)).toEqual(want));

  test("errors in Go's words, wrapped as upstream's library wraps them", () => {
    expect(failure("url('https://a:b:c/')")).toBe('URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":c" after host');
    expect(failure("url('../relative-path')")).toBe('URL parse error during conversion from string: parse "../relative-path": invalid URI for request');
    expect(failure("url('')")).toBe('URL parse error during conversion from string: parse "": empty url');
    expect(failure("url(':x')")).toBe('URL parse error during conversion from string: parse ":x": missing protocol scheme');
    expect(failure("url('https://exa mple.com/')")).toBe(
      'URL parse error during conversion from string: parse "https://exa mple.com/": invalid character " " in host name',
    );
    expect(failure("url('/a%zzb')")).toBe('URL parse error during conversion from string: parse "/a%zzb": invalid URL escape "%zz"');
    expect(failure("url('https://[::1/')")).toBe('URL parse error during conversion from string: parse "https://[::1/": missing \']\' in host');
  });
});

describe('ip and cidr', () => {
  test.each([
    ["isIP('127.0.0.1')", true],
    ["isIP('::1')", true],
    ["isIP('127.0.0.256')", false],
    ["isIP(':::1')", false],
    ["isIP('01.2.3.4')", false],
    ["isIP('fe80::1%eth0')", false],
    ["isIP('::ffff:1.2.3.4')", false],
    ["ip.isCanonical('127.0.0.1')", true],
    ["ip.isCanonical('2001:db8::abcd')", true],
    ["ip.isCanonical('2001:DB8::ABCD')", false],
    ["ip.isCanonical('2001:db8::0:0:0:abcd')", false],
    ["ip('127.0.0.1').family()", 4],
    ["ip('::1').family()", 6],
    ["ip('0.0.0.0').isUnspecified()", true],
    ["ip('::').isUnspecified()", true],
    ["ip('::1').isUnspecified()", false],
    ["ip('127.0.0.1').isLoopback()", true],
    ["ip('192.168.0.1').isLoopback()", false],
    ["ip('::1').isLoopback()", true],
    ["ip('224.0.0.1').isLinkLocalMulticast()", true],
    ["ip('224.0.1.1').isLinkLocalMulticast()", false],
    ["ip('ff02::1').isLinkLocalMulticast()", true],
    ["ip('fd00::1').isLinkLocalMulticast()", false],
    ["ip('169.254.169.254').isLinkLocalUnicast()", true],
    ["ip('fe80::1').isLinkLocalUnicast()", true],
    ["ip('fd80::1').isLinkLocalUnicast()", false],
    ["ip('192.168.0.1').isGlobalUnicast()", true],
    ["ip('255.255.255.255').isGlobalUnicast()", false],
    ["ip('2001:db8::abcd').isGlobalUnicast()", true],
    ["ip('ff00::1').isGlobalUnicast()", false],
    ["string(ip('2001:DB8:0:0:1:0:0:1'))", '2001:db8::1:0:0:1'],
    ["string(ip('1:0:0:2:0:0:0:3'))", '1:0:0:2::3'],
    ["ip('::1') == ip('0:0:0:0:0:0:0:1')", true],
    ["cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", true],
    ["cidr('192.168.0.0/24').containsIP(ip('192.168.1.1'))", false],
    ["cidr('192.168.0.0/24').containsIP('192.168.0.1')", true],
    ["cidr('::1/128').containsIP('::1')", true],
    ["cidr('192.168.0.0/24').containsIP('::1')", false],
    ["cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25'))", true],
    ["cidr('192.168.0.0/24').containsCIDR('192.168.0.0/23')", false],
    ["cidr('192.168.0.0/24').containsCIDR('192.168.0.0/24')", true],
    ["cidr('192.168.0.1/24').ip().family()", 4],
    ["string(cidr('::1/128').ip())", '::1'],
    ["string(cidr('192.168.0.1/24').masked())", '192.168.0.0/24'],
    ["cidr('192.168.0.0/24') == cidr('192.168.0.0/24').masked()", true],
    ["cidr('192.168.0.1/24') == cidr('192.168.0.1/24').masked()", false],
    ["cidr('192.168.0.0/16').prefixLength()", 16],
    ["cidr('::1/128').prefixLength()", 128],
    ["isCIDR('192.168.0.0/24')", true],
    ["isCIDR('192.168.0.0/33')", false],
    ["isCIDR('192.168.0.0')", false],
    ["isCIDR('::ffff:1.2.3.4/120')", false],
  ])('%s', (expression, want) => expect(run(expression)).toEqual(want));

  test("errors in net/netip's words, wrapped as upstream's library wraps them", () => {
    expect(failure("ip('127.0.0.256')")).toBe(
      'IP Address "127.0.0.256" parse error during conversion from string: ParseAddr("127.0.0.256"): IPv4 field has value >255',
    );
    expect(failure("ip(':::1')")).toBe(
      'IP Address ":::1" parse error during conversion from string: ParseAddr(":::1"): each colon-separated field must have at least one digit (at ":1")',
    );
    expect(failure("ip('1.2.3')")).toBe('IP Address "1.2.3" parse error during conversion from string: ParseAddr("1.2.3"): IPv4 address too short');
    expect(failure("ip('foo')")).toBe('IP Address "foo" parse error during conversion from string: ParseAddr("foo"): unable to parse IP');
    expect(failure("ip('fe80::1%eth0')")).toBe('IP address "fe80::1%eth0" with zone value is not allowed');
    expect(failure("ip('::ffff:1.2.3.4')")).toBe('IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed');
    expect(failure("cidr('192.168.0.0')")).toBe(
      'network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("192.168.0.0"): no \'/\'',
    );
    expect(failure("cidr('192.168.0.0/33')")).toBe(
      'network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("192.168.0.0/33"): prefix length out of range',
    );
    expect(failure("cidr('10.0.0.0/08')")).toBe(
      'network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("10.0.0.0/08"): bad bits after slash: "08"',
    );
  });
});
