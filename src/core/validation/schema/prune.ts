/**
 * What apiextensions does to a custom resource as it decodes it (unstructuredSchemaCoercer,
 * on every request body and every object read from storage), past the root's TypeMeta and
 * ObjectMeta, which the generic code handles:
 *
 * 1. structural pruning (pruning.PruneWithOptions with isResourceRoot): fields the schema does
 *    not specify are dropped. Under `x-…-preserve-unknown-fields` unknown fields stay, but the
 *    properties the schema does specify are still pruned; an `x-…-embedded-resource` object
 *    and the root keep `apiVersion`, `kind` and `metadata` untouched. The dropped fields' paths
 *    are kept, dotted (`spec.foo`, `spec.list[0].bar`, a map key as `spec.map.key`), and sorted;
 * 2. defaulting.PruneNonNullableNullsWithoutDefaults: a null in a field that is not nullable
 *    and has no default is removed (one with a default is left for defaulting);
 * 3. objectmeta.CoerceWithOptions: an embedded resource's apiVersion and kind must be strings,
 *    and its metadata becomes what Go's ObjectMeta makes of it (object-meta.ts); the unknown
 *    fields found there follow, sorted, as `spec.template.metadata.foo`.
 *
 * Strict field validation reports each path as `unknown field "<path>"` (after the root
 * metadata's and the body's duplicate fields); Warn gives one warning per path. The walks
 * recurse as deep as the value, which the decode limits bound (src/codecs/limits.ts).
 */
import { compareGoStrings } from '../../../codecs/go-strings';
import type { FieldError } from '../field-errors';
import type { SchemaNode } from './node';
import { coerceObjectMeta, inspectObjectMeta } from './object-meta';
import { goFieldError } from './values';

export interface PruneOptions {
  /**
   * Remove what is pruned (default). False only reports the paths and leaves the value as it
   * is: nulls, metadata and all (a Strict request fails on the paths anyway).
   */
  remove?: boolean;
  /** Objects read from storage: an embedded resource's malformed metadata fields are dropped, not an error. */
  dropInvalidMetadata?: boolean;
  /** Treat the value as a resource's root (default): its apiVersion, kind and metadata are kept. */
  isResourceRoot?: boolean;
}

export interface PruneResult {
  /** The pruned fields' paths in upstream's order: the schema's (sorted), then embedded metadata's (sorted). */
  readonly unknownFields: readonly string[];
  /** objectmeta.Coerce's error: an embedded resource that cannot be decoded; the request fails with it. */
  readonly error?: FieldError;
}

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

class Pruner {
  readonly paths: string[] = [];
  constructor(private readonly remove: boolean) {}

  /** prune(): `node` undefined is upstream's nil schema (everything below an object is unknown). */
  prune(x: unknown, node: SchemaNode | undefined, path: string, embeddedRoot: boolean): void {
    if (node?.preserveUnknown) return this.skipPrune(x, node, path, embeddedRoot);
    if (Array.isArray(x)) {
      const items = node?.items;
      for (let i = 0; i < x.length; i++) {
        const v = x[i];
        if (typeof v === 'object' && v !== null) this.prune(v, items, `${path}[${i}]`, false);
      }
      return;
    }
    if (!isObject(x)) return;
    if (!node) {
      for (const k in x) this.drop(x, k, path);
      return;
    }
    const embedded = node.embedded || embeddedRoot;
    for (const k in x) {
      if (embedded && META_FIELDS.has(k)) continue;
      const prop = node.properties?.get(k);
      if (prop) {
        const v = x[k];
        if (typeof v === 'object' && v !== null) this.prune(v, prop, path === '' ? k : `${path}.${k}`, false);
      } else if (node.hasAdditional) {
        const v = x[k];
        if (typeof v === 'object' && v !== null) this.prune(v, node.additional, path === '' ? k : `${path}.${k}`, false);
      } else if (!META_FIELDS.has(k) || path !== '') {
        this.drop(x, k, path);
      } else if (this.remove) {
        // A TypeMeta or ObjectMeta key at a root that is not a resource's goes unrecorded.
        delete x[k];
      }
    }
  }

  /** skipPrune(): under preserve-unknown-fields the known parts are pruned, the rest kept. */
  private skipPrune(x: unknown, node: SchemaNode | undefined, path: string, embeddedRoot: boolean): void {
    if (!node) return;
    if (Array.isArray(x)) {
      for (let i = 0; i < x.length; i++) {
        const v = x[i];
        // Items of a preserving list are themselves walked as preserving (upstream's skipPrune of s.Items).
        if (typeof v === 'object' && v !== null) this.skipPrune(v, node.items, `${path}[${i}]`, false);
      }
      return;
    }
    if (!isObject(x)) return;
    const embedded = node.embedded || embeddedRoot;
    for (const k in x) {
      if (embedded && META_FIELDS.has(k)) continue;
      const prop = node.properties?.get(k);
      const v = x[k];
      if (typeof v !== 'object' || v === null) continue;
      if (prop) this.prune(v, prop, path === '' ? k : `${path}.${k}`, false);
      else if (node.hasAdditional) this.prune(v, node.additional, path === '' ? k : `${path}.${k}`, false);
    }
  }

  private drop(x: Record<string, unknown>, k: string, path: string): void {
    this.paths.push(path === '' ? k : `${path}.${k}`);
    if (this.remove) delete x[k];
  }
}

