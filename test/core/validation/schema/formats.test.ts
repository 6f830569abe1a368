/** The string formats strfmt.Default validates for custom resources, each as upstream's check accepts or refuses. */
import { formatCheck, isSupportedFormat } from '../../../../src/core/validation/schema/formats';
import { anchoredBody } from '../../../../src/core/validation/schema/node';

const cases: Record<string, { valid: string[]; invalid: string[] }> = {
  date: { valid: ['2024-02-29', '2000-12-31', '+999-01-01'], invalid: ['2023-02-29', '2024-1-01', '2024-13-01', '2024-01-01T00:00:00Z', ''] },
  'date-time': {
    valid: ['2024-01-02T03:04:05Z', '2024-01-02t03:04:05.123+01:00', '2024-01-02T03:04:05ZT anything after another t'],
    invalid: ['2024-01-02T24:00:00Z', '2024-01-02 03:04:05Z', '2024-01-02T03:04:05', 'nope', '2024-02-30T00:00:00Z'],
  },
  duration: {
    valid: ['1h30m', '0', '-1.5h', '5 days', 'in 5 days please', '3 hours', '5\u03bcs', '1.s'],
    invalid: ['abc', '5 months', '1.5', '', '99999999999999999999 days'],
  },
  uuid: { valid: ['123e4567-e89b-12d3-a456-426614174000', '123E4567E89B12D3A456426614174000'], invalid: ['xyz', '123e4567-e89b-12d3-a456-42661417400'] },
  uuid4: { valid: ['123e4567-e89b-42d3-a456-426614174000'], invalid: ['123e4567-e89b-12d3-a456-426614174000'] },
  hostname: { valid: ['example.com', 'localhost', 'münchen.de', 'a-b.example.io'], invalid: ['-bad.com', 'a_b.com', 'a.b', `${'a'.repeat(64)}.com`, ''] },
  ipv4: { valid: ['1.2.3.4', '01.2.3.4', '::ffff:1.2.3.4'], invalid: ['256.1.1.1', '1.2.3', '::1', '1.2.3.4.5'] },
  ipv6: { valid: ['::1', '2001:db8::1', '::ffff:1.2.3.4'], invalid: ['fe80::1%eth0', '1.2.3.4', ':::1', '2001:db8::1::2'] },
  cidr: { valid: ['10.0.0.0/8', '010.0.0.0/8', '::/0', '10.0.0.0/032'], invalid: ['10.0.0.0/33', '10.0.0.0', '::/129', '10.0.0.0/-1'] },
  mac: {
    valid: ['01:23:45:67:89:ab', '01-23-45-67-89-AB', '0123.4567.89ab', '01:23:45:67:89:ab:cd:ef'],
    invalid: ['01:23:45:67:89', '01:23-45:67:89:ab', '0123.4567.89', 'zz:23:45:67:89:ab'],
  },
  uri: { valid: ['http://example.com/path?q=1', '/just/path', 'mailto:a@b.c'], invalid: ['relative/path', '', 'http://[::1'] },
  email: {
    valid: ['a@b.com', 'A Name <a@b.com>', 'a@b', 'a@[127.0.0.1]', '"quoted local"@x.org', 'a@b.com (comment)', '"Joe" <j@x.io>'],
    invalid: ['not-an-email', 'a@[nonsense]', 'a@b.com extra', '""@x.org', 'a..b@c.com', '<a@b.com', ''],
  },
  byte: { valid: ['aGVsbG8=', 'aGVsbG8h'], invalid: ['aGVsbG8', '', 'a b='] },
  password: { valid: ['', 'anything at all'], invalid: [] },
  creditcard: { valid: ['4111 1111 1111 1111', '5500-0000-0000-0004'], invalid: ['4111111111111112', '1234'] },
  isbn10: { valid: ['0306406152', '0-306-40615-2'], invalid: ['0306406153'] },
  isbn13: { valid: ['978-0-306-40615-7'], invalid: ['9780306406158'] },
  isbn: { valid: ['0306406152', '9780306406157'], invalid: ['12345'] },
  ssn: { valid: ['123-45-6789', '123 45 6789'], invalid: ['123456789', '123-45-678a'] },
  hexcolor: { valid: ['#fff', 'fff', '#A0B1C2'], invalid: ['#ffff', 'ggg'] },
  rgbcolor: { valid: ['rgb(255, 0, 10)', 'rgb(0,0,0)'], invalid: ['rgb(256,0,0)', 'rgb(1,2)'] },
  bsonobjectid: { valid: ['507f1f77bcf86cd799439011'], invalid: ['507f1f77bcf86cd79943901', 'zz7f1f77bcf86cd799439011'] },
};

