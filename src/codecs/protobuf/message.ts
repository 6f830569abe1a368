/**
 * Schema-driven protobuf for one message: Keelson's JSON-shaped objects in, upstream's bytes out,
 * and back.
 *
 * Encoding reproduces upstream's gogo marshaller byte for byte: fields in field-number order;
 * non-pointer scalars and structs always written (zero or not, proto2 `optional` with a
 * value); pointers only when set; repeated fields unpacked, one entry per element; map entries
 * sorted by key with key and value always written (bytes values only when non-null).
 *
 * Decoding yields what upstream's JSON encoding of the decoded Go struct would hold, key order
 * included: absent non-pointer structs become their zero JSON (`"spec": {"containers": null}`),
 * nil slices and maps without `omitempty` become `null`, zero scalars with `omitempty` are left
 * out.
 */
import { Reader } from 'protobufjs/minimal';
import { type FieldDef, type SchemaType, unionFromFields, unionToFields, type ValueType } from '../../schema';
import { readSpecial, specialZero, writeSpecial } from './special';
import { ProtoWriter as Writer } from './writer';
import { compareGoStrings } from '../go-strings';
import { ProtobufDecodeError, readInt64, skipField, tag, WIRE } from './wire-format';
import { isObject as isObjectOf } from '../../util/json-values';

export type JsonObject = Record<string, unknown>;
export type TypeLookup = (name: string) => SchemaType;

/** A value that does not fit its field's type; the message names the field path. */
export class ProtobufEncodeError extends Error {
  constructor(
    readonly reason: string,
    readonly path: readonly string[] = [],
  ) {
    super(path.length ? `${path.join('.')}: ${reason}` : reason);
    this.name = 'ProtobufEncodeError';
  }

  /** Re-throw `err` one field further out. */
  static at(field: string | undefined, err: unknown): ProtobufEncodeError {
    const inner = err instanceof ProtobufEncodeError ? err : new ProtobufEncodeError(err instanceof Error ? err.message : String(err));
    return field === undefined ? inner : new ProtobufEncodeError(inner.reason, [field, ...inner.path]);
  }
}

const isObject = isObjectOf<JsonObject>;

function wireOf(type: ValueType): number {
  if (type.kind === 'scalar') {
    if (type.scalar === 'string' || type.scalar === 'bytes') return WIRE.bytes;
    return type.scalar === 'double' ? WIRE.fixed64 : WIRE.varint;
  }
  return WIRE.bytes;
}

function toNumber(value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isFinite(n)) throw new ProtobufEncodeError(`expected a number, got ${JSON.stringify(value)}`);
  return n;
}

function writeScalar(w: Writer, type: ValueType & { kind: 'scalar' }, value: unknown): void {
  switch (type.scalar) {
    case 'string':
      if (typeof value !== 'string') throw new ProtobufEncodeError(`expected a string, got ${JSON.stringify(value)}`);
      w.string(value);
      return;
    case 'bool':
      if (typeof value !== 'boolean') throw new ProtobufEncodeError(`expected a boolean, got ${JSON.stringify(value)}`);
      w.bool(value);
      return;
    case 'int32':
      w.int32(toNumber(value));
      return;
    case 'int64':
      w.int64(toNumber(value));
      return;
    case 'double':
      w.double(toNumber(value));
      return;
    case 'bytes':
      if (typeof value !== 'string') throw new ProtobufEncodeError(`expected base64 bytes, got ${JSON.stringify(value)}`);
      w.bytes(Buffer.from(value, 'base64'));
      return;
  }
}

function scalarZero(type: ValueType & { kind: 'scalar' }): unknown {
  switch (type.scalar) {
    case 'string':
      return '';
    case 'bool':
      return false;
    default:
      return 0;
  }
}

/** Write one value of `type` under field `number` (tag included). */
function writeValue(w: Writer, number: number, type: ValueType, value: unknown, types: TypeLookup): void {
  if (type.kind === 'scalar') {
    w.uint32(tag(number, wireOf(type)));
    writeScalar(w, type, value ?? scalarZero(type));
    return;
  }
  if (type.kind === 'map') throw new ProtobufEncodeError('a map cannot be a map value or list item');
  w.uint32(tag(number, WIRE.bytes));
  const start = w.begin();
  if (type.kind === 'special') writeSpecial(w, type.special, value);
  else if (type.kind === 'message') writeMessage(w, value, types(type.type), types);
  // Only wrapped lists (a message of their own) reach here; plain lists are unrolled by the caller.
  else for (const item of expectArray(value ?? [])) writeValue(w, 1, type.item, item, types);
  w.end(start);
}

/** A message's fields from its JSON value: its object, or for a union type (UnionDef) the fields its JSON shape sets. */
function writeMessage(w: Writer, value: unknown, type: SchemaType, types: TypeLookup): void {
  if (type.union) writeFields(w, unionToFields(type, value), type, types);
  else writeFields(w, value == null ? undefined : expectObject(value), type, types);
}

function expectObject(value: unknown): JsonObject {
  if (!isObject(value)) throw new ProtobufEncodeError(`expected an object, got ${JSON.stringify(value)}`);
  return value;
}

