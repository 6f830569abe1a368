/**
 * upstream 1.32's ValidateCustomResourceDefinition and ValidateCustomResourceDefinitionUpdate
 * (apiextensions-apiserver, pkg/apis/apiextensions/validation), in upstream's words and paths.
 *
 * Upstream validates its internal type, converted from v1: when every version carries the same
 * schema (subresources, printer columns, selectable fields), the conversion lifts it to the
 * spec's top level (`spec.validation`, `spec.subresources`, ...) and the conversion webhook's
 * fields sit on `spec.conversion` itself (`webhookClientConfig`, `conversionReviewVersions`).
 * Its errors name those paths (`spec.validation.openAPIV3Schema.properties[spec].type`), so the
 * checks here run over that internal view (`internalSpec`). The schema rules themselves are in
 * `core/validation/schema/structural.ts`.
 */
import type { Naming } from '../../naming';
import { type SchemaType, schemaRegistry, type ValueType, messageType, unionMember } from '../../schema';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { goString, goStringSlice, goStruct, invalidWithRendering } from '../validation/go-format';
import { isDns1035Label, isDns1123Subdomain } from '../validation/names';
import { validateWebhookService, validateWebhookUrl } from '../validation/webhook-client';
import { parseRequestUri } from '../../util/go-url';
import { jsonEqual } from '../../util/json-values';
import { type JSONSchemaProps, type SchemaExtensions, schemaExtensions } from '../validation/schema/types';
import {
  schemaHasDefaults,
  schemaHasInvalidMapListKeysMapSet,
  schemaHasInvalidTypes,
  schemaHasNonAtomicSetType,
  schemaHasVendorExtensions,
  schemaIsNonStructural,
  structuralError,
  validateOpenApiSchema,
  validateRootForStatus,
  validateStructural,
  validFieldPath,
} from '../validation/schema/structural';
import { validateSchemaRules } from '../validation/schema/cel/definition';
import { X509Certificate } from 'node:crypto';
import type {
  CustomResourceColumnDefinition,
  CustomResourceConversion,
  CustomResourceDefinition,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionSpec,
  CustomResourceSubresources,
  CustomResourceValidation,
  SelectableField,
  WebhookClientConfig,
} from './customresourcedefinitions';

/**
 * The defaults' checks of a structural schema (pruned, and valid against the schema: upstream's
 * structuraldefaulting.ValidateDefaults), given by the module that has them. `requirePruned`:
 * a default must hold no field its schema prunes.
 */
export type DefaultsCheck = (schema: JSONSchemaProps, ext: SchemaExtensions, path: FieldPath, requirePruned: boolean) => FieldError[];

// ---------------------------------------------------------------------------------------------
// The internal view

interface InternalVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated: boolean;
  deprecationWarning?: string;
  schema?: CustomResourceValidation;
  subresources?: CustomResourceSubresources;
  additionalPrinterColumns?: CustomResourceColumnDefinition[];
  selectableFields?: SelectableField[];
}

interface InternalConversion {
  strategy: string;
  webhookClientConfig?: WebhookClientConfig;
  conversionReviewVersions?: string[];
}

interface InternalSpec {
  group: string;
  /** The first version's name. */
  version: string;
  names: CustomResourceDefinitionNames;
  scope: string;
  validation?: CustomResourceValidation;
  subresources?: CustomResourceSubresources;
  /** Absent when `spec.versions` was absent (Go's nil slice), empty when it was `[]`. */
  versions: InternalVersion[] | undefined;
  additionalPrinterColumns?: CustomResourceColumnDefinition[];
  selectableFields?: SelectableField[];
  conversion?: InternalConversion;
  preserveUnknownFields: boolean;
}

const present = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;

/** What one profile's validation needs: its extension names and the apiextensions types to compare by. */
interface Env {
  readonly naming: Naming;
  readonly ext: SchemaExtensions;
  readonly type: (name: string) => SchemaType;
}

function envOf(naming: Naming): Env {
  const registry = schemaRegistry(naming);
  return { naming, ext: schemaExtensions(naming), type: (name) => registry.type(`apiextensions.v1.${name}`) };
}

/**
 * Go's Semantic.DeepEqual over the decoded structs, as the conversion compares the versions'
 * fields: a nil pointer differs from a set one, a nil slice or map equals an empty one, an unset
 * non-pointer field equals its zero value.
 */
function goEqual(a: unknown, b: unknown, type: ValueType, pointer: boolean): boolean {
  const aSet = present(a);
  const bSet = present(b);
  switch (type.kind) {
    case 'list':
      if (!aSet || !bSet) return (!aSet || (a as unknown[]).length === 0) && (!bSet || (b as unknown[]).length === 0);
      return (a as unknown[]).length === (b as unknown[]).length && (a as unknown[]).every((v, i) => goEqual(v, (b as unknown[])[i], type.item, false));
    case 'map': {
      const am = (aSet ? a : {}) as Record<string, unknown>;
      const bm = (bSet ? b : {}) as Record<string, unknown>;
      const keys = Object.keys(am);
      return keys.length === Object.keys(bm).length && keys.every((k) => k in bm && goEqual(am[k], bm[k], type.value, false));
    }
    case 'message': {
      if (!aSet && !bSet) return true;
      if (pointer && aSet !== bSet) return false;
      const t = messageType(type);
      if (t.union) {
        if (!aSet || !bSet) return aSet === bSet;
        const member = unionMember(t, a);
        return member === unionMember(t, b) && goEqual(a, b, member.type, false);
      }
      const am = (aSet ? a : {}) as Record<string, unknown>;
      const bm = (bSet ? b : {}) as Record<string, unknown>;
      return t.properties.every((p) => goEqual(am[p.name], bm[p.name], p.field.type, p.field.pointer));
    }
    case 'special':
      return aSet === bSet && (!aSet || jsonEqual(a, b));
    case 'scalar': {
      if (pointer) return aSet === bSet && (!aSet || a === b);
      const zero = type.scalar === 'string' || type.scalar === 'bytes' ? '' : type.scalar === 'bool' ? false : 0;
      return (aSet ? a : zero) === (bSet ? b : zero);
    }
  }
}

