/**
 * The schema registry: every type definition resolved and checked once, plus the kinds served
 * under one naming profile (docs/API.md, "Naming profiles"). Look types up by
 * qualified name (`core.v1.PodSpec`) and kinds by apiVersion and kind.
 */
import type { Naming } from '../naming';
import { ALL_PACKAGES } from './defs';
import { META_GROUP_KINDS, PER_GROUP_VERSION_KINDS, UNVERSIONED_META_KINDS, resourceKindsOf } from './kinds';
import type { FieldDef, GroupKey, KindDef, PackageDef, TypeDef, ValueType } from './types';

/** A JSON property of a type: a field of its own or of an inline-embedded struct. */
export interface JsonProperty {
  readonly name: string;
  readonly field: FieldDef;
  /** The inline fields crossed to reach it, outermost first; empty for a direct field. */
  readonly via: readonly FieldDef[];
}

/** A resolved type: its definition plus the orders and indexes the codecs and patchers need. */
export interface SchemaType extends TypeDef {
  /** Fields sorted by protobuf number: the order upstream's marshaller writes them. */
  readonly protoFields: readonly FieldDef[];
  /** JSON properties in JSON (Go declaration) order, inline fields expanded. */
  readonly properties: readonly JsonProperty[];
  readonly property: ReadonlyMap<string, JsonProperty>;
}

/** A kind under one naming profile. */
export interface ServedKind {
  readonly apiVersion: string;
  /** Group name ('' for core). */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly type: SchemaType;
}

export interface SchemaRegistry {
  readonly naming: Naming;
  /** Every served kind: resources, lists, subresource kinds, meta kinds. */
  readonly kinds: readonly ServedKind[];
  /** The type of a qualified name; throws on an unknown name (a bug, not bad input). */
  type(name: string): SchemaType;
  findType(name: string): SchemaType | undefined;
  /** The kind of an apiVersion and kind, or undefined when Keelson has no schema for it. */
  kind(apiVersion: string, kind: string): ServedKind | undefined;
  /** The group name of a vendor-neutral group key. */
  groupName(key: GroupKey): string;
}

export class SchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SchemaError';
  }
}

function resolveValue(value: ValueType, pkg: string, known: ReadonlySet<string>, where: string): ValueType {
  switch (value.kind) {
    case 'message': {
      const name = value.type.includes('.') ? value.type : `${pkg}.${value.type}`;
      if (!known.has(name)) throw new SchemaError(`${where}: unknown type ${value.type}`);
      return { kind: 'message', type: name };
    }
    case 'list':
      return { ...value, item: resolveValue(value.item, pkg, known, where) };
    case 'map':
      return { ...value, value: resolveValue(value.value, pkg, known, where) };
    default:
      return value;
  }
}

function checkField(field: FieldDef, where: string): void {
  if (field.extension && field.inline) throw new SchemaError(`${where}: an inline field has no JSON name`);
  if (field.listMapKeys && field.listType !== 'map') throw new SchemaError(`${where}: listMapKeys without listType map`);
  if (field.listType === 'map' && !field.listMapKeys?.length) throw new SchemaError(`${where}: listType map needs listMapKeys`);
  if (field.listType && field.type.kind !== 'list' && field.type.kind !== 'message') {
    throw new SchemaError(`${where}: listType on a ${field.type.kind}`);
  }
  if (field.inline && field.type.kind !== 'message') throw new SchemaError(`${where}: only messages can be inline`);
}

function checkUnion(type: TypeDef, where: string): void {
  const union = type.union;
  if (!union) return;
  const object = type.fields.find((f) => f.name === union.object);
  const other = type.fields.find((f) => f.name === union.other);
  if (object?.type.kind !== 'message') throw new SchemaError(`${where}: union object ${union.object} is not a message field`);
  if (!other || !(other.type.kind === 'list' || (other.type.kind === 'scalar' && other.type.scalar === 'bool'))) {
    throw new SchemaError(`${where}: union other ${union.other} is neither a list nor a boolean field`);
  }
  if (type.typeMeta || type.fields.length !== 2) throw new SchemaError(`${where}: a union has its two fields and nothing else`);
}

/**
 * A message reference of a compiled type and the type it names in the same compilation: each
 * profile's compilation makes its own references, so a reference leads to its own profile's
 * types (their JSON names differ where a field is named by a schema extension) without a name
 * lookup that would have to be told the profile. Kept beside the references rather than in them,
 * so that the compiled types stay plain, acyclic data. Shared by every server in the process: filled
 * once per compilation, never changed.
 */
