/**
 * Upstream's resource.Quantity, exact: the one parser of quantities (`500m`, `1Gi`, `1e3`, `2.5M`)
 * for every reader of them — the CEL `quantity` library (cel/kubernetes.ts), the scheduler's
 * resource fit, a pod's QoS class.
 *
 * A quantity is parsed as upstream's `resource.ParseQuantity` parses it (the same grammar,
 * errors and limits: precision beyond nano-units rounded away from zero, binary-suffixed
 * amounts capped at 2^63-1) into an exact decimal, `digits × 10^-scale` with BigInt digits, so
 * comparisons and sums are exact as upstream's `inf.Dec` arithmetic is. The CEL library's
 * value holds the canonical decimal text (`decimalText`), which makes CEL's own `==` compare
 * amounts (`quantity('1') == quantity('1000m')`), as upstream's Quantity values compare.
 */

/** `digits × 10^-scale`, scale ≥ 0. */
export interface Decimal {
  readonly digits: bigint;
  readonly scale: number;
}

const FORMAT_PATTERN = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
/** resource.ErrFormatWrong, ErrNumeric and ErrSuffix. */
export const QUANTITY_FORMAT_ERROR = `quantities must match the regular expression '${FORMAT_PATTERN}'`;
export const QUANTITY_NUMERIC_ERROR = 'unable to parse numeric part of quantity';
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const SUFFIX_CHARS = 'eEinumkKMGTP';
const MAX_INT64 = (1n << 63n) - 1n;
const MIN_INT64 = -(1n << 63n);
const NANO_SCALE = 9;

export class QuantityError extends Error {}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** The parts upstream's scanner finds, or its format error. */
function scan(text: string): { negative: boolean; whole: string; fraction: string; suffix: string } {
  let at = 0;
  let negative = false;
  if (text[0] === '-' || text[0] === '+') {
    negative = text[0] === '-';
    at++;
  }
  const wholeStart = at;
  while (isDigit(text[at])) at++;
  const whole = text.slice(wholeStart, at);
  let fraction = '';
  if (text[at] === '.') {
    const start = ++at;
    while (isDigit(text[at])) at++;
    fraction = text.slice(start, at);
  }
  // No number at all ("Mi", "Three", "-") is the format error, as the regular expression says.
  if (at === wholeStart) throw new QuantityError(QUANTITY_FORMAT_ERROR);
  const suffixStart = at;
  while (at < text.length && SUFFIX_CHARS.includes(text[at]!)) at++;
  if (text[at] === '-' || text[at] === '+') at++;
  while (isDigit(text[at])) at++;
  if (at !== text.length) throw new QuantityError(QUANTITY_FORMAT_ERROR);
  return { negative, whole, fraction, suffix: text.slice(suffixStart) };
}

/** The base and exponent a suffix stands for: 10^n, 2^n, or an `e`/`E` exponent. */
function interpretSuffix(suffix: string): { base: 10 | 2; exponent: number } | undefined {
  if (suffix in DECIMAL_SUFFIXES) return { base: 10, exponent: DECIMAL_SUFFIXES[suffix]! };
  if (suffix in BINARY_SUFFIXES) return { base: 2, exponent: BINARY_SUFFIXES[suffix]! };
  const m = /^[eE]([+-]?[0-9]+)$/.exec(suffix);
  if (!m) return undefined;
  const exponent = Number(m[1]);
  return Number.isSafeInteger(exponent) ? { base: 10, exponent } : undefined;
}