/** Two optional values of an apiextensions type compared as upstream's conversion compares them. */
function sameValue(env: Env, a: unknown, b: unknown, field: 'schema' | 'subresources' | 'additionalPrinterColumns' | 'selectableFields'): boolean {
  const version = env.type('CustomResourceDefinitionVersion').property.get(field)!.field;
  return goEqual(a, b, version.type, version.pointer);
}

/** The internal spec upstream validates, converted from v1 (Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_…). */
function internalSpec(env: Env, spec: CustomResourceDefinitionSpec | undefined): InternalSpec {
  const s = spec ?? {};
  const versions = s.versions?.map(
    (v): InternalVersion => ({
      name: v.name ?? '',
      served: v.served ?? false,
      storage: v.storage ?? false,
      deprecated: v.deprecated ?? false,
      ...(present(v.deprecationWarning) ? { deprecationWarning: v.deprecationWarning } : {}),
      ...(present(v.schema) ? { schema: v.schema } : {}),
      ...(present(v.subresources) ? { subresources: v.subresources } : {}),
      ...(present(v.additionalPrinterColumns) ? { additionalPrinterColumns: v.additionalPrinterColumns } : {}),
      ...(present(v.selectableFields) ? { selectableFields: v.selectableFields } : {}),
    }),
  );
  const conversion = s.conversion ? internalConversion(s.conversion) : undefined;
  const out: InternalSpec = {
    group: s.group ?? '',
    version: '',
    names: s.names ?? {},
    scope: s.scope ?? '',
    versions,
    ...(conversion ? { conversion } : {}),
    preserveUnknownFields: s.preserveUnknownFields === true,
  };
  if (!versions || versions.length === 0) return out;
  out.version = versions[0]!.name;
  // Fields every version holds alike move to the top level.
  for (const field of ['subresources', 'schema', 'additionalPrinterColumns', 'selectableFields'] as const) {
    const first: unknown = versions[0]![field];
    if (!versions.every((v) => sameValue(env, v[field], first, field))) continue;
    for (const v of versions) delete v[field];
    if (first === undefined) continue;
    if (field === 'schema') out.validation = first as CustomResourceValidation;
    else if (field === 'subresources') out.subresources = first as CustomResourceSubresources;
    else if (field === 'additionalPrinterColumns') out.additionalPrinterColumns = first as CustomResourceColumnDefinition[];
    else out.selectableFields = first as SelectableField[];
  }
  return out;
}

function internalConversion(c: CustomResourceConversion): InternalConversion {
  const out: InternalConversion = { strategy: c.strategy ?? '' };
  if (c.webhook) {
    if (present(c.webhook.clientConfig)) out.webhookClientConfig = c.webhook.clientConfig;
    if (present(c.webhook.conversionReviewVersions)) out.conversionReviewVersions = c.webhook.conversionReviewVersions;
  }
  return out;
}

/** Every schema of the spec: the top-level one and each version's. */
function schemasOf(spec: InternalSpec): JSONSchemaProps[] {
  const out: JSONSchemaProps[] = [];
  if (spec.validation?.openAPIV3Schema) out.push(spec.validation.openAPIV3Schema);
  for (const v of spec.versions ?? []) if (v.schema?.openAPIV3Schema) out.push(v.schema.openAPIV3Schema);
  return out;
}

const hasSchemaWith = (spec: InternalSpec, pred: (s: JSONSchemaProps) => boolean): boolean => schemasOf(spec).some(pred);

// ---------------------------------------------------------------------------------------------
// Go renderings of bad values

/** Go's `%#v` of a pointer: `(*T)(nil)`, or an address (upstream prints the pointer's, which no one can match). */
const goPointer = (type: string, set: boolean): string => `(*${type})(${set ? '0xc000000000' : 'nil'})`;

function goColumns(columns: CustomResourceColumnDefinition[] | undefined): string {
  if (!columns) return '[]apiextensions.CustomResourceColumnDefinition(nil)';
  const items = columns.map((c) =>
    goStruct('apiextensions.CustomResourceColumnDefinition', [
      ['Name', goString(c.name)],
      ['Type', goString(c.type)],
      ['Format', goString(c.format)],
      ['Description', goString(c.description)],
      ['Priority', String(c.priority ?? 0)],
      ['JSONPath', goString(c.jsonPath)],
    ]),
  );
  return `[]apiextensions.CustomResourceColumnDefinition{${items.join(', ')}}`;
}

function goSelectableFields(fields: SelectableField[] | undefined): string {
  if (!fields) return '[]apiextensions.SelectableField(nil)';
  return `[]apiextensions.SelectableField{${fields.map((f) => goStruct('apiextensions.SelectableField', [['JSONPath', goString(f.jsonPath)]])).join(', ')}}`;
}

