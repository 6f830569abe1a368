/**
 * Query parameter decoding with upstream's conversion rules (apimachinery runtime conversion
 * functions): integers parse as Go's strconv.ParseInt and fail with its message (a 400),
 * booleans are true unless absent, "0" or "false", and repeated parameters use the first value.
 */
import { badRequest } from '../../status';
import type { FieldError } from '../../core';

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/** Go's %q for the strings we echo back (close enough: JSON escaping). */
export function goQuote(value: string): string {
  return JSON.stringify(value);
}

/** strconv.ParseInt(value, 10, 64), throwing upstream's 400 on failure. */
export function parseInt64(value: string): number {
  if (!/^[+-]?\d+$/.test(value)) throw badRequest(`strconv.ParseInt: parsing ${goQuote(value)}: invalid syntax`);
  const n = BigInt(value);
  if (n > INT64_MAX || n < INT64_MIN) throw badRequest(`strconv.ParseInt: parsing ${goQuote(value)}: value out of range`);
  return Number(n);
}

/** A first-value integer parameter; undefined when absent. */
export function queryInt64(query: URLSearchParams, name: string): number | undefined {
  const values = query.getAll(name);
  return values.length ? parseInt64(values[0]) : undefined;
}

/** A first-value boolean parameter; undefined when absent (upstream's *bool). */
export function queryOptionalBool(query: URLSearchParams, name: string): boolean | undefined {
  const values = query.getAll(name);
  if (!values.length) return undefined;
  const v = values[0];
  return !(v === '0' || v.toLowerCase() === 'false');
}

/** A first-value string parameter; undefined when absent or empty. */
export function queryString(query: URLSearchParams, name: string): string | undefined {
  const v = query.getAll(name)[0];
  return v ? v : undefined;
}

/** A list parameter (`dryRun=All&dryRun=...`); empty values (`?dryRun`) mean "not set" (docs/API.md, "Endpoints"). */
export function queryList(query: URLSearchParams, name: string): string[] | undefined {
  const values = query.getAll(name).filter((v) => v !== '');
  return values.length ? values : undefined;
}

/** Go's `%#v` of a []string, which upstream prints for a bad dryRun value. */
export function goStringSlice(values: readonly string[]): string {
  return `[]string{${values.map(goQuote).join(', ')}}`;
}

/** A NotSupported field error whose bad value is already rendered (upstream prints some values with Go syntax). */
export function notSupportedRendered(field: string, rendered: string, supported: readonly string[]): FieldError {
  const body = `Unsupported value: ${rendered}: supported values: ${supported.map(goQuote).join(', ')}`;
  return {
    type: 'FieldValueNotSupported',
    field,
    causeReason: 'FieldValueNotSupported',
    causeMessage: body,
    message: `${field}: ${body}`,
  };
}
