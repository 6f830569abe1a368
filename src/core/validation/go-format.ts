/**
 * Upstream prints a field error's composite bad value with Go's `%#v`
 * (`map[string]string{"app":"web"}`, `rbac.RoleRef{APIGroup:"…", Kind:"Role", Name:"x"}`) and
 * timestamps with Go's time format. `field-errors.ts` renders them as JSON, so the few errors whose
 * messages clients and users read closely pass a Go rendering through `invalidWithRendering`.
 */
import { fieldErrors, type FieldError, type FieldPath } from './field-errors';

/** How upstream prints a nil bad value: the string "null", quoted. */
export const GO_NIL = '"null"';

/** A Go string literal (`%q` / `%#v` of a string); JSON's escaping agrees for everything printable. */
export function goString(value: string | undefined): string {
  return JSON.stringify(value ?? '');
}

/** `map[string]string{"a":"b", "c":"d"}` with sorted keys, `map[string]string(nil)` when absent. */
export function goStringMap(map: Record<string, string> | null | undefined): string {
  if (map === null || map === undefined) return 'map[string]string(nil)';
  const entries = Object.keys(map)
    .sort()
    .map((k) => `${goString(k)}:${goString(map[k])}`);
  return `map[string]string{${entries.join(', ')}}`;
}

/** `[]string{"a", "b"}`, `[]string(nil)` when absent. */
export function goStringSlice(list: readonly string[] | null | undefined): string {
  if (list === null || list === undefined) return '[]string(nil)';
  return `[]string{${list.map(goString).join(', ')}}`;
}

/** `pkg.Type{Field:value, ...}` from already-rendered field values. */
export function goStruct(typeName: string, fields: ReadonlyArray<readonly [string, string]>): string {
  return `${typeName}{${fields.map(([k, v]) => `${k}:${v}`).join(', ')}}`;
}

/** A struct whose fields are all strings, e.g. `rbac.RoleRef`. */
export function goStringStruct(typeName: string, fields: ReadonlyArray<readonly [string, string | undefined]>): string {
  return goStruct(
    typeName,
    fields.map(([k, v]) => [k, goString(v)] as const),
  );
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * Go's `time.Time.String()` of a UTC instant: `2006-01-02 15:04:05.999999999 +0000 UTC`
 * (fraction without trailing zeros), `0001-01-01 00:00:00 +0000 UTC` for the zero time.
 */
export function goTime(rfc3339: string | null | undefined): string {
  if (!rfc3339) return '0001-01-01 00:00:00 +0000 UTC';
  const ms = Date.parse(rfc3339);
  if (Number.isNaN(ms)) return rfc3339;
  const d = new Date(ms);
  const fracDigits = /\.(\d+)/.exec(rfc3339)?.[1] ?? '';
  const frac = fracDigits.replace(/0+$/, '');
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${frac ? `.${frac}` : ''}`;
  return `${date} ${time} +0000 UTC`;
}

/** An Invalid error whose value text is `rendered` instead of the JSON rendering of `badValue`. */
export function invalidWithRendering(path: FieldPath | string, badValue: unknown, rendered: string, detail?: string): FieldError {
  const err = fieldErrors.invalid(path, badValue, detail);
  const body = `Invalid value: ${rendered}${detail ? `: ${detail}` : ''}`;
  const field = path.toString();
  return { ...err, causeMessage: body, message: field ? `${field}: ${body}` : body };
}

/** upstream ValidateImmutableField with a Go rendering of the new value. */
export function immutableWithRendering(path: FieldPath | string, badValue: unknown, rendered: string): FieldError {
  return invalidWithRendering(path, badValue, rendered, 'field is immutable');
}
