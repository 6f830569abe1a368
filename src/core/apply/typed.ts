/**
 * What server-side apply needs to know about a value's schema, read from the one definition of
 * each type (src/schema) with upstream's marker fallbacks (docs/API.md, "Merge markers"):
 * scalars are leaves; structs and maps are granular or atomic; lists are atomic, sets (`v:` items) or maps keyed by their listMapKeys (`k:` items).
 */
import {
  type FieldDef,
  type JsonProperty,
  type ListType,
  type SchemaType,
  type ValueType,
  effectiveListMapKeys,
  effectiveListType,
  effectiveMapType,
  effectiveStructType,
  messageType,
} from '../../schema';
import type { KeyField, PathElement } from './fieldpath';
import { isObject } from '../../util/json-values';

/** The JSON scalars a field accepts (upstream's schema.Scalar); `any` for values the schema leaves open. */
export type ScalarKind = 'numeric' | 'string' | 'boolean' | 'untyped' | 'any';

export type Atom =
  | { readonly kind: 'scalar'; readonly scalar?: ScalarKind }
  | { readonly kind: 'struct'; readonly type: SchemaType; readonly atomic: boolean }
  | { readonly kind: 'map'; readonly value: ValueType; readonly atomic: boolean }
  | { readonly kind: 'list'; readonly item: ValueType; readonly listType: ListType; readonly keys: readonly string[] };

/**
 * Defaults of list-map keys, used when an item omits the key (upstream reads them from the
 * `default` of the key field; Keelson's schema does not carry field defaults yet).
 */
const KEY_DEFAULTS: ReadonlyMap<string, unknown> = new Map([['core.v1.ContainerPort.protocol', 'TCP']]);

/** How upstream's OpenAPI types the special types: strings, int-or-string, or open values. */
const SPECIAL_SCALARS: Record<string, ScalarKind> = {
  Time: 'string',
  MicroTime: 'string',
  Duration: 'string',
  Quantity: 'untyped',
  IntOrString: 'untyped',
  RawExtension: 'any',
  FieldsV1: 'any',
  JSON: 'any',
};

/** Atoms worked out once per schema field, and per value type for list items and map values. Shared by every server in the process, as the schema is. */
const atoms = new WeakMap<FieldDef | ValueType, Atom>();

/**
 * The atom of a value of `type`, with the markers of the field holding it (none for list items
 * and map values); `field`, when given, is the field whose type `type` is.
 */
export function atomOf(type: ValueType, field?: FieldDef): Atom {
  const key = field ?? type;
  let atom = atoms.get(key);
  if (atom === undefined) atoms.set(key, (atom = workOutAtom(type, field)));
  return atom;
}

function workOutAtom(type: ValueType, field?: FieldDef): Atom {
  switch (type.kind) {
    case 'scalar':
      return { kind: 'scalar', scalar: type.scalar === 'bool' ? 'boolean' : type.scalar === 'string' || type.scalar === 'bytes' ? 'string' : 'numeric' };
    case 'special':
      return { kind: 'scalar', scalar: SPECIAL_SCALARS[type.special] };
    case 'message': {
      const t = messageType(type);
      // A union type (apiextensions' JSONSchemaPropsOr…) has no schema of its own in upstream's
      // OpenAPI: its value is open, as RawExtension's.
      if (t.union) return { kind: 'scalar', scalar: 'any' };
      const atomic = field ? effectiveStructType(field, t) === 'atomic' : t.structType === 'atomic';
      return { kind: 'struct', type: t, atomic };
    }
    case 'map':
      return { kind: 'map', value: type.value, atomic: field ? effectiveMapType(field) === 'atomic' : false };
    case 'list': {
      const listType = field ? effectiveListType(field) : 'atomic';
      return { kind: 'list', item: type.item, listType, keys: (field && effectiveListMapKeys(field)) ?? [] };
    }
  }
}

/** The atom of the kind's own type (the root of an object). */
export function rootAtom(type: SchemaType): Atom {
  return { kind: 'struct', type, atomic: false };
}

/** A struct's property of that JSON name, or undefined when the schema has none. */
export function propertyOf(atom: Atom, name: string): JsonProperty | undefined {
  return atom.kind === 'struct' ? atom.type.property.get(name) : undefined;
}

/** The atom of a member `name` of a struct or map atom, or undefined for an undeclared struct field. */
export function memberAtom(atom: Atom, name: string): Atom | undefined {
  if (atom.kind === 'map') return atomOf(atom.value);
  if (atom.kind !== 'struct') return undefined;
  const p = atom.type.property.get(name);
  if (p) return atomOf(p.field.type, p.field);
  // TypeMeta's fields are part of every kind's JSON.
  return atom.type.typeMeta && (name === 'kind' || name === 'apiVersion') ? { kind: 'scalar', scalar: 'string' } : undefined;
}

export { isObject };

export class ItemKeyError extends Error {}

/**
 * The path element naming a list item: its keys for a map-list, its value for a set (upstream's
 * listItemToPathElement, with its messages).
 */
export function itemElement(atom: Atom & { kind: 'list' }, item: unknown): PathElement {
  if (atom.keys.length > 0) {
    if (item === null) throw new ItemKeyError('associative list with keys may not have a null element');
    if (!isObject(item)) throw new ItemKeyError('associative list with keys may not have non-map elements');
    const itemType = atom.item.kind === 'message' ? atom.item.type : '';
    const fields: KeyField[] = [];
    for (const name of atom.keys) {
      if (name in item) fields.push({ name, value: item[name] });
      else if (KEY_DEFAULTS.has(`${itemType}.${name}`)) fields.push({ name, value: KEY_DEFAULTS.get(`${itemType}.${name}`) });
      else throw new ItemKeyError(`associative list with keys has an element that omits key field "${name}" (and doesn't have default value)`);
    }
    fields.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { kind: 'key', fields };
  }
  if (isObject(item)) throw new ItemKeyError("associative list without keys has an element that's a map type");
  if (Array.isArray(item)) throw new ItemKeyError('not supported: associative list with lists as elements');
  if (item === null) throw new ItemKeyError("associative list without keys has an element that's an explicit null");
  return { kind: 'value', value: item };
}

/** The atom of a list's items. */
export function itemAtom(atom: Atom & { kind: 'list' }): Atom {
  return atomOf(atom.item);
}

/** Deep equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
}
