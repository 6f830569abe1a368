/**
 * Walk a decoded object against its type's one definition (src/schema): find the fields
 * the schema does not declare and drop them, and find the first value of the wrong JSON type.
 * Upstream gets both from decoding into Go structs: unknown fields are strict errors
 * (`unknown field "spec.foo"`, reported under `fieldValidation`, docs/API.md, "Field validation"),
 * a type mismatch is a decode error that fails the request whatever `fieldValidation` says
 * ("always type-checked").
 *
 * What the schema leaves open is not checked: map keys (`labels`), `RawExtension`, `FieldsV1`
 * and apiextensions' `JSON` values (any JSON, kept verbatim as upstream keeps their raw bytes), and the
 * special scalars (Time, Quantity, IntOrString, Duration), which decode themselves upstream.
 *
 * The walk also leaves the value as Go's decode and re-encode would (upstream stores and answers
 * what its struct encodes): a field whose JSON tag has `omitempty` and that holds its zero value
 * (`0`, `false`, `""`, `[]`, `{}`, or null; non-pointer scalars, lists and maps) is removed, as
 * encoding/json leaves it out (`hostPort: 0`, `finalizers: []`); a null non-pointer scalar
 * without `omitempty` becomes its zero value, a null non-pointer struct an empty object.
 */
import type { FieldDef, SchemaType, ValueType } from '../../schema';
import { messageType, unionMember } from '../../schema';
import { joinIndex, joinKey } from '../../codecs/go-strings';
import { compareGoStrings } from '../../codecs/go-strings';
import { goTypeName, jsonValueKind, scalarFits } from './unknown-fields-go';
import { isObject } from '../../util/json-values';
import type { Owned } from '../api';

export interface UnknownField {
  /** Go's field path, e.g. `spec.template.spec.containers[0].foo`. */
  readonly path: string;
  /** Where the key first appeared in the body, when the decoder knows (strict JSON). */
  readonly seq: number | undefined;
}

/** Go's `json: cannot unmarshal <value> into Go struct field <Struct>.<path> of type <type>`. */
export interface TypeMismatch {
  readonly message: string;
}

export interface FieldWalk {
  /** Unknown fields, in the order `keyOrder` gives (they are removed from the value). */
  readonly unknown: readonly UnknownField[];
  /** Paths under which the schema accepts anything (unknown fields, RawExtension, FieldsV1). */
  readonly open: readonly string[];
  /** The first type mismatch in walk order, if any. */
  readonly mismatch?: TypeMismatch;
}

export interface WalkOptions {
  /**
   * `document`: keys in the object's own order (the body's); `sorted`: keys sorted as Go's
   * encoding/json writes a map — the order upstream sees after converting YAML to JSON.
   */
  keyOrder?: 'document' | 'sorted';
  /** First position of `key` in `object` in the body, for merging with other strict errors. */
  keySeq?: (path: string) => number | undefined;
  /** Drop unknown fields from the value (default true). */
  prune?: boolean;
}

type Json = Record<string, unknown>;

const isPlainObject = isObject<Json>;

/**
 * Where the walk is: one entry per level below the root, kept in place as the walk goes down
 * and up, so walking a field costs no allocation; the path strings are built only for what is
 * reported (an unknown field, an open path, a mismatch).
 */
class WalkPath {
  /** An object key per level, or undefined for a list index. */
  private readonly keys: Array<string | undefined> = [];
  private readonly indexes: number[] = [];
  /** A struct field (in Go's errorContext), not a map key or list index. */
  private readonly fields: boolean[] = [];
  private depth = 0;

  push(key: string | undefined, index: number, field: boolean): void {
    const d = this.depth++;
    this.keys[d] = key;
    this.indexes[d] = index;
    this.fields[d] = field;
  }

  pop(): void {
    this.depth--;
  }

  /** Go's field path, e.g. `spec.template.spec.containers[0].foo` (joinKey/joinIndex). */
  text(): string {
    let path = '';
    for (let d = 0; d < this.depth; d++) {
      const key = this.keys[d];
      path = key === undefined ? joinIndex(path, this.indexes[d]!) : joinKey(path, key);
    }
    return path;
  }

  /** Go's errorContext: the struct field names only, joined with dots. */
  fieldStack(): string {
    let path = '';
    for (let d = 0; d < this.depth; d++) if (this.fields[d]) path = joinKey(path, this.keys[d]!);
    return path;
  }
}

