/**
 * The special types' protobuf messages and JSON forms (see the table in src/schema/types.ts),
 * written the way upstream's hand-written marshallers write them.
 */
import type { Reader } from 'protobufjs/minimal';
import type { SpecialType } from '../../schema';
import { formatGoDuration, formatRfc3339, parseGoDuration, parseRfc3339 } from './time';
import { readInt64, skipField, WIRE } from './wire-format';
import type { ProtoWriter as Writer } from './writer';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** JSON of the Go zero value of each special type (what a non-pointer field shows when unset). */
export function specialZero(special: SpecialType): unknown {
  switch (special) {
    case 'Time':
    case 'MicroTime':
    case 'RawExtension':
    case 'FieldsV1':
    case 'JSON':
      return null;
    case 'Duration':
      return '0s';
    case 'Quantity':
      return '0';
    case 'IntOrString':
      return 0;
  }
}

function rawJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/**
 * Write the body of a special type's message (without tag and length). `value` is its JSON form;
 * null or undefined is the zero value.
 */
export function writeSpecial(w: Writer, special: SpecialType, value: unknown): void {
  switch (special) {
    case 'Time':
    case 'MicroTime': {
      // The zero time marshals to an empty message; otherwise both fields are always written.
      // Time keeps whole seconds (nanos always 0), MicroTime truncates to microseconds.
      if (value == null) return;
      if (typeof value !== 'string') throw new TypeError(`expected an RFC 3339 string, got ${typeof value}`);
      const ts = parseRfc3339(value);
      w.uint32((1 << 3) | WIRE.varint).int64(ts.seconds);
      w.uint32((2 << 3) | WIRE.varint).int32(special === 'MicroTime' ? ts.nanos - (ts.nanos % 1000) : 0);
      return;
    }
    case 'Duration': {
      const nanos = value == null ? 0 : typeof value === 'number' ? value : parseGoDuration(String(value));
      w.uint32((1 << 3) | WIRE.varint).int64(nanos);
      return;
    }
    case 'Quantity': {
      const text = value == null ? '0' : typeof value === 'number' ? String(value) : value;
      if (typeof text !== 'string') throw new TypeError(`expected a quantity, got ${typeof value}`);
      w.uint32((1 << 3) | WIRE.bytes).string(text);
      return;
    }
    case 'IntOrString': {
      const isString = typeof value === 'string';
      if (value != null && !isString && typeof value !== 'number') throw new TypeError(`expected an int or string, got ${typeof value}`);
      w.uint32((1 << 3) | WIRE.varint).int64(isString ? 1 : 0);
      w.uint32((2 << 3) | WIRE.varint).int32(isString ? 0 : ((value as number | null) ?? 0));
      w.uint32((3 << 3) | WIRE.bytes).string(isString ? value : '');
      return;
    }
    case 'RawExtension':
    case 'FieldsV1':
    case 'JSON':
      // Raw is written when non-nil; JSON null is a nil Raw.
      if (value != null) w.uint32((1 << 3) | WIRE.bytes).bytes(rawJson(value));
      return;
  }
}

function parseRaw(bytes: Uint8Array): unknown {
  const text = decoder.decode(bytes);
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON (e.g. an object embedded in another encoding): keep the text.
    return text;
  }
}

/** Read a special type's message body up to `end` into its JSON form. */
export function readSpecial(r: Reader, end: number, special: SpecialType): unknown {
  let seconds = 0;
  let nanos = 0;
  let intVal = 0;
  let strVal = '';
  let kind = 0;
  let text: string | undefined;
  let raw: Uint8Array | undefined;
  let empty = true;
  while (r.pos < end) {
    empty = false;
    const tag = r.uint32();
    const field = tag >>> 3;
    const wire = tag & 7;
    switch (special) {
      case 'Time':
      case 'MicroTime':
        if (field === 1 && wire === WIRE.varint) seconds = readInt64(r);
        else if (field === 2 && wire === WIRE.varint) nanos = r.int32();
        else skipField(r, wire);
        break;
      case 'Duration':
        if (field === 1 && wire === WIRE.varint) nanos = readInt64(r);
        else skipField(r, wire);
        break;
      case 'Quantity':
        if (field === 1 && wire === WIRE.bytes) text = r.string();
        else skipField(r, wire);
        break;
      case 'IntOrString':
        if (field === 1 && wire === WIRE.varint) kind = readInt64(r);
        else if (field === 2 && wire === WIRE.varint) intVal = r.int32();
        else if (field === 3 && wire === WIRE.bytes) strVal = r.string();
        else skipField(r, wire);
        break;
      case 'RawExtension':
      case 'FieldsV1':
      case 'JSON':
        if (field === 1 && wire === WIRE.bytes) raw = r.bytes();
        else skipField(r, wire);
        break;
    }
  }
  switch (special) {
    case 'Time':
      return empty ? null : formatRfc3339({ seconds, nanos }, 0);
    case 'MicroTime':
      return empty ? null : formatRfc3339({ seconds, nanos }, 6);
    case 'Duration':
      return formatGoDuration(nanos);
    case 'Quantity':
      return text ?? '0';
    case 'IntOrString':
      return kind === 1 ? strVal : intVal;
    case 'RawExtension':
    case 'FieldsV1':
    case 'JSON':
      return raw === undefined ? null : parseRaw(raw);
  }
}
