/**
 * Strategic merge patch (`application/strategic-merge-patch+json`, docs/API.md, "Patch types"):
 * JSON merge patch where a field's `patchStrategy` decides how lists merge — by `patchMergeKey`
 * for lists of objects, as sets for lists of scalars, replaced otherwise — plus the directives
 * `$patch: replace|delete` (maps and list items), `$retainKeys`, `$deleteFromPrimitiveList/<f>`
 * and `$setElementOrder/<f>`. Semantics, orders and errors are upstream's server-side merge
 * (strategicpatch.StrategicMergeMapPatch with parallel lists merged and unmatched nulls ignored).
 */
import type { SchemaType } from '../../schema';
import { goEqual, goKind, goPrint, goType } from '../../codecs/go-values';
import { type PatchSchema, lookupForSlice, lookupForStruct, mainStrategy, schemaOfType } from './strategic-schema';
import {
  ERR_BAD_PATCH_FORMAT_PRIMITIVE_LIST,
  ERR_BAD_PATCH_FORMAT_RETAIN_KEYS,
  ERR_BAD_PATCH_FORMAT_SET_ELEMENT_ORDER,
  SmpError,
  errBadArgType,
  errBadPatchType,
  errNoMergeKey,
} from './smp-errors';
import { mergeSliceWithoutDirectives, normalizeElementOrder, partition, sliceElementKind } from './strategic-lists';
import { isObject } from '../../util/json-values';

type JsonMap = Record<string, unknown>;

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER = '$setElementOrder';

const isMap = isObject<JsonMap>;

/** Apply `patch` to `original` (a copy of the stored object) for a value of `type`. Both are consumed. */
export function strategicMergePatch(original: JsonMap, patch: unknown, type: SchemaType): JsonMap {
  if (patch === null || patch === undefined) return original;
  if (!isMap(patch))
    throw SmpError.badRequest(
      `json: cannot unmarshal ${Array.isArray(patch) ? 'array' : typeof patch === 'number' ? 'number' : typeof patch} into Go value of type map[string]interface {}`,
    );
  return mergeMap(original, patch, schemaOfType(type));
}

/** `v` without map values carrying `$patch` (they go) and without list items that are directives. */
export function removeDirectives(v: unknown): { value: unknown; keep: boolean } {
  if (isMap(v)) {
    if (DIRECTIVE in v) return { value: undefined, keep: false };
    for (const k of Object.keys(v)) {
      const r = removeDirectives(v[k]);
      if (r.keep) v[k] = r.value;
      else delete v[k];
    }
    return { value: v, keep: true };
  }
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const item of v) {
      const r = removeDirectives(item);
      if (r.keep) out.push(r.value);
    }
    return { value: out, keep: true };
  }
  return { value: v, keep: true };
}

function discardNulls(v: unknown): void {
  if (isMap(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k];
      else discardNulls(v[k]);
    }
  } else if (Array.isArray(v)) {
    for (const item of v) discardNulls(item);
  }
}

/** The field a `$deleteFromPrimitiveList/<f>` or `$setElementOrder/<f>` key names. */
function directiveTarget(key: string, prefix: string, malformed: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) throw SmpError.badRequest(malformed);
  return key.slice(slash + 1);
}