/** A message type's Go struct name (the last part of its full name), worked out once per type. Shared by every server in the process, as the schema is. */
const structNames = new WeakMap<SchemaType, string>();

function structName(type: SchemaType): string {
  let name = structNames.get(type);
  if (name === undefined) structNames.set(type, (name = type.name.slice(type.name.lastIndexOf('.') + 1)));
  return name;
}

class Walker {
  readonly unknown: UnknownField[] = [];
  readonly open: string[] = [];
  mismatch: TypeMismatch | undefined;
  /**
   * Above zero inside a union type's object (apiextensions' JSONSchemaPropsOr…): upstream decodes
   * it with a plain, lenient json.Unmarshal in its own UnmarshalJSON, so the strict decoder never
   * sees its unknown fields. They are dropped as Go drops them, and not reported.
   */
  private lenient = 0;
  private readonly sorted: boolean;
  /**
   * The value becomes what Go's decode and encode make of it (unless `prune` is false): unknown
   * fields dropped, nulls as Go's zero values, `omitempty` fields holding a zero value left out.
   * The walk is given the value as its own (`walkFields`), so it changes it in place.
   */
  private readonly normalize: boolean;
  private readonly at = new WalkPath();

  constructor(private readonly options: WalkOptions) {
    this.sorted = options.keyOrder === 'sorted';
    this.normalize = options.prune ?? true;
  }

  /** `v` sits where the walk path is; `struct` is the Go struct whose field holds it (for mismatch messages). */
  value(v: unknown, type: ValueType, struct: string): void {
    if (v === null || v === undefined) return;
    switch (type.kind) {
      case 'scalar':
        if (!scalarFits(type.scalar, v)) this.mismatchAt(v, type, struct);
        return;
      case 'special':
        if ((type.special === 'RawExtension' || type.special === 'FieldsV1' || type.special === 'JSON') && this.lenient === 0) this.open.push(this.at.text());
        return;
      case 'list': {
        if (!Array.isArray(v)) return this.mismatchAt(v, type, struct);
        const item = type.item;
        // A scalar is reported at its list's field (indexes are not in Go's errorContext): no step for it.
        const leaf = item.kind === 'scalar';
        for (let i = 0; i < v.length; i++) {
          let element: unknown = v[i];
          // Go decodes a null element into the element's zero value (`[null]` → `[{}]`, `[""]`).
          if (element === null && this.normalize) {
            const zero = zeroOf(item);
            if (zero !== null) v[i] = element = zero;
          }
          if (leaf) {
            this.value(element, item, struct);
          } else {
            this.at.push(undefined, i, false);
            this.value(element, item, struct);
            this.at.pop();
          }
        }
        return;
      }
      case 'map': {
        if (!isPlainObject(v)) return this.mismatchAt(v, type, struct);
        if (this.sorted) {
          for (const key of Object.keys(v).sort(compareGoStrings)) this.entry(v, key, type.value, struct);
        } else {
          for (const key in v) this.entry(v, key, type.value, struct);
        }
        return;
      }
      case 'message': {
        const t = messageType(type);
        if (t.union) {
          // The value of the field its shape names (UnionDef).
          const member = unionMember(t, v);
          if (member.name !== t.union.object) return this.value(v, member.type, struct);
          this.lenient++;
          this.value(v, member.type, struct);
          this.lenient--;
          return;
        }
        if (!isPlainObject(v)) return this.mismatchAt(v, type, struct);
        this.message(v, t);
        return;
      }
    }
  }

  /** An object's fields in the walk's order (see WalkOptions.keyOrder): the body's order by for-in, with no array of keys. */
  message(obj: Json, type: SchemaType): void {
    const struct = structName(type);
    if (this.sorted) {
      for (const key of Object.keys(obj).sort(compareGoStrings)) this.field(obj, key, type, struct);
    } else {
      // Deleting the field being visited (an unknown or empty one) is safe in a for-in walk.
      for (const key in obj) this.field(obj, key, type, struct);
    }
  }

  /** A map's entry: a scalar is reported at its map's field (keys are not in Go's errorContext). */
  private entry(map: Json, key: string, type: ValueType, struct: string): void {
    if (type.kind === 'scalar') return this.value(map[key], type, struct);
    this.at.push(key, 0, false);
    this.value(map[key], type, struct);
    this.at.pop();
  }