/** `%#v` of the internal versions, as upstream prints `spec.versions` in its errors. */
function goVersions(versions: InternalVersion[] | undefined): string {
  if (!versions) return '[]apiextensions.CustomResourceDefinitionVersion(nil)';
  const items = versions.map((v) =>
    goStruct('apiextensions.CustomResourceDefinitionVersion', [
      ['Name', goString(v.name)],
      ['Served', String(v.served)],
      ['Storage', String(v.storage)],
      ['Deprecated', String(v.deprecated)],
      ['DeprecationWarning', goPointer('string', v.deprecationWarning !== undefined)],
      ['Schema', goPointer('apiextensions.CustomResourceValidation', v.schema !== undefined)],
      ['Subresources', goPointer('apiextensions.CustomResourceSubresources', v.subresources !== undefined)],
      ['AdditionalPrinterColumns', goColumns(v.additionalPrinterColumns)],
      ['SelectableFields', goSelectableFields(v.selectableFields)],
    ]),
  );
  return `[]apiextensions.CustomResourceDefinitionVersion{${items.join(', ')}}`;
}

// ---------------------------------------------------------------------------------------------
// Options

interface Options {
  allowDefaults: boolean;
  requireRecognizedConversionReviewVersion: boolean;
  requireImmutableNames: boolean;
  requireOpenAPISchema: boolean;
  requireValidPropertyType: boolean;
  requireStructuralSchema: boolean;
  requirePrunedDefaults: boolean;
  requireAtomicSetType: boolean;
  requireMapListKeysMapSetValidation: boolean;
  allowInvalidCABundle: boolean;
  /** On update, the versions whose schema is the stored definition's (upstream's findVersionsWithUnchangedSchemas). */
  versionsWithUnchangedSchemas?: ReadonlySet<string>;
  /** A rule is not refused for its own estimated cost (its version's schema is unchanged). */
  suppressPerExpressionCost?: boolean;
}

const CREATE_OPTIONS: Options = {
  allowDefaults: true,
  requireRecognizedConversionReviewVersion: true,
  requireImmutableNames: false,
  requireOpenAPISchema: true,
  requireValidPropertyType: true,
  requireStructuralSchema: true,
  requirePrunedDefaults: true,
  requireAtomicSetType: true,
  requireMapListKeysMapSetValidation: true,
  // The definition is not established yet.
  allowInvalidCABundle: true,
};

const ACCEPTED_CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

