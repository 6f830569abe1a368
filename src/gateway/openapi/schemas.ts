/**
 * OpenAPI schemas of every type, generated from the one definition of each type
 * (src/schema): properties with their JSON names, `required`, formats, and the merge
 * markers under the profile's extension names (`x-<vendor>-list-type`, `-list-map-keys`,
 * `-map-type`, `-patch-strategy`, `-patch-merge-key`), top-level kinds tagged with
 * `x-<vendor>-group-version-kind`. Shapes follow upstream's documents: in v3 a reference with
 * siblings is wrapped in `allOf` and non-pointer structs default to `{}`; the special types
 * (Time, Quantity, IntOrString, RawExtension, FieldsV1, apiextensions' JSON) are definitions of
 * their own, and so are apiextensions' union types (JSONSchemaPropsOr…), untyped as upstream's.
 */
import type { Naming } from '../../naming';
import type { FieldDef, SchemaRegistry, SchemaType, ScalarType, SpecialType, ValueType } from '../../schema';
import type { OpenApiNames } from './names';

export type OpenApiVersion = 2 | 3;
export type JsonSchema = Record<string, unknown>;

export interface GroupVersionKind {
  group: string;
  kind: string;
  version: string;
}

const SCALARS: Record<ScalarType, JsonSchema> = {
  string: { type: 'string' },
  bool: { type: 'boolean' },
  int32: { type: 'integer', format: 'int32' },
  int64: { type: 'integer', format: 'int64' },
  double: { type: 'number', format: 'double' },
  bytes: { type: 'string', format: 'byte' },
};

export function refPath(version: OpenApiVersion, name: string): string {
  return version === 2 ? `#/definitions/${name}` : `#/components/schemas/${name}`;
}

/** Names referenced by `$ref` anywhere inside a value. */
export function referencedNames(value: unknown, version: OpenApiVersion, out = new Set<string>()): Set<string> {
  const prefix = refPath(version, '');
  if (Array.isArray(value)) {
    for (const v of value) referencedNames(v, version, out);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(prefix)) out.add(v.slice(prefix.length));
      else referencedNames(v, version, out);
    }
  }
  return out;
}

export class SchemaBuilder {
  private readonly ext: (name: string) => string;

  constructor(
    readonly naming: Naming,
    private readonly names: OpenApiNames,
    private readonly registry: SchemaRegistry,
    private readonly version: OpenApiVersion,
    /** The kinds of each qualified type name. */
    private readonly gvks: ReadonlyMap<string, readonly GroupVersionKind[]>,
  ) {
    this.ext = (name) => naming.extension(name);
  }

  ref(name: string): JsonSchema {
    return { $ref: refPath(this.version, name) };
  }

  /** A reference carrying more keys: `allOf`-wrapped in v3, plain in v2. */
  private refWith(name: string, extra: JsonSchema): JsonSchema {
    if (Object.keys(extra).length === 0) return this.ref(name);
    return this.version === 3 ? { allOf: [this.ref(name)], ...extra } : { ...this.ref(name), ...extra };
  }

  private valueSchema(type: ValueType, pointer: boolean, extra: JsonSchema = {}): JsonSchema {
    switch (type.kind) {
      case 'scalar':
        return { ...SCALARS[type.scalar], ...extra };
      case 'special': {
        const name = this.names.specialName(type.special);
        return name ? this.refWith(name, extra) : { type: 'string', ...extra };
      }
      case 'message':
        return this.refWith(this.names.typeName(type.type), this.version === 3 && !pointer ? { default: {}, ...extra } : extra);
      case 'list':
        return { type: 'array', items: this.valueSchema(type.item, false), ...extra };
      case 'map':
        return { type: 'object', additionalProperties: this.valueSchema(type.value, false), ...extra };
    }
  }

  private fieldSchema(field: FieldDef): JsonSchema {
    const extra: JsonSchema = {};
    if (field.listType) extra[this.ext('list-type')] = field.listType;
    if (field.listMapKeys) extra[this.ext('list-map-keys')] = [...field.listMapKeys];
    if (field.mapType) extra[this.ext('map-type')] = field.mapType;
    if (field.structType) extra[this.ext('map-type')] = field.structType;
    if (field.patchMergeKey) extra[this.ext('patch-merge-key')] = field.patchMergeKey;
    if (field.patchStrategy) extra[this.ext('patch-strategy')] = field.patchStrategy;
    return this.valueSchema(field.type, field.pointer, extra);
  }

