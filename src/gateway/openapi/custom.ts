/**
 * A custom resource's schemas as apiextensions-apiserver publishes them (its OpenAPI builder,
 * pkg/controller/openapi/builder/builder.go, and v2/conversion.go): the served version's
 * `openAPIV3Schema` read as a structural schema, then
 *
 * - the kind (`<reversed group>.<version>.<Kind>`): the schema with `metadata` a reference to
 *   ObjectMeta, `apiVersion` and `kind` TypeMeta's, objects marked `x-…-embedded-resource`
 *   given the same three fields, and `x-…-group-version-kind`;
 * - the list (`…<Kind>List`): `items` referencing the kind, ListMeta, TypeMeta.
 *
 * v3 keeps the schema as it is stored, with `x-…-int-or-string` unfolded into its `anyOf`
 * (structural schema's Unfold) and references with siblings wrapped in `allOf` (kube-openapi's
 * WrapRefs). v2 is what kubectl's v2 parser copes with (ToStructuralOpenAPIV2): no `allOf`,
 * `oneOf`, `anyOf` or `not`; a `nullable` node loses its type, items and properties (and its
 * name leaves its parent's `required`); a node preserving unknown fields loses its items and
 * properties, and its `object` type; an array left without items loses its type; every
 * `default` is pruned (kube-openapi's PruneDefaults, as the built-in definitions have none).
 * A version without a schema, or (v2 only) whose root preserves unknown fields, is published
 * as a bare `{type: object}` with its group-version-kind: anything then validates.
 *
 * Upstream takes only structural schemas; a schema that cannot be one (array-form `items`)
 * is published as if it had none. Fields a structural schema does not carry (`example`,
 * `externalDocs`, `$ref`, `definitions`, `patternProperties`, ...) are left out.
 */
import type { Naming } from '../../naming';
import type { ResourceDefinition } from '../../core';
import type { OpenApiNames } from './names';
import { type JsonSchema, type OpenApiVersion, refPath } from './schemas';

type Json = Record<string, unknown>;

/** What the gateway reads of a custom resource's served version (the CRD's version object, as JSON). */
export interface ServedVersion {
  name?: string;
  schema?: { openAPIV3Schema?: Json };
  subresources?: { status?: unknown; scale?: unknown };
}

export function servedVersion(def: ResourceDefinition): ServedVersion {
  const served = def.custom?.served;
  return served && typeof served === 'object' ? (served as ServedVersion) : {};
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The schema extensions a structural schema carries, under the profile's names. */
interface Extensions {
  preserveUnknownFields: string;
  embeddedResource: string;
  intOrString: string;
  /** Every extension a structural schema keeps, in the order Go's map marshalling writes them (by name). */
  kept: readonly string[];
}

const extensionsByVendor = new Map<string, Extensions>();

function extensionsOf(naming: Naming): Extensions {
  let ext = extensionsByVendor.get(naming.vendor);
  if (!ext) {
    const names = ['embedded-resource', 'int-or-string', 'list-map-keys', 'list-type', 'map-type', 'preserve-unknown-fields', 'validations'];
    ext = {
      preserveUnknownFields: naming.extension('preserve-unknown-fields'),
      embeddedResource: naming.extension('embedded-resource'),
      intOrString: naming.extension('int-or-string'),
      kept: names.map((n) => naming.extension(n)).sort(),
    };
    extensionsByVendor.set(naming.vendor, ext);
  }
  return ext;
}

/** The scalar keys a structural schema keeps (its generic and value-validation fields), in kube-openapi's order. */
const SCALAR_KEYS = [
  'description',
  'type',
  'nullable',
  'format',
  'title',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
] as const;

/** Whether a schema could be a structural one at all (array-form `items` cannot), anywhere in it. */
function structuralShape(s: unknown): boolean {
  if (!isObject(s)) return true;
  if (Array.isArray(s.items)) return false;
  if (isObject(s.items) && !structuralShape(s.items)) return false;
  if (isObject(s.additionalProperties) && !structuralShape(s.additionalProperties)) return false;
  if (isObject(s.properties)) for (const p of Object.values(s.properties)) if (!structuralShape(p)) return false;
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) if (Array.isArray(s[key])) for (const p of s[key]) if (!structuralShape(p)) return false;
  return structuralShape(s.not);
}

/** The upstream descriptions of the fields every kind and list gets, their links under the profile's domain. */
export interface FieldDescriptions {
  apiVersion: string;
  kind: string;
  objectMeta: string;
  listMeta: string;
  embeddedApiVersion: string;
  embeddedKind: string;
  /** `List of <plural>. More info: …`. */
  items(plural: string): string;
}

const descriptionsByVendor = new Map<string, FieldDescriptions>();

