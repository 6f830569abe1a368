/**
 * An object as upstream's field manager sees it: the JSON its Go struct would produce after
 * decoding (upstream's runtime.DefaultUnstructuredConverter.ToUnstructured). Fields the schema
 * does not know are dropped; absent fields whose JSON tag lacks `omitempty` appear with their
 * zero value (`"containers": null`, `"replicas": 0`); non-pointer structs always appear
 * (`"template": {"metadata": {"creationTimestamp": null}, ...}`); `omitempty` fields holding
 * a zero value disappear. Managed-field sets are computed from these views so that `"."` entries
 * and leaves come out as upstream writes them.
 */
import { type FieldDef, type JsonProperty, messageType, type SchemaType, type SpecialType, unionMember, type ValueType } from '../../schema';
import { isObject } from './typed';

/** The JSON of the zero value of each special type (types.ts). */
const SPECIAL_ZERO: Record<SpecialType, unknown> = {
  Time: null,
  MicroTime: null,
  Duration: '0s',
  Quantity: '0',
  IntOrString: 0,
  RawExtension: null,
  FieldsV1: null,
  JSON: null,
};

function scalarZero(type: ValueType): unknown {
  if (type.kind !== 'scalar') return null;
  switch (type.scalar) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'bytes':
      return null;
    default:
      return 0;
  }
}

/** Go's "empty" for omitempty: zero scalars, empty strings, empty or nil slices and maps. Structs never are. */
function isEmptyForOmit(value: unknown, type: ValueType): boolean {
  if (value === null || value === undefined) return true;
  switch (type.kind) {
    case 'scalar':
      return value === '' || value === 0 || value === false;
    case 'list':
      return Array.isArray(value) && value.length === 0;
    case 'map':
      return isObject(value) && Object.keys(value).length === 0;
    default:
      return false;
  }
}

/** The zero value Go writes for an unset field (undefined: the field is left out). */
function zeroOf(field: FieldDef): unknown {
  if (field.pointer) return field.omitEmpty ? undefined : null;
  switch (field.type.kind) {
    case 'message':
      return goShapeStruct({}, messageType(field.type));
    case 'special':
      return SPECIAL_ZERO[field.type.special];
    case 'list':
    case 'map':
      return field.omitEmpty ? undefined : null;
    case 'scalar':
      return field.omitEmpty ? undefined : scalarZero(field.type);
  }
}

/** The Go view of a value of `type`. */
export function goShape(value: unknown, type: ValueType): unknown {
  if (value === undefined) return undefined;
  switch (type.kind) {
    case 'message': {
      const t = messageType(type);
      // A union type (UnionDef) is the value of the field its shape names.
      if (t.union) return value === null ? null : goShape(value, unionMember(t, value).type);
      return isObject(value) ? goShapeStruct(value, t) : value === null ? null : value;
    }
    case 'list': {
      const item = type.item;
      return Array.isArray(value)
        ? value.map((v) => (v === null && item.kind === 'message' && !messageType(item).union ? goShapeStruct({}, messageType(item)) : goShape(v, item)))
        : value;
    }
    case 'map': {
      if (!isObject(value)) return value;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = goShape(v, type.value);
      return out;
    }
    default:
      return value;
  }
}

/** The fields of a type that appear in its Go view when absent or null (their zero value is not left out). Shared by every server in the process, as the schema is. */
const zeroFieldsOf = new WeakMap<SchemaType, readonly JsonProperty[]>();

function zeroFields(type: SchemaType): readonly JsonProperty[] {
  let fields = zeroFieldsOf.get(type);
  if (fields === undefined) zeroFieldsOf.set(type, (fields = type.properties.filter(({ field }) => zeroOf(field) !== undefined)));
  return fields;
}

/**
 * The Go view of a struct: known fields only, zero values per the JSON tags. It walks the
 * object's own members and then the few fields that appear when absent, not every field the
 * type declares (a PodSpec declares 40, a pod sets a handful): its members come in the object's
 * order, then the zero-valued ones (the views are compared and read as sets, never written in
 * this order).
 */
export function goShapeStruct(obj: Record<string, unknown>, type: SchemaType): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (type.typeMeta) {
    for (const key of ['kind', 'apiVersion']) if (typeof obj[key] === 'string' && obj[key] !== '') out[key] = obj[key];
  }
  const property = type.property;
  for (const name in obj) {
    const raw = obj[name];
    // A JSON null decodes to the zero value, as an absent field does (below).
    if (raw === undefined || raw === null) continue;
    const prop = property.get(name);
    if (prop === undefined) continue;
    const field = prop.field;
    const v = goShape(raw, field.type);
    if (v !== undefined && !(field.omitEmpty && !field.pointer && isEmptyForOmit(v, field.type))) out[name] = v;
  }
  for (const { name, field } of zeroFields(type)) {
    const raw = obj[name];
    if (raw === undefined || raw === null) out[name] = zeroOf(field);
  }
  return out;
}