describe('formats', () => {
  for (const [name, { valid, invalid }] of Object.entries(cases)) {
    it(`${name}`, () => {
      const check = formatCheck(name)!;
      expect(check).toBeDefined();
      for (const v of valid) expect([v, check(v)]).toEqual([v, true]);
      for (const v of invalid) expect([v, check(v)]).toEqual([v, false]);
    });
  }

  it('knows the names apiextensions keeps, dashes aside, and no others', () => {
    expect(isSupportedFormat('date-time')).toBe(true);
    expect(isSupportedFormat('datetime')).toBe(true);
    for (const dropped of ['int32', 'int64', 'float', 'double', 'k8s-short-name', 'binary', '']) expect(isSupportedFormat(dropped)).toBe(false);
  });

  it('answers in linear time on long hostile strings', () => {
    const started = performance.now();
    expect(formatCheck('duration')!('1'.repeat(2_000_000))).toBe(false);
    expect(formatCheck('duration')!('1s'.repeat(500_000))).toBe(true);
    expect(formatCheck('hostname')!('a'.repeat(1_000_000))).toBe(false);
    expect(formatCheck('email')!(`${'a.'.repeat(200_000)}@b`)).toBe(false);
    expect(formatCheck('byte')!(`${'A'.repeat(1_000_000)}!`)).toBe(false);
    // Linear: well under a second on a quiet machine; the bound allows for a shared one.
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});

describe('whole-string patterns', () => {
  it('takes only `^X$` whose search is a whole-string match of X', () => {
    expect(anchoredBody('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')).toBe('[a-z0-9]([-a-z0-9]*[a-z0-9])?');
    expect(anchoredBody('^(a|b)$')).toBe('(a|b)');
    expect(anchoredBody('^[]$]$')).toBe('[]$]');
    expect(anchoredBody('^[[:alpha:]]+$')).toBe('[[:alpha:]]+');
    for (const no of ['^a|b$', '^(?m)a$', '^a\\$', 'a$', '^a', '^[a$', '^\\Qa$', '^(?i:a)|b$', '$', '^'])
      expect([no, anchoredBody(no)]).toEqual([no, undefined]);
    expect(anchoredBody('^(?:a|b)c$')).toBe('(?:a|b)c');
  });

  it('agrees with a search on every input', () => {
    const { RE2JS } = require('re2js') as typeof import('re2js');
    const patterns = ['^[a-z]+$', '^(a|ab)(c|bcd)$', '^a*$', '^[]a]+$', '^\\$$', '^(a)(b)?$', '^.$', '^\\d{2,3}$', '^(?:x|y)+z$'];
    const inputs = ['', 'a', 'abc', 'ab\n', 'abcd', 'a]', '$', 'x', '\n', '12', '1234', 'xyz', 'yxz', '😀', 'a\nb'];
    for (const p of patterns) {
      const body = anchoredBody(p)!;
      expect(body).toBeDefined();
      const search = RE2JS.compile(p);
      const whole = RE2JS.compile(body);
      for (const s of inputs) expect([p, s, whole.matches(s)]).toEqual([p, s, search.test(s)]);
    }
  });
});