export function mergeMap(original: JsonMap | null | undefined, patch: JsonMap, schema: PatchSchema): JsonMap {
  if (DIRECTIVE in patch) {
    const directive = patch[DIRECTIVE];
    if (directive === 'replace') {
      delete patch[DIRECTIVE];
      return patch;
    }
    if (directive === 'delete') return {};
    throw errBadPatchType(directive, patch);
  }
  const target: JsonMap = original ?? {};
  applyRetainKeys(target, patch);
  mergeOrderedLists(target, patch, schema);
  for (const rawKey of Object.keys(patch)) {
    if (!(rawKey in patch)) continue;
    const patchV = patch[rawKey];
    let key = rawKey;
    let isDeleteList = false;
    if (rawKey.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      key = directiveTarget(rawKey, DELETE_FROM_PRIMITIVE_LIST, ERR_BAD_PATCH_FORMAT_PRIMITIVE_LIST);
      isDeleteList = true;
    }
    if (patchV === null) {
      delete target[key];
      continue;
    }
    if (!(key in target) || goType(target[key]) !== goType(patchV) || goKind(patchV) === 'scalar') {
      if (!isDeleteList) {
        discardNulls(patchV);
        const r = removeDirectives(patchV);
        if (r.keep) target[key] = r.value;
        else delete target[key];
      } else if (key in target && goKind(patchV) === 'scalar' && goType(target[key]) === goType(patchV)) {
        target[key] = patchV;
      }
      continue;
    }
    if (isMap(patchV)) {
      const { schema: sub, meta } = lookupForStruct(schema, key);
      target[key] = mainStrategy(meta) === 'replace' ? patchV : mergeMap(target[key] as JsonMap, patchV, sub);
    } else {
      const { schema: sub, meta } = lookupForSlice(schema, key);
      const strategy = mainStrategy(meta);
      target[key] = strategy === 'merge' || isDeleteList ? mergeSlice(target[key] as unknown[], patchV as unknown[], sub, meta.mergeKey, isDeleteList) : patchV;
    }
  }
  return target;
}

/** `$retainKeys`: drop the original's keys not listed; the patch may only set listed keys. */
function applyRetainKeys(original: JsonMap, patch: JsonMap): void {
  if (!(RETAIN_KEYS in patch)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw SmpError.badRequest(ERR_BAD_PATCH_FORMAT_RETAIN_KEYS);
  const retained = (k: string) => list.some((v) => v === k);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!retained(k)) throw SmpError.badRequest(ERR_BAD_PATCH_FORMAT_RETAIN_KEYS);
  }
  for (const k of Object.keys(original)) if (!retained(k)) delete original[k];
}

/**
 * `$setElementOrder/<f>`: merge the list `f` now and order it — the directive's order first,
 * then the patch's, then the live list's (upstream's mergePatchIntoOriginal).
 */
function mergeOrderedLists(original: JsonMap, patch: JsonMap, schema: PatchSchema): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER) || !(key in patch)) continue;
    const order = patch[key];
    delete patch[key];
    if (!Array.isArray(order)) throw errBadArgType('[]interface {}', order);
    const field = directiveTarget(key, SET_ELEMENT_ORDER, ERR_BAD_PATCH_FORMAT_SET_ELEMENT_ORDER);
    const foundOriginal = field in original;
    const foundPatch = field in patch;
    const originalList = original[field];
    const patchList = patch[field];
    if (foundOriginal && !Array.isArray(originalList)) throw errBadArgType('[]interface {}', originalList);
    if (foundPatch && !Array.isArray(patchList)) throw errBadArgType('[]interface {}', patchList);
    const { schema: sub, meta } = lookupForSlice(schema, field);
    const strategy = mainStrategy(meta);
    validateAgainstOrder(foundPatch ? (patchList as unknown[]) : [], order, meta.mergeKey);
    let merged: unknown[];
    if (foundOriginal && !foundPatch) merged = originalList as unknown[];
    else if (!foundOriginal && foundPatch) merged = removeDirectives(patchList).value as unknown[];
    else if (foundOriginal && foundPatch) {
      merged = strategy === 'merge' ? mergeSlice(originalList as unknown[], patchList as unknown[], sub, meta.mergeKey, false) : (patchList as unknown[]);
    } else continue;
    const parts = partition(merged, order, meta.mergeKey);
    const kind = sliceElementKind(foundOriginal ? (originalList as unknown[]) : [], foundPatch ? (patchList as unknown[]) : []);
    original[field] = normalizeElementOrder(parts.patch, parts.serverOnly, order, foundOriginal ? (originalList as unknown[]) : [], meta.mergeKey, kind);
    delete patch[field];
  }
}

