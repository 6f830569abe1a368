/**
 * The patch metadata strategic merge patch reads from a type: each field's `patchStrategy` and
 * `patchMergeKey` struct tags, straight from the schema (SMP reads the tags, not `listType`:
 * a list with only `listType: map` is replaced whole, as upstream does).
 */
import { messageType, type SchemaType, type ValueType } from '../../schema';
import { SmpError } from './smp-errors';

/** Where a value sits in the schema: a struct, a map with values of one type, or anything else. */
export type PatchSchema =
  | { readonly kind: 'struct'; readonly type: SchemaType }
  | { readonly kind: 'map'; readonly value: ValueType }
  | { readonly kind: 'list'; readonly item: ValueType }
  | { readonly kind: 'other'; readonly goName: string; readonly goKind: string };

export interface PatchMeta {
  /** `merge`, `replace`, `retainKeys`, or both of `merge` and `retainKeys`. */
  readonly strategies: readonly string[];
  readonly mergeKey: string;
}

const NO_META: PatchMeta = { strategies: [], mergeKey: '' };

const SPECIAL_GO_NAMES: Record<string, string> = {
  Time: 'Time',
  MicroTime: 'MicroTime',
  Duration: 'Duration',
  Quantity: 'Quantity',
  IntOrString: 'IntOrString',
  RawExtension: 'RawExtension',
  FieldsV1: 'FieldsV1',
  JSON: 'JSON',
};

export function schemaOfType(type: SchemaType): PatchSchema {
  return { kind: 'struct', type };
}

export function schemaOf(value: ValueType): PatchSchema {
  switch (value.kind) {
    case 'message':
      // A union type (apiextensions' JSONSchemaPropsOr…) is a struct to upstream's patch meta too:
      // a patch into it finds no field of its own, as upstream's does.
      return { kind: 'struct', type: messageType(value) };
    case 'map':
      return { kind: 'map', value: value.value };
    case 'list':
      return { kind: 'list', item: value.item };
    case 'special':
      return { kind: 'other', goName: SPECIAL_GO_NAMES[value.special] ?? value.special, goKind: 'struct' };
    case 'scalar':
      return { kind: 'other', goName: value.scalar, goKind: value.scalar === 'bytes' ? 'slice' : value.scalar };
  }
}

function goTypeName(type: SchemaType): string {
  return type.name.slice(type.name.lastIndexOf('.') + 1);
}

/** The metadata and schema of a struct field or map value named `key` (upstream's LookupPatchMetadataForStruct). */
export function lookupForStruct(schema: PatchSchema, key: string): { schema: PatchSchema; meta: PatchMeta } {
  if (schema.kind === 'map') return { schema: schemaOf(schema.value), meta: NO_META };
  if (schema.kind === 'struct') {
    const p = schema.type.property.get(key);
    if (!p) throw SmpError.internal(`unable to find api field in struct ${goTypeName(schema.type)} for the json field "${key}"`);
    const strategies = p.field.patchStrategy ? p.field.patchStrategy.split(',') : [];
    return { schema: schemaOf(p.field.type), meta: { strategies, mergeKey: p.field.patchMergeKey ?? '' } };
  }
  if (schema.kind === 'other' && schema.goKind === 'struct') {
    throw SmpError.internal(`unable to find api field in struct ${schema.goName} for the json field "${key}"`);
  }
  const kind = schema.kind === 'list' ? 'slice' : schema.goKind;
  throw SmpError.internal(`merging an object in json but data type is not map or struct, instead is: ${kind}`);
}

/** The metadata of a list field and the schema of its items (upstream's LookupPatchMetadataForSlice). */
export function lookupForSlice(schema: PatchSchema, key: string): { schema: PatchSchema; meta: PatchMeta } {
  const found = lookupForStruct(schema, key);
  if (found.schema.kind === 'list') {
    if (found.schema.item.kind === 'list') throw SmpError.internal('unexpected slice of slice');
    return { schema: schemaOf(found.schema.item), meta: found.meta };
  }
  const kind = schema.kind === 'struct' ? 'struct' : schema.kind === 'map' ? 'map' : 'struct';
  throw SmpError.internal(`expected slice or array type, but got: ${kind}`);
}

/** upstream's extractRetainKeysPatchStrategy: the strategy besides `retainKeys`. */
export function mainStrategy(meta: PatchMeta): string {
  const s = meta.strategies;
  if (s.length === 0) return '';
  if (s.length === 1) return s[0] === 'retainKeys' ? '' : s[0]!;
  if (s.length === 2) {
    if (s[0] === 'retainKeys') return s[1]!;
    if (s[1] === 'retainKeys') return s[0]!;
  }
  throw SmpError.internal(`unexpected patch strategy: [${s.join(' ')}]`);
}
