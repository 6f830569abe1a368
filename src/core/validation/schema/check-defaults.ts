/**
 * The checks a CustomResourceDefinition's schema gets for its `default`s (apiextensions' CRD
 * validation), for the engineer validating the definition to call with the version's schema
 * path (`spec.versions[0].schema.openAPIV3Schema`):
 *
 * 1. a default inside allOf, anyOf, oneOf or not is not structural (ValidateStructural:
 *    `…allOf[0].default: Forbidden: must be undefined to be structural`), sorted by message as
 *    ValidateStructural sorts its errors; when there are any, upstream skips step 2;
 * 2. structuraldefaulting.ValidateDefaults, walking properties and items (not
 *    additionalProperties, where defaults are not checked): a default must be pruned already
 *    (`…default: Invalid value: …: must not have unknown fields`), decode as its embedded
 *    resources must (objectmeta.Coerce), pass their checks (objectmeta.Validate) and validate
 *    against its own schema (kube-openapi over the structural schema's ToKubeOpenAPI, which
 *    keeps formats as written and leaves int-or-string untyped); inside a resource's TypeMeta
 *    or ObjectMeta a default is placed in an object around it and must give valid metadata;
 * 3. where defaults are not allowed (ValidateCustomResourceDefinitionOpenAPISchema): in the
 *    root's `metadata`, `apiVersion` and `kind` (`must not be set in top-level metadata`), and in
 *    additionalProperties under a resource's metadata (`must not be set inside
 *    additionalProperties applying to object metadata`). A null default counts here (the
 *    field is set) though it is no default for steps 1 and 2.
 *
 * CEL rules on defaults (x-…-validations) are the CEL validation's.
 */
import type { FieldPath, FieldError } from '../field-errors';
import type { JSONSchemaProps, SchemaExtensions } from './types';
import { type SchemaNode, schemaNode } from './node';
import { coerceEmbedded, pruneStructural } from './prune';
import { goFieldError, validateEmbeddedResources, validateSchemaValue } from './values';
import { compareGoStrings } from '../../../codecs/go-strings';
import { deepCopy, jsonEqual } from '../../../util/json-values';

export interface CheckDefaultsOptions {
  /** ValidateDefaults' requirePrunedDefaults: true unless an existing definition already had unpruned defaults. */
  requirePruned?: boolean;
  /** Include step 1 (defaults in junctors); a caller reporting ValidateStructural's errors itself leaves it out. */
  structural?: boolean;
}

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

const isSchema = (v: unknown): v is JSONSchemaProps => typeof v === 'object' && v !== null && !Array.isArray(v);
const hasOwnDefault = (s: JSONSchemaProps) => Object.hasOwn(s, 'default') && s.default !== undefined;
const sortedKeys = (o: unknown): string[] => (isSchema(o) ? Object.keys(o).sort(compareGoStrings) : []);

/** field.Path text steps (the CRD's path is never nil). */
const childPath = (p: string, name: string) => (p === '' ? name : `${p}.${name}`);
const keyPath = (p: string, k: string | number) => `${p}[${k}]`;

// ---- 1. defaults under junctors ----

function junctorDefaults(schema: JSONSchemaProps, path: string, errs: FieldError[]): void {
  const nested = (s: unknown, p: string) => {
    if (!isSchema(s)) return;
    junctorsOf(s, p);
    if (isSchema(s.items)) nested(s.items, childPath(p, 'items'));
    for (const k of sortedKeys(s.properties)) nested(s.properties![k], keyPath(childPath(p, 'properties'), k));
    // Nested additionalProperties are refused outright (not followed), as upstream does.
    if (hasOwnDefault(s) && s.default !== null)
      errs.push(goFieldError('FieldValueForbidden', childPath(p, 'default'), '', 'must be undefined to be structural', false));
  };
  const junctorsOf = (s: JSONSchemaProps, p: string) => {
    (s.anyOf ?? []).forEach((j, i) => nested(j, keyPath(childPath(p, 'anyOf'), i)));
    (s.allOf ?? []).forEach((j, i) => nested(j, keyPath(childPath(p, 'allOf'), i)));
    (s.oneOf ?? []).forEach((j, i) => nested(j, keyPath(childPath(p, 'oneOf'), i)));
    nested(s.not, childPath(p, 'not'));
  };
  // The structural schema: properties, items, additionalProperties; the junctors at each.
  const walk = (s: JSONSchemaProps, p: string) => {
    if (isSchema(s.items)) walk(s.items, childPath(p, 'items'));
    for (const k of sortedKeys(s.properties)) walk(s.properties![k]!, keyPath(childPath(p, 'properties'), k));
    if (isSchema(s.additionalProperties)) walk(s.additionalProperties, childPath(p, 'additionalProperties'));
    junctorsOf(s, p);
  };
  walk(schema, path);
}

