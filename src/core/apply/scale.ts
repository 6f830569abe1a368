/**
 * managedFields across the `/scale` subresource (upstream's managedfields.ScaleHandler). A write
 * to `/scale` is tracked on the autoscaling/v1 Scale: the parent's managers of its replicas field
 * become managers of the Scale's `spec.replicas`; afterwards the Scale's owners of
 * `spec.replicas` become entries of the parent again at the parent's version. As upstream, an
 * update manager's parent entry always gives up replicas to its Scale entry, which comes back
 * without a time.
 */
import type { ManagedFieldsEntry } from '../api';
import { fieldElement, type Path } from './fieldpath';
import { decodeManaged, encodeManaged, type Managed } from './managed';
import { FieldSet } from './set';

export const SCALE_API_VERSION = 'autoscaling/v1';
const REPLICAS_IN_SCALE: Path = [fieldElement('spec'), fieldElement('replicas')];

export interface ScaleMapping {
  /** The parent's group version (`apps/v1`). */
  readonly apiVersion: string;
  /** Where the parent keeps its replicas (`spec.replicas`). */
  readonly replicasPath: Path;
}

/** The Scale's managedFields from the parent's. */
export function scaleEntriesFromParent(parent: readonly ManagedFieldsEntry[] | undefined, mapping: ScaleMapping): ManagedFieldsEntry[] {
  const managed = decodeManaged(parent as ManagedFieldsEntry[] | undefined);
  const out: Managed = { fields: new Map(), times: new Map() };
  for (const [id, vs] of managed.fields) {
    if (vs.apiVersion !== mapping.apiVersion || !vs.set.has(mapping.replicasPath)) continue;
    out.fields.set(id, { set: FieldSet.of(REPLICAS_IN_SCALE), apiVersion: SCALE_API_VERSION, applied: vs.applied });
    out.times.set(id, managed.times.get(id));
  }
  return encodeManaged(out);
}

/** The parent's managedFields after a `/scale` write whose Scale ended with `scaleEntries`. */
export function parentEntriesFromScale(
  parent: readonly ManagedFieldsEntry[] | undefined,
  scaleEntries: readonly ManagedFieldsEntry[],
  mapping: ScaleMapping,
): ManagedFieldsEntry[] {
  const parentManaged = decodeManaged(parent as ManagedFieldsEntry[] | undefined);
  const scaleFields = new Map(decodeManaged(scaleEntries as ManagedFieldsEntry[]).fields);
  const out: Managed = { fields: new Map(), times: new Map() };
  for (const [id, vs] of parentManaged.fields) {
    if (vs.apiVersion !== mapping.apiVersion) continue;
    if (!vs.set.has(mapping.replicasPath)) {
      out.fields.set(id, vs);
      out.times.set(id, parentManaged.times.get(id));
      continue;
    }
    if (!scaleFields.has(id)) {
      const set = vs.set.difference(FieldSet.of(mapping.replicasPath));
      if (!set.empty()) {
        out.fields.set(id, { ...vs, set });
        out.times.set(id, parentManaged.times.get(id));
      }
    } else {
      out.fields.set(id, vs);
      out.times.set(id, parentManaged.times.get(id));
      scaleFields.delete(id);
    }
  }
  for (const [id, vs] of scaleFields) {
    if (!vs.set.has(REPLICAS_IN_SCALE)) continue;
    out.fields.set(id, { set: FieldSet.of(mapping.replicasPath), apiVersion: mapping.apiVersion, applied: vs.applied });
    out.times.set(id, parentManaged.times.get(id));
  }
  return encodeManaged(out);
}
