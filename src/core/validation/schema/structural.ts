/**
 * What apiextensions asks of the OpenAPI v3 schema of a CustomResourceDefinition version, in
 * upstream 1.32's words and field paths:
 *
 * - `structuralError`: upstream's NewStructural refusing a schema it cannot read (apiserver/schema
 *   convert.go): `id`, `$schema`, `$ref`, `patternProperties`, `dependencies`, `additionalItems`,
 *   `definitions`, `items` as an array, `x-…-preserve-unknown-fields: false`;
 * - `validateStructural`: ValidateStructural (apiserver/schema validation.go, complete.go): every
 *   specified field typed, value validations (allOf, anyOf, oneOf, not) holding no types,
 *   defaults, descriptions or extensions and nothing the structural part does not specify,
 *   metadata restricted to name and generateName at the root, the int-or-string and
 *   embedded-resource rules; errors sorted by their text, as upstream sorts them;
 * - `validateOpenApiSchema`: ValidateCustomResourceDefinitionOpenAPISchema and its OpenAPI v3
 *   standard validator (apis/apiextensions/validation): unsupported keywords, valid types,
 *   defaults where they may be, additionalProperties beside properties, list and map types and
 *   list-map keys, the shape of `x-…-validations` rules;
 * - `validateRootForStatus`: the root's fields when the status subresource is enabled;
 * - `validFieldPath`: upstream's cel.ValidFieldPath (selectable fields, rules' fieldPath).
 *
 * Pure functions over the schema as JSON (JSONSchemaProps), the profile's extension names
 * (SchemaExtensions: every `x-kubernetes-…` name in a path or message is the profile's) and a
 * FieldPath. Map keys are visited in Go's byte order (upstream ranges over Go maps, in no
 * order). CEL compilation of the rules, their cost estimates and the defaults' checks
 * (`./defaults.ts`) are not here.
 */
import { compareGoStrings } from '../../../codecs/go-strings';
import { type FieldError, FieldPath, fieldErrors } from '../field-errors';
import { GO_NIL, goString, goStringSlice, invalidWithRendering } from '../go-format';
import type { JSONSchemaProps, SchemaExtensions, ValidationRule } from './types';
import type * as Re2js from 're2js';

type Schema = JSONSchemaProps;

/** The schema's extensions, read under the profile's names. */
interface Extensions {
  /** `x-…-preserve-unknown-fields` as written: true, false or absent. */
  readonly preserve: boolean | undefined;
  readonly embedded: boolean;
  readonly intOrString: boolean;
  readonly listMapKeys: readonly string[] | undefined;
  readonly listType: string | undefined;
  readonly mapType: string | undefined;
  readonly validations: readonly ValidationRule[] | undefined;
}

/** A schema's value under a profile's extension name. */
function extension(s: Schema, name: string): unknown {
  return (s as Record<string, unknown>)[name];
}

function extensionsOf(s: Schema, ext: SchemaExtensions): Extensions {
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const preserve = extension(s, ext.preserveUnknownFields);
  return {
    preserve: typeof preserve === 'boolean' ? preserve : undefined,
    embedded: extension(s, ext.embeddedResource) === true,
    intOrString: extension(s, ext.intOrString) === true,
    listMapKeys: Array.isArray(extension(s, ext.listMapKeys)) ? (extension(s, ext.listMapKeys) as string[]) : undefined,
    listType: str(extension(s, ext.listType)),
    mapType: str(extension(s, ext.mapType)),
    validations: Array.isArray(extension(s, ext.validations)) ? (extension(s, ext.validations) as ValidationRule[]) : undefined,
  };
}

const isSet = (v: unknown): boolean => v !== undefined && v !== null;
const nonEmpty = (v: readonly unknown[] | undefined): v is readonly unknown[] => Array.isArray(v) && v.length > 0;
const keysOf = (m: Record<string, unknown> | undefined): string[] => (m ? Object.keys(m).sort(compareGoStrings) : []);
const hasKeys = (m: Record<string, unknown> | undefined): boolean => m !== undefined && m !== null && Object.keys(m).length > 0;

/** `items` as one schema, or undefined (absent, or an array of schemas). */
function itemsSchema(s: Schema): Schema | undefined {
  return isSet(s.items) && !Array.isArray(s.items) ? (s.items as Schema) : undefined;
}

/** `additionalProperties` as a schema, or undefined (absent or a boolean). */
function additionalSchema(s: Schema): Schema | undefined {
  const a = s.additionalProperties;
  return typeof a === 'object' && a !== null ? a : undefined;
}

/** Upstream's `AdditionalProperties.Allows`: true for a schema or `true`. */
function additionalAllows(s: Schema): boolean {
  return s.additionalProperties === true || additionalSchema(s) !== undefined;
}

// ---------------------------------------------------------------------------------------------
// NewStructural's refusals

/** The error upstream's NewStructural returns for a schema it cannot read, or undefined. */
export function structuralError(schema: Schema | undefined, ext: SchemaExtensions): string | undefined {
  if (!schema) return undefined;
  return unsupported(schema) ?? valueValidationError(schema, ext) ?? extensionError(schema, ext) ?? childrenError(schema, ext, structuralError);
}

function unsupported(s: Schema): string | undefined {
  if (s.id) return "OpenAPIV3Schema 'id' is not supported";
  if (s.$schema) return "OpenAPIV3Schema 'schema' is not supported";
  if (s.$ref) return "OpenAPIV3Schema '$ref' is not supported";
  if (hasKeys(s.patternProperties)) return "OpenAPIV3Schema 'patternProperties' is not supported";
  if (hasKeys(s.dependencies)) return "OpenAPIV3Schema 'dependencies' is not supported";
  if (isSet(s.additionalItems)) return "OpenAPIV3Schema 'additionalItems' is not supported";
  if (hasKeys(s.definitions)) return "OpenAPIV3Schema 'definitions' is not supported";
  return undefined;
}

