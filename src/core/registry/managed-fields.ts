/**
 * managedFields entries for create and update (operation `Update`), encoded as upstream's
 * FieldsV1: `f:<field>` for struct and map members, `.` for a map that is itself owned.
 *
 * This module tracks ownership for non-apply writes: the writer of a changed field owns it and
 * every other manager loses it. Lists are treated as atomic leaves and every object as a
 * granular map; the per-type list/map markers of server-side apply refine this later
 * (issue "Writes": SSA with the type's schema).
 */
import type { ApiObject, ManagedFieldsEntry } from '../api';
import { rfc3339 } from '../../clock';

/** Field paths as arrays of `f:` keys; a path to an owned map also holds the `.` marker path. */
type FieldPathKey = string;

const SEP = '\u0000';

/** Top-level fields that are never owned (upstream strips these before computing field sets). */
const IGNORED_TOP = new Set(['apiVersion', 'kind', 'status']);
const IGNORED_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
]);

/** Leaves of an object: each path (joined) mapped to its JSON value; objects with members also add their `.` entry. */
function leaves(obj: unknown, ignoreStatus: boolean): Map<FieldPathKey, string> {
  const out = new Map<FieldPathKey, string>();
  const walk = (value: unknown, path: string[], depth: number): void => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const entries = Object.entries(value as Record<string, unknown>);
      if (depth > 0 && entries.length === 0) {
        out.set(path.join(SEP), '{}');
        return;
      }
      if (depth > 0 && isMapLike(path)) out.set([...path, '.'].join(SEP), '');
      for (const [k, v] of entries) {
        if (depth === 0 && (IGNORED_TOP.has(k) && (k !== 'status' || ignoreStatus))) continue;
        if (depth === 1 && path[0] === 'f:metadata' && IGNORED_METADATA.has(k)) continue;
        if (v === undefined) continue;
        walk(v, [...path, `f:${k}`], depth + 1);
      }
      return;
    }
    out.set(path.join(SEP), JSON.stringify(value));
  };
  walk(obj, [], 0);
  return out;
}

/** Maps with arbitrary keys (not structs) carry the `.` marker, as upstream writes for them. */
const MAP_FIELDS = new Set(['f:labels', 'f:annotations', 'f:data', 'f:stringData', 'f:binaryData', 'f:matchLabels', 'f:nodeSelector']);

function isMapLike(path: string[]): boolean {
  return MAP_FIELDS.has(path[path.length - 1] ?? '');
}

function toFieldsV1(paths: Iterable<FieldPathKey>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const key of paths) {
    let node = root;
    for (const part of key.split(SEP)) {
      node = (node[part] ??= {}) as Record<string, unknown>;
    }
  }
  return root;
}

function fromFieldsV1(fields: Record<string, unknown> | undefined): Set<FieldPathKey> {
  const out = new Set<FieldPathKey>();
  const walk = (node: Record<string, unknown>, path: string[]): void => {
    const keys = Object.keys(node);
    if (keys.length === 0 && path.length > 0) out.add(path.join(SEP));
    for (const k of keys) walk(node[k] as Record<string, unknown>, [...path, k]);
  };
  if (fields) walk(fields, []);
  return out;
}

export interface ManagerIdentity {
  manager: string;
  apiVersion: string;
  /** '' for the main resource, `status` or `scale` for subresources. */
  subresource: string;
}

/** Upstream infers a manager from the User-Agent: the part before the first `/`, at most 128 characters. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const prefix = (userAgent ?? '').split('/')[0] ?? '';
  return prefix.slice(0, 128) || 'unknown';
}

/**
 * Compute the managedFields of `next` after a non-apply write by `who`. `prev` is the stored
 * object (undefined on create). Fields whose value changed move to `who`.
 */
export function updateManagedFields(
  prev: ApiObject | undefined,
  next: ApiObject,
  who: ManagerIdentity,
  now: number,
): ManagedFieldsEntry[] {
  const ignoreStatus = who.subresource !== 'status';
  const before = prev ? leaves(prev, ignoreStatus) : new Map<FieldPathKey, string>();
  const after = leaves(next, ignoreStatus);
  const changed = new Set<FieldPathKey>();
  for (const [path, value] of after) if (before.get(path) !== value) changed.add(path);
  const removed = new Set<FieldPathKey>();
  for (const path of before.keys()) if (!after.has(path)) removed.add(path);

  const existing = prev?.metadata?.managedFields ?? next.metadata?.managedFields ?? [];
  const entries: ManagedFieldsEntry[] = [];
  let mine: Set<FieldPathKey> = new Set();
  let mineTime: string | undefined;
  for (const entry of existing) {
    if (!entry || typeof entry !== 'object') continue;
    const fields = fromFieldsV1(entry.fieldsV1);
    const isMine =
      entry.manager === who.manager &&
      entry.operation === 'Update' &&
      entry.apiVersion === who.apiVersion &&
      (entry.subresource ?? '') === who.subresource;
    if (isMine) {
      mine = fields;
      mineTime = entry.time;
      continue;
    }
    for (const p of changed) fields.delete(p);
    for (const p of removed) fields.delete(p);
    if (fields.size > 0) entries.push({ ...entry, fieldsV1: toFieldsV1(fields) });
  }
  for (const p of removed) mine.delete(p);
  for (const p of changed) mine.add(p);
  if (mine.size > 0) {
    const entry: ManagedFieldsEntry = {
      manager: who.manager,
      operation: 'Update',
      apiVersion: who.apiVersion,
      time: changed.size > 0 || !mineTime ? rfc3339(now) : mineTime,
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(mine),
    };
    if (who.subresource) entry.subresource = who.subresource;
    entries.push(entry);
  }
  return entries;
}
