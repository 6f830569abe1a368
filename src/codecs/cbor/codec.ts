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
import type { FieldDef, SchemaRegistry, SchemaType, ValueType } from '../../core/schema';
import { Base64Bytes, type CborValue, CborDecodeError, readCbor, readCborSequence } from './reader';
import { CborWriter, MAJOR, SELF_DESCRIBED_PREFIX, TAG_EXPECTED_BASE64, sortedKeys } from './writer';

type Json = unknown;
type JsonObject = Record<string, unknown>;

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A Buffer view of the same bytes (no copy). */
function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function presentKeys(value: JsonObject): string[] {
  return Object.keys(value).filter((k) => value[k] !== undefined);
}

export interface CborEncoderOptions {
  /** Fields Go's encoder leaves out (`omitempty` on an empty value); none by default. */
  omitField?: (field: FieldDef, value: unknown) => boolean;
}

export class CborEncoder {
  private readonly omitField: (field: FieldDef, value: unknown) => boolean;

  constructor(
    private readonly registry: SchemaRegistry,
    options: CborEncoderOptions = {},
  ) {
    this.omitField = options.omitField ?? (() => false);
  }

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
      case 'message':
        if (isPlainObject(value)) this.object(w, value, this.registry.type(type.type));
        else this.untyped(w, value);
        return;
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

  /** A struct: TypeMeta first, then the schema's properties in Go order, then unknown keys as they come. */
  object(w: CborWriter, value: JsonObject, type: SchemaType): void {
    const keys: string[] = [];
    if (type.typeMeta) {
      if (value.kind !== undefined) keys.push('kind');
      if (value.apiVersion !== undefined) keys.push('apiVersion');
    }
    const seen = new Set(keys);
    for (const p of type.properties) {
      const v = value[p.name];
      if (v === undefined) continue;
      seen.add(p.name);
      if (!this.omitField(p.field, v)) keys.push(p.name);
    }
    for (const k of presentKeys(value)) if (!seen.has(k)) keys.push(k);
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

export class CborDecoder {
  constructor(private readonly registry: SchemaRegistry) {}

  /** A decoded item as JSON, byte strings as text. */
  untyped(value: CborValue): Json {
    if (value instanceof Uint8Array) return bufferOf(value).toString('utf8');
    if (value instanceof Base64Bytes) return bufferOf(value.bytes).toString('base64');
    if (Array.isArray(value)) return value.map((v) => this.untyped(v));
    if (isPlainObject(value)) {
      const out: JsonObject = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.untyped(v as CborValue);
      return out;
    }
    return value;
  }

  typed(value: CborValue, type: ValueType): Json {
    switch (type.kind) {
      case 'scalar':
        if (type.scalar !== 'bytes') return this.untyped(value);
        if (value instanceof Uint8Array) return bufferOf(value).toString('base64');
        if (typeof value === 'string') return Buffer.from(value, 'utf8').toString('base64');
        return this.untyped(value);
      case 'special':
        return this.untyped(value);
      case 'message':
        return isPlainObject(value) ? this.object(value, this.registry.type(type.type)) : this.untyped(value);
      case 'list':
        return Array.isArray(value) ? value.map((v) => this.typed(v, type.item)) : this.untyped(value);
      case 'map': {
        if (!isPlainObject(value)) return this.untyped(value);
        const out: JsonObject = {};
        for (const [k, v] of Object.entries(value)) out[k] = this.typed(v as CborValue, type.value);
        return out;
      }
    }
  }

  object(value: { [key: string]: CborValue }, type: SchemaType): JsonObject {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      const property = type.property.get(k);
      out[k] = property ? this.typed(v, property.field.type) : this.untyped(v);
    }
    return out;
  }

  /** A decoded top-level item as JSON, typed by its apiVersion and kind when the schema has them. */
  top(value: CborValue): Json {
    if (!isPlainObject(value)) return this.untyped(value);
    const text = (v: CborValue | undefined) => (typeof v === 'string' ? v : v instanceof Uint8Array ? bufferOf(v).toString('utf8') : undefined);
    const apiVersion = text(value.apiVersion);
    const kind = text(value.kind);
    const served = apiVersion !== undefined && kind !== undefined ? this.registry.kind(apiVersion, kind) : undefined;
    return served ? this.object(value, served.type) : this.untyped(value);
  }

  decode(bytes: Uint8Array): Json {
    return this.top(readCbor(bytes));
  }

  /** A `application/cbor-seq` watch stream: each event with its object decoded. */
  decodeEvents(bytes: Uint8Array): { type: string; object: Json }[] {
    return readCborSequence(bytes).map((item) => {
      if (!isPlainObject(item)) throw new CborDecodeError('cbor: a watch event must be a map');
      const type = this.untyped(item.type ?? null);
      return { type: String(type), object: this.top(item.object ?? null) };
    });
  }
}