export function fieldDescriptions(naming: Naming): FieldDescriptions {
  let d = descriptionsByVendor.get(naming.vendor);
  if (!d) {
    // The API conventions document the descriptions link to, on the profile's group domain.
    const conventions = `https://git.${naming.groupDomain}/community/contributors/devel/sig-architecture/api-conventions.md`;
    d = {
      apiVersion: `APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: ${conventions}#resources`,
      kind: `Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: ${conventions}#types-kinds`,
      objectMeta: `Standard object's metadata. More info: ${conventions}#metadata`,
      listMeta: `Standard list metadata. More info: ${conventions}#types-kinds`,
      embeddedApiVersion: `apiVersion defines the versioned schema of this representation of an object. More info: ${conventions}#resources`,
      embeddedKind: `kind is a string value representing the type of this object. In CamelCase. More info: ${conventions}#types-kinds`,
      items: (plural) => `List of ${plural}. More info: ${conventions}`,
    };
    descriptionsByVendor.set(naming.vendor, d);
  }
  return d;
}

class Converter {
  private readonly ext: Extensions;
  private readonly d: FieldDescriptions;

  constructor(
    naming: Naming,
    private readonly names: OpenApiNames,
    private readonly version: OpenApiVersion,
  ) {
    this.ext = extensionsOf(naming);
    this.d = fieldDescriptions(naming);
  }

  /** A reference carrying a description: `allOf`-wrapped in v3 (kube-openapi's WrapRefs), plain in v2. */
  describedRef(type: string, description: string): JsonSchema {
    const $ref = refPath(this.version, this.names.typeName(type));
    return this.version === 3 ? { description, allOf: [{ $ref }] } : { description, $ref };
  }

  typeMeta(): { apiVersion: JsonSchema; kind: JsonSchema } {
    return { apiVersion: { description: this.d.apiVersion, type: 'string' }, kind: { description: this.d.kind, type: 'string' } };
  }

  /** One node of the structural schema, converted for the document's version. */
  node(s: Json): JsonSchema {
    const v2 = this.version === 2;
    const { preserveUnknownFields, embeddedResource, intOrString } = this.ext;
    const preserve = s[preserveUnknownFields] === true;
    const nullable = s.nullable === true;
    let type = typeof s.type === 'string' && s.type !== '' ? s.type : undefined;
    let items = isObject(s.items) ? s.items : undefined;
    let properties = isObject(s.properties) ? s.properties : undefined;
    let required = Array.isArray(s.required) && s.required.length ? (s.required as string[]) : undefined;
    let allOf = Array.isArray(s.allOf) && s.allOf.length ? (s.allOf as Json[]) : undefined;
    let anyOf = Array.isArray(s.anyOf) && s.anyOf.length ? (s.anyOf as Json[]) : undefined;
    let oneOf = Array.isArray(s.oneOf) && s.oneOf.length ? (s.oneOf as Json[]) : undefined;
    let not = isObject(s.not) ? s.not : undefined;
    const additional = s.additionalProperties;

    if (s[intOrString] === true && !isIntOrStringAnyOf(anyOf) && !isIntOrStringAnyOf(allOf?.[0]?.anyOf)) {
      // Structural's Unfold: the two types an int-or-string value may have, spelled out.
      const either = [{ type: 'integer' }, { type: 'string' }];
      if (!anyOf) anyOf = either;
      else allOf = [{ anyOf: either }, ...(allOf ?? [])];
    }
    if (v2) {
      allOf = anyOf = oneOf = not = undefined;
      if (nullable) {
        type = undefined;
        items = properties = undefined;
      }
      if (preserve) items = properties = undefined;
      if (!items && type === 'array') type = undefined;
      if (preserve && type === 'object') type = undefined;
      if (required && properties) {
        const nullableFields = Object.entries(properties).filter(([, p]) => isObject(p) && p.nullable === true);
        if (nullableFields.length) required = required.filter((r) => !nullableFields.some(([name]) => name === r));
        if (!required.length) required = undefined;
      }
      if (isObject(additional) && additional.nullable === true) required = undefined;
    }

    const out: JsonSchema = {};
    for (const key of SCALAR_KEYS) {
      let value: unknown;
      switch (key) {
        case 'type':
          value = type;
          break;
        case 'nullable':
          value = !v2 && nullable ? true : undefined;
          break;
        case 'default':
          value = v2 || s.default === null ? undefined : s.default;
          break;
        case 'required':
          value = required;
          break;
        case 'exclusiveMaximum':
        case 'exclusiveMinimum':
        case 'uniqueItems':
          value = s[key] === true ? true : undefined;
          break;
        case 'enum':
          value = Array.isArray(s.enum) && s.enum.length ? s.enum : undefined;
          break;
        case 'description':
        case 'format':
        case 'title':
        case 'pattern':
          value = typeof s[key] === 'string' && s[key] !== '' ? s[key] : undefined;
          break;
        default:
          value = typeof s[key] === 'number' ? s[key] : undefined;
      }
      if (value !== undefined) out[key] = value;
    }
    if (items) out.items = this.node(items);
    if (allOf) out.allOf = allOf.map((x) => this.node(x));
    if (oneOf) out.oneOf = oneOf.map((x) => this.node(x));
    if (anyOf) out.anyOf = anyOf.map((x) => this.node(x));
    if (not) out.not = this.node(not);
    let props: Record<string, JsonSchema> | undefined;
    if (properties) {
      props = {};
      for (const name of Object.keys(properties).sort()) {
        const p = properties[name];
        if (isObject(p)) props[name] = this.node(p);
      }
      out.properties = props;
    }
    if (isObject(additional)) out.additionalProperties = this.node(additional);
    else if (typeof additional === 'boolean') out.additionalProperties = additional;
    for (const name of this.ext.kept) {
      const value = s[name];
      if (value === undefined || value === null || value === false || (Array.isArray(value) && !value.length)) continue;
      out[name] = value;
    }

    // addEmbeddedProperties: an embedded object gets TypeMeta and ObjectMeta, and requires
    // kind and apiVersion; not in v2 when it preserves unknown fields (kubectl would then refuse
    // the unknown ones).
    if (s[embeddedResource] === true && !(v2 && preserve)) {
      const withMeta: Record<string, JsonSchema> = { ...(props ?? {}) };
      withMeta.apiVersion = { description: this.d.embeddedApiVersion, type: 'string' };
      withMeta.kind = { description: this.d.embeddedKind, type: 'string' };
      withMeta.metadata = this.describedRef('meta.v1.ObjectMeta', this.d.objectMeta);
      out.properties = sortedKeys(withMeta);
      const req = [...((out.required as string[] | undefined) ?? [])];
      for (const field of ['kind', 'apiVersion']) if (!req.includes(field)) req.push(field);
      out.required = req;
      return reorderKeys(out);
    }
    return out;
  }
}