function extensionError(s: Schema, ext: SchemaExtensions): string | undefined {
  if (extension(s, ext.preserveUnknownFields) === false) return `internal error: '${ext.preserveUnknownFields}' must be true or undefined`;
  return undefined;
}

function valueValidationError(s: Schema, ext: SchemaExtensions): string | undefined {
  for (const nested of [s.not, ...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? [])]) {
    const err = nested ? nestedError(nested, ext) : undefined;
    if (err) return err;
  }
  return undefined;
}

function nestedError(s: Schema, ext: SchemaExtensions): string | undefined {
  return unsupported(s) ?? valueValidationError(s, ext) ?? extensionError(s, ext) ?? childrenError(s, ext, nestedError);
}

function childrenError(s: Schema, ext: SchemaExtensions, child: (s: Schema, ext: SchemaExtensions) => string | undefined): string | undefined {
  if (isSet(s.items)) {
    if (Array.isArray(s.items)) {
      if (s.items.length > 0) return "OpenAPIV3Schema 'items' must be a schema, but is an array";
    } else {
      const err = child(s.items as Schema, ext);
      if (err) return err;
    }
  }
  for (const k of keysOf(s.properties)) {
    const err = child(s.properties![k]!, ext);
    if (err) return err;
  }
  const additional = additionalSchema(s);
  return additional ? child(additional, ext) : undefined;
}

// ---------------------------------------------------------------------------------------------
// ValidateStructural

type Level = 'root' | 'item' | 'field';

/** upstream's ValidateStructural (with the options CustomResourceDefinitions use): errors sorted by their text. */
export function validateStructural(schema: Schema, ext: SchemaExtensions, path: FieldPath): FieldError[] {
  const errs = [...invariants(schema, 'root', path, ext), ...completeness(schema, schema, path, path)];
  return errs.sort((a, b) => compareGoStrings(a.message, b.message));
}

/** An anyOf clause that is `type: <type>` and nothing else upstream's structural form keeps. */
function justType(s: Schema | undefined, type: string, ext: SchemaExtensions): boolean {
  if (!s || s.type !== type) return false;
  for (const key of Object.keys(s)) {
    if (key === 'type' || key === 'externalDocs' || key === 'example') continue;
    const v = (s as Record<string, unknown>)[key];
    if (v === undefined || v === null || v === false || v === '') continue;
    if (key === 'additionalProperties' && v === false) continue;
    if (key === ext.preserveUnknownFields && v === false) continue;
    return false;
  }
  return true;
}

function intOrStringAnyOf(anyOf: readonly Schema[] | undefined, ext: SchemaExtensions): boolean {
  return anyOf?.length === 2 && justType(anyOf[0], 'integer', ext) && justType(anyOf[1], 'string', ext);
}

function invariants(s: Schema, lvl: Level, path: FieldPath, ext: SchemaExtensions): FieldError[] {
  const errs: FieldError[] = [];
  const x = extensionsOf(s, ext);
  const items = itemsSchema(s);
  if (s.type === 'array' && !items) errs.push(fieldErrors.required(path.child('items'), 'must be specified'));
  if (items) errs.push(...invariants(items, 'item', path.child('items'), ext));
  for (const k of keysOf(s.properties)) errs.push(...invariants(s.properties![k]!, 'field', path.child('properties').key(k), ext));
  if (isSet(s.additionalProperties)) {
    if (lvl === 'root') errs.push(fieldErrors.forbidden(path.child('additionalProperties'), 'must not be used at the root'));
    const additional = additionalSchema(s);
    if (additional) errs.push(...invariants(additional, 'field', path.child('additionalProperties'), ext));
  }

  if (x.intOrString && x.preserve === true) {
    errs.push(fieldErrors.invalid(path.child(ext.preserveUnknownFields), true, `must be false if ${ext.intOrString} is true`));
  }
  if (x.intOrString && x.embedded) errs.push(fieldErrors.invalid(path.child(ext.embeddedResource), true, `must be false if ${ext.intOrString} is true`));

  const skipAnyOf = intOrStringAnyOf(s.anyOf, ext);
  const skipFirstAllOfAnyOf = (s.allOf?.length ?? 0) >= 1 && intOrStringAnyOf(s.allOf![0]!.anyOf, ext);
  errs.push(...valueValidation(s, skipAnyOf, skipFirstAllOfAnyOf, lvl, path, ext));

  const checkMetadata = lvl === 'root' || x.embedded;
  const type = s.type ?? '';
  if (x.embedded && type !== 'object') {
    const detail = `must be object if ${ext.embeddedResource} is true`;
    errs.push(type === '' ? fieldErrors.required(path.child('type'), detail) : fieldErrors.invalid(path.child('type'), type, detail));
  } else if (type === '' && !x.intOrString && x.preserve !== true) {
    const detail = {
      root: 'must not be empty at the root',
      item: 'must not be empty for specified array items',
      field: 'must not be empty for specified object fields',
    }[lvl];
    errs.push(fieldErrors.required(path.child('type'), detail));
  }
  if (x.embedded && isSet(s.additionalProperties)) {
    errs.push(fieldErrors.forbidden(path.child('additionalProperties'), `must not be used if ${ext.embeddedResource} is set`));
  }
  if (lvl === 'root' && type !== '' && type !== 'object') errs.push(fieldErrors.invalid(path.child('type'), type, 'must be object at the root'));

  const properties = s.properties ?? {};
  for (const meta of ['kind', 'apiVersion']) {
    const p = properties[meta];
    if (p && checkMetadata && p.type !== 'string')
      errs.push(fieldErrors.invalid(path.child('properties').key(meta).child('type'), p.type ?? '', 'must be string'));
  }
  if (properties.metadata) errs.push(...metadataInvariants(properties.metadata, checkMetadata, lvl, path.child('properties').key('metadata'), ext));

  if (x.embedded && x.preserve !== true && !hasKeys(s.properties)) {
    errs.push(fieldErrors.required(path.child('properties'), `must not be empty if ${ext.embeddedResource} is true without ${ext.preserveUnknownFields}`));
  }
  return errs;
}

