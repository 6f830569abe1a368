/**
 * The two JSON shapes of a union type (UnionDef: apiextensions' JSONSchemaPropsOrArray, -OrBool,
 * -OrStringArray), as upstream's hand-written marshallers read and write them. The codecs that
 * walk JSON take the member that describes a value (`unionMember`); protobuf, which writes the
 * type's own message, converts between the JSON value and the message's fields.
 */
import type { SchemaType } from './registry';
import type { FieldDef, UnionDef } from './types';

type Fields = Record<string, unknown>;

function isJsonObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function members(type: SchemaType): { union: UnionDef; object: FieldDef; other: FieldDef } {
  const union = type.union!;
  return { union, object: type.property.get(union.object)!.field, other: type.property.get(union.other)!.field };
}

/** The field of union type `type` whose type describes `value`: `object` for a JSON object, else `other`. */
export function unionMember(type: SchemaType, value: unknown): FieldDef {
  const { object, other } = members(type);
  return isJsonObject(value) ? object : other;
}

/** A union's JSON value as the fields of its message (null: the empty message). */
export function unionToFields(type: SchemaType, value: unknown): Fields | undefined {
  if (value === null || value === undefined) return undefined;
  const { union, other } = members(type);
  if (!isJsonObject(value)) return { [union.other]: value };
  // JSONSchemaPropsOrBool's UnmarshalJSON: a schema allows.
  return other.type.kind === 'scalar' ? { [union.object]: value, [union.other]: true } : { [union.object]: value };
}

/** The JSON value of a union's message fields (decoded as upstream's JSON of the struct would hold them). */
export function unionFromFields(type: SchemaType, fields: Fields): unknown {
  const { union, other } = members(type);
  const object = fields[union.object];
  const rest = fields[union.other];
  if (other.type.kind === 'scalar') return object ?? rest === true;
  return Array.isArray(rest) && rest.length > 0 ? rest : (object ?? null);
}
