/**
 * Rules shared by Secrets and ConfigMaps: config keys, base64 values of `[]byte` fields, the
 * 1 MiB size limit and the `immutable` flag (upstream ValidateSecretUpdate/ValidateConfigMapUpdate).
 */
import { fieldErrors, type FieldError, type FieldPath } from '../validation/field-errors';
import { semanticEqual } from '../validation/equality';
import { isConfigMapKey } from '../validation/names';

/** upstream core.MaxSecretSize, also the ConfigMap limit. */
export const MAX_SECRET_SIZE = 1024 * 1024;

const BASE64_CHARS = /[A-Za-z0-9+/]/;

/**
 * Where Go's standard base64 decoding (as JSON `[]byte` fields use it) fails, or undefined.
 * Line breaks are skipped, as Go's decoder does.
 */
export function base64Error(value: string): string | undefined {
  const text = value.replace(/[\r\n]/g, '');
  let pad = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '=') {
      if (pad < 0) {
        // Padding may only start at the third or fourth character of the last quantum.
        if (i % 4 < 2) return `illegal base64 data at input byte ${i}`;
        pad = i;
      }
    } else if (pad >= 0 || !BASE64_CHARS.test(c)) {
      return `illegal base64 data at input byte ${i}`;
    }
  }
  if (text.length % 4 !== 0) return `illegal base64 data at input byte ${text.length - (text.length % 4)}`;
  if (pad >= 0 && pad % 4 === 2 && text[pad + 1] !== '=') return `illegal base64 data at input byte ${pad}`;
  return undefined;
}

/** Decoded size of a base64 value (0 when it does not decode). */
export function base64Size(value: string): number {
  return base64Error(value) === undefined ? Buffer.from(value, 'base64').length : 0;
}

export function validateConfigKeys(map: Record<string, unknown> | undefined, path: FieldPath): FieldError[] {
  return Object.keys(map ?? {}).flatMap((key) => isConfigMapKey(key).map((msg) => fieldErrors.invalid(path.key(key), key, msg)));
}

/** Base64 values of a `map[string][]byte` field. */
export function validateBase64Values(map: Record<string, string> | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const [key, value] of Object.entries(map ?? {})) {
    const err = typeof value === 'string' ? base64Error(value) : 'illegal base64 data at input byte 0';
    if (err) errs.push(fieldErrors.invalid(path.key(key), '<value redacted>', err));
  }
  return errs;
}

/** Once `immutable` is true it stays true and the listed data fields stay as they are. */
export function validateImmutableData(
  now: { immutable?: boolean } & Record<string, unknown>,
  old: { immutable?: boolean } & Record<string, unknown>,
  fields: readonly string[],
): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  const msg = 'field is immutable when `immutable` is set';
  if (now.immutable !== true) errs.push(fieldErrors.forbidden('immutable', msg));
  for (const f of fields) if (!semanticEqual(now[f], old[f])) errs.push(fieldErrors.forbidden(f, msg));
  return errs;
}
