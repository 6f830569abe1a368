/**
 * A version's structural schema compiled once into what a custom resource's writes and reads
 * run: prune (decode), default (decode and every read), validate (create and update). The
 * compiled form is kept per schema object (node.ts), so serving a definition compiles it once
 * and every request after reuses it; the walks touch only the subtrees that need them.
 */
import type { FieldError, FieldPath } from '../field-errors';
import type { JSONSchemaProps, SchemaExtensions } from './types';
import { type SchemaNode, schemaNode } from './node';
import { type PruneOptions, type PruneResult, pruneValue } from './prune';
import { applyDefaults } from './defaults';
import { validateEmbeddedResources, validateSchemaUpdate, validateSchemaValue } from './values';
import { validateListSetsAndMaps } from './list-types';
import { blockingError, validateRules, validateRulesUpdate } from './cel/validate';
import { subtreeHasRules } from './cel/compile';
import { isObject } from '../../../util/json-values';

export interface CompiledSchema {
  readonly schema: JSONSchemaProps;
  readonly ext: SchemaExtensions;
  /** The compiled root (for the walks' own use; its shape may change). */
  readonly node: SchemaNode;

  /**
   * What the decoder does past the root's TypeMeta and ObjectMeta (prune.ts): drop unknown
   * fields, non-nullable nulls without a default, and coerce embedded resources' metadata;
   * returns the dropped fields' paths for `unknown field "…"` warnings or Strict errors.
   */
  prune(value: Record<string, unknown>, options?: PruneOptions): PruneResult;
  /** structuraldefaulting.Default, in place (defaults.ts); throws LimitExceeded past the decode limit. */
  default(value: unknown): void;
  /**
   * The schema's checks of a create or update as the custom resource strategy orders them:
   * the OpenAPI validation (`validateSchema`), the embedded resources (`validateEmbedded`),
   * the list sets and maps (`validateListTypes`), then the `x-…-validations` rules (cel/: not
   * run when an earlier error leaves the object unfit, upstream's hasBlockingErr). Upstream puts
   * ObjectMeta's checks first (the caller's) and the scale subresource's paths' between the
   * first two: `scaleErrors`, reported there.
   */
  validate(value: unknown, fldPath?: FieldPath | string, scaleErrors?: readonly FieldError[]): FieldError[];
  /**
   * `validate` for an update as the strategy's ValidateUpdate runs it: the OpenAPI validation
   * ratchets (an error of a value equal to its correlated old value is dropped), embedded
   * resources are checked as on create, and list sets and maps only when the old object passes
   * them.
   */
  validateUpdate(value: unknown, old: unknown, fldPath?: FieldPath | string, scaleErrors?: readonly FieldError[]): FieldError[];
  /**
   * A `/status` update's checks, as upstream's status strategy runs them: the status alone
   * against its property's schema (at `status`, ratcheted against the old status), the list
   * sets and maps of the whole object when the old one passes them, then every rule of the
   * whole object, ratcheted (the rest is the stored object's, so only rules whose values
   * changed run: the status's and those of its ancestors). `scaleErrors` (the status replicas
   * and selector paths') come after the status's.
   */
  validateStatusUpdate(value: unknown, old: unknown, scaleErrors?: readonly FieldError[]): FieldError[];
  /** apiextensions' ValidateCustomResource: kube-openapi's validation as field errors (values.ts). */
  validateSchema(value: unknown, fldPath?: FieldPath | string): FieldError[];
  /** objectmeta.Validate: embedded resources' apiVersion, kind and metadata. */
  validateEmbedded(value: unknown, fldPath?: FieldPath | string): FieldError[];
  /** listtype.ValidateListSetsAndMaps. */
  validateListTypes(value: unknown, fldPath?: FieldPath | string): FieldError[];
  /** The compiled schema of a property (`status`, for the status subresource's validation). */
  property(name: string): CompiledSchema | undefined;
}