/** The patch list's items must appear in the `$setElementOrder` list, in its order. */
function validateAgainstOrder(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  const items = mergeKey ? patchList.filter((v) => !(isMap(v) && v[DIRECTIVE] === 'delete')) : patchList;
  if (mergeKey) for (const v of patchList) if (!isMap(v)) throw errBadArgType('map[string]interface {}', v);
  let p = 0;
  let o = 0;
  const keyOf = (v: unknown): unknown => {
    if (!isMap(v)) throw errBadArgType('map[string]interface {}', v);
    if (!(mergeKey in v)) throw errNoMergeKey(v, mergeKey);
    return v[mergeKey];
  };
  while (p < items.length && o < order.length) {
    if (isMap(items[p]) && DIRECTIVE in (items[p] as JsonMap)) {
      p++;
      continue;
    }
    const equal = mergeKey ? goEqual(keyOf(items[p]), keyOf(order[o])) : goEqual(items[p], order[o]);
    if (equal) p++;
    o++;
  }
  if (p < items.length && o >= order.length) {
    throw SmpError.internal(`The order in patch list:\n${goPrint(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goPrint(order)}\n`);
  }
}

/** Merge two lists with the `merge` strategy (or apply a deletion list). */
function mergeSlice(original: unknown[], patch: unknown[], schema: PatchSchema, mergeKey: string, isDeleteList: boolean): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = sliceElementKind(original, patch);
  let base = original;
  let rest = patch;
  let merged: unknown[];
  if (kind !== 'map') {
    if (isDeleteList) return original.filter((v) => !patch.some((d) => goEqual(d, v)));
    merged = deduplicateScalars([...original, ...patch]);
  } else {
    if (!mergeKey)
      throw SmpError.internal(
        `cannot merge lists without merge key for ${schema.kind === 'struct' ? schema.type.name.slice(schema.type.name.lastIndexOf('.') + 1) : ''}`,
      );
    ({ base, rest } = applyItemDirectives(original, patch, mergeKey));
    merged = mergeSliceWithoutDirectives(base, rest, mergeKey, (o, p) => mergeMap(o, p, schema));
  }
  const parts = partition(merged, rest, mergeKey);
  return normalizeElementOrder(parts.patch, parts.serverOnly, rest, base, mergeKey, kind);
}

/** List items `{$patch: delete, <key>: v}` delete live items, `{$patch: replace}` replaces the whole list. */
function applyItemDirectives(original: unknown[], patch: unknown[], mergeKey: string): { base: unknown[]; rest: unknown[] } {
  const rest: unknown[] = [];
  let base = original;
  let replace = false;
  for (const v of patch) {
    const item = v as JsonMap;
    if (!(DIRECTIVE in item)) {
      rest.push(v);
      continue;
    }
    switch (item[DIRECTIVE]) {
      case 'delete':
        if (!(mergeKey in item)) throw errNoMergeKey(item, mergeKey);
        base = base.filter((o, i) => {
          if (!isMap(o)) throw SmpError.internal(`value for key ${i} is not a map.`);
          return !(mergeKey in o && goEqual(o[mergeKey], item[mergeKey]));
        });
        break;
      case 'replace':
        replace = true;
        break;
      case 'merge':
        throw SmpError.internal('merging lists cannot yet be specified in the patch');
      default:
        throw errBadPatchType(item[DIRECTIVE], item);
    }
  }
  return replace ? { base: rest, rest: [] } : { base, rest };
}

/** upstream's in-place deduplication (it moves the last item into each duplicate's place). */
function deduplicateScalars(s: unknown[]): unknown[] {
  let length = s.length - 1;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (goEqual(s[i], s[j])) {
        s[j] = s[length];
        s.length = length;
        length--;
        j--;
      }
    }
  }
  return s;
}