const referencedTypes = new WeakMap<ValueType, SchemaType>();

/** The compiled type a message reference of a compiled type names (in that type's profile). */
export function messageType(value: ValueType & { kind: 'message' }): SchemaType {
  const type = referencedTypes.get(value);
  if (!type) throw new SchemaError(`unresolved reference to ${value.type}: not a compiled type's`);
  return type;
}

/**
 * Resolve names and check every definition (unknown types, reused field numbers or JSON names,
 * misplaced markers); throws SchemaError. A field named by a schema extension takes the name
 * `naming` gives it, so each naming profile compiles its own types (schemaTypes).
 */
export function compileSchema(packages: readonly PackageDef[], naming?: Naming): ReadonlyMap<string, SchemaType> {
  const known = new Set<string>();
  for (const pkg of packages) {
    for (const t of pkg.types) {
      const name = `${pkg.name}.${t.name}`;
      if (known.has(name)) throw new SchemaError(`type ${name} defined twice`);
      known.add(name);
    }
  }
  const resolved = new Map<string, TypeDef>();
  for (const pkg of packages) {
    for (const t of pkg.types) {
      const name = `${pkg.name}.${t.name}`;
      const numbers = new Set<number>();
      const fields = t.fields.map((field) => {
        const where = `${name}.${field.name}`;
        if (numbers.has(field.number)) throw new SchemaError(`${where}: field number ${field.number} used twice`);
        numbers.add(field.number);
        checkField(field, where);
        let jsonName = field.name;
        if (field.extension) {
          if (!naming) throw new SchemaError(`${where}: named by a schema extension, compiled without a naming profile`);
          jsonName = naming.extension(field.name);
        }
        return { ...field, name: jsonName, type: resolveValue(field.type, pkg.name, known, where) };
      });
      checkUnion({ ...t, fields }, name);
      resolved.set(name, { ...t, name, fields });
    }
  }
  const compiled = new Map<string, SchemaType>();
  const propertiesOf = (type: TypeDef, via: readonly FieldDef[], seen: ReadonlySet<string>): JsonProperty[] =>
    type.fields.flatMap((field) => {
      if (!field.inline) return [{ name: field.name, field, via }];
      const inner = resolved.get((field.type as { type: string }).type)!;
      if (seen.has(inner.name)) throw new SchemaError(`${type.name}: inline cycle through ${inner.name}`);
      return propertiesOf(inner, [...via, field], new Set([...seen, inner.name]));
    });
  for (const [name, type] of resolved) {
    const properties = propertiesOf(type, [], new Set([name]));
    const property = new Map<string, JsonProperty>();
    for (const p of properties) {
      if (property.has(p.name)) throw new SchemaError(`${name}: JSON name ${p.name} used twice`);
      property.set(p.name, p);
    }
    if (type.typeMeta && (property.has('kind') || property.has('apiVersion'))) {
      throw new SchemaError(`${name}: kind/apiVersion clash with TypeMeta`);
    }
    const protoFields = [...type.fields].sort((a, b) => a.number - b.number);
    compiled.set(name, {
      ...type,
      protoFields,
      properties,
      property,
    });
  }
  const link = (value: ValueType): void => {
    if (value.kind === 'message') referencedTypes.set(value, compiled.get(value.type)!);
    else if (value.kind === 'list') link(value.item);
    else if (value.kind === 'map') link(value.value);
  };
  for (const type of compiled.values()) for (const field of type.fields) link(field.type);
  return compiled;
}

/** The names of the types whose JSON differs by profile: a field named by a schema extension in them or in a type they reach. */
function profileDependent(types: ReadonlyMap<string, SchemaType>): Set<string> {
  const refs = (value: ValueType): string[] =>
    value.kind === 'message' ? [value.type] : value.kind === 'list' ? refs(value.item) : value.kind === 'map' ? refs(value.value) : [];
  const dependent = new Set<string>();
  for (const type of types.values()) if (type.fields.some((f) => f.extension)) dependent.add(type.name);
  for (let grown = true; grown; ) {
    grown = false;
    for (const type of types.values()) {
      if (dependent.has(type.name) || !type.fields.some((f) => refs(f.type).some((r) => dependent.has(r)))) continue;
      dependent.add(type.name);
      grown = true;
    }
  }
  return dependent;
}

/**
 * `own` (one profile's compilation) with every type whose JSON is the same under every profile
 * replaced by `shared`'s, its references relinked to match: the profiles share all types but the
 * few named by schema extensions (apiextensions' JSONSchemaProps and what holds it), so their
 * codecs' and checks' memos, keyed by type, serve both.
 */