function expectArray(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new ProtobufEncodeError(`expected an array, got ${JSON.stringify(value)}`);
  return value;
}

function writeField(w: Writer, field: FieldDef, value: unknown, types: TypeLookup): void {
  const type = field.type;
  switch (type.kind) {
    case 'list':
      if (value == null) return;
      if (type.wrapped) writeValue(w, field.number, type, value, types);
      else for (const item of expectArray(value)) writeValue(w, field.number, type.item, item, types);
      return;
    case 'map': {
      if (value == null) return;
      const map = expectObject(value);
      const keys = Object.keys(map).sort(compareGoStrings);
      const valueIsBytes = type.value.kind === 'scalar' && type.value.scalar === 'bytes';
      for (const key of keys) {
        const entry = map[key];
        w.uint32(tag(field.number, WIRE.bytes));
        const start = w.begin();
        w.uint32(tag(1, WIRE.bytes)).string(key);
        if (!(valueIsBytes && entry == null)) writeValue(w, 2, type.value, entry, types);
        w.end(start);
      }
      return;
    }
    case 'scalar':
      // Pointers and []byte are written only when set; value scalars always.
      if (value == null && (field.pointer || type.scalar === 'bytes')) return;
      writeValue(w, field.number, type, value, types);
      return;
    default:
      if (value == null && field.pointer) return;
      writeValue(w, field.number, type, value, types);
  }
}

/** Write every field of `type` from `obj` (undefined: the zero value) in field-number order. */
export function writeFields(w: Writer, obj: JsonObject | undefined, type: SchemaType, types: TypeLookup): void {
  for (const field of type.protoFields) {
    try {
      if (field.inline) {
        // The embedded struct's fields live in this same JSON object.
        w.uint32(tag(field.number, WIRE.bytes));
        const start = w.begin();
        writeFields(w, obj, types((field.type as { type: string }).type), types);
        w.end(start);
        continue;
      }
      writeField(w, field, obj?.[field.name], types);
    } catch (err) {
      throw ProtobufEncodeError.at(field.inline ? undefined : field.name, err);
    }
  }
}

/** Encode a JSON-shaped object as the protobuf message of `type` (without envelope). */
export function encodeMessage(obj: JsonObject, type: SchemaType, types: TypeLookup): Uint8Array {
  const w = new Writer();
  writeFields(w, obj, type, types);
  return w.finish();
}