/** The amount `text` stands for; throws `QuantityError` with upstream's message where it is no quantity. */
export function parseQuantity(text: string): Decimal {
  if (text.length === 0) throw new QuantityError(QUANTITY_FORMAT_ERROR);
  const { negative, whole, fraction, suffix } = scan(text);
  const meaning = interpretSuffix(suffix);
  if (!meaning) throw new QuantityError(QUANTITY_SUFFIX_ERROR);
  let digits = BigInt(`${whole}${fraction}` || '0');
  let scale = fraction.length;
  if (meaning.base === 10) scale -= meaning.exponent;
  else digits <<= BigInt(meaning.exponent);
  let value = normalize({ digits, scale });
  // Finer than a nano-unit: rounded up in magnitude (anything asked for is at least 1n).
  if (value.scale > NANO_SCALE) {
    const drop = 10n ** BigInt(value.scale - NANO_SCALE);
    const kept = value.digits / drop;
    value = normalize({ digits: value.digits % drop === 0n ? kept : kept + 1n, scale: NANO_SCALE });
  }
  if (meaning.base === 2 && compare(value, { digits: MAX_INT64, scale: 0 }) > 0) value = { digits: MAX_INT64, scale: 0 };
  return negative ? { digits: -value.digits, scale: value.scale } : value;
}

/** Trailing zeros out of the digits, and no negative scale: one form per amount. */
function normalize(d: Decimal): Decimal {
  let { digits, scale } = d;
  if (scale < 0) return { digits: digits * 10n ** BigInt(-scale), scale: 0 };
  if (digits === 0n) return { digits: 0n, scale: 0 };
  while (scale > 0 && digits % 10n === 0n) {
    digits /= 10n;
    scale--;
  }
  return { digits, scale };
}

function aligned(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.digits * 10n ** BigInt(scale - a.scale), b.digits * 10n ** BigInt(scale - b.scale), scale];
}

export function compare(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const [x, y] = aligned(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function add(a: Decimal, b: Decimal): Decimal {
  const [x, y, scale] = aligned(a, b);
  return normalize({ digits: x + y, scale });
}

export function negate(a: Decimal): Decimal {
  return { digits: -a.digits, scale: a.scale };
}

export function sign(a: Decimal): -1 | 0 | 1 {
  return a.digits < 0n ? -1 : a.digits > 0n ? 1 : 0;
}

/** The int64 the amount is, or undefined when it has a fraction or does not fit. */
export function asInt64(a: Decimal): bigint | undefined {
  if (a.scale !== 0) return undefined;
  return a.digits >= MIN_INT64 && a.digits <= MAX_INT64 ? a.digits : undefined;
}

/** The canonical decimal text (`-12.5`, `0.001`, `1073741824`): what equality compares. */
export function decimalText(a: Decimal): string {
  const negative = a.digits < 0n;
  const abs = (negative ? -a.digits : a.digits).toString();
  if (a.scale === 0) return `${negative ? '-' : ''}${abs}`;
  const padded = abs.padStart(a.scale + 1, '0');
  return `${negative ? '-' : ''}${padded.slice(0, -a.scale)}.${padded.slice(-a.scale)}`;
}

/** A float64 near the amount (±Infinity beyond its range), as AsApproximateFloat64 gives. */
export function approximateFloat(a: Decimal): number {
  return Number(decimalText(a));
}

/**
 * The amount of a quantity field as stored (a string, or a JSON number, which upstream's decoder
 * also takes), or undefined where it is no quantity: for readers of objects whose quantities
 * validation has not checked, which count such a field as absent.
 */
export function readQuantity(value: string | number): Decimal | undefined {
  try {
    return parseQuantity(typeof value === 'number' ? String(value) : value);
  } catch (err) {
    if (err instanceof QuantityError) return undefined;
    throw err;
  }
}

/**
 * The amount in units of 10^-`exponent`, rounded up away from zero to a whole number, as
 * upstream's `Value()` (exponent 0) and `MilliValue()` (exponent 3) give it.
 */
export function scaledValue(a: Decimal, exponent: number): bigint {
  const shift = exponent - a.scale;
  if (shift >= 0) return a.digits * 10n ** BigInt(shift);
  const divisor = 10n ** BigInt(-shift);
  const whole = a.digits / divisor;
  if (a.digits % divisor === 0n) return whole;
  return a.digits < 0n ? whole - 1n : whole + 1n;
}
