/**
 * JSON-shaped objects to and from CBOR the way upstream's CBOR serializer writes them
 * (apimachinery runtime/serializer/cbor, KEP 4222), driven by the type schema:
 *
 * - every object is enclosed in the self-described tag 55799 (`d9 d9 f7`);
 * - struct fields come in Go declaration order (the schema's JSON order, `kind` and `apiVersion`
 *   first), as the response encoder (`EncodeNondeterministic`, no sorting) writes them; map keys
 *   and untyped objects (RawExtension, FieldsV1) are sorted bytewise by their encoding (RFC 8949
 *   4.2.1, the deterministic mode's order);
 * - strings, field names and map keys are byte strings (`StringToByteString`,
 *   `FieldNameToByteString`); Go `[]byte` (base64 in JSON) is a byte string under tag 22;
 * - integers in their shortest form, floats in the narrowest width that keeps the value; `null`
 *   stays `null` (`NilContainerAsNull`).
 *
 * Decoding reverses this: byte and text strings both become strings, except under a `bytes`
 * field (or tag 22), where the bytes come back as base64.
 */
import { type SchemaRegistry, type SchemaType, unionMember, type ValueType } from '../../schema';
import { CborDecodeError, CborReader, type ReadShape, readCbor } from './reader';
import { CborWriter, MAJOR, SELF_DESCRIBED_PREFIX, TAG_EXPECTED_BASE64, sortedKeys } from './writer';
import { isObject } from '../../util/json-values';

type Json = unknown;
type JsonObject = Record<string, unknown>;

const isPlainObject = isObject<JsonObject>;

function presentKeys(value: JsonObject): string[] {
  return Object.keys(value).filter((k) => value[k] !== undefined);
}

export class CborEncoder {
  constructor(private readonly registry: SchemaRegistry) {}

  /** Any JSON value without a schema: map keys sorted. */
  untyped(w: CborWriter, value: Json): void {
    if (value === null || value === undefined) {
      w.null();
      return;
    }
    switch (typeof value) {
      case 'string':
        w.string(value);
        return;
      case 'number':
        w.number(value);
        return;
      case 'boolean':
        w.bool(value);
        return;
      case 'object':
        break;
      default:
        throw new TypeError(`cbor: cannot encode a ${typeof value}`);
    }
    if (Array.isArray(value)) {
      w.head(MAJOR.array, value.length);
      for (const v of value) this.untyped(w, v === undefined ? null : v);
      return;
    }
    const obj = value as JsonObject;
    const keys = sortedKeys(presentKeys(obj));
    w.head(MAJOR.map, keys.length);
    for (const k of keys) {
      w.string(k);
      this.untyped(w, obj[k]);
    }
  }

  typed(w: CborWriter, value: Json, type: ValueType): void {
    if (value === null || value === undefined) {
      w.null();
      return;
    }
    switch (type.kind) {
      case 'scalar':
        if (type.scalar === 'bytes' && typeof value === 'string') {
          w.tag(TAG_EXPECTED_BASE64).bytes(Buffer.from(value, 'base64'));
        } else if (type.scalar === 'double' && typeof value === 'number') {
          w.float(value);
        } else {
          this.untyped(w, value);
        }
        return;
      case 'special':
        this.untyped(w, value);
        return;
      case 'message': {
        const t = this.registry.type(type.type);
        // A union type (UnionDef) is written as the value of the field its shape names.
        if (t.union) this.typed(w, value, unionMember(t, value).type);
        else if (isPlainObject(value)) this.object(w, value, t);
        else this.untyped(w, value);
        return;
      }
      case 'list':
        if (!Array.isArray(value)) {
          this.untyped(w, value);
          return;
        }
        w.head(MAJOR.array, value.length);
        for (const v of value) this.typed(w, v, type.item);
        return;
      case 'map': {
        if (!isPlainObject(value)) {
          this.untyped(w, value);
          return;
        }
        const keys = sortedKeys(presentKeys(value));
        w.head(MAJOR.map, keys.length);
        for (const k of keys) {
          w.string(k);
          this.typed(w, value[k], type.value);
        }
        return;
      }
    }
  }

  /** Each type's JSON property positions, TypeMeta's keys before them. */
  private readonly ranks = new WeakMap<SchemaType, Map<string, number>>();

  private rankOf(type: SchemaType): Map<string, number> {
    let ranks = this.ranks.get(type);
    if (!ranks) {
      ranks = new Map(type.properties.map((p, i) => [p.name, i]));
      if (type.typeMeta) ranks.set('kind', -2).set('apiVersion', -1);
      this.ranks.set(type, ranks);
    }
    return ranks;
  }

  /** A struct: TypeMeta first, then the schema's properties in Go order, then unknown keys as they come. */
  object(w: CborWriter, value: JsonObject, type: SchemaType): void {
    const ranks = this.rankOf(type);
    const keys: string[] = [];
    let sorted = true;
    let last = -3;
    for (const k of Object.keys(value)) {
      if (value[k] === undefined) continue;
      const rank = ranks.get(k) ?? Number.MAX_SAFE_INTEGER;
      if (rank < last) sorted = false;
      last = rank;
      keys.push(k);
    }
    // Array.prototype.sort is stable: unknown keys keep their own order after the known ones.
    if (!sorted) keys.sort((a, b) => (ranks.get(a) ?? Number.MAX_SAFE_INTEGER) - (ranks.get(b) ?? Number.MAX_SAFE_INTEGER));
    w.head(MAJOR.map, keys.length);
    for (const k of keys) {
      w.string(k);
      const property = type.property.get(k);
      if (property) this.typed(w, value[k], property.field.type);
      else this.untyped(w, value[k]);
    }
  }