class Compiled implements CompiledSchema {
  readonly node: SchemaNode;
  constructor(
    readonly schema: JSONSchemaProps,
    readonly ext: SchemaExtensions,
  ) {
    this.node = schemaNode(schema, ext, 'resource');
  }
  prune(value: Record<string, unknown>, options?: PruneOptions): PruneResult {
    return pruneValue(this.node, value, options);
  }
  default(value: unknown): void {
    applyDefaults(this.node, value);
  }
  validate(value: unknown, fldPath?: FieldPath | string, scaleErrors: readonly FieldError[] = []): FieldError[] {
    const errs = validateSchemaValue(this.node, value, fldPath);
    errs.push(...scaleErrors);
    if (this.node.subtreeEmbedded) errs.push(...validateEmbeddedResources(this.node, value, fldPath));
    if (this.node.subtreeListTypes) errs.push(...validateListSetsAndMaps(this.node, value, fldPath));
    if (subtreeHasRules(this.node)) {
      const blocking = blockingError(errs);
      errs.push(...(blocking ? [blocking] : validateRules(this.node, value, fldPath)));
    }
    return errs;
  }
  validateUpdate(value: unknown, old: unknown, fldPath?: FieldPath | string, scaleErrors: readonly FieldError[] = []): FieldError[] {
    const errs = validateSchemaUpdate(this.node, value, old, fldPath);
    errs.push(...scaleErrors);
    if (this.node.subtreeEmbedded) errs.push(...validateEmbeddedResources(this.node, value, fldPath));
    return this.listTypesAndRulesUpdate(errs, value, old, fldPath);
  }
  validateStatusUpdate(value: unknown, old: unknown, scaleErrors: readonly FieldError[] = []): FieldError[] {
    const status = this.node.properties?.get('status');
    const errs =
      status && isObject(value) && 'status' in value ? validateSchemaUpdate(status, value.status, isObject(old) ? old.status : undefined, 'status') : [];
    errs.push(...scaleErrors);
    return this.listTypesAndRulesUpdate(errs, value, old);
  }
  /** The end of an update's checks: list sets and maps (unless the old object already breaks them), then the rules, ratcheted. */
  private listTypesAndRulesUpdate(errs: FieldError[], value: unknown, old: unknown, fldPath?: FieldPath | string): FieldError[] {
    if (this.node.subtreeListTypes && validateListSetsAndMaps(this.node, old, fldPath).length === 0)
      errs.push(...validateListSetsAndMaps(this.node, value, fldPath));
    if (subtreeHasRules(this.node)) {
      const blocking = blockingError(errs);
      errs.push(...(blocking ? [blocking] : validateRulesUpdate(this.node, value, old, fldPath)));
    }
    return errs;
  }
  validateSchema(value: unknown, fldPath?: FieldPath | string): FieldError[] {
    return validateSchemaValue(this.node, value, fldPath);
  }
  validateEmbedded(value: unknown, fldPath?: FieldPath | string): FieldError[] {
    return validateEmbeddedResources(this.node, value, fldPath);
  }
  validateListTypes(value: unknown, fldPath?: FieldPath | string): FieldError[] {
    return validateListSetsAndMaps(this.node, value, fldPath);
  }
  property(name: string): CompiledSchema | undefined {
    const sub = this.node.properties?.get(name);
    return sub ? compileSchema(sub.schema, this.ext) : undefined;
  }
}

/** Shared by every server in the process: a pure memo keyed by the (constant) profile names and the schema objects. */
const compiled = new WeakMap<SchemaExtensions, WeakMap<JSONSchemaProps, CompiledSchema>>();

/**
 * The compiled form of a version's `openAPIV3Schema` under a naming profile's extension names
 * (`schemaExtensions(naming)`), made once per schema object. The schema must not change after.
 * Throws SchemaTooDeep for a schema nested past the decode limit.
 */
export function compileSchema(schema: JSONSchemaProps, ext: SchemaExtensions): CompiledSchema {
  let byExt = compiled.get(ext);
  if (!byExt) compiled.set(ext, (byExt = new WeakMap()));
  let c = byExt.get(schema);
  if (!c) byExt.set(schema, (c = new Compiled(schema, ext)));
  return c;
}