/**
 * PruneNonNullableNullsWithoutDefaults: nulls in fields the schema declares neither nullable
 * nor defaulted are removed; list elements are never removed, only walked.
 */
export function pruneNonNullableNulls(x: unknown, node: SchemaNode | undefined): void {
  // Without a schema nothing below can be removed.
  if (!node) return;
  if (Array.isArray(x)) {
    const items = node.items;
    if (!items) return;
    for (let i = 0; i < x.length; i++) {
      const v = x[i];
      if (typeof v === 'object' && v !== null) pruneNonNullableNulls(v, items);
    }
    return;
  }
  if (!isObject(x)) return;
  for (const k in x) {
    const sub = node.properties?.get(k) ?? (node.hasAdditional ? node.additional : undefined);
    if (!sub) continue;
    const v = x[k];
    if (v === null) {
      if (!sub.nullable && !sub.hasDefault) delete x[k];
    } else if (typeof v === 'object') {
      pruneNonNullableNulls(v, sub);
    }
  }
}

/** field.Path steps from a nil root, as objectmeta.Coerce builds them. */
const child = (p: string | undefined, k: string) => (p === undefined ? k : `${p}.${k}`);

class Coercer {
  readonly paths: string[] = [];
  error: FieldError | undefined;
  constructor(
    private readonly remove: boolean,
    private readonly dropInvalid: boolean,
  ) {}

  /** coercer.coerce(); false once an error ends the walk. */
  coerce(pth: string | undefined, x: unknown, node: SchemaNode | undefined, embeddedRoot: boolean): boolean {
    if (!node || typeof x !== 'object' || x === null) return true;
    if (!node.subtreeEmbedded && !embeddedRoot) return true;
    if (Array.isArray(x)) {
      for (let i = 0; i < x.length; i++) if (!this.coerce(`${pth ?? ''}[${i}]`, x[i], node.items, false)) return false;
      return true;
    }
    const obj = x as Record<string, unknown>;
    const embedded = node.embedded || embeddedRoot;
    for (const k in obj) {
      const v = obj[k];
      if (embedded && (k === 'apiVersion' || k === 'kind')) {
        if (typeof v !== 'string') {
          if (!this.dropInvalid) return this.fail(goFieldError('FieldValueInvalid', child(pth, k), v, 'must be a string', true));
          if (this.remove) delete obj[k];
        }
      } else if (embedded && k === 'metadata') {
        if (!this.metadata(pth, obj)) return false;
      }
      const prop = node.properties?.get(k);
      if (prop) {
        if (!this.coerce(child(pth, k), v, prop, false)) return false;
      } else if (node.hasAdditional) {
        if (!this.coerce(`${pth ?? ''}[${k}]`, v, node.additional, false)) return false;
      }
    }
    return true;
  }

  private metadata(pth: string | undefined, obj: Record<string, unknown>): boolean {
    const prefix = child(pth, 'metadata');
    const original = obj.metadata;
    // Without removing, only what a strict decode finds is reported; nothing changes.
    const result = this.remove ? coerceObjectMeta(obj, this.dropInvalid) : inspectObjectMeta(original);
    if (result.error !== undefined && !this.dropInvalid) return this.fail(goFieldError('FieldValueInvalid', prefix, original, result.error, true));
    for (const u of result.unknown) this.paths.push(`${prefix}.${u}`);
    return true;
  }

  private fail(err: FieldError): false {
    this.error = err;
    return false;
  }
}

/**
 * Prune `value` (a custom resource, or with `isResourceRoot: false` any value) by `root`:
 * structural pruning, then non-nullable nulls, then embedded resources' metadata, as the
 * decoder does. Returns the pruned fields' paths; with `remove: false` nothing is changed.
 */
export function pruneValue(root: SchemaNode, value: unknown, options: PruneOptions = {}): PruneResult {
  const remove = options.remove ?? true;
  const pruner = new Pruner(remove);
  pruner.prune(value, root, '', options.isResourceRoot ?? true);
  const paths = pruner.paths.sort(compareGoStrings);
  if (remove) pruneNonNullableNulls(value, root);
  let error: FieldError | undefined;
  if (root.subtreeEmbedded) {
    const coercer = new Coercer(remove, options.dropInvalidMetadata ?? false);
    coercer.coerce(undefined, value, root, false);
    error = coercer.error;
    paths.push(...coercer.paths.sort(compareGoStrings));
  }
  return error ? { unknownFields: paths, error } : { unknownFields: paths };
}

/**
 * pruning.Prune alone (no paths, no nulls, no metadata): what CRD validation compares a
 * default with to find unknown fields in it.
 */
export function pruneStructural(node: SchemaNode, value: unknown, isResourceRoot: boolean): void {
  new Pruner(true).prune(value, node, '', isResourceRoot);
}

/**
 * objectmeta.Coerce on `value` (changed in place) with `fldPath` as its path: the first
 * embedded resource that cannot be decoded, if any.
 */
export function coerceEmbedded(node: SchemaNode, value: unknown, fldPath: string | undefined, isResourceRoot: boolean): FieldError | undefined {
  const coercer = new Coercer(true, false);
  coercer.coerce(fldPath, value, node, isResourceRoot);
  return coercer.error;
}

/**
 * How the decoder words a pruned path among the strict decoding errors (and the warnings of
 * `fieldValidation=Warn`): `unknown field "spec.foo"`, the path between quotes as it is (%s).
 */
export function unknownFieldMessage(path: string): string {
  return `unknown field "${path}"`;
}