function setKey(obj: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

function readScalar(r: Reader, type: ValueType & { kind: 'scalar' }): unknown {
  switch (type.scalar) {
    case 'string':
      return r.string();
    case 'bool':
      return r.bool();
    case 'int32':
      return r.int32();
    case 'int64':
      return readInt64(r);
    case 'double':
      return r.double();
    case 'bytes': {
      const bytes = r.bytes();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64');
    }
  }
}

/** Read one value of `type` whose tag has been read. */
function readValue(r: Reader, wire: number, type: ValueType, types: TypeLookup): unknown {
  if (type.kind === 'scalar') {
    if (wire !== wireOf(type)) throw new ProtobufDecodeError(`wrong wire type ${wire} for ${type.scalar}`);
    return readScalar(r, type);
  }
  if (wire !== WIRE.bytes) throw new ProtobufDecodeError(`wrong wire type ${wire} for a message`);
  const end = r.uint32() + r.pos;
  if (end > r.len) throw new ProtobufDecodeError('truncated message');
  switch (type.kind) {
    case 'special':
      return readSpecial(r, end, type.special);
    case 'message':
      return readMessage(r, end, types(type.type), types);
    case 'list': {
      const items: unknown[] = [];
      while (r.pos < end) {
        const t = r.uint32();
        if (t >>> 3 === 1) items.push(readValue(r, t & 7, type.item, types));
        else skipField(r, t & 7);
      }
      return items;
    }
    case 'map':
      throw new ProtobufDecodeError('unsupported nested map');
  }
}

/** A map entry: key (1) and value (2); an absent value is the Go zero value. */
function readMapEntry(r: Reader, type: ValueType & { kind: 'map' }, into: JsonObject, types: TypeLookup): void {
  const end = r.uint32() + r.pos;
  let key = '';
  let value: unknown;
  while (r.pos < end) {
    const t = r.uint32();
    if (t >>> 3 === 1 && (t & 7) === WIRE.bytes) key = r.string();
    else if (t >>> 3 === 2) value = readValue(r, t & 7, type.value, types);
    else skipField(r, t & 7);
  }
  // A wrapped list decoded as a map value stays nil when it has no items (upstream unmarshals
  // into a fresh nil slice), unlike a field, which is set to an empty non-nil slice.
  if (type.value.kind === 'list' && Array.isArray(value) && value.length === 0) value = null;
  setKey(into, key, value === undefined ? zeroOf(type.value, types) : value);
}

function zeroOf(type: ValueType, types: TypeLookup): unknown {
  switch (type.kind) {
    case 'scalar':
      return type.scalar === 'bytes' ? null : scalarZero(type);
    case 'special':
      return specialZero(type.special);
    case 'message': {
      const t = types(type.type);
      return t.union ? unionFromFields(t, assemble(t, NOTHING, types)) : assemble(t, NOTHING, types);
    }
    default:
      return null;
  }
}

const NOTHING: readonly unknown[] = [];

/** Field slot (index in `type.fields`) by field number, computed once per type. Shared by every server in the process, as the types are. */
const slotTables = new WeakMap<SchemaType, Int16Array>();

function slotsOf(type: SchemaType): Int16Array {
  let slots = slotTables.get(type);
  if (!slots) {
    slots = new Int16Array(Math.max(0, ...type.fields.map((f) => f.number)) + 1).fill(-1);
    type.fields.forEach((f, i) => (slots![f.number] = i));
    slotTables.set(type, slots);
  }
  return slots;
}

/** Read fields up to `end`, then lay them out as upstream's JSON would. */
export function readFields(r: Reader, end: number, type: SchemaType, types: TypeLookup): JsonObject {
  const slots = slotsOf(type);
  const got: unknown[] = new Array(type.fields.length);
  while (r.pos < end) {
    const t = r.uint32();
    const number = t >>> 3;
    const wire = t & 7;
    const slot = number < slots.length ? slots[number]! : -1;
    if (slot < 0) {
      skipField(r, wire);
      continue;
    }
    const field = type.fields[slot]!;
    const ft = field.type;
    if (ft.kind === 'map') {
      if (wire !== WIRE.bytes) throw new ProtobufDecodeError(`${field.name}: wrong wire type ${wire} for a map`);
      let map = got[slot] as JsonObject | undefined;
      if (!map) got[slot] = map = {};
      readMapEntry(r, ft, map, types);
    } else if (ft.kind === 'list' && !ft.wrapped) {
      let items = got[slot] as unknown[] | undefined;
      if (!items) got[slot] = items = [];
      if (wire === WIRE.bytes && ft.item.kind === 'scalar' && wireOf(ft.item) !== WIRE.bytes) {
        // Packed repeated scalars: accepted on input, never written (upstream is proto2).
        const packedEnd = r.uint32() + r.pos;
        while (r.pos < packedEnd) items.push(readScalar(r, ft.item));
      } else items.push(readValue(r, wire, ft.item, types));
    } else {
      const value = readValue(r, wire, ft, types);
      const previous = got[slot];
      // A repeated occurrence of a message merges into the earlier one (protobuf semantics).
      got[slot] = isObject(previous) && isObject(value) ? { ...previous, ...value } : value;
    }
  }
  return assemble(type, got, types);
}

/** A nested message's JSON value: its object, or a union type's (UnionDef) value in the shape its fields give. */
function readMessage(r: Reader, end: number, type: SchemaType, types: TypeLookup): unknown {
  const fields = readFields(r, end, type, types);
  return type.union ? unionFromFields(type, fields) : fields;
}

/** Go's encoding/json over the decoded struct: which keys appear, in what order, with what zero values. */
function assemble(type: SchemaType, got: readonly unknown[], types: TypeLookup): JsonObject {
  const out: JsonObject = {};
  const fields = type.fields;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    const value = got[i];
    const ft = field.type;
    if (field.inline) {
      const inner = (value as JsonObject | undefined) ?? assemble(types((ft as { type: string }).type), NOTHING, types);
      for (const key of Object.keys(inner)) out[key] = inner[key];
      continue;
    }
    let json: unknown;
    switch (ft.kind) {
      case 'scalar':
        if (value === undefined) {
          // nil pointer / nil []byte → absent or null; value scalar → its zero.
          if (field.pointer || ft.scalar === 'bytes') {
            if (field.omitEmpty) continue;
            json = null;
          } else {
            json = scalarZero(ft);
            if (field.omitEmpty && !json) continue;
          }
        } else {
          json = value;
          if (field.omitEmpty && !field.pointer && (ft.scalar === 'bytes' ? value === '' : !value)) continue;
        }
        break;
      case 'special':
      case 'message':
        if (value === undefined && field.pointer) {
          if (field.omitEmpty) continue;
          json = null;
        } else json = value === undefined ? zeroOf(ft, types) : value;
        break;
      case 'list':
      case 'map': {
        const empty = value === undefined || (Array.isArray(value) ? value.length === 0 : Object.keys(value as JsonObject).length === 0);
        if (empty && field.omitEmpty) continue;
        // A decoded nil slice or map is JSON null; a wrapped list present but empty is [].
        json = value === undefined || (empty && !(ft.kind === 'list' && ft.wrapped)) ? null : value;
        break;
      }
    }
    // Schema names are never `__proto__`; plain assignment is safe here.
    out[field.name] = json;
  }
  return out;
}

/** Decode the protobuf message `type` from `bytes` into upstream's JSON shape. */
export function decodeMessage(bytes: Uint8Array, type: SchemaType, types: TypeLookup): JsonObject {
  const r = Reader.create(bytes);
  return readFields(r, r.len, type, types);
}