  typeSchema(type: SchemaType): JsonSchema {
    // A union type (apiextensions' JSONSchemaPropsOr…) declares no OpenAPI type upstream: any value.
    if (type.union) return {};
    const properties: Record<string, JsonSchema> = {};
    if (type.typeMeta) {
      properties.apiVersion = { type: 'string' };
      properties.kind = { type: 'string' };
    }
    const required: string[] = [];
    for (const p of type.properties) {
      properties[p.name] = this.fieldSchema(p.field);
      if (p.field.required) required.push(p.name);
    }
    const schema: JsonSchema = { type: 'object', properties };
    if (required.length) schema.required = required;
    if (type.structType) schema[this.ext('map-type')] = type.structType;
    const gvks = this.gvks.get(type.name);
    if (gvks?.length) schema[this.ext('group-version-kind')] = gvks.map((g) => ({ ...g }));
    return schema;
  }

  private specialSchema(special: SpecialType): JsonSchema {
    switch (special) {
      case 'Time':
      case 'MicroTime':
        return { type: 'string', format: 'date-time' };
      case 'Quantity':
        return this.version === 3 ? { oneOf: [{ type: 'string' }, { type: 'number' }] } : { type: 'string' };
      case 'IntOrString':
        return this.version === 3 ? { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] } : { type: 'string', format: 'int-or-string' };
      case 'RawExtension':
      case 'FieldsV1':
      case 'Duration':
        return special === 'Duration' ? { type: 'string' } : { type: 'object' };
      case 'JSON':
        // apiextensions' JSON declares no OpenAPI type upstream: any value.
        return {};
    }
  }

  /** Every definition: the schema's types, the special types and meta/v1 Patch, by definition name. */
  all(): Record<string, JsonSchema> {
    const out: Record<string, JsonSchema> = {};
    for (const special of ['Time', 'MicroTime', 'Quantity', 'IntOrString', 'RawExtension', 'FieldsV1', 'JSON'] as const) {
      out[this.names.specialName(special)!] = this.specialSchema(special);
    }
    out[this.names.patch] = { type: 'object' };
    for (const kind of this.registry.kinds) this.addWithDependencies(kind.type, out);
    return out;
  }

  private addWithDependencies(type: SchemaType, out: Record<string, JsonSchema>): void {
    const name = this.names.typeName(type.name);
    if (out[name]) return;
    out[name] = this.typeSchema(type);
    const visit = (v: ValueType): void => {
      if (v.kind === 'message') this.addWithDependencies(this.registry.type(v.type), out);
      else if (v.kind === 'list') visit(v.item);
      else if (v.kind === 'map') visit(v.value);
    };
    for (const p of type.properties) visit(p.field.type);
  }
}

/**
 * The kinds of every type: resource kinds once, and the kinds upstream adds to every group
 * version (DeleteOptions, WatchEvent) for each served group version.
 */
export function kindsByType(registry: SchemaRegistry, groupVersions: readonly { group: string; version: string }[]): Map<string, GroupVersionKind[]> {
  const out = new Map<string, GroupVersionKind[]>();
  const add = (type: string, gvk: GroupVersionKind) => {
    const list = out.get(type) ?? [];
    if (!list.some((g) => g.group === gvk.group && g.version === gvk.version && g.kind === gvk.kind)) list.push(gvk);
    out.set(type, list);
  };
  for (const k of registry.kinds) add(k.type.name, { group: k.group, kind: k.kind, version: k.version });
  for (const gv of groupVersions) {
    for (const kind of ['DeleteOptions', 'WatchEvent']) {
      const served = registry.kind(gv.group ? `${gv.group}/${gv.version}` : gv.version, kind);
      if (served) add(served.type.name, { group: gv.group, kind, version: gv.version });
    }
  }
  return out;
}
