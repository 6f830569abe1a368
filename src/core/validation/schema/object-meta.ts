/**
 * An embedded resource's `metadata` as apiextensions treats it (schema/objectmeta): decoded
 * into Go's metav1.ObjectMeta and written back from it, which drops what ObjectMeta does not
 * have and normalizes what it has (zero values under `omitempty` left out, a zero
 * creationTimestamp removed). The decode is the built-in types' walk (unknown-fields.ts) over
 * ObjectMeta's definition, which reports unknown fields and type mismatches in Go's words.
 */
import { type ObjectMeta, handOver } from '../../api';
import { schemaTypes, type SchemaType } from '../../../schema';
import { type Naming, UPSTREAM_VENDOR, createNaming } from '../../../naming';
import { walkFields } from '../unknown-fields';
import { jsonValueKind } from '../unknown-fields-go';

/** Shared by every server in the process: the constant ObjectMeta definition. */
let objectMetaType: SchemaType | undefined;

function metaType(): SchemaType {
  // ObjectMeta is the same in every naming profile; the types are compiled per profile, so one is named.
  const types = schemaTypes as (naming: Naming) => ReadonlyMap<string, SchemaType>;
  objectMetaType ??= types(createNaming(UPSTREAM_VENDOR)).get('meta.v1.ObjectMeta');
  if (!objectMetaType) throw new Error('meta.v1.ObjectMeta is not in the schema');
  return objectMetaType;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** encoding/json's error for a whole value of the wrong JSON type. */
function notAnObject(v: unknown): string {
  return `json: cannot unmarshal ${jsonValueKind(v)} into Go value of type v1.ObjectMeta`;
}

/**
 * GetObjectMeta(x, false) for validation: the metadata as ObjectMeta, or the decode error's
 * text. Unknown fields are ignored (a plain, not strict, decode); keys are decoded in sorted
 * order (the metadata map is marshalled first), so the first mismatch is the first by name.
 */
export function decodeObjectMeta(v: unknown): ObjectMeta | string {
  if (v === null || v === undefined) return {};
  if (!isObject(v)) return notAnObject(v);
  const walk = walkFields(handOver(v), metaType(), { prune: false, keyOrder: 'sorted' });
  return walk.mismatch ? walk.mismatch.message : (v as ObjectMeta);
}

/**
 * What a strict decode of `v` into ObjectMeta finds, nothing changed: the unknown fields (Go
 * paths below `metadata`) and the decode error, if any.
 */
export function inspectObjectMeta(v: unknown): MetaCoercion {
  if (v === null || v === undefined) return { unknown: [] };
  if (!isObject(v)) return { error: notAnObject(v), unknown: [] };
  const walk = walkFields(handOver(v), metaType(), { prune: false, keyOrder: 'sorted' });
  const unknown = walk.unknown.map((u) => u.path);
  return walk.mismatch ? { error: walk.mismatch.message, unknown } : { unknown };
}

export interface MetaCoercion {
  /** The decode error (GetObjectMeta's), when the metadata could not be kept. */
  error?: string;
  /** Unknown fields' paths below `metadata` in Go's form (`ownerReferences[0].foo`). */
  unknown: string[];
}

/**
 * objectmeta.Coerce's handling of `obj.metadata` (GetObjectMetaWithOptions, then SetObjectMeta):
 * the metadata becomes what ObjectMeta writes. With `dropInvalid` (objects read from storage)
 * a field that does not decode is dropped alone, and metadata that is not an object is left
 * as it is; otherwise the first mismatch is the error and nothing changes.
 */
export function coerceObjectMeta(obj: Record<string, unknown>, dropInvalid: boolean): MetaCoercion {
  const v = obj.metadata;
  if (v === null) {
    obj.metadata = {};
    return { unknown: [] };
  }
  if (!isObject(v)) {
    return dropInvalid ? { unknown: [] } : { error: notAnObject(v), unknown: [] };
  }
  const type = metaType();
  const check = walkFields(handOver(v), type, { prune: false, keyOrder: 'sorted' });
  if (check.mismatch) {
    if (!dropInvalid) return { error: check.mismatch.message, unknown: [] };
    // Field by field: a field that does not decode on its own is dropped.
    for (const k of Object.keys(v)) {
      const single = walkFields(handOver({ [k]: v[k] }), type, { prune: false });
      if (single.mismatch) delete v[k];
    }
  }
  const walk = walkFields(handOver(v), type, { keyOrder: 'sorted' });
  // SetObjectMeta writes a zero creationTimestamp as null, and Coerce removes it.
  if (v.creationTimestamp === null || v.creationTimestamp === undefined || isZeroTime(v.creationTimestamp)) delete v.creationTimestamp;
  return { unknown: walk.unknown.map((u) => u.path) };
}

/** metav1.Time's zero instant, which ObjectMeta's encoder writes as null. */
function isZeroTime(t: unknown): boolean {
  return typeof t === 'string' && /^0001-01-01T00:00:00(\.0+)?(Z|[+-]00:00)$/.test(t);
}
