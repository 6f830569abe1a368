/**
 * The one quantity parser (util/quantity.ts) as its non-CEL readers use it: amounts in whole
 * units rounded up as upstream's Value and MilliValue, exact where a float is not, and stored
 * fields that are no quantity read as absent. The grammar and its errors are proved through
 * the CEL library (cel-kubernetes.test.ts).
 */
import { compare, decimalText, parseQuantity, readQuantity, scaledValue } from '../../src/util/quantity';

describe('quantities as the scheduler and the QoS class read them', () => {
  it.each([
    ['500m', 3, 500n],
    ['0.5', 3, 500n],
    ['1', 3, 1000n],
    ['1u', 3, 1n],
    ['1.0001', 3, 1001n],
    ['1Gi', 0, 1073741824n],
    ['1.5', 0, 2n],
    ['100M', 0, 100_000_000n],
    ['1e3', 0, 1000n],
    ['9007199254740993', 0, 9007199254740993n],
    ['8Ei', 0, 9223372036854775807n],
    ['-1.5', 0, -2n],
  ])('%s in units of 10^-%d is %d (rounded up away from zero, as MilliValue and Value)', (text, exponent, want) => {
    expect(scaledValue(parseQuantity(text), exponent)).toBe(want);
  });

  it('compares amounts exactly where floats do not', () => {
    expect(compare(parseQuantity('9m'), parseQuantity('0.009'))).toBe(0);
    expect(Number('0.009')).not.toBe(9 * 1e-3);
    expect(compare(parseQuantity('9007199254740993'), parseQuantity('9007199254740992'))).toBe(1);
  });

  it('reads a stored field: a string, a JSON number, or undefined where it is no quantity', () => {
    expect(decimalText(readQuantity('250m')!)).toBe('0.25');
    expect(decimalText(readQuantity(2)!)).toBe('2');
    expect(decimalText(readQuantity(0.5)!)).toBe('0.5');
    expect(readQuantity('lots')).toBeUndefined();
    expect(readQuantity('')).toBeUndefined();
    expect(readQuantity('1Qi')).toBeUndefined();
  });
});
