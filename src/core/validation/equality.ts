/**
 * Upstream compares objects with `apiequality.Semantic.DeepEqual`, over Go structs where an
 * absent JSON field is the zero value and a nil slice or map equals an empty one. Over plain
 * JSON-shaped data that means: a missing value equals any empty value ('' 0 false [] {} null),
 * recursively.
 */
import { isObject } from '../../util/json-values';

const isPlainObject = isObject<Record<string, unknown>>;

/** True for values Go would hold as a zero value: absent, null, '', 0, false, [], or an object of such. */
export function isEmptyValue(value: unknown): boolean {
  if (value === undefined || value === null || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isPlainObject(value)) return Object.values(value).every(isEmptyValue);
  return false;
}

export function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || a === null) return isEmptyValue(b);
  if (b === undefined || b === null) return isEmptyValue(a);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => semanticEqual(v, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!semanticEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
}
