/**
 * How a field merges, with upstream's fallbacks applied once here (docs/API.md, "Merge markers"):
 * strategic merge patch, server-side apply and OpenAPI read these instead of the raw markers.
 */
import type { SchemaType } from './registry';
import type { ElementRelationship, FieldDef, ListType } from './types';

function mergesByStrategy(field: FieldDef): boolean {
  return field.patchStrategy?.split(',').includes('merge') ?? false;
}

/**
 * The list type of a list field: its `listType`; without one, `patchStrategy: merge` reads as a
 * map keyed by `patchMergeKey` (a set for scalar lists without a key); otherwise atomic.
 */
export function effectiveListType(field: FieldDef): ListType {
  if (field.listType) return field.listType;
  if (mergesByStrategy(field)) return field.patchMergeKey ? 'map' : 'set';
  return 'atomic';
}

/** The keys of a list that merges as a map, or undefined for atomic lists and sets. */
export function effectiveListMapKeys(field: FieldDef): readonly string[] | undefined {
  if (effectiveListType(field) !== 'map') return undefined;
  return field.listMapKeys ?? (field.patchMergeKey ? [field.patchMergeKey] : undefined);
}

/** A struct field's relationship: the field's `structType`, else its type's, else granular. */
export function effectiveStructType(field: FieldDef, type: SchemaType): ElementRelationship {
  return field.structType ?? type.structType ?? 'granular';
}

/** A map field's relationship: its `mapType`, else granular. */
export function effectiveMapType(field: FieldDef): ElementRelationship {
  return field.mapType ?? 'granular';
}