  /** The schema type of a top-level value, from its apiVersion and kind. */
  private topType(value: Json): SchemaType | undefined {
    if (!isPlainObject(value)) return undefined;
    const { apiVersion, kind } = value;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
    return this.registry.kind(apiVersion, kind)?.type;
  }

  /** One object, self-described (`d9 d9 f7 ...`), typed by its apiVersion and kind when known. */
  encode(value: Json): Buffer {
    const w = new CborWriter();
    w.raw(SELF_DESCRIBED_PREFIX);
    const type = this.topType(value);
    if (type) this.object(w, value as JsonObject, type);
    else this.untyped(w, value);
    return w.finish();
  }

  /**
   * One watch event (metav1.WatchEvent `{type, object}`), self-described; `object` is the
   * object's own encoding, copied in as upstream's RawExtension copies CBOR it already holds.
   */
  encodeEvent(type: string, object: Uint8Array): Buffer {
    const w = new CborWriter(object.length + 32);
    w.raw(SELF_DESCRIBED_PREFIX).head(MAJOR.map, 2).string('type').string(type).string('object').raw(object);
    return w.finish();
  }
}

/**
 * Reading shapes from the schema. Only `[]byte` changes how a value reads (base64 instead of
 * text), so a type without bytes anywhere below it needs no shape at all and reads untyped.
 */
class Shapes {
  private readonly withBytes = new Map<string, boolean>();
  private readonly messages = new Map<string, ReadShape>();

  constructor(private readonly registry: SchemaRegistry) {}

  private typeHasBytes(name: string): boolean {
    const known = this.withBytes.get(name);
    if (known !== undefined) return known;
    this.withBytes.set(name, false); // cycles: assume none while looking
    const result = this.registry.type(name).properties.some((p) => this.hasBytes(p.field.type));
    this.withBytes.set(name, result);
    return result;
  }

  hasBytes(type: ValueType): boolean {
    switch (type.kind) {
      case 'scalar':
        return type.scalar === 'bytes';
      case 'message':
        return this.typeHasBytes(type.type);
      case 'list':
        return this.hasBytes(type.item);
      case 'map':
        return this.hasBytes(type.value);
      default:
        return false;
    }
  }

  of(type: ValueType): ReadShape | undefined {
    if (!this.hasBytes(type)) return undefined;
    switch (type.kind) {
      case 'scalar':
        return { bytes: true };
      case 'message':
        return this.message(type.type);
      case 'list':
        return { item: this.of(type.item) };
      case 'map':
        return { item: this.of(type.value) };
      default:
        return undefined;
    }
  }

  message(name: string): ReadShape {
    let shape = this.messages.get(name);
    if (!shape) {
      const type = this.registry.type(name);
      const fields = new Map<string, ReadShape | undefined>();
      shape = {
        field: (key) => {
          if (!fields.has(key)) {
            const p = type.property.get(key);
            fields.set(key, p ? this.of(p.field.type) : undefined);
          }
          return fields.get(key);
        },
      };
      this.messages.set(name, shape);
    }
    return shape;
  }
}

export class CborDecoder {
  private readonly shapes: Shapes;

  constructor(private readonly registry: SchemaRegistry) {
    this.shapes = new Shapes(registry);
  }

  /** The shape of a top-level item read untyped: its kind's, when that kind holds bytes. */
  private shapeOf(untyped: unknown): ReadShape | undefined {
    if (!isPlainObject(untyped) || typeof untyped.apiVersion !== 'string' || typeof untyped.kind !== 'string') return undefined;
    const served = this.registry.kind(untyped.apiVersion, untyped.kind);
    return served && this.shapes.hasBytes({ kind: 'message', type: served.type.name }) ? this.shapes.message(served.type.name) : undefined;
  }

  /**
   * One object as JSON. Read untyped first (apiVersion and kind may come anywhere in the map);
   * kinds holding `[]byte` are read again with their shape.
   */
  decode(bytes: Uint8Array): unknown {
    const untyped = readCbor(bytes);
    const shape = this.shapeOf(untyped);
    return shape ? readCbor(bytes, shape) : untyped;
  }

  /** A `application/cbor-seq` watch stream: each event with its object decoded. */
  decodeEvents(bytes: Uint8Array): { type: string; object: unknown }[] {
    const reader = new CborReader(bytes);
    const events: { type: string; object: unknown }[] = [];
    while (!reader.done) {
      const start = reader.pos;
      const item = reader.read();
      if (!isPlainObject(item)) throw new CborDecodeError('cbor: a watch event must be a map');
      const shape = this.shapeOf(item.object);
      const object = shape
        ? (readCbor(bytes.subarray(start, reader.pos), { field: (k) => (k === 'object' ? shape : undefined) }) as { object: unknown }).object
        : item.object;
      events.push({ type: String(item.type ?? ''), object: object ?? null });
    }
    return events;
  }
}
