/**
 * apiextensions' structural defaulting (defaulting.Default), run on a custom resource when a
 * request body is decoded and on every object read from storage: top-down, a property that is
 * absent, or null where the schema does not allow null, gets a deep copy of its `default`; an
 * additionalProperties value or a list element that is such a null gets its schema's default;
 * then every value is defaulted by its own schema, so a default is itself defaulted. A null
 * default is no default (upstream's Default.Object == nil). Nulls without a default were
 * removed before (pruneNonNullableNulls, prune.ts); nullable nulls stay.
 *
 * Each default is copied and defaulted by its schema once, when first applied, and handed out
 * as copies of that (the same value the copy-then-default would make). Only subtrees whose
 * schema has a default somewhere are walked, so a read of an object whose schema has none
 * costs nothing. A schema's defaults can multiply an object (a default on the items of a long
 * list of nulls): the copies one call makes are counted, and past the decode limit's number of
 * values (src/codecs/limits.ts) the call fails with LimitExceeded instead of filling memory.
 */
import { LimitExceeded, MAX_DECODED_VALUES } from '../../../codecs/limits';
import { deepCopy } from '../../../util/json-values';
import type { SchemaNode } from './node';

interface PreparedDefault {
  readonly value: unknown;
  /** How many values (scalars, objects, arrays) a copy of it holds. */
  readonly size: number;
}

/** Shared by every server in the process: a pure memo of the (immutable) schema nodes' defaulted defaults. */
const prepared = new WeakMap<SchemaNode, PreparedDefault>();

/** How many values `v` holds, counted without recursion. */
function countValues(v: unknown): number {
  let n = 0;
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    n++;
    if (typeof x !== 'object' || x === null) continue;
    if (Array.isArray(x)) for (const e of x) stack.push(e);
    else for (const k in x) stack.push((x as Record<string, unknown>)[k]);
  }
  return n;
}

class Defaulter {
  private copied = 0;

  /** A fresh copy of `node`'s default, defaulted by `node`. */
  copyOf(node: SchemaNode): unknown {
    let p = prepared.get(node);
    if (!p) {
      const value = deepCopy(node.default);
      new Defaulter().apply(value, node);
      p = { value, size: countValues(value) };
      prepared.set(node, p);
    }
    this.copied += p.size;
    if (this.copied > MAX_DECODED_VALUES) throw new LimitExceeded('values', `defaulting the object adds more than ${MAX_DECODED_VALUES} values`);
    return deepCopy(p.value);
  }

  apply(x: unknown, node: SchemaNode | undefined): void {
    if (!node?.subtreeDefaults || typeof x !== 'object' || x === null) return;
    if (Array.isArray(x)) {
      const items = node.items;
      if (!items) return;
      for (let i = 0; i < x.length; i++) {
        const v = x[i];
        if (v === null) {
          if (items.hasDefault && !items.nullable) x[i] = this.copyOf(items);
        } else {
          this.apply(v, items);
        }
      }
      return;
    }
    const obj = x as Record<string, unknown>;
    const props = node.properties;
    // Only the properties with a default somewhere below are looked at, unless additionalProperties has one.
    const additional = node.hasAdditional && node.additional?.subtreeDefaults ? node.additional : undefined;
    if (additional) {
      for (const k in obj) {
        if (props?.has(k)) continue;
        this.entry(obj, k, additional);
      }
    }
    for (const name of node.defaultWalk) {
      const sub = props!.get(name)!;
      if (Object.hasOwn(obj, name)) this.entry(obj, name, sub);
      else if (sub.hasDefault) setOwn(obj, name, this.copyOf(sub));
    }
  }

  /** A present value: a non-nullable null gets the default, anything else is defaulted by its schema. */
  private entry(obj: Record<string, unknown>, k: string, sub: SchemaNode): void {
    const v = obj[k];
    if (v === null) {
      if (sub.hasDefault && !sub.nullable) obj[k] = this.copyOf(sub);
    } else if (typeof v === 'object') {
      this.apply(v, sub);
    }
  }
}

/** `obj[key] = value`, as an own member even for `__proto__` (as JSON.parse makes it). */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

/** Default `value` in place by `root` (structuraldefaulting.Default); throws LimitExceeded past the decode limit. */
export function applyDefaults(root: SchemaNode, value: unknown): void {
  new Defaulter().apply(value, root);
}

/** CRD validation's check of a schema's defaults (check-defaults.ts), also found beside the defaulting. */
export { type CheckDefaultsOptions, checkSchemaDefaults } from './check-defaults';