function conditionTrue(crd: CustomResourceDefinition, type: string): boolean {
  return (crd.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

/** The rules an update must meet: a rule the stored definition already broke is not tightened on it (upstream's ratcheting). */
function updateOptions(env: Env, old: CustomResourceDefinition, defaults: DefaultsCheck | undefined): Options {
  const oldSpec = internalSpec(env, old.spec);
  const reviewVersions = oldSpec.conversion?.conversionReviewVersions ?? [];
  return {
    allowDefaults: true,
    requireRecognizedConversionReviewVersion:
      !oldSpec.conversion || reviewVersions.length === 0 || reviewVersions.some((v) => ACCEPTED_CONVERSION_REVIEW_VERSIONS.includes(v)),
    requireImmutableNames: conditionTrue(old, 'Established'),
    requireOpenAPISchema: !!oldSpec.validation?.openAPIV3Schema || (oldSpec.versions ?? []).every((v) => !!v.schema?.openAPIV3Schema),
    requireValidPropertyType: !hasSchemaWith(oldSpec, schemaHasInvalidTypes),
    requireStructuralSchema: !hasSchemaWith(oldSpec, (s) => schemaIsNonStructural(s, env.ext)),
    requirePrunedDefaults: !hasSchemaWith(oldSpec, (s) => hasUnprunedDefaults(env, s, defaults)),
    requireAtomicSetType: !hasSchemaWith(oldSpec, (s) => schemaHasNonAtomicSetType(s, env.ext)),
    requireMapListKeysMapSetValidation: !hasSchemaWith(oldSpec, (s) => schemaHasInvalidMapListKeysMapSet(s, env.ext)),
    allowInvalidCABundle: allowInvalidCABundle(old, oldSpec),
  };
}

/** upstream's GetSchemaForVersion on the internal spec: the top-level schema, else the version's (undefined when it has none). */
function schemaForVersion(spec: InternalSpec, version: string): { found: boolean; schema?: CustomResourceValidation } {
  const perVersion = (spec.versions ?? []).some((v) => v.schema !== undefined);
  if (!perVersion) return { found: true, schema: spec.validation };
  if (spec.validation) return { found: false };
  const v = (spec.versions ?? []).find((x) => x.name === version);
  return v ? { found: true, schema: v.schema } : { found: false };
}

/** The versions whose schema an update leaves as the stored definition had it (upstream's findVersionsWithUnchangedSchemas). */
function versionsWithUnchangedSchemas(env: Env, spec: InternalSpec, oldSpec: InternalSpec): Set<string> {
  const unchanged = new Set<string>();
  for (const v of spec.versions ?? []) {
    const now = schemaForVersion(spec, v.name);
    const before = schemaForVersion(oldSpec, v.name);
    if (now.found && before.found && sameValue(env, now.schema, before.schema, 'schema')) unchanged.add(v.name);
  }
  return unchanged;
}

/** upstream's suppressExpressionCostForUnchangedSchema. */
function suppressCostIfUnchanged(opts: Options, version: string): Options {
  return opts.versionsWithUnchangedSchemas?.has(version) ? { ...opts, suppressPerExpressionCost: true } : opts;
}

/** upstream's schemaHasUnprunedDefaults: a structural schema with a default its schema would prune. */
function hasUnprunedDefaults(env: Env, schema: JSONSchemaProps, defaults: DefaultsCheck | undefined): boolean {
  if (!defaults || !schemaHasDefaults(schema) || schemaIsNonStructural(schema, env.ext)) return false;
  return defaults(schema, env.ext, FieldPath.root(''), true).some((e) => e.detail === 'must not have unknown fields');
}

/** An invalid CA bundle may stay while the definition is not established, or when the stored one is already invalid. */
function allowInvalidCABundle(old: CustomResourceDefinition, oldSpec: InternalSpec): boolean {
  if (!conditionTrue(old, 'Established')) return true;
  const bundle = oldSpec.conversion?.webhookClientConfig?.caBundle;
  if (!bundle) return false;
  return caBundleError(bundle) !== undefined;
}

// ---------------------------------------------------------------------------------------------
// Entry points

/** upstream's ValidateCustomResourceDefinition (metadata's generic rules are the registry's). */
export function validateCustomResourceDefinition(crd: CustomResourceDefinition, naming: Naming, defaults?: DefaultsCheck): FieldError[] {
  const env = envOf(naming);
  const spec = internalSpec(env, crd.spec);
  const errs = [...validateNameIsPluralGroup(crd, spec)];
  errs.push(...validateSpec(env, spec, { ...CREATE_OPTIONS }, FieldPath.root('spec'), defaults));
  errs.push(...validateStatusNames(crd));
  errs.push(...validateStoredVersions(crd.status?.storedVersions, spec.versions ?? [], FieldPath.root('status', 'storedVersions')));
  errs.push(...validateApiApproval(naming, crd, undefined));
  errs.push(...validatePreserveUnknownFields(env, crd, undefined));
  return errs;
}

/** upstream's ValidateCustomResourceDefinitionUpdate (metadata's generic rules are the registry's). */
export function validateCustomResourceDefinitionUpdate(
  crd: CustomResourceDefinition,
  old: CustomResourceDefinition,
  naming: Naming,
  defaults?: DefaultsCheck,
): FieldError[] {
  const env = envOf(naming);
  const spec = internalSpec(env, crd.spec);
  const oldSpec = internalSpec(env, old.spec);
  const opts = { ...updateOptions(env, old, defaults), versionsWithUnchangedSchemas: versionsWithUnchangedSchemas(env, spec, oldSpec) };
  const path = FieldPath.root('spec');
  const errs = validateSpec(env, spec, opts, path, defaults);
  if (opts.requireImmutableNames) {
    if (spec.scope !== oldSpec.scope) errs.push(fieldErrors.immutable(path.child('scope'), spec.scope));
    if ((spec.names.kind ?? '') !== (oldSpec.names.kind ?? '')) errs.push(fieldErrors.immutable(path.child('names', 'kind'), spec.names.kind ?? ''));
  }
  if (spec.group !== oldSpec.group) errs.push(fieldErrors.immutable(path.child('group'), spec.group));
  if ((spec.names.plural ?? '') !== (oldSpec.names.plural ?? '')) errs.push(fieldErrors.immutable(path.child('names', 'plural'), spec.names.plural ?? ''));
  errs.push(...validateStatusNames(crd));
  errs.push(...validateStoredVersions(crd.status?.storedVersions, spec.versions ?? [], FieldPath.root('status', 'storedVersions')));
  errs.push(...validateApiApproval(naming, crd, old));
  errs.push(...validatePreserveUnknownFields(env, crd, old));
  return errs;
}

/** upstream's ValidateUpdateCustomResourceDefinitionStatus (metadata's rules are the registry's). */
export function validateCustomResourceDefinitionStatus(crd: CustomResourceDefinition): FieldError[] {
  return validateStatusNames(crd);
}

/** The name must be `<spec.names.plural>.<spec.group>` (upstream's name validation function, for the name and a generateName). */
function validateNameIsPluralGroup(crd: CustomResourceDefinition, spec: InternalSpec): FieldError[] {
  const required = `${spec.names.plural ?? ''}.${spec.group}`;
  const errs: FieldError[] = [];
  const meta = crd.metadata ?? {};
  const detail = 'must be spec.names.plural+"."+spec.group';
  if ((meta.name ?? '') !== required) errs.push(fieldErrors.invalid(FieldPath.root('metadata', 'name'), meta.name ?? '', detail));
  // The registry checks the prefix's form; upstream holds the prefix to the required name too.
  if (meta.generateName && meta.generateName !== required)
    errs.push(fieldErrors.invalid(FieldPath.root('metadata', 'generateName'), meta.generateName, detail));
  return errs;
}

// ---------------------------------------------------------------------------------------------
// The spec

function validateSpec(env: Env, spec: InternalSpec, options: Options, path: FieldPath, defaults: DefaultsCheck | undefined): FieldError[] {
  const opts = { ...options };
  const errs: FieldError[] = [];
  if (spec.group === '') errs.push(fieldErrors.required(path.child('group')));
  else {
    const groupErrs = isDns1123Subdomain(spec.group);
    if (groupErrs.length > 0) errs.push(fieldErrors.invalid(path.child('group'), spec.group, groupErrs.join(',')));
    else if (spec.group.split('.').length < 2) errs.push(fieldErrors.invalid(path.child('group'), spec.group, 'should be a domain with at least one dot'));
  }
  errs.push(...enumString(path.child('scope'), spec.scope, ['Cluster', 'Namespaced'], true));

  // Pruning (preserveUnknownFields false) needs structural schemas.
  if (!spec.preserveUnknownFields) opts.requireStructuralSchema = true;
  const versions = spec.versions ?? [];
  if (!spec.validation?.openAPIV3Schema) {
    if (opts.requireOpenAPISchema) {
      versions.forEach((v, i) => {
        if (!v.schema?.openAPIV3Schema)
          errs.push(fieldErrors.required(path.child('versions').index(i).child('schema', 'openAPIV3Schema'), 'schemas are required'));
      });
    } else if (!spec.preserveUnknownFields) {
      versions.forEach((v, i) => {
        if (v.served && !v.schema?.openAPIV3Schema) {
          errs.push(fieldErrors.required(path.child('versions').index(i).child('schema', 'openAPIV3Schema'), 'because otherwise all fields are pruned'));
        }
      });
    }
  }
  if (opts.allowDefaults && hasSchemaWith(spec, schemaHasDefaults)) {
    opts.requireStructuralSchema = true;
    if (spec.preserveUnknownFields)
      errs.push(fieldErrors.invalid(path.child('preserveUnknownFields'), true, 'must be false in order to use defaults in the schema'));
  }
  if (hasSchemaWith(spec, (s) => schemaHasVendorExtensions(s, env.ext))) opts.requireStructuralSchema = true;

  let storageCount = 0;
  const names = new Set<string>();
  let uniqueNames = true;
  versions.forEach((v, i) => {
    if (v.storage) storageCount++;
    if (names.has(v.name)) uniqueNames = false;
    names.add(v.name);
    const nameErrs = isDns1035Label(v.name);
    if (nameErrs.length > 0) errs.push(fieldErrors.invalid(path.child('versions').index(i).child('name'), v.name, nameErrs.join(',')));
    const subresources = versions.some((x) => x.subresources) ? v.subresources : spec.subresources;
    errs.push(...validateVersion(env, v, path.child('versions').index(i), !!subresources?.status, opts, defaults));
  });
  if (!uniqueNames) errs.push(invalidWithRendering(path.child('versions'), spec.versions, goVersions(spec.versions), 'must contain unique version names'));
  if (storageCount !== 1) {
    errs.push(
      invalidWithRendering(path.child('versions'), spec.versions, goVersions(spec.versions), 'must have exactly one version marked as storage version'),
    );
  }
  if (spec.version !== '') {
    const versionErrs = isDns1035Label(spec.version);
    if (versionErrs.length > 0) errs.push(fieldErrors.invalid(path.child('version'), spec.version, versionErrs.join(',')));
  }

  // Names the spec needs (the status's acceptedNames need none).
  const n = spec.names;
  for (const key of ['plural', 'singular', 'kind', 'listKind'] as const) if (!n[key]) errs.push(fieldErrors.required(path.child('names', key)));
  errs.push(...validateNames(n, path.child('names')));

  const anyStatus = !!spec.subresources?.status || versions.some((v) => !!v.subresources?.status);
  errs.push(...validateValidation(env, spec.validation, anyStatus, suppressCostIfUnchanged(opts, spec.version), path.child('validation'), defaults));
  errs.push(...validateSubresources(spec.subresources, path.child('subresources')));
  (spec.additionalPrinterColumns ?? []).forEach((c, i) => errs.push(...validateColumn(c, path.child('additionalPrinterColumns').index(i))));
  if ((spec.selectableFields ?? []).length > 0) {
    if (!spec.validation) {
      errs.push(fieldErrors.invalid(path.child('selectableFields'), '', 'selectableFields may only be set when validations.schema is included'));
    } else {
      errs.push(
        ...selectableFieldsWithSchema(
          env,
          spec.validation.openAPIV3Schema ?? undefined,
          spec.selectableFields!,
          path.child('schema.openAPIV3Schema'),
          path.child('selectableFields'),
        ),
      );
    }
  }
  if (spec.conversion && spec.conversion.strategy !== 'None' && spec.preserveUnknownFields) {
    errs.push(fieldErrors.invalid(path.child('conversion', 'strategy'), spec.conversion.strategy, 'must be None if spec.preserveUnknownFields is true'));
  }
  errs.push(...validateConversion(spec.conversion, opts, path.child('conversion')));
  return errs;
}

function enumString(path: FieldPath, value: string, accepted: readonly string[], required: boolean): FieldError[] {
  if (value === '') return required ? [fieldErrors.required(path)] : [];
  return accepted.includes(value) ? [] : [fieldErrors.notSupported(path, value, accepted)];
}

function validateVersion(
  env: Env,
  v: InternalVersion,
  path: FieldPath,
  statusEnabled: boolean,
  opts: Options,
  defaults: DefaultsCheck | undefined,
): FieldError[] {
  const errs = deprecationWarningErrors(v.deprecated, v.deprecationWarning).map((e) =>
    fieldErrors.invalid(path.child('deprecationWarning'), v.deprecationWarning ?? null, e),
  );
  errs.push(...validateValidation(env, v.schema, statusEnabled, suppressCostIfUnchanged(opts, v.name), path.child('schema'), defaults));
  errs.push(...validateSubresources(v.subresources, path.child('subresources')));
  (v.additionalPrinterColumns ?? []).forEach((c, i) => errs.push(...validateColumn(c, path.child('additionalPrinterColumns').index(i))));
  if ((v.selectableFields ?? []).length > 0) {
    if (!v.schema?.openAPIV3Schema) {
      errs.push(
        fieldErrors.invalid(path.child('selectableFields'), '', 'selectableFields may only be set when version.schema.openAPIV3Schema is not included'),
      );
    } else {
      errs.push(
        ...selectableFieldsWithSchema(env, v.schema.openAPIV3Schema, v.selectableFields!, path.child('schema.openAPIV3Schema'), path.child('selectableFields')),
      );
    }
  }
  return errs;
}

/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const GO_PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

function deprecationWarningErrors(deprecated: boolean, warning: string | undefined): string[] {
  if (!deprecated && warning !== undefined) return ['can only be set for deprecated versions'];
  if (warning === undefined) return [];
  const errs: string[] = [];
  const bytes = Buffer.byteLength(warning, 'utf8');
  if (bytes > 256) errs.push('must be <= 256 characters long');
  if (bytes === 0) errs.push('must not be an empty string');
  // A control character is not printable either: upstream's second check never fires.
  let at = 0;
  for (const ch of warning) {
    if (!GO_PRINTABLE.test(ch)) {
      errs.push(`must only contain printable UTF-8 characters; non-printable character found at index ${at}`);
      break;
    }
    at += Buffer.byteLength(ch, 'utf8');
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Names

function validateNames(names: CustomResourceDefinitionNames, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const label = (key: 'plural' | 'singular') => {
    const v = names[key] ?? '';
    const e = isDns1035Label(v);
    if (v.length > 0 && e.length > 0) errs.push(fieldErrors.invalid(path.child(key), v, e.join(',')));
  };
  label('plural');
  label('singular');
  for (const key of ['kind', 'listKind'] as const) {
    const v = names[key] ?? '';
    const e = isDns1035Label(v.toLowerCase());
    if (v.length > 0 && e.length > 0) errs.push(fieldErrors.invalid(path.child(key), v, `may have mixed case, but should otherwise match: ${e.join(',')}`));
  }
  (names.shortNames ?? []).forEach((s, i) => {
    const e = isDns1035Label(s);
    if (e.length > 0) errs.push(fieldErrors.invalid(path.child('shortNames').index(i), s, e.join(',')));
  });
  if (names.kind && names.kind === names.listKind)
    errs.push(fieldErrors.invalid(path.child('listKind'), names.listKind, 'kind and listKind may not be the same'));
  (names.categories ?? []).forEach((c, i) => {
    const e = isDns1035Label(c);
    if (e.length > 0) errs.push(fieldErrors.invalid(path.child('categories').index(i), c, e.join(',')));
  });
  return errs;
}

function validateStatusNames(crd: CustomResourceDefinition): FieldError[] {
  return validateNames(crd.status?.acceptedNames ?? {}, FieldPath.root('status', 'acceptedNames'));
}

// ---------------------------------------------------------------------------------------------
// Schemas

function validateValidation(
  env: Env,
  validation: CustomResourceValidation | undefined,
  statusEnabled: boolean,
  opts: Options,
  path: FieldPath,
  defaults: DefaultsCheck | undefined,
): FieldError[] {
  const schema = validation?.openAPIV3Schema;
  if (!schema) return [];
  const schemaPath = path.child('openAPIV3Schema');
  const errs: FieldError[] = [];
  if (statusEnabled) errs.push(...validateRootForStatus(schema, env.ext, schemaPath));
  if (schema.nullable) errs.push(fieldErrors.forbidden(path.child('openAPIV3Schema.nullable'), 'nullable cannot be true at the root'));
  // NewStructural's refusals overlap the OpenAPI checks': shown only when those find nothing.
  let initErrs: FieldError[] = [];
  let defaultsErrs: FieldError[] = [];
  // Rules are compiled only over a structural schema whose defaults are valid (upstream's CEL context).
  let rulesCompile = false;
  if (opts.requireStructuralSchema) {
    const err = structuralError(schema, env.ext);
    if (err !== undefined) initErrs = [fieldErrors.invalid(schemaPath, '', err)];
    else {
      const structural = validateStructural(schema, env.ext, schemaPath);
      if (structural.length > 0) errs.push(...structural);
      else {
        if (defaults) defaultsErrs = defaults(schema, env.ext, schemaPath, opts.requirePrunedDefaults);
        rulesCompile = defaultsErrs.length === 0;
      }
    }
  }
  const openApi = validateOpenApiSchema(schema, env.ext, schemaPath, {
    allowDefaults: opts.allowDefaults,
    requireValidPropertyType: opts.requireValidPropertyType,
    requireAtomicSetType: opts.requireAtomicSetType,
    requireMapListKeysMapSetValidation: opts.requireMapListKeysMapSetValidation,
  });
  // The defaults' module also reports where defaults may not be; the OpenAPI walk reports those
  // where upstream does, so its repeats are left out.
  const seen = new Set(openApi.map((e) => e.message));
  errs.push(...defaultsErrs.filter((e) => !seen.has(e.message)), ...openApi);
  // The rules' CEL errors (compilation, cost, oldSelf) after the schema's, then the schema's total cost.
  if (rulesCompile) errs.push(...validateSchemaRules(schema, env.ext, schemaPath, openApi, { suppressPerExpressionCost: opts.suppressPerExpressionCost }));
  if (errs.length === 0) errs.push(...initErrs);
  return errs;
}

const MAX_SELECTABLE_FIELDS = 8;

/** upstream's ValidateCustomResourceSelectableFields over the structural form of `schema`. */
function selectableFieldsWithSchema(
  env: Env,
  schema: JSONSchemaProps | undefined,
  fields: SelectableField[],
  schemaPath: FieldPath,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  const err = structuralError(schema, env.ext);
  if (err !== undefined) errs.push(fieldErrors.invalid(schemaPath, '', err));
  const structural = err === undefined ? schema : undefined;
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const at = path.index(i).child('jsonPath');
    const jsonPath = f.jsonPath ?? '';
    if (jsonPath.length === 0) {
      errs.push(fieldErrors.required(at));
      return;
    }
    const found = structural ? validFieldPath(jsonPath, structural, false) : 'does not refer to a valid field';
    if (typeof found === 'string') {
      errs.push(fieldErrors.invalid(at, jsonPath, `is an invalid path: ${found}`));
      return;
    }
    if (found.root === 'metadata') errs.push(fieldErrors.invalid(at, jsonPath, 'must not point to fields in metadata'));
    const type = found.schema?.type;
    if (type !== 'string' && type !== 'boolean' && type !== 'integer') {
      errs.push(
        fieldErrors.invalid(at, jsonPath, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'),
      );
    }
    if (unique.has(found.text)) errs.push(fieldErrors.duplicate(at, jsonPath));
    else unique.add(found.text);
  });
  if (unique.size > MAX_SELECTABLE_FIELDS) errs.push(fieldErrors.tooMany(path, unique.size, MAX_SELECTABLE_FIELDS));
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Printer columns and subresources

const PRINTER_COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

function validateColumn(col: CustomResourceColumnDefinition, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!col.name) errs.push(fieldErrors.required(path.child('name')));
  const types = `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`;
  if (!col.type) errs.push(fieldErrors.required(path.child('type'), types));
  else if (!PRINTER_COLUMN_TYPES.includes(col.type)) errs.push(fieldErrors.invalid(path.child('type'), col.type, types));
  if (col.format && !PRINTER_COLUMN_FORMATS.includes(col.format)) {
    errs.push(fieldErrors.invalid(path.child('format'), col.format, `must be one of ${PRINTER_COLUMN_FORMATS.join(',')}`));
  }
  // Upstream names the internal field here.
  if (!col.jsonPath) errs.push(fieldErrors.required(path.child('JSONPath')));
  else errs.push(...simpleJsonPath(col.jsonPath, path.child('JSONPath')));
  return errs;
}

function simpleJsonPath(s: string, path: FieldPath): FieldError[] {
  if (s.length === 0) return [fieldErrors.invalid(path, s, 'must not be empty')];
  if (s[0] !== '.') return [fieldErrors.invalid(path, s, 'must be a simple json path starting with .')];
  return [];
}

function validateSubresources(subresources: CustomResourceSubresources | undefined, path: FieldPath): FieldError[] {
  const scale = subresources?.scale;
  if (!scale) return [];
  const errs: FieldError[] = [];
  const check = (value: string | undefined, name: string, prefixes: readonly string[], detail: string, required: boolean) => {
    const at = path.child(`scale.${name}`);
    if (!value) {
      if (required) errs.push(fieldErrors.required(at));
      return;
    }
    const pathErrs = simpleJsonPath(value, at);
    if (pathErrs.length > 0) errs.push(...pathErrs);
    else if (!prefixes.some((p) => value.startsWith(p))) errs.push(fieldErrors.invalid(at, value, detail));
  };
  check(scale.specReplicasPath, 'specReplicasPath', ['.spec.'], 'should be a json path under .spec', true);
  check(scale.statusReplicasPath, 'statusReplicasPath', ['.status.'], 'should be a json path under .status', true);
  check(scale.labelSelectorPath ?? undefined, 'labelSelectorPath', ['.spec.', '.status.'], 'should be a json path under either .spec or .status', false);
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Conversion

function validateConversion(conversion: InternalConversion | undefined, opts: Options, path: FieldPath): FieldError[] {
  if (!conversion) return [];
  const errs = enumString(path.child('strategy'), conversion.strategy, ['None', 'Webhook'], true);
  const configPath = path.child('webhookClientConfig');
  if (conversion.strategy === 'Webhook') {
    const cc = conversion.webhookClientConfig;
    if (!cc) errs.push(fieldErrors.required(configPath, 'required when strategy is set to Webhook'));
    else {
      const hasUrl = present(cc.url);
      const hasService = present(cc.service);
      if (hasUrl === hasService) errs.push(fieldErrors.required(configPath, 'exactly one of url or service is required'));
      else if (hasUrl) errs.push(...validateWebhookUrl(configPath.child('url'), cc.url!));
      else errs.push(...validateWebhookService(configPath.child('service'), cc.service!));
      if (cc.caBundle && !opts.allowInvalidCABundle) {
        const err = caBundleError(cc.caBundle);
        if (err) errs.push(fieldErrors.invalid(configPath.child('caBundle'), cc.caBundle, err));
      }
    }
    errs.push(
      ...conversionReviewVersions(
        conversion.conversionReviewVersions ?? [],
        opts.requireRecognizedConversionReviewVersion,
        path.child('conversionReviewVersions'),
      ),
    );
  } else {
    if (conversion.webhookClientConfig) errs.push(fieldErrors.forbidden(configPath, 'should not be set when strategy is not set to Webhook'));
    if ((conversion.conversionReviewVersions ?? []).length > 0) {
      errs.push(fieldErrors.forbidden(path.child('conversionReviewVersions'), 'should not be set when strategy is not set to Webhook'));
    }
  }
  return errs;
}

function conversionReviewVersions(versions: string[], requireRecognized: boolean, path: FieldPath): FieldError[] {
  if (versions.length === 0) return [fieldErrors.required(path)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let accepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(fieldErrors.invalid(path.index(i), v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const e of isDns1035Label(v)) errs.push(fieldErrors.invalid(path.index(i), v, e));
    if (ACCEPTED_CONVERSION_REVIEW_VERSIONS.includes(v)) accepted = true;
  });
  if (requireRecognized && !accepted) {
    errs.push(invalidWithRendering(path, versions, goStringSlice(versions), `must include at least one of ${ACCEPTED_CONVERSION_REVIEW_VERSIONS.join(', ')}`));
  }
  return errs;
}

/** client-go's cert.ParseCertsPEM over a base64 bundle: its error, or undefined when it holds certificates. */
function caBundleError(caBundle: string): string | undefined {
  const pem = Buffer.from(caBundle, 'base64').toString('latin1');
  const blocks = [...pem.matchAll(/-----BEGIN ([^-\n]+)-----\r?\n([\s\S]*?)-----END \1-----/g)];
  let found = 0;
  for (const block of blocks) {
    if (block[1] !== 'CERTIFICATE') continue;
    try {
      new X509Certificate(block[0]);
      found++;
    } catch (err) {
      return (err as Error).message;
    }
  }
  return found === 0 ? 'data does not contain any valid RSA or ECDSA certificates' : undefined;
}

// ---------------------------------------------------------------------------------------------
// Status, approval, preserveUnknownFields

/** upstream's ValidateCustomResourceDefinitionStoredVersions. */
function validateStoredVersions(stored: string[] | null | undefined, versions: InternalVersion[], path: FieldPath): FieldError[] {
  const rendered = goStringSlice(stored ?? null);
  if (!stored || stored.length === 0) return [invalidWithRendering(path, stored ?? null, rendered, 'must have at least one stored version')];
  const errs: FieldError[] = [];
  const remaining = new Map<string, number>();
  stored.forEach((v, i) => remaining.set(v, i));
  for (const v of versions) {
    const has = remaining.has(v.name);
    if (v.storage && !has) errs.push(invalidWithRendering(path, stored, rendered, `must have the storage version ${v.name}`));
    if (has) remaining.delete(v.name);
  }
  for (const [v, i] of [...remaining].sort((a, b) => a[1] - b[1])) errs.push(fieldErrors.invalid(path.index(i), v, 'must appear in spec.versions'));
  return errs;
}

type Approval = 'invalid' | 'approved' | 'bypassed' | 'missing';

const APPROVAL_KEP = 'see https://github.com/kubernetes/enhancements/pull/1111';

function approvalState(naming: Naming, annotations: Record<string, string> | undefined): { state: Approval; reason: string } {
  const key = naming.labels.apiApproved;
  const value = annotations?.[key] ?? '';
  if (value.length === 0) return { state: 'missing', reason: `protected groups must have approval annotation ${goString(key)}, ${APPROVAL_KEP}` };
  if (value.startsWith('unapproved')) return { state: 'bypassed', reason: `not approved: ${goString(value)}` };
  try {
    const u = parseRequestUri(value);
    if (u.host.length > 0 && u.scheme.length > 0) return { state: 'approved', reason: `approved in ${value}` };
  } catch {
    // Not a URL: invalid, below.
  }
  return {
    state: 'invalid',
    reason: `protected groups must have approval annotation ${goString(key)} with either a URL or a reason starting with "unapproved", ${APPROVAL_KEP}`,
  };
}

/** The profile's own domains and their subdomains (upstream's protected community groups) need an approval annotation. */
function isProtectedGroup(naming: Naming, group: string): boolean {
  return [naming.groupDomain, naming.keyDomain].some((d) => group === d || group.endsWith(`.${d}`));
}

function validateApiApproval(naming: Naming, crd: CustomResourceDefinition, old: CustomResourceDefinition | undefined): FieldError[] {
  if (!isProtectedGroup(naming, crd.spec?.group ?? '')) return [];
  const next = approvalState(naming, crd.metadata?.annotations);
  if (old && approvalState(naming, old.metadata?.annotations).state === next.state) return [];
  const key = naming.labels.apiApproved;
  const path = FieldPath.root('metadata', 'annotations').key(key);
  if (next.state === 'missing') return [fieldErrors.required(path, next.reason)];
  if (next.state === 'invalid') return [fieldErrors.invalid(path, crd.metadata?.annotations?.[key] ?? '', next.reason)];
  return [];
}

function validatePreserveUnknownFields(env: Env, crd: CustomResourceDefinition, old: CustomResourceDefinition | undefined): FieldError[] {
  if (old?.spec?.preserveUnknownFields === true) return [];
  if (crd.spec?.preserveUnknownFields !== true) return [];
  return [
    fieldErrors.invalid(
      FieldPath.root('spec', 'preserveUnknownFields'),
      true,
      `cannot set to true, set ${env.ext.preserveUnknownFields} to true in spec.versions[*].schema instead`,
    ),
  ];
}
