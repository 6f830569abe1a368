/**
 * Builders for writing type definitions compactly (src/schema/defs). Defaults follow the
 * common case upstream: a non-pointer field whose JSON tag has `omitempty`, optional, no markers.
 */
import type { ElementRelationship, FieldDef, ListType, PackageDef, PatchStrategy, TypeDef, UnionDef, ValueType } from './types';

export const STRING: ValueType = { kind: 'scalar', scalar: 'string' };
export const BOOL: ValueType = { kind: 'scalar', scalar: 'bool' };
export const INT32: ValueType = { kind: 'scalar', scalar: 'int32' };
export const INT64: ValueType = { kind: 'scalar', scalar: 'int64' };
export const DOUBLE: ValueType = { kind: 'scalar', scalar: 'double' };
export const BYTES: ValueType = { kind: 'scalar', scalar: 'bytes' };

export const TIME: ValueType = { kind: 'special', special: 'Time' };
export const MICRO_TIME: ValueType = { kind: 'special', special: 'MicroTime' };
export const DURATION: ValueType = { kind: 'special', special: 'Duration' };
export const QUANTITY: ValueType = { kind: 'special', special: 'Quantity' };
export const INT_OR_STRING: ValueType = { kind: 'special', special: 'IntOrString' };
export const RAW_EXTENSION: ValueType = { kind: 'special', special: 'RawExtension' };
export const FIELDS_V1: ValueType = { kind: 'special', special: 'FieldsV1' };
export const JSON_VALUE: ValueType = { kind: 'special', special: 'JSON' };

/** A message type: a bare name is resolved in the package of the type that uses it. */
export function ref(type: string): ValueType {
  return { kind: 'message', type };
}

export function listOf(item: ValueType): ValueType {
  return { kind: 'list', item };
}

/** A Go named slice with a message of its own (`ExtraValue`, `Verbs`); see ValueType. */
export function wrappedListOf(item: ValueType): ValueType {
  return { kind: 'list', item, wrapped: true };
}

export function mapOf(value: ValueType): ValueType {
  return { kind: 'map', value };
}

export interface FieldOptions {
  pointer?: boolean;
  /** The JSON tag lacks `omitempty`. */
  emitEmpty?: boolean;
  inline?: boolean;
  required?: boolean;
  listType?: ListType;
  listMapKeys?: readonly string[];
  mapType?: ElementRelationship;
  structType?: ElementRelationship;
  patchStrategy?: PatchStrategy;
  patchMergeKey?: string;
  /** Named by a schema extension: `name` is the part after `x-<vendor>-` (FieldDef.extension). */
  extension?: boolean;
}

export function f(name: string, number: number, type: ValueType, options: FieldOptions = {}): FieldDef {
  const { pointer = false, emitEmpty = false, inline = false, required = false, ...markers } = options;
  return { name, number, type, pointer, omitEmpty: !emitEmpty, inline, required, ...markers };
}

export interface TypeOptions {
  typeMeta?: boolean;
  structType?: ElementRelationship;
  union?: UnionDef;
}

export function msg(name: string, fields: readonly FieldDef[], options: TypeOptions = {}): TypeDef {
  return {
    name,
    fields,
    typeMeta: options.typeMeta ?? false,
    ...(options.structType ? { structType: options.structType } : {}),
    ...(options.union ? { union: options.union } : {}),
  };
}

/**
 * Upstream's list kinds all have one shape: TypeMeta, `metadata` (ListMeta, 1) and `items` (2,
 * required, no omitempty).
 */
export function listKind(name: string, item: string): TypeDef {
  return msg(name, [f('metadata', 1, ref('meta.v1.ListMeta')), f('items', 2, listOf(ref(item)), { emitEmpty: true, required: true })], { typeMeta: true });
}

/** A package (or part of one; parts with the same name are merged by the registry). */
export function definePackage(name: string, types: readonly TypeDef[]): PackageDef {
  return { name, types };
}
