/**
 * How Go prints things in the errors of field validation: encoding/json's type-mismatch
 * wording for the schema's value types — the JSON value (`string`, `number 1.5`, `bool`,
 * `array`, `object`) and the Go type it could not go into (`int32`, `[]v1.Container`,
 * `map[string]string`, `v1.LabelSelector`) — and `%+v` of a decoded JSON map.
 */
import type { ScalarType, ValueType } from '../../schema';
import { compareGoStrings } from '../../codecs/go-strings';

const INT_RANGE: Partial<Record<ScalarType, readonly [number, number]>> = {
  int32: [-2147483648, 2147483647],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/** Does a JSON value decode into the Go scalar? (`null` always does: it leaves the zero value.) */
export function scalarFits(scalar: ScalarType, v: unknown): boolean {
  switch (scalar) {
    case 'string':
    case 'bytes':
      return typeof v === 'string';
    case 'bool':
      return typeof v === 'boolean';
    case 'double':
      return typeof v === 'number';
    case 'int32':
    case 'int64': {
      if (typeof v !== 'number' || !Number.isInteger(v)) return false;
      const [min, max] = INT_RANGE[scalar]!;
      return v >= min && v <= max;
    }
  }
}

/** Go's description of the JSON value in an UnmarshalTypeError. */
export function jsonValueKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER ? 'number' : `number ${String(v)}`;
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  return 'object';
}

const SCALAR_GO: Record<ScalarType, string> = { string: 'string', bool: 'bool', int32: 'int32', int64: 'int64', double: 'float64', bytes: '[]uint8' };
const SPECIAL_GO: Record<string, string> = {
  Time: 'v1.Time',
  MicroTime: 'v1.MicroTime',
  Duration: 'v1.Duration',
  Quantity: 'resource.Quantity',
  IntOrString: 'intstr.IntOrString',
  RawExtension: 'runtime.RawExtension',
  FieldsV1: 'v1.FieldsV1',
  JSON: 'v1.JSON',
};

/** The Go type of a schema value type, as reflect prints it (`v1.PodSpec`: package name and type). */
export function goTypeName(type: ValueType): string {
  switch (type.kind) {
    case 'scalar':
      return SCALAR_GO[type.scalar];
    case 'special':
      return SPECIAL_GO[type.special];
    case 'list':
      return `[]${goTypeName(type.item)}`;
    case 'map':
      return `map[string]${goTypeName(type.value)}`;
    case 'message': {
      const parts = type.type.split('.');
      return `${parts[parts.length - 2]}.${parts[parts.length - 1]}`;
    }
  }
}

/**
 * A JSON value as Go's `fmt.Sprintf("%+v", v)` prints a decoded `map[string]interface{}`:
 * `map[spec:map[replicas:3]]`, slices as `[a b]`, nil as `<nil>`. Upstream shows a strategic
 * merge patch this way in the errors of its decoded result.
 */
export function goPrint(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goPrint).join(' ')}]`;
  if (typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort(compareGoStrings)
      .map((k) => `${k}:${goPrint((value as Record<string, unknown>)[k])}`);
    return `map[${entries.join(' ')}]`;
  }
  return String(value);
}