// ---- 2. ValidateDefaults ----

/** A step from the nearest resource root down to a TypeMeta or ObjectMeta default (SurroundingObjectFunc). */
type Step = { key: string } | 'index';

/** The utilerrors aggregate's text of field errors: one message, or `[a, b]` without repeats. */
function aggregate(errs: readonly FieldError[]): string {
  const msgs = [...new Set(errs.map((e) => e.message))];
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}

interface Walk {
  readonly ext: SchemaExtensions;
  readonly requirePruned: boolean;
  readonly errs: FieldError[];
}

function validateDefaults(
  w: Walk,
  node: SchemaNode,
  path: string,
  root: SchemaNode,
  rootIsResource: boolean,
  steps: readonly Step[],
  insideMeta: boolean,
): void {
  if (node.embedded) {
    insideMeta = false;
    steps = [];
    root = node;
    rootIsResource = true;
  }
  // The resource's root stands as an embedded resource (ValidateDefaults' isResourceRoot).
  const embeddedHere = node.embedded || (node === root && rootIsResource);
  if (node.hasDefault) {
    const defaultPath = childPath(path, 'default');
    const value = node.default;
    // The validator is built from the structural schema (ToKubeOpenAPI).
    const validator = schemaNode(node.schema, w.ext, 'defaults');
    if (insideMeta) {
      const obj = surround(deepCopy(value), steps);
      const invalid = (detail: string) => w.errs.push(goFieldError('FieldValueInvalid', defaultPath, value, `must result in valid metadata: ${detail}`, true));
      if (obj === undefined) {
        // "object root default value must be of object type": upstream reports it as an internal failure.
        w.errs.push(
          goFieldError(
            'FieldValueInvalid',
            path,
            '',
            'failed to validate default value inside metadata: object root default value must be of object type',
            true,
          ),
        );
      } else {
        const coerceErr = coerceEmbedded(root, obj, undefined, true);
        if (coerceErr) invalid(coerceErr.message);
        else {
          const metaErrs = validateEmbeddedResources(root, obj, undefined, true);
          if (metaErrs.length > 0) invalid(aggregate(metaErrs));
          else w.errs.push(...validateSchemaValue(validator, value, defaultPath));
        }
      }
    } else {
      if (w.requirePruned) {
        const pruned = deepCopy(value);
        pruneStructural(node, pruned, embeddedHere);
        if (!jsonEqual(pruned, value)) w.errs.push(goFieldError('FieldValueInvalid', defaultPath, value, 'must not have unknown fields', true));
      }
      // Coerce changes what it decodes (upstream's the structural copy's default): a copy here.
      const coerceErr = coerceEmbedded(node, deepCopy(value), defaultPath, embeddedHere);
      if (coerceErr) w.errs.push(coerceErr);
      else {
        const metaErrs = validateEmbeddedResources(node, value, defaultPath, embeddedHere);
        if (metaErrs.length > 0) w.errs.push(...metaErrs);
        else w.errs.push(...validateSchemaValue(validator, value, defaultPath));
      }
    }
  }
  // Defaults under additionalProperties are not followed (they are forbidden under metadata, and not checked elsewhere).
  if (node.items) validateDefaults(w, node.items, childPath(path, 'items'), root, rootIsResource, [...steps, 'index'], insideMeta);
  for (const k of node.propertyNames) {
    const sub = node.properties!.get(k)!;
    const subInsideMeta = insideMeta || (embeddedHere && META_FIELDS.has(k));
    validateDefaults(w, sub, keyPath(childPath(path, 'properties'), k), root, rootIsResource, [...steps, { key: k }], subInsideMeta);
  }
}

/**
 * NewRootObjectFunc().WithTypeMeta(validation/v1, Validation) after the steps: the default
 * wrapped in the objects and lists down to it, with apiVersion and kind filled in; undefined
 * when the outermost is not an object.
 */
