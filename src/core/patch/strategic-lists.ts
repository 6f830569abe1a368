/**
 * List handling of strategic merge patch: merging items by merge key and the order of the
 * result (items named by the patch in the patch's order, interleaved with the live-only items
 * in their live order), as upstream's normalizeElementOrder computes it.
 */
import { goEqual, goPrint, goType, sliceStable } from '../../codecs/go-values';
import { ERR_NO_LIST_OF_LISTS, SmpError, errBadArgType, errNoMergeKey } from './smp-errors';
import { isObject } from '../../util/json-values';

type JsonMap = Record<string, unknown>;

export type ElementKind = 'map' | 'scalar';

const isMap = isObject<JsonMap>;

/** The one element type of the given lists (upstream's sliceElementType). */
export function sliceElementKind(...lists: unknown[][]): ElementKind {
  let prev: string | undefined;
  for (const list of lists) {
    for (const v of list) {
      const t = goType(v);
      if (prev === undefined) {
        prev = t;
        if (Array.isArray(v)) throw SmpError.unprocessable(ERR_NO_LIST_OF_LISTS);
      } else if (prev !== t) {
        throw SmpError.internal(`list element types are not identical: ${goPrint(lists)}`);
      }
    }
  }
  if (prev === undefined) throw SmpError.internal('no elements in any of the given slices');
  return prev === 'map[string]interface {}' ? 'map' : 'scalar';
}

/** The item of a list whose merge key equals `value` (upstream's findMapInSliceBasedOnKeyValue). */
export function findByKey(list: unknown[], key: string, value: unknown): number {
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (!isMap(v)) throw SmpError.internal(`value for key ${i} is not a map.`);
    if (key in v && goEqual(v[key], value)) return i;
  }
  return -1;
}

/** Merge patch items into live items with the same merge key; append the others. */
export function mergeSliceWithoutDirectives(
  original: unknown[],
  patch: unknown[],
  mergeKey: string,
  mergeItem: (o: JsonMap, p: JsonMap) => JsonMap,
): unknown[] {
  const out = original;
  for (const v of patch) {
    const item = v as JsonMap;
    if (!(mergeKey in item)) throw errNoMergeKey(item, mergeKey);
    const i = findByKey(out, mergeKey, item[mergeKey]);
    if (i >= 0) out[i] = mergeItem(out[i] as JsonMap, item);
    else out.push(v);
  }
  return out;
}

/** Split `merged` into the items `by` names and the others, both in merged order. */
export function partition(merged: unknown[], by: unknown[], mergeKey: string): { patch: unknown[]; serverOnly: unknown[] } {
  const patch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const v of merged) {
    let inBy: boolean;
    if (!mergeKey) inBy = by.some((b) => goEqual(b, v));
    else {
      if (!isMap(v)) throw errBadArgType('map[string]interface {}', v);
      if (!(mergeKey in v)) throw errNoMergeKey(v, mergeKey);
      inBy = findByKey(by, mergeKey, v[mergeKey]) >= 0;
    }
    (inBy ? patch : serverOnly).push(v);
  }
  return { patch, serverOnly };
}

function indexIn(list: unknown[], item: unknown, mergeKey: string, kind: ElementKind): number {
  const keyValueOf = (v: unknown): unknown => (kind === 'map' ? (isMap(v) ? (v[mergeKey] ?? undefined) : undefined) : v);
  const want = keyValueOf(item);
  for (let i = 0; i < list.length; i++) {
    const got = keyValueOf(list[i]);
    if ((want === undefined && got === undefined) || goEqual(want, got)) return i;
  }
  return -1;
}

/** Sort `toSort` by the positions of its items in `order`; `$patch: delete` items go last. */
function normalizeSliceOrder(toSort: unknown[], order: unknown[], mergeKey: string, kind: ElementKind): unknown[] {
  let keep = toSort;
  let deletes: unknown[] = [];
  if (kind === 'map') {
    for (const list of [toSort, order]) {
      for (const item of list) {
        if (!isMap(item)) throw errBadArgType('map[string]interface {}', item);
        if (!(mergeKey in item)) throw errNoMergeKey(item, mergeKey);
      }
    }
    keep = toSort.filter((v) => (v as JsonMap).$patch !== 'delete');
    deletes = toSort.filter((v) => (v as JsonMap).$patch === 'delete');
  }
  keep = [...keep];
  sliceStable(keep, (a, b) => {
    const ia = indexIn(order, a, mergeKey, kind);
    if (ia >= 0) {
      const ib = indexIn(order, b, mergeKey, kind);
      if (ib >= 0) return ia < ib;
    }
    return true;
  });
  return [...keep, ...deletes];
}

/**
 * Order a merged list: the patch's items sorted by `patchOrder`, the live-only items by
 * `serverOrder`, then interleaved keeping both relative orders (upstream's mergeSortedSlice).
 */
export function normalizeElementOrder(
  patch: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: ElementKind,
): unknown[] {
  const right = normalizeSliceOrder(patch, patchOrder, mergeKey, kind);
  const left = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(serverOrder, left[i], mergeKey, kind);
      const ri = indexIn(serverOrder, right[j], mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}