  /** `v` at `key` of the walk path's position, for a mismatch. */
  private mismatchAtField(v: unknown, type: ValueType, struct: string, key: string): void {
    this.at.push(key, 0, true);
    this.mismatchAt(v, type, struct);
    this.at.pop();
  }

  private field(obj: Json, key: string, type: SchemaType, struct: string): void {
    const v = obj[key];
    if (type.typeMeta && (key === 'apiVersion' || key === 'kind')) {
      if (typeof v !== 'string' && v !== null) this.mismatchAtField(v, STRING, struct, key);
      return;
    }
    const prop = type.property.get(key);
    if (!prop) {
      if (this.lenient === 0) {
        const keyPath = joinKey(this.at.text(), key);
        this.unknown.push({ path: keyPath, seq: this.options.keySeq?.(keyPath) });
        this.open.push(keyPath);
      }
      if (this.normalize) delete obj[key];
      return;
    }
    const field = prop.field;
    const fieldType = field.type;
    if (v === null || v === undefined) {
      if (v === null && this.normalize) nullField(obj, key, field);
      return;
    }
    // A scalar field is checked here: no step is made unless it is the wrong type.
    if (fieldType.kind === 'scalar') {
      if (!scalarFits(fieldType.scalar, v)) this.mismatchAtField(v, fieldType, struct, key);
      else if (this.normalize && field.omitEmpty && !field.pointer && (v === 0 || v === false || v === '')) delete obj[key];
      return;
    }
    this.at.push(key, 0, true);
    this.value(v, fieldType, struct);
    this.at.pop();
    if (this.normalize && field.omitEmpty && !field.pointer && isEmptyCollection(v, fieldType)) delete obj[key];
  }

  /** A mismatch of a value where the walk is (a list element or map value is reported at its list's or map's field). */
  private mismatchAt(v: unknown, type: ValueType, struct: string): void {
    this.mismatch ??= {
      message: `json: cannot unmarshal ${jsonValueKind(v)} into Go struct field ${struct}.${this.at.fieldStack()} of type ${goTypeName(type)}`,
    };
  }
}

const STRING: ValueType = { kind: 'scalar', scalar: 'string' };

/**
 * A field sent as null, as Go's decode and encode leave it: a nil pointer, slice or map, or a
 * non-pointer scalar at its zero value, is left out under `omitempty` and written otherwise
 * (`"verbs": null`, `"containerPort": 0`); a non-pointer struct is its zero value, an empty
 * object here. Special types (Time, Quantity, ...) keep the null they decode from.
 */
function nullField(obj: Json, key: string, field: FieldDef): void {
  const type = field.type;
  if (type.kind === 'message' && !field.pointer) {
    obj[key] = {};
  } else if (type.kind === 'special' && !field.pointer) {
    return;
  } else if (field.omitEmpty) {
    delete obj[key];
  } else if (type.kind === 'scalar' && !field.pointer && type.scalar !== 'bytes') {
    obj[key] = zeroOf(type);
  }
}

/** An empty list or map: what `omitempty` leaves out of Go's JSON, as it does zero scalars (structs never are). */
function isEmptyCollection(v: unknown, type: ValueType): boolean {
  if (type.kind === 'list') return Array.isArray(v) && v.length === 0;
  if (type.kind === 'map') {
    if (!isPlainObject(v)) return false;
    for (const _ in v) return false;
    return true;
  }
  return false;
}

/** Go's zero value of a list element decoded from null, or null where Go keeps nil. */
function zeroOf(type: ValueType): unknown {
  switch (type.kind) {
    case 'message':
      return {};
    case 'scalar':
      return { string: '', bool: false, int32: 0, int64: 0, double: 0, bytes: null }[type.scalar];
    default:
      return null;
  }
}

/**
 * Walk `value` (a decoded object of `type`, the caller's own: a write's body or a patch's result)
 * and report its unknown fields and first type mismatch; unless `prune` is false the value is
 * changed in place into what Go's decode and encode make of it (unknown fields removed).
 */
export function walkFields(value: Owned<Json>, type: SchemaType, options: WalkOptions = {}): FieldWalk {
  const walker = new Walker(options);
  walker.message(value.value, type);
  return { unknown: walker.unknown, open: walker.open, ...(walker.mismatch ? { mismatch: walker.mismatch } : {}) };
}
