/**
 * `fieldValidation` on POST, PUT and PATCH (docs/API.md, "Field validation"): unknown fields are
 * always dropped, never stored; duplicate fields keep their last value; `Ignore` says nothing,
 * `Warn` (the default) adds one warning per field (`unknown field "spec.foo"`,
 * `duplicate field "spec.replicas"`, or go-yaml's `line 5: key "name" already set in map`), and
 * `Strict` fails the request listing them all in upstream's wording:
 *
 * - create/update bodies: 400 `<Kind> in version "<v>" cannot be handled as a <Kind>: strict
 *   decoding error: ...` (upstream's create and update handlers);
 * - JSON, merge and strategic merge patches: 400 `strict decoding error: ...` — the spec's
 *   400 for every verb (upstream's patch handler wraps the same text in a 422 `patch: Invalid
 *   value`, which the spec overrides); a value of the wrong type stays upstream's 422;
 * - apply patches: 400 `error strict decoding YAML: ...` for repeated keys.
 *
 * Repeated keys can only be seen in the bytes, so the doors decode bodies with the strict
 * decoders and send what they found with the request (`RequestContext.decodeReport`); the core
 * then checks the value against the schema and reports both together, in upstream's order. A
 * request without a report (in-process callers) still has its unknown fields found and dropped.
 */
import type { ApiObject, FieldValidation, Owned, Patch, RepeatedJsonKey, RequestContext } from '../api';
import type { Naming } from '../../naming';
import { type SchemaType, schemaRegistry } from '../../schema';
import { yamlDuplicateMessage } from '../../codecs/strict-yaml';
import { type StatusError, badRequest, invalid } from '../../status';
import { fieldErrors } from './field-errors';
import { walkFields, type FieldWalk, type WalkOptions } from './unknown-fields';
import { goPrint } from './unknown-fields-go';

/** Upstream's cap on accumulated strict errors (its strict JSON decoder keeps at most 100). */
const MAX_STRICT_ERRORS = 100;