/**
 * Keys of a schema that upstream's structural form of it keeps, besides type, default and the
 * properties: what a root metadata schema may not hold (examples and external docs are dropped
 * by NewStructural; the unsupported keywords fail it first).
 */
const METADATA_KEPT = ['description', 'title', 'nullable', 'format', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength'];
const METADATA_KEPT_2 = ['pattern', 'maxItems', 'minItems', 'uniqueItems', 'multipleOf', 'enum', 'maxProperties', 'minProperties', 'required'];
const METADATA_KEPT_3 = ['allOf', 'anyOf', 'oneOf', 'not', 'items', 'additionalProperties'];

function metadataInvariants(s: Schema, checkMetadata: boolean, lvl: Level, path: FieldPath, ext: SchemaExtensions): FieldError[] {
  const errs: FieldError[] = [];
  if (checkMetadata && s.type !== 'object') errs.push(fieldErrors.invalid(path.child('type'), s.type ?? '', 'must be object'));
  if (lvl !== 'root') return errs;
  const names = keysOf(s.properties);
  const onlyNames = names.length > 0 && names.length <= 2 && names.every((n) => n === 'name' || n === 'generateName');
  const x = extensionsOf(s, ext);
  const kept = [...METADATA_KEPT, ...METADATA_KEPT_2, ...METADATA_KEPT_3].some((k) => {
    const v = (s as Record<string, unknown>)[k];
    return v !== undefined && v !== null && v !== false && v !== '';
  });
  const extended = x.preserve === true || x.embedded || x.intOrString || x.listMapKeys !== undefined || x.listType !== undefined || x.mapType !== undefined;
  if ((s.properties !== undefined && !onlyNames) || kept || extended || nonEmpty(x.validations)) {
    errs.push(fieldErrors.forbidden(path, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
  }
  return errs;
}

/** upstream's validateValueValidation: the junctors of a schema (or of a nested clause). */
function valueValidation(s: Schema, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, lvl: Level, path: FieldPath, ext: SchemaExtensions): FieldError[] {
  const errs: FieldError[] = [];
  if (!skipAnyOf) (s.anyOf ?? []).forEach((v, i) => errs.push(...nestedValueValidation(v, false, false, lvl, path.child('anyOf').index(i), ext)));
  (s.allOf ?? []).forEach((v, i) => errs.push(...nestedValueValidation(v, skipFirstAllOfAnyOf && i === 0, false, lvl, path.child('allOf').index(i), ext)));
  (s.oneOf ?? []).forEach((v, i) => errs.push(...nestedValueValidation(v, false, false, lvl, path.child('oneOf').index(i), ext)));
  if (s.not) errs.push(...nestedValueValidation(s.not, false, false, lvl, path.child('not'), ext));
  if (s.pattern) {
    const err = goRegexpError(s.pattern);
    if (err) errs.push(fieldErrors.invalid(path.child('pattern'), s.pattern, `must be a valid regular expression, but isn't: ${err}`));
  }
  return errs;
}

/** upstream's validateNestedValueValidation: a clause under a junctor may only restrict values. */
function nestedValueValidation(v: Schema, skipAnyOf: boolean, skipAllOfAnyOf: boolean, lvl: Level, path: FieldPath, ext: SchemaExtensions): FieldError[] {
  const errs = valueValidation(v, skipAnyOf, skipAllOfAnyOf, lvl, path, ext);
  const items = itemsSchema(v);
  if (items) errs.push(...nestedValueValidation(items, false, false, lvl, path.child('items'), ext));
  for (const k of keysOf(v.properties)) errs.push(...nestedValueValidation(v.properties![k]!, false, false, 'field', path.child('properties').key(k), ext));
  if (v.type) errs.push(fieldErrors.forbidden(path.child('type'), 'must be empty to be structural'));
  // `additionalProperties: false` has no structural form in a clause (upstream keeps nil for it).
  if (additionalAllows(v)) errs.push(fieldErrors.forbidden(path.child('additionalProperties'), 'must be undefined to be structural'));
  if (isSet(v.default)) errs.push(fieldErrors.forbidden(path.child('default'), 'must be undefined to be structural'));
  if (v.title) errs.push(fieldErrors.forbidden(path.child('title'), 'must be empty to be structural'));
  if (v.description) errs.push(fieldErrors.forbidden(path.child('description'), 'must be empty to be structural'));
  if (v.nullable) errs.push(fieldErrors.forbidden(path.child('nullable'), 'must be false to be structural'));
  const x = extensionsOf(v, ext);
  if (x.preserve === true) errs.push(fieldErrors.forbidden(path.child(ext.preserveUnknownFields), 'must be false to be structural'));
  if (x.embedded) errs.push(fieldErrors.forbidden(path.child(ext.embeddedResource), 'must be false to be structural'));
  if (x.intOrString) errs.push(fieldErrors.forbidden(path.child(ext.intOrString), 'must be false to be structural'));
  if (nonEmpty(x.listMapKeys)) errs.push(fieldErrors.forbidden(path.child(ext.listMapKeys), 'must be empty to be structural'));
  if (x.listType !== undefined) errs.push(fieldErrors.forbidden(path.child(ext.listType), 'must be undefined to be structural'));
  if (x.mapType !== undefined) errs.push(fieldErrors.forbidden(path.child(ext.mapType), 'must be undefined to be structural'));
  if (nonEmpty(x.validations)) errs.push(fieldErrors.forbidden(path.child(ext.validations), 'must be empty to be structural'));
  if (v.properties?.metadata) errs.push(fieldErrors.forbidden(path.child('properties').key('metadata'), 'must not be specified in a nested context'));
  return errs;
}

/**
 * upstream's validateStructuralCompleteness (and validateValueValidationCompleteness): what the
 * junctors of `v` restrict must be specified in `s`, the structural schema at the same place.
 */
function completeness(v: Schema, s: Schema, sPath: FieldPath, vPath: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (v.not) errs.push(...nestedCompleteness(v.not, s, sPath, vPath.child('not')));
  (v.allOf ?? []).forEach((c, i) => errs.push(...nestedCompleteness(c, s, sPath, vPath.child('allOf').index(i))));
  (v.anyOf ?? []).forEach((c, i) => errs.push(...nestedCompleteness(c, s, sPath, vPath.child('anyOf').index(i))));
  (v.oneOf ?? []).forEach((c, i) => errs.push(...nestedCompleteness(c, s, sPath, vPath.child('oneOf').index(i))));
  return errs;
}

function nestedCompleteness(v: Schema, s: Schema | undefined, sPath: FieldPath, vPath: FieldPath): FieldError[] {
  if (!s) return [fieldErrors.required(sPath, `because it is defined in ${vPath}`)];
  const errs = completeness(v, s, sPath, vPath);
  const vItems = itemsSchema(v);
  if (vItems) errs.push(...nestedCompleteness(vItems, itemsSchema(s), sPath.child('items'), vPath.child('items')));
  for (const k of keysOf(v.properties)) {
    const sField = s.properties?.[k];
    if (!sField) errs.push(fieldErrors.required(sPath.child('properties').key(k), `because it is defined in ${vPath.child('properties').key(k)}`));
    else errs.push(...nestedCompleteness(v.properties![k]!, sField, sPath.child('properties').key(k), vPath.child('properties').key(k)));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// ValidateCustomResourceDefinitionOpenAPISchema

const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);
const SUPPORTED_RULE_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];

/** Which of upstream's validation options apply (they loosen on updates of definitions stored before a rule existed). */
export interface OpenApiSchemaOptions {
  /** Defaults may be set (the v3 validator's allowDefaults). */
  allowDefaults: boolean;
  /** `type` must be one of OpenAPI v3's. */
  requireValidPropertyType: boolean;
  /** The items of a `set` list must be atomic. */
  requireAtomicSetType: boolean;
  /** List-map keys required or defaulted, never nullable; set and map items never nullable. */
  requireMapListKeysMapSetValidation: boolean;
}

/** The v3 standard validator's state as it descends (withForbiddenDefaults, withInsideResourceMeta). */
interface Standard {
  readonly allowDefaults: boolean;
  readonly disallowDefaultsReason: string;
  readonly insideResourceMeta: boolean;
}

/** upstream's ValidateCustomResourceDefinitionOpenAPISchema (without the CEL compilation of rules). */
export function validateOpenApiSchema(schema: Schema, ext: SchemaExtensions, path: FieldPath, opts: OpenApiSchemaOptions): FieldError[] {
  const errs: FieldError[] = [];
  openApiSchema(schema, path, { allowDefaults: opts.allowDefaults, disallowDefaultsReason: '', insideResourceMeta: false }, true, opts, ext, errs);
  return errs;
}

function standardChecks(s: Schema, path: FieldPath, ssv: Standard, opts: OpenApiSchemaOptions, ext: SchemaExtensions, errs: FieldError[]): void {
  if (opts.requireValidPropertyType && s.type && !OPENAPI_V3_TYPES.includes(s.type))
    errs.push(fieldErrors.notSupported(path.child('type'), s.type, OPENAPI_V3_TYPES));
  if (isSet(s.default) && !ssv.allowDefaults) {
    errs.push(fieldErrors.forbidden(path.child('default'), `must not be set${ssv.disallowDefaultsReason ? ` ${ssv.disallowDefaultsReason}` : ''}`));
  }
  if (s.id) errs.push(fieldErrors.forbidden(path.child('id'), 'id is not supported'));
  if (isSet(s.additionalItems)) errs.push(fieldErrors.forbidden(path.child('additionalItems'), 'additionalItems is not supported'));
  if (hasKeys(s.patternProperties)) errs.push(fieldErrors.forbidden(path.child('patternProperties'), 'patternProperties is not supported'));
  if (hasKeys(s.definitions)) errs.push(fieldErrors.forbidden(path.child('definitions'), 'definitions is not supported'));
  if (isSet(s.dependencies)) errs.push(fieldErrors.forbidden(path.child('dependencies'), 'dependencies is not supported'));
  if (isSet(s.$ref)) errs.push(fieldErrors.forbidden(path.child('$ref'), '$ref is not supported'));
  if (s.type === 'null') errs.push(fieldErrors.forbidden(path.child('type'), 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(s.items) && s.items.length > 0) errs.push(fieldErrors.forbidden(path.child('items'), 'items must be a schema object and not an array'));
  if (ssv.insideResourceMeta && extension(s, ext.embeddedResource) === true) {
    errs.push(fieldErrors.forbidden(path.child(ext.embeddedResource), 'must not be used inside of resource meta'));
  }
}

function openApiSchema(
  s: Schema,
  path: FieldPath,
  ssv: Standard,
  isRoot: boolean,
  opts: OpenApiSchemaOptions,
  ext: SchemaExtensions,
  errs: FieldError[],
): void {
  standardChecks(s, path, ssv, opts, ext, errs);
  const x = extensionsOf(s, ext);
  if (s.uniqueItems)
    errs.push(fieldErrors.forbidden(path.child('uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));

  if (isSet(s.additionalProperties)) {
    if (hasKeys(s.properties) && (s.additionalProperties === false || additionalSchema(s))) {
      errs.push(fieldErrors.forbidden(path.child('additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
    }
    const sub = ssv.insideResourceMeta
      ? { ...ssv, allowDefaults: false, disallowDefaultsReason: 'inside additionalProperties applying to object metadata' }
      : ssv;
    const additional = additionalSchema(s);
    if (additional) openApiSchema(additional, path.child('additionalProperties'), sub, false, opts, ext, errs);
  }
  for (const k of keysOf(s.properties)) {
    let sub = ssv;
    if ((isRoot || x.embedded) && META_FIELDS.has(k)) {
      sub = { ...sub, insideResourceMeta: true };
      if (isRoot) sub = { ...sub, allowDefaults: false, disallowDefaultsReason: `in top-level ${k}` };
    }
    openApiSchema(s.properties![k]!, path.child('properties').key(k), sub, false, opts, ext, errs);
  }
  if (s.not) openApiSchema(s.not, path.child('not'), ssv, false, opts, ext, errs);
  (s.allOf ?? []).forEach((c, i) => openApiSchema(c, path.child('allOf').index(i), ssv, false, opts, ext, errs));
  (s.oneOf ?? []).forEach((c, i) => openApiSchema(c, path.child('oneOf').index(i), ssv, false, opts, ext, errs));
  (s.anyOf ?? []).forEach((c, i) => openApiSchema(c, path.child('anyOf').index(i), ssv, false, opts, ext, errs));
  for (const k of keysOf(s.definitions)) openApiSchema(s.definitions![k]!, path.child('definitions').key(k), ssv, false, opts, ext, errs);
  if (isSet(s.items)) {
    const items = itemsSchema(s);
    if (items) openApiSchema(items, path.child('items'), ssv, false, opts, ext, errs);
    else (s.items as Schema[]).forEach((c, i) => openApiSchema(c, path.child('items').index(i), ssv, false, opts, ext, errs));
  }
  for (const k of keysOf(s.dependencies)) {
    const d = s.dependencies![k];
    if (d && !Array.isArray(d)) openApiSchema(d, path.child('dependencies').key(k), ssv, false, opts, ext, errs);
  }

  if (x.preserve === false) errs.push(fieldErrors.invalid(path.child(ext.preserveUnknownFields), false, 'must be true or undefined'));
  const type = s.type ?? '';
  if (x.mapType !== undefined && type !== 'object') {
    const detail = `must be object if ${ext.mapType} is specified`;
    errs.push(type === '' ? fieldErrors.required(path.child('type'), detail) : fieldErrors.invalid(path.child('type'), type, detail));
  }
  if (x.mapType !== undefined && x.mapType !== 'atomic' && x.mapType !== 'granular')
    errs.push(fieldErrors.notSupported(path.child(ext.mapType), x.mapType, ['atomic', 'granular']));

  const items = itemsSchema(s);
  if (x.listType !== undefined && type !== 'array') {
    const detail = `must be array if ${ext.listType} is specified`;
    errs.push(type === '' ? fieldErrors.required(path.child('type'), detail) : fieldErrors.invalid(path.child('type'), type, detail));
  } else if (opts.requireAtomicSetType && x.listType === 'set' && items) {
    const ix = extensionsOf(items, ext);
    const detail = `must be atomic as item of a list with ${ext.listType}=set`;
    if (items.type === 'array' && ix.listType !== undefined && ix.listType !== 'atomic') {
      errs.push(fieldErrors.invalid(path.child('items').child(ext.listType), ix.listType, detail));
    } else if (items.type === 'object' && ix.mapType !== 'atomic') {
      // Upstream reports the items' list type here (nil for an object), not their map type.
      const at = path.child('items').child(ext.mapType);
      errs.push(ix.listType === undefined ? invalidWithRendering(at, null, GO_NIL, detail) : fieldErrors.invalid(at, ix.listType, detail));
    }
  }
  if (x.listType !== undefined && x.listType !== 'atomic' && x.listType !== 'set' && x.listType !== 'map') {
    errs.push(fieldErrors.notSupported(path.child(ext.listType), x.listType, ['atomic', 'set', 'map']));
  }
  if (nonEmpty(x.listMapKeys)) {
    const detail = `must be map if ${ext.listMapKeys} is non-empty`;
    if (x.listType === undefined) errs.push(fieldErrors.required(path.child(ext.listType), detail));
    else if (x.listType !== 'map') errs.push(fieldErrors.invalid(path.child(ext.listType), x.listType, detail));
  }
  if (x.listType === 'map') listMapChecks(s, x, items, path, ext, errs);
  if (opts.requireMapListKeysMapSetValidation) errs.push(...mapListKeysMapSet(s, ext, path));
  ruleShapes(s, x, path, ext, errs);
}

function listMapChecks(s: Schema, x: Extensions, items: Schema | undefined, path: FieldPath, ext: SchemaExtensions, errs: FieldError[]): void {
  if (!nonEmpty(x.listMapKeys)) errs.push(fieldErrors.required(path.child(ext.listMapKeys), `must not be empty if ${ext.listType} is map`));
  if (!isSet(s.items)) errs.push(fieldErrors.required(path.child('items'), `must have a schema if ${ext.listType} is map`));
  if (isSet(s.items) && !items) errs.push(fieldErrors.invalid(path.child('items'), s.items, `must only have a single schema if ${ext.listType} is map`));
  if (items && items.type !== 'object') {
    errs.push(fieldErrors.invalid(path.child('items').child('type'), items.type ?? '', `must be object if parent array's ${ext.listType} is map`));
  }
  if (items?.type !== 'object') return;
  const seen = new Set<string>();
  const keys = x.listMapKeys ?? [];
  for (const k of keys) {
    const p = items.properties?.[k];
    if (p) {
      if (p.type === 'array' || p.type === 'object') {
        // Upstream reports the items' type (object) as the value here.
        errs.push(
          fieldErrors.invalid(
            path.child('items').child('properties').key(k).child('type'),
            items.type,
            `must be a scalar type if parent array's ${ext.listType} is map`,
          ),
        );
      }
    } else {
      errs.push(invalidWithRendering(path.child(ext.listMapKeys), keys, goStringSlice(keys), 'entries must all be names of item properties'));
    }
    if (seen.has(k)) errs.push(invalidWithRendering(path.child(ext.listMapKeys), keys, goStringSlice(keys), 'must not contain duplicate entries'));
    seen.add(k);
  }
}

/** upstream's validateMapListKeysMapSet. */
function mapListKeysMapSet(s: Schema, ext: SchemaExtensions, path: FieldPath): FieldError[] {
  const items = itemsSchema(s);
  const x = extensionsOf(s, ext);
  if (!items || (x.listType !== 'set' && x.listType !== 'map')) return [];
  const errs: FieldError[] = [];
  if (items.nullable) errs.push(fieldErrors.forbidden(path.child('items').child('nullable'), `cannot be nullable when ${ext.listType} is ${x.listType}`));
  if (x.listType === 'map') {
    const required = new Set(items.required ?? []);
    for (const k of x.listMapKeys ?? []) {
      const p = items.properties?.[k];
      if (!p) continue;
      const at = path.child('items').child('properties').key(k);
      if (!required.has(k) && !isSet(p.default)) {
        errs.push(fieldErrors.required(at.child('default'), `this property is in ${ext.listMapKeys}, so it must have a default or be a required property`));
      }
      if (p.nullable) errs.push(fieldErrors.forbidden(at.child('nullable'), `this property is in ${ext.listMapKeys}, so it cannot be nullable`));
    }
  }
  return errs;
}

const NEWLINES = /[\n\r]+/;

/** The shape of each `x-…-validations` rule (its CEL is compiled elsewhere). */
function ruleShapes(s: Schema, x: Extensions, path: FieldPath, ext: SchemaExtensions, errs: FieldError[]): void {
  (x.validations ?? []).forEach((rule, i) => {
    const at = path.child(ext.validations).index(i);
    const text = rule.rule ?? '';
    const message = rule.message ?? '';
    const trimmedRule = text.trim();
    const trimmedMsg = message.trim();
    if (trimmedRule.length === 0) errs.push(fieldErrors.required(at.child('rule'), 'rule is not specified'));
    else if (message.length > 0 && trimmedMsg.length === 0)
      errs.push(fieldErrors.invalid(at.child('message'), message, 'message must be non-empty if specified'));
    else if (NEWLINES.test(trimmedMsg)) errs.push(fieldErrors.invalid(at.child('message'), message, 'message must not contain line breaks'));
    else if (NEWLINES.test(trimmedRule) && trimmedMsg.length === 0) {
      errs.push(fieldErrors.required(at.child('message'), 'message must be specified if rule contains line breaks'));
    }
    const messageExpression = rule.messageExpression ?? '';
    if (messageExpression.length > 0 && messageExpression.trim().length === 0) {
      errs.push(fieldErrors.required(at.child('messageExpression'), 'messageExpression must be non-empty if specified'));
    }
    if (rule.reason !== undefined && rule.reason !== null && !SUPPORTED_RULE_REASONS.includes(rule.reason)) {
      errs.push(fieldErrors.notSupported(at.child('reason'), rule.reason, SUPPORTED_RULE_REASONS));
    }
    const fieldPath = rule.fieldPath ?? '';
    if (fieldPath.length > 0 && fieldPath.trim().length === 0)
      errs.push(fieldErrors.invalid(at.child('fieldPath'), fieldPath, 'fieldPath must be non-empty if specified'));
    if (NEWLINES.test(fieldPath)) errs.push(fieldErrors.invalid(at.child('fieldPath'), fieldPath, 'fieldPath must not contain line breaks'));
    // A schema NewStructural refuses has no paths to check against (upstream: valid).
    if (fieldPath.length > 0 && structuralError(s, ext) === undefined && typeof validFieldPath(fieldPath, s, true) === 'string') {
      errs.push(fieldErrors.invalid(at.child('fieldPath'), fieldPath, 'fieldPath must be a valid path'));
    }
  });
}

// ---------------------------------------------------------------------------------------------
// The root when the status subresource is enabled

/**
 * The fields of upstream's (internal) JSONSchemaProps in declaration order: JSON name (the
 * extensions' under the profile), Go name, and whether the Go field is a pointer (set, not
 * zero, whatever it points to).
 */
function rootFieldOrder(ext: SchemaExtensions): ReadonlyArray<readonly [json: string, goName: string, pointer: boolean]> {
  return [
    ['id', 'ID', false],
    ['$schema', 'Schema', false],
    ['$ref', 'Ref', true],
    ['description', 'Description', false],
    ['type', 'Type', false],
    ['nullable', 'Nullable', false],
    ['format', 'Format', false],
    ['title', 'Title', false],
    ['default', 'Default', true],
    ['maximum', 'Maximum', true],
    ['exclusiveMaximum', 'ExclusiveMaximum', false],
    ['minimum', 'Minimum', true],
    ['exclusiveMinimum', 'ExclusiveMinimum', false],
    ['maxLength', 'MaxLength', true],
    ['minLength', 'MinLength', true],
    ['pattern', 'Pattern', false],
    ['maxItems', 'MaxItems', true],
    ['minItems', 'MinItems', true],
    ['uniqueItems', 'UniqueItems', false],
    ['multipleOf', 'MultipleOf', true],
    ['enum', 'Enum', false],
    ['maxProperties', 'MaxProperties', true],
    ['minProperties', 'MinProperties', true],
    ['required', 'Required', false],
    ['items', 'Items', true],
    ['allOf', 'AllOf', false],
    ['oneOf', 'OneOf', false],
    ['anyOf', 'AnyOf', false],
    ['not', 'Not', true],
    ['properties', 'Properties', false],
    ['additionalProperties', 'AdditionalProperties', true],
    ['patternProperties', 'PatternProperties', false],
    ['dependencies', 'Dependencies', false],
    ['additionalItems', 'AdditionalItems', true],
    ['definitions', 'Definitions', false],
    ['externalDocs', 'ExternalDocs', true],
    ['example', 'Example', true],
    [ext.preserveUnknownFields, 'XPreserveUnknownFields', true],
    [ext.embeddedResource, 'XEmbeddedResource', false],
    [ext.intOrString, 'XIntOrString', false],
    [ext.listMapKeys, 'XListMapKeys', false],
    [ext.listType, 'XListType', true],
    [ext.mapType, 'XMapType', true],
    [ext.validations, 'XValidations', false],
  ];
}

/** Whether Go holds a zero value for the field: nil, or for a non-pointer scalar "", 0 or false (an empty list or map is not nil). */
function goZero(v: unknown, pointer: boolean): boolean {
  if (v === undefined || v === null) return true;
  return !pointer && (v === '' || v === 0 || v === false);
}

const ALLOWED_AT_ROOT = [
  'Description',
  'Type',
  'Format',
  'Title',
  'Maximum',
  'ExclusiveMaximum',
  'Minimum',
  'ExclusiveMinimum',
  'MaxLength',
  'MinLength',
  'Pattern',
  'MaxItems',
  'MinItems',
  'UniqueItems',
  'MultipleOf',
  'Required',
  'Items',
  'Properties',
  'ExternalDocs',
  'Example',
  'XPreserveUnknownFields',
  'XValidations',
];

/**
 * With the status subresource enabled only some fields may be set at the root (the status
 * schema is cut out as `properties.status`): the first field that may not stops the check, as
 * upstream's walk over the struct's fields does. `path` is the schema's (`…openAPIV3Schema`).
 */
export function validateRootForStatus(schema: Schema, ext: SchemaExtensions, path: FieldPath): FieldError[] {
  for (const [json, goName, pointer] of rootFieldOrder(ext)) {
    const v = (schema as Record<string, unknown>)[json];
    if (goZero(v, pointer)) continue;
    if (goName === 'Type') {
      if (schema.type !== 'object') {
        return [
          fieldErrors.invalid(
            `${path}.type`,
            schema.type,
            'only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
          ),
        ];
      }
      continue;
    }
    if (!ALLOWED_AT_ROOT.includes(goName)) {
      // Upstream prints the whole schema struct with %#v here; its pointers are addresses.
      return [
        invalidWithRendering(
          path,
          schema,
          goSchemaStruct(schema, ext),
          `only [${ALLOWED_AT_ROOT.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`,
        ),
      ];
    }
  }
  return [];
}

/** A `%#v`-like rendering of a schema: `apiextensions.JSONSchemaProps{Type:"object", …}` with the fields set. */
function goSchemaStruct(schema: Schema, ext: SchemaExtensions): string {
  const parts: string[] = [];
  for (const [json, goName, pointer] of rootFieldOrder(ext)) {
    const v = (schema as Record<string, unknown>)[json];
    if (goZero(v, pointer)) continue;
    parts.push(`${goName}:${typeof v === 'string' ? goString(v) : typeof v === 'object' ? '…' : String(v)}`);
  }
  return `apiextensions.JSONSchemaProps{${parts.join(', ')}}`;
}

// ---------------------------------------------------------------------------------------------
// Field paths into a schema

/** A field path found in a schema: its text as upstream's field.Path prints it, its first step, and the schema it leads to. */
export interface SchemaFieldPath {
  readonly text: string;
  readonly root: string | undefined;
  readonly schema: Schema | undefined;
}

/**
 * upstream's cel.ValidFieldPath: a JSON path of `.field` and (when allowed) `['key']` steps that
 * the schema specifies (a property, or a key of additionalProperties); the path found, or the
 * error's text.
 */
export function validFieldPath(jsonPath: string, schema: Schema, allowArrayNotation: boolean): SchemaFieldPath | string {
  const tokens = scanPath(jsonPath);
  let text = '';
  let root: string | undefined;
  let at: Schema | undefined = schema;
  const step = (name: string): string | undefined => {
    if (at?.properties) {
      const p: Schema | undefined = at.properties[name];
      text = text ? `${text}.${name}` : name;
      if (!p) return 'does not refer to a valid field';
      at = p;
    } else if (at && isSet(at.additionalProperties)) {
      text = `${text}[${name}]`;
      at = additionalSchema(at);
    } else {
      return 'does not refer to a valid field';
    }
    root ??= name;
    return undefined;
  };
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (tok === '[') {
      if (!allowArrayNotation) return 'array notation is not allowed';
      const quoted = tokens[++i];
      if (quoted === undefined) return 'unexpected end of JSON path';
      if (quoted.length < 2 || !quoted.startsWith("'") || !quoted.endsWith("'")) return `expected single quoted string but got ${quoted}`;
      const key = unescapeSingleQuote(quoted.slice(1, -1));
      if (key === undefined) return 'invalid string literal';
      const err = step(key);
      if (err) return err;
      const close = tokens[++i];
      if (close === undefined) return 'unexpected end of JSON path';
      if (close !== ']') return `expected ] but got ${close}`;
    } else if (tok === '.') {
      const name = tokens[++i];
      if (name === undefined) return 'unexpected end of JSON path';
      const err = step(name);
      if (err) return err;
    } else {
      return `expected [ or . but got: ${tok}`;
    }
  }
  return { text, root, schema: at };
}

/** The path's tokens as upstream's scanner splits it: `.`, `[`, `]`, quoted strings and names. */
function scanPath(path: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < path.length) {
    const c = path[i]!;
    if (c === "'") {
      let j = i + 1;
      while (j < path.length && !(path[j] === "'" && path[j - 1] !== '\\')) j++;
      out.push(path.slice(i, Math.min(j + 1, path.length)));
      i = j + 1;
    } else if (c === '.' || c === '[' || c === ']') {
      out.push(c);
      i++;
    } else {
      let j = i;
      while (j < path.length && path[j] !== '.' && path[j] !== '[' && path[j] !== ']') j++;
      out.push(path.slice(i, j));
      i = j;
    }
  }
  return out;
}

function unescapeSingleQuote(s: string): string | undefined {
  let bad = false;
  const out = s.replace(/\\(.)/g, (_m, c: string) => {
    const mapped = ({ b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '\\': '\\' } as Record<string, string>)[c];
    if (mapped === undefined) bad = true;
    return mapped ?? '';
  });
  return bad ? undefined : out;
}

// ---------------------------------------------------------------------------------------------
// Questions about a whole schema

/** upstream's SchemaHas: whether `pred` holds for the schema or any schema inside it. */
export function schemaHas(s: Schema | undefined, pred: (s: Schema) => boolean): boolean {
  if (!s) return false;
  if (pred(s)) return true;
  const items = s.items;
  if (Array.isArray(items)) {
    if (items.some((c) => schemaHas(c, pred))) return true;
  } else if (items && schemaHas(items, pred)) return true;
  for (const list of [s.allOf, s.anyOf, s.oneOf]) if (list?.some((c) => schemaHas(c, pred))) return true;
  if (schemaHas(s.not, pred)) return true;
  for (const map of [s.properties, s.patternProperties, s.definitions]) if (map && Object.values(map).some((c) => schemaHas(c, pred))) return true;
  if (schemaHas(additionalSchema(s), pred)) return true;
  if (typeof s.additionalItems === 'object' && s.additionalItems !== null && schemaHas(s.additionalItems, pred)) return true;
  for (const d of Object.values(s.dependencies ?? {})) if (!Array.isArray(d) && schemaHas(d, pred)) return true;
  return false;
}

/** Whether the schema sets a default anywhere. */
export function schemaHasDefaults(s: Schema | undefined): boolean {
  return schemaHas(s, (n) => isSet(n.default));
}

/** upstream's schemaHasKubernetesExtensions: a vendor extension anywhere (they need a structural schema). */
export function schemaHasVendorExtensions(s: Schema | undefined, ext: SchemaExtensions): boolean {
  return schemaHas(s, (n) => {
    const x = extensionsOf(n, ext);
    return x.embedded || x.preserve !== undefined || x.intOrString || nonEmpty(x.listMapKeys) || x.listType !== undefined || nonEmpty(x.validations);
  });
}

/** Whether the schema is not structural (NewStructural refuses it, or ValidateStructural finds errors). */
export function schemaIsNonStructural(s: Schema | undefined, ext: SchemaExtensions): boolean {
  if (!s) return false;
  return structuralError(s, ext) !== undefined || validateStructural(s, ext, FieldPath.root('')).length > 0;
}

/** upstream's SchemaHasInvalidTypes: a `type` OpenAPI v3 does not have. */
export function schemaHasInvalidTypes(s: Schema | undefined): boolean {
  return schemaHas(s, (n) => !!n.type && !OPENAPI_V3_TYPES.includes(n.type));
}

/** upstream's hasNonAtomicSetType: a `set` list whose items are not atomic. */
export function schemaHasNonAtomicSetType(s: Schema | undefined, ext: SchemaExtensions): boolean {
  return schemaHas(s, (n) => {
    const items = itemsSchema(n);
    if (extensionsOf(n, ext).listType !== 'set' || !items) return false;
    const ix = extensionsOf(items, ext);
    if (items.type === 'array') return ix.listType !== undefined && ix.listType !== 'atomic';
    if (items.type === 'object') return ix.mapType !== 'atomic';
    return false;
  });
}

/** upstream's hasInvalidMapListKeysMapSet. */
export function schemaHasInvalidMapListKeysMapSet(s: Schema | undefined, ext: SchemaExtensions): boolean {
  return schemaHas(s, (n) => mapListKeysMapSet(n, ext, FieldPath.root('')).length > 0);
}

// ---------------------------------------------------------------------------------------------
// Go's regexp

let re2: typeof Re2js.RE2JS | undefined;

/** Go's regexp.Compile error for `pattern` (`error parsing regexp: …`), or undefined. re2js ports Go's parser and its messages. */
export function goRegexpError(pattern: string): string | undefined {
  re2 ??= (require('re2js') as typeof Re2js).RE2JS;
  try {
    re2.compile(pattern);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