/** kube-openapi's key order (the scalar keys first), for a schema given keys after its others. */
function reorderKeys(s: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const key of SCALAR_KEYS) if (key in s) out[key] = s[key];
  for (const [k, v] of Object.entries(s)) if (!(k in out)) out[k] = v;
  return out;
}

function sortedKeys<T>(o: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k]!;
  return out;
}

/** `[{type: integer}, {type: string}]` exactly: structural's int-or-string pattern. */
function isIntOrStringAnyOf(anyOf: unknown): boolean {
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return false;
  const only = (x: unknown, type: string) => isObject(x) && Object.keys(x).length === 1 && x.type === type;
  return only(anyOf[0], 'integer') && only(anyOf[1], 'string');
}

/** A custom resource's two definitions in one document version: the kind's and the list's. */
export interface CustomDefinitions {
  kind: [name: string, schema: JsonSchema];
  list: [name: string, schema: JsonSchema];
}

export function customDefinitions(def: ResourceDefinition, naming: Naming, names: OpenApiNames, version: OpenApiVersion): CustomDefinitions {
  const c = new Converter(naming, names, version);
  const gvk = naming.extension('group-version-kind');
  const kindName = names.customTypeName(def.group, def.version, def.kind);
  const listKind = def.custom?.listKind || `${def.kind}List`;
  const listName = names.customTypeName(def.group, def.version, listKind);
  const d = fieldDescriptions(naming);

  const root = servedVersion(def).schema?.openAPIV3Schema;
  const usable = isObject(root) && structuralShape(root);
  let kind: JsonSchema;
  if (!usable || (version === 2 && root[extensionsOf(naming).preserveUnknownFields] === true)) {
    // No properties at all: kubectl would otherwise take the listed ones for all there are.
    kind = { type: 'object' };
  } else {
    kind = c.node(root);
    const { apiVersion, kind: kindField } = c.typeMeta();
    const properties = { ...((kind.properties as Record<string, JsonSchema> | undefined) ?? {}) };
    properties.metadata = c.describedRef('meta.v1.ObjectMeta', d.objectMeta);
    properties.apiVersion = apiVersion;
    properties.kind = kindField;
    kind = reorderKeys({ ...kind, properties: sortedKeys(properties) });
  }
  kind[gvk] = [{ group: def.group, kind: def.kind, version: def.version }];
  kind = sortExtensions(kind);

  const { apiVersion, kind: kindField } = c.typeMeta();
  const list: JsonSchema = {
    description: `${listKind} is a list of ${def.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion,
      items: { description: d.items(def.resource), type: 'array', items: { $ref: refPath(version, kindName) } },
      kind: kindField,
      metadata: c.describedRef('meta.v1.ListMeta', d.listMeta),
    },
    [gvk]: [{ group: def.group, kind: listKind, version: def.version }],
  };
  return { kind: [kindName, kind], list: [listName, list] };
}

/** Extensions after the other keys, by name (Go's map marshalling). */
function sortExtensions(s: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(s)) if (!k.startsWith('x-')) out[k] = v;
  for (const k of Object.keys(s)
    .filter((k) => k.startsWith('x-'))
    .sort())
    out[k] = s[k];
  return out;
}