function under(path: string, prefixes: readonly string[]): boolean {
  return prefixes.some((p) => path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`));
}

/** The strict errors of a walked JSON body, merged in document order and deduplicated. */
function jsonStrictErrors(walk: FieldWalk, duplicates: readonly RepeatedJsonKey[]): string[] {
  if (duplicates.length === 0 && walk.unknown.length === 0) return [];
  // Go reports a repeated key only where the schema has a field for it: a repeated unknown
  // field is reported once, as unknown, and nothing inside an open value is looked at.
  const items = [
    ...duplicates.filter((d) => !under(d.path, walk.open)).map((d) => ({ seq: d.seq, text: `duplicate field ${JSON.stringify(d.path)}` })),
    ...walk.unknown.map((u) => ({ seq: u.seq ?? Number.MAX_SAFE_INTEGER, text: `unknown field ${JSON.stringify(u.path)}` })),
  ].sort((a, b) => a.seq - b.seq);
  return [...new Set(items.map((i) => i.text))].slice(0, MAX_STRICT_ERRORS);
}

function unknownErrors(walk: FieldWalk): string[] {
  if (walk.unknown.length === 0) return [];
  return [...new Set(walk.unknown.map((u) => `unknown field ${JSON.stringify(u.path)}`))].slice(0, MAX_STRICT_ERRORS);
}

/** Upstream's addStrictDecodingWarnings: go-yaml's error becomes one warning per line. */
export function warningsOf(errors: readonly string[]): string[] {
  return errors.flatMap((e) => {
    for (const prefix of ['yaml: unmarshal errors:\n', 'error converting YAML to JSON: yaml: unmarshal errors:\n']) {
      if (e.startsWith(prefix))
        return e
          .slice(prefix.length)
          .split('\n')
          .map((l) => l.trim());
    }
    return [e];
  });
}

/**
 * Warnings go to callers that collect them (the gateway's Warning headers); long-lived contexts
 * of in-process clients are left alone. A warning already given is not given again, as
 * upstream's recorder ignores duplicates (an update that starts over says it once).
 */
function warn(ctx: RequestContext, errors: readonly string[]): void {
  const warnings = ctx.warnings;
  if (errors.length === 0 || !warnings) return;
  for (const warning of warningsOf(errors)) if (!warnings.includes(warning)) warnings.push(warning);
}

/**
 * How a type's unknown fields are found and removed: from Keelson's schema of it, or, for a
 * custom resource, from its definition's structural schema (`ResourceDefinition.walkFields`).
 */
export type FieldWalker = (value: Owned<ApiObject>, options: WalkOptions) => FieldWalk;

/** The walker of a schema type. */
export function schemaWalker(type: SchemaType): FieldWalker {
  return (value, options) => walkFields(value, type, options);
}

export interface ObjectCheck {
  /** The decoded body, the write's own: unknown fields are removed from it. */
  object: Owned<ApiObject>;
  /** How the request's kind finds unknown fields. */
  walker: FieldWalker;
  kind: string;
  version: string;
  directive: FieldValidation | undefined;
  ctx: RequestContext;
}

/**
 * Check a create or update body: 400 on a value of the wrong type (always), then the strict
 * errors per `fieldValidation`. Unknown fields are dropped whatever the directive.
 */
export function checkObjectFields(check: ObjectCheck): void {
  const { object, walker, kind, version, directive, ctx } = check;
  const record = ctx.decodeReport;
  const firstSeen = record?.kind === 'json' && record.firstSeen ? new Map(record.firstSeen.map((k) => [k.path, k.seq] as const)) : undefined;
  const walk = walker(object, {
    keyOrder: record?.kind === 'yaml' ? 'sorted' : 'document',
    keySeq: firstSeen ? (path) => firstSeen.get(path) : undefined,
  });
  const cannotHandle = (detail: string): StatusError => badRequest(`${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${detail}`);
  if (walk.mismatch) throw cannotHandle(walk.mismatch.message);
  if (directive === 'Ignore') return;
  let errors: string[];
  if (record?.kind === 'yaml') {
    errors = record.duplicates.length ? [yamlDuplicateMessage(record.duplicates, false), ...unknownErrors(walk)] : unknownErrors(walk);
  } else {
    errors = jsonStrictErrors(walk, record?.kind === 'json' ? record.duplicates : []);
  }
  if (errors.length === 0) return;
  if (directive === 'Strict') throw cannotHandle(`strict decoding error: ${errors.join(', ')}`);
  warn(ctx, errors);
}

export interface PatchedCheck {
  patch: Patch;
  /** The object the patch produced, the write's own: unknown fields are removed from it. */
  patched: Owned<ApiObject>;
  walker: FieldWalker;
  directive: FieldValidation | undefined;
  ctx: RequestContext;
}

/** The `patch` field error upstream reports a patch's decode errors under (422, no kind, no name). */
function patchInvalid(patch: Patch, patched: ApiObject, detail: string): StatusError {
  const shown = patch.type === 'strategic' ? goPrint(patch.body) : JSON.stringify(patched);
  return invalid({ group: '', kind: '' }, '', [fieldErrors.invalid('patch', shown, detail)]);
}

/**
 * Check the object a JSON, merge or strategic merge patch produced: the patch body's own strict
 * errors first (repeated keys; unknown keys of JSON patch operations), then the unknown fields
 * of the result, in Go's sorted key order. Apply patches are checked by `checkApplyPatch`.
 */
export function checkPatchedFields(check: PatchedCheck): void {
  const { patch, patched, walker, directive, ctx } = check;
  const walk = walker(patched, { keyOrder: 'sorted' });
  if (walk.mismatch) throw patchInvalid(patch, patched.value, walk.mismatch.message);
  if (directive === 'Ignore') return;
  const record = ctx.decodeReport;
  const own = record?.kind === 'patch' ? record.errors : [];
  const errors = [...own, ...unknownErrors(walk)];
  if (errors.length === 0) return;
  if (directive === 'Strict') throw badRequest(`strict decoding error: ${errors.join(', ')}`);
  warn(ctx, errors);
}

/** Repeated keys in an apply patch (upstream checks them after the apply itself succeeded). */
export function checkApplyPatch(directive: FieldValidation | undefined, ctx: RequestContext): void {
  const record = ctx.decodeReport;
  if (directive === 'Ignore' || record?.kind !== 'yaml' || record.duplicates.length === 0) return;
  const message = yamlDuplicateMessage(record.duplicates, true);
  if (directive === 'Strict') throw badRequest(`error strict decoding YAML: ${message}`);
  warn(ctx, [message]);
}

/** A served type's group, version and kind. */
export interface TypeName {
  group: string;
  version: string;
  kind: string;
}

/** The schema type of a resource's kind under a naming profile, if Keelson has one. */
export function resourceType(naming: Naming, def: TypeName): SchemaType | undefined {
  const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
  return schemaRegistry(naming).kind(apiVersion, def.kind)?.type;
}

/** How a resource's unknown fields are found: its own walker (a custom resource's), else its schema type's; none without either. */
export function fieldWalker(naming: Naming, def: TypeName & { walkFields?: FieldWalker }): FieldWalker | undefined {
  if (def.walkFields) return def.walkFields;
  const type = resourceType(naming, def);
  return type ? schemaWalker(type) : undefined;
}

/**
 * `checkObjectFields` for a body sent to a resource (create, update). A body that names another
 * kind or version is left alone: the store rejects it with upstream's 400.
 */
export function checkBodyFields(
  naming: Naming,
  def: TypeName & { walkFields?: FieldWalker },
  body: Owned<ApiObject>,
  directive: FieldValidation | undefined,
  ctx: RequestContext,
): void {
  const object = body.value;
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return;
  const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
  if ((object.apiVersion && object.apiVersion !== apiVersion) || (object.kind && object.kind !== def.kind)) return;
  const walker = fieldWalker(naming, def);
  if (walker) checkObjectFields({ object: body, walker, kind: def.kind, version: def.version, directive, ctx });
}