function shareIndependent(own: ReadonlyMap<string, SchemaType>, shared: ReadonlyMap<string, SchemaType>): ReadonlyMap<string, SchemaType> {
  const dependent = profileDependent(own);
  const merged = new Map<string, SchemaType>();
  for (const [name, type] of own) merged.set(name, dependent.has(name) ? type : shared.get(name)!);
  const link = (value: ValueType): void => {
    if (value.kind === 'message') referencedTypes.set(value, merged.get(value.type)!);
    else if (value.kind === 'list') link(value.item);
    else if (value.kind === 'map') link(value.value);
  };
  for (const name of dependent) for (const field of merged.get(name)!.fields) link(field.type);
  return merged;
}

/** Shared by every server in the process: each profile's types, compiled once from the constant definitions, never changed. */
const compiledTypes = new Map<string, ReadonlyMap<string, SchemaType>>();

/**
 * All types, resolved under one naming profile (computed once per profile). Only the JSON names
 * of fields named by a schema extension differ between profiles: the types that hold one (or
 * reach one) are the profile's own, every other type is the same object under every profile.
 * Everything reached from a profile's types (`messageType`) is that profile's.
 */
export function schemaTypes(naming: Naming): ReadonlyMap<string, SchemaType> {
  let types = compiledTypes.get(naming.vendor);
  if (!types) {
    const own = compileSchema(ALL_PACKAGES, naming);
    const first = compiledTypes.values().next().value as ReadonlyMap<string, SchemaType> | undefined;
    types = first ? shareIndependent(own, first) : own;
    compiledTypes.set(naming.vendor, types);
  }
  return types;
}

/** Shared by every server in the process: derived once from the constant definitions. */
let resourceKindList: readonly KindDef[] | undefined;

/** The served resource kinds, derived from the types that embed TypeMeta (kinds.ts); the same under every profile. */
export function resourceKinds(): readonly KindDef[] {
  resourceKindList ??= resourceKindsOf(ALL_PACKAGES.flatMap((pkg) => pkg.types.map((t) => ({ name: `${pkg.name}.${t.name}`, typeMeta: t.typeMeta }))));
  return resourceKindList;
}

export function groupName(naming: Naming, key: GroupKey): string {
  return naming.apiGroups[key];
}

function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** Shared by every server in the process: a profile's registry is built from constants and never changed. */
const registries = new Map<string, SchemaRegistry>();

/** The registry of one naming profile (memoized per vendor). */
export function schemaRegistry(naming: Naming): SchemaRegistry {
  const cached = registries.get(naming.vendor);
  if (cached) return cached;
  const types = schemaTypes(naming);
  const type = (name: string): SchemaType => {
    const t = types.get(name);
    if (!t) throw new SchemaError(`unknown type ${name}`);
    return t;
  };
  const serve = (k: KindDef): ServedKind => {
    const group = groupName(naming, k.group);
    return { apiVersion: apiVersionOf(group, k.version), group, version: k.version, kind: k.kind, type: type(k.type) };
  };
  const kinds = [...resourceKinds(), ...UNVERSIONED_META_KINDS, ...META_GROUP_KINDS].map(serve);
  // By apiVersion, then kind: a lookup (several per write) builds no key string to hash.
  const byVersion = new Map<string, Map<string, ServedKind>>();
  for (const k of kinds) {
    let inVersion = byVersion.get(k.apiVersion);
    if (!inVersion) byVersion.set(k.apiVersion, (inVersion = new Map()));
    inVersion.set(k.kind, k);
  }
  const perGroupVersion = new Map(UNVERSIONED_META_KINDS.map((k) => [k.kind, type(k.type)]));
  const registry: SchemaRegistry = {
    naming,
    kinds,
    type,
    findType: (name) => types.get(name),
    kind(apiVersion, kind) {
      const exact = byVersion.get(apiVersion)?.get(kind);
      if (exact) return exact;
      const common = PER_GROUP_VERSION_KINDS.has(kind) ? perGroupVersion.get(kind) : undefined;
      if (!common || !byVersion.has(apiVersion)) return undefined;
      const slash = apiVersion.indexOf('/');
      const group = slash < 0 ? '' : apiVersion.slice(0, slash);
      return { apiVersion, group, version: apiVersion.slice(slash + 1), kind, type: common };
    },
    groupName: (key) => groupName(naming, key),
  };
  registries.set(naming.vendor, registry);
  return registry;
}
