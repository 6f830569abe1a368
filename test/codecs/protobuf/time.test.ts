/** Go's text forms of times and durations. */
import { formatGoDuration, formatRfc3339, parseGoDuration, parseRfc3339 } from '../../../src/codecs/protobuf/time';

describe('RFC 3339', () => {
  it('parses offsets and fractions to seconds and nanos', () => {
    expect(parseRfc3339('2008-01-01T01:01:01Z')).toEqual({ seconds: 1199149261, nanos: 0 });
    expect(parseRfc3339('2008-01-01T02:01:01.5+01:00')).toEqual({ seconds: 1199149261, nanos: 500000000 });
    expect(parseRfc3339('0001-01-01T00:00:00Z').seconds).toBe(-62135596800);
  });

  it('formats in UTC, whole seconds or six fraction digits', () => {
    expect(formatRfc3339({ seconds: 1199149261, nanos: 999 }, 0)).toBe('2008-01-01T01:01:01Z');
    expect(formatRfc3339({ seconds: 1199149261, nanos: 2000 }, 6)).toBe('2008-01-01T01:01:01.000002Z');
    expect(formatRfc3339({ seconds: -62135596800, nanos: 0 }, 0)).toBe('0001-01-01T00:00:00Z');
  });

  it('rejects what Go rejects', () => {
    expect(() => parseRfc3339('2008-01-01')).toThrow();
    expect(() => parseRfc3339('2008-02-30T00:00:00Z')).toThrow();
  });
});

describe('Go durations', () => {
  it.each([
    [0, '0s'],
    [1, '1ns'],
    [1500, '1.5µs'],
    [1_500_000, '1.5ms'],
    [1e9, '1s'],
    [90e9, '1m30s'],
    [3600e9 + 2.5e9, '1h0m2.5s'],
    [-5e9, '-5s'],
  ])('%d ns is %s and back', (nanos, text) => {
    expect(formatGoDuration(nanos)).toBe(text);
    expect(parseGoDuration(text)).toBe(nanos);
  });

  it('parses compound and fractional forms', () => {
    expect(parseGoDuration('1h30m')).toBe(5400e9);
    expect(parseGoDuration('.5s')).toBe(0.5e9);
    expect(() => parseGoDuration('5')).toThrow();
    expect(() => parseGoDuration('')).toThrow();
  });
});
