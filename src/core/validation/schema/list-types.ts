/**
 * apiextensions' listtype.ValidateListSetsAndMaps, run on every create and update of a custom
 * resource after the schema's own validation: a list marked `x-…-list-type: set` holds no
 * value twice, and one marked `map` holds objects (or nulls) no two of which have the same
 * values at the `x-…-list-map-keys` (a missing key counts as a value of its own).
 *
 * Each repeated value is reported once, at its second occurrence, as `Duplicate value` with
 * the element (a set) or its keys (a map, `map[string]interface {}{"name":"a"}`) printed as Go
 * prints them. Values are compared by hashing (scalars by value, objects and lists by their
 * JSON with sorted keys, as upstream marshals them), so a long list costs linear time. Paths
 * are field.Path's: `spec.ports[1]`, a map value's key in brackets (`spec.byName[a]`).
 */
import type { FieldError, FieldPath } from '../field-errors';
import type { SchemaNode } from './node';
import { canonicalKey } from './go-values';
import { goFieldError } from './values';

/** An absent key (upstream's unspecifiedKeyValue{}). */
const UNSPECIFIED = Symbol('unspecified');

const child = (p: string | undefined, k: string) => (p === undefined ? k : `${p}.${k}`);
const bracket = (p: string | undefined, k: string | number) => `${p ?? ''}[${k}]`;

/** validateListSet: the index of each value's second occurrence. */
function duplicates(list: readonly unknown[]): number[] {
  const out: number[] = [];
  if (list.length <= 1) return out;
  const seen = new Map<unknown, number>();
  for (let i = 0; i < list.length; i++) {
    const x = list[i];
    // Objects and lists by their JSON (json.Marshal in upstream); scalars as Go map keys.
    const key = typeof x === 'object' && x !== null ? `\u0000${canonicalKey(x)}` : x;
    const times = seen.get(key);
    if (times === undefined) seen.set(key, 1);
    else {
      seen.set(key, times + 1);
      if (times === 1) out.push(i);
    }
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function validateListMap(pth: string | undefined, node: SchemaNode, list: readonly unknown[], errs: FieldError[]): void {
  for (let i = 0; i < list.length; i++) {
    const x = list[i];
    if (x !== null && !isObject(x)) {
      errs.push(goFieldError('FieldValueInvalid', bracket(pth, i), x, 'must be an object for an array of list-type map', true));
      return;
    }
  }
  if (list.length <= 1) return;
  const keyFields = node.listMapKeys ?? [];
  if (keyFields.length === 1) {
    const keyField = keyFields[0]!;
    const keys = list.map((x) => (x === null || !Object.hasOwn(x as object, keyField) ? UNSPECIFIED : (x as Record<string, unknown>)[keyField]));
    for (const i of duplicates(keys)) {
      const k = keys[i];
      errs.push(goFieldError('FieldValueDuplicate', bracket(pth, i), k === UNSPECIFIED ? {} : { [keyField]: k }, undefined, true));
    }
    return;
  }
  const keys = list.map((x) => {
    const key: Record<string, unknown> = {};
    if (x === null) return key;
    for (const kf of keyFields) if (Object.hasOwn(x as object, kf)) key[kf] = (x as Record<string, unknown>)[kf];
    return key;
  });
  for (const i of duplicates(keys)) errs.push(goFieldError('FieldValueDuplicate', bracket(pth, i), keys[i], undefined, true));
}

function validateArray(pth: string | undefined, node: SchemaNode, list: readonly unknown[], errs: FieldError[]): void {
  if (node.listType === 'set') {
    for (const i of duplicates(list)) errs.push(goFieldError('FieldValueDuplicate', bracket(pth, i), list[i], undefined, true));
  } else if (node.listType === 'map') {
    validateListMap(pth, node, list, errs);
  }
  const items = node.items;
  if (items?.subtreeListTypes) for (let i = 0; i < list.length; i++) validateValue(bracket(pth, i), items, list[i], errs);
}

function validateValue(pth: string | undefined, node: SchemaNode, x: unknown, errs: FieldError[]): void {
  if (Array.isArray(x)) validateArray(pth, node, x, errs);
  else if (isObject(x)) validateObject(pth, node, x, errs);
}

function validateObject(pth: string | undefined, node: SchemaNode, obj: Record<string, unknown>, errs: FieldError[]): void {
  if (!node.subtreeListTypes) return;
  // Upstream walks every additionalProperties value, then every property.
  const additional = node.hasAdditional ? node.additional : undefined;
  if (additional?.subtreeListTypes) for (const k in obj) validateValue(bracket(pth, k), additional, obj[k], errs);
  if (node.properties) {
    for (const k in obj) {
      const prop = node.properties.get(k);
      if (prop?.subtreeListTypes) validateValue(child(pth, k), prop, obj[k], errs);
    }
  }
}

/** ValidateListSetsAndMaps of an object (a custom resource, `fldPath` none) by `root`. */
export function validateListSetsAndMaps(root: SchemaNode, value: unknown, fldPath?: FieldPath | string): FieldError[] {
  const errs: FieldError[] = [];
  if (isObject(value)) validateObject(fldPath === undefined ? undefined : fldPath.toString(), root, value, errs);
  return errs;
}
