/**
 * Walk a decoded object against its type's one definition (src/schema): find the fields
 * the schema does not declare and drop them, and find the first value of the wrong JSON type.
 * Upstream gets both from decoding into Go structs: unknown fields are strict errors
 * (`unknown field "spec.foo"`, reported under `fieldValidation`, docs/API.md, "Field validation"),
 * a type mismatch is a decode error that fails the request whatever `fieldValidation` says
 * ("always type-checked").
 *
 * What the schema leaves open is not checked: map keys (`labels`), `RawExtension` and
 * `FieldsV1` values (any JSON, kept verbatim as upstream keeps their raw bytes), and the
 * special scalars (Time, Quantity, IntOrString, Duration), which decode themselves upstream.
 */
import type { SchemaType, ValueType } from '../../schema';
import { schemaTypes } from '../../schema';
import { joinIndex, joinKey } from '../../codecs/go-strings';
import { compareGoStrings } from '../../codecs/go-strings';
import { goTypeName, jsonValueKind, scalarFits } from './unknown-fields-go';
import { isObject } from '../../util/json-values';

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

class Walker {
  readonly unknown: UnknownField[] = [];
  readonly open: string[] = [];
  mismatch: TypeMismatch | undefined;
  private readonly types = schemaTypes();

  constructor(private readonly options: WalkOptions) {}

  /** Nulls become Go's zero values where Go would decode them so (only when the walk may change the value). */
  private get normalize(): boolean {
    return this.options.prune ?? true;
  }

  private keys(obj: Json): string[] {
    const keys = Object.keys(obj);
    return this.options.keyOrder === 'sorted' ? keys.sort(compareGoStrings) : keys;
  }

  /** `fieldStack` is Go's errorContext: struct field names only, for type-mismatch messages. */
  value(v: unknown, type: ValueType, path: string, struct: string, fieldStack: string): void {
    if (v === null || v === undefined) return;
    switch (type.kind) {
      case 'scalar':
        if (!scalarFits(type.scalar, v)) this.mismatchAt(v, type, struct, fieldStack);
        return;
      case 'special':
        if (type.special === 'RawExtension' || type.special === 'FieldsV1') this.open.push(path);
        return;
      case 'list':
        if (!Array.isArray(v)) return this.mismatchAt(v, type, struct, fieldStack);
        v.forEach((item, i) => {
          // Go decodes a null element into the element's zero value (`[null]` → `[{}]`, `[""]`).
          if (item === null && this.normalize) {
            const zero = zeroOf(type.item);
            if (zero !== null) v[i] = item = zero;
          }
          this.value(item, type.item, joinIndex(path, i), struct, fieldStack);
        });
        return;
      case 'map':
        if (!isPlainObject(v)) return this.mismatchAt(v, type, struct, fieldStack);
        for (const key of this.keys(v)) this.value(v[key], type.value, joinKey(path, key), struct, fieldStack);
        return;
      case 'message':
        if (!isPlainObject(v)) return this.mismatchAt(v, type, struct, fieldStack);
        this.message(v, this.types.get(type.type)!, path, fieldStack);
        return;
    }
  }

  message(obj: Json, type: SchemaType, path: string, fieldStack: string): void {
    const struct = type.name.slice(type.name.lastIndexOf('.') + 1);
    for (const key of this.keys(obj)) {
      if (type.typeMeta && (key === 'apiVersion' || key === 'kind')) {
        if (typeof obj[key] !== 'string' && obj[key] !== null) {
          this.mismatchAt(obj[key], { kind: 'scalar', scalar: 'string' }, struct, joinKey(fieldStack, key));
        }
        continue;
      }
      const prop = type.property.get(key);
      const keyPath = joinKey(path, key);
      // Go leaves a non-pointer struct at its zero value for a JSON null: an empty object here.
      if (prop && obj[key] === null && this.normalize && prop.field.type.kind === 'message' && !prop.field.pointer) obj[key] = {};
      if (!prop) {
        this.unknown.push({ path: keyPath, seq: this.options.keySeq?.(keyPath) });
        this.open.push(keyPath);
        if (this.options.prune ?? true) delete obj[key];
        continue;
      }
      this.value(obj[key], prop.field.type, keyPath, struct, joinKey(fieldStack, key));
    }
  }

  private mismatchAt(v: unknown, type: ValueType, struct: string, fieldStack: string): void {
    this.mismatch ??= {
      message: `json: cannot unmarshal ${jsonValueKind(v)} into Go struct field ${struct}.${fieldStack} of type ${goTypeName(type)}`,
    };
  }
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
 * Walk `value` (a decoded object of `type`) and report its unknown fields and first type
 * mismatch; unknown fields are removed unless `prune` is false.
 */
export function walkFields(value: Json, type: SchemaType, options: WalkOptions = {}): FieldWalk {
  const walker = new Walker(options);
  walker.message(value, type, '', '');
  return { unknown: walker.unknown, open: walker.open, ...(walker.mismatch ? { mismatch: walker.mismatch } : {}) };
}