function surround(value: unknown, steps: readonly Step[]): Record<string, unknown> | undefined {
  let v = value;
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i]!;
    v = step === 'index' ? [v] : { [step.key]: v };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const obj = v as Record<string, unknown>;
  if (!Object.hasOwn(obj, 'kind')) obj.kind = 'Validation';
  if (!Object.hasOwn(obj, 'apiVersion')) obj.apiVersion = 'validation/v1';
  return obj;
}

// ---- 3. where defaults are forbidden ----

interface Placement {
  readonly allow: boolean;
  readonly reason: string;
  readonly insideMeta: boolean;
}

function forbiddenDefaults(schema: JSONSchemaProps, path: string, ext: SchemaExtensions, state: Placement, isRoot: boolean, errs: FieldError[]): void {
  if (hasOwnDefault(schema) && !state.allow) {
    errs.push(goFieldError('FieldValueForbidden', childPath(path, 'default'), '', `must not be set${state.reason ? ` ${state.reason}` : ''}`, false));
  }
  const forbid = (s: Placement, reason: string): Placement => ({ ...s, allow: false, reason });
  if (isSchema(schema.additionalProperties)) {
    const sub = state.insideMeta ? forbid(state, 'inside additionalProperties applying to object metadata') : state;
    forbiddenDefaults(schema.additionalProperties, childPath(path, 'additionalProperties'), ext, sub, false, errs);
  }
  const embedded = schema[ext.embeddedResource as `x-${string}`] === true;
  for (const k of sortedKeys(schema.properties)) {
    let sub = state;
    if ((isRoot || embedded) && META_FIELDS.has(k)) {
      sub = { ...sub, insideMeta: true };
      if (isRoot) sub = forbid(sub, `in top-level ${k}`);
    }
    const prop = schema.properties![k];
    if (isSchema(prop)) forbiddenDefaults(prop, keyPath(childPath(path, 'properties'), k), ext, sub, false, errs);
  }
  if (isSchema(schema.not)) forbiddenDefaults(schema.not, childPath(path, 'not'), ext, state, false, errs);
  for (const junctor of ['allOf', 'oneOf', 'anyOf'] as const) {
    (schema[junctor] ?? []).forEach((j, i) => {
      if (isSchema(j)) forbiddenDefaults(j, keyPath(childPath(path, junctor), i), ext, state, false, errs);
    });
  }
  for (const k of sortedKeys(schema.definitions)) {
    const d = schema.definitions![k];
    if (isSchema(d)) forbiddenDefaults(d, keyPath(childPath(path, 'definitions'), k), ext, state, false, errs);
  }
  if (Array.isArray(schema.items)) {
    schema.items.forEach((s, i) => {
      if (isSchema(s)) forbiddenDefaults(s, keyPath(childPath(path, 'items'), i), ext, state, false, errs);
    });
  } else if (isSchema(schema.items)) {
    forbiddenDefaults(schema.items, childPath(path, 'items'), ext, state, false, errs);
  }
  for (const k of sortedKeys(schema.dependencies)) {
    const d = schema.dependencies![k];
    if (isSchema(d)) forbiddenDefaults(d, keyPath(childPath(path, 'dependencies'), k), ext, state, false, errs);
  }
}

/**
 * Every `default` in a version's schema, checked as CRD validation checks them (see the top
 * of this file); `path` is the schema's (`spec.versions[0].schema.openAPIV3Schema`).
 */
export function checkSchemaDefaults(
  schema: JSONSchemaProps,
  ext: SchemaExtensions,
  path: FieldPath | string,
  options: CheckDefaultsOptions = {},
): FieldError[] {
  const base = path.toString();
  const errs: FieldError[] = [];
  if (options.structural ?? true) {
    const structural: FieldError[] = [];
    junctorDefaults(schema, base, structural);
    structural.sort((a, b) => compareGoStrings(a.message, b.message));
    errs.push(...structural);
  }
  if (errs.length === 0) {
    const root = schemaNode(schema, ext, 'resource');
    validateDefaults({ ext, requirePruned: options.requirePruned ?? true, errs }, root, base, root, true, [], false);
  }
  forbiddenDefaults(schema, base, ext, { allow: true, reason: '', insideMeta: false }, true, errs);
  return errs;
}
