/**
 * A CBOR reader for request bodies and watch streams, with upstream's decode rules
 * (apimachinery `modes.Decode`): duplicate map keys are an error, text strings must be valid
 * UTF-8, NaN and infinities are refused, indefinite lengths are accepted, and tags are read
 * through (self-described 55799, expected-base64 22, and any other tag's content).
 *
 * Byte strings become text, or base64 under a `bytes` shape (the schema's []byte) or tag 22:
 * the shape comes from the schema as the reader descends (codec.ts).
 */
import { MAJOR, TAG_EXPECTED_BASE64 } from './writer';

/**
 * What the schema says about a value being read: under a `bytes` shape byte strings (and text)
 * become base64, elsewhere text; `field` gives a map entry's shape by key (structs), `item` that
 * of list items and map values. No shape: untyped.
 */
export interface ReadShape {
  readonly bytes?: boolean;
  field?(key: string): ReadShape | undefined;
  readonly item?: ReadShape;
}

/** Tag 22's content: a byte string to show as base64, wherever it lands. */
const BASE64: ReadShape = { bytes: true };

export class CborDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CborDecodeError';
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const BREAK = Symbol('break');
/** Upstream's MaxNestedLevels. */
const MAX_DEPTH = 64;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Reads CBOR items straight into JSON values, typed by an optional ReadShape as it goes (one
 * pass, no intermediate tree).
 */
export class CborReader {
  pos = 0;
  private readonly view: DataView;
  private readonly bytes: Buffer;

  constructor(buf: Uint8Array) {
    this.bytes = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  private need(n: number): void {
    if (this.pos + n > this.bytes.length) throw new CborDecodeError('cbor: unexpected EOF');
  }

  private byte(): number {
    this.need(1);
    return this.bytes[this.pos++]!;
  }

  /** The argument of a head whose initial byte had additional info `info`; -1 for indefinite. */
  private argument(info: number): number {
    if (info < 24) return info;
    const view = this.view;
    switch (info) {
      case 24:
        return this.byte();
      case 25:
        this.need(2);
        this.pos += 2;
        return view.getUint16(this.pos - 2);
      case 26:
        this.need(4);
        this.pos += 4;
        return view.getUint32(this.pos - 4);
      case 27: {
        this.need(8);
        this.pos += 8;
        const big = view.getBigUint64(this.pos - 8);
        if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new CborDecodeError('cbor: integer exceeds the range a JSON number keeps exactly');
        return Number(big);
      }
      case 31:
        return -1;
      default:
        throw new CborDecodeError(`cbor: invalid additional information ${info}`);
    }
  }

  private chunks(major: number, length: number): Buffer {
    if (length >= 0) {
      this.need(length);
      this.pos += length;
      return this.bytes.subarray(this.pos - length, this.pos);
    }
    const parts: Uint8Array[] = [];
    for (;;) {
      const initial = this.byte();
      if (initial === 0xff) break;
      if (initial >> 5 !== major) throw new CborDecodeError('cbor: wrong major type in an indefinite-length string');
      parts.push(this.chunks(major, this.argument(initial & 0x1f)));
    }
    return Buffer.concat(parts);
  }

  private float16(bits: number): number {
    const exp = (bits >> 10) & 0x1f;
    const frac = bits & 0x3ff;
    const sign = bits & 0x8000 ? -1 : 1;
    if (exp === 0x1f) return frac ? NaN : sign * Infinity;
    return exp === 0 ? sign * frac * 2 ** -24 : sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }

  /** A text string: ASCII copied directly, anything else must be valid UTF-8. */
  private text(bytes: Buffer): string {
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i]! >= 0x80) {
        try {
          return utf8.decode(bytes);
        } catch {
          throw new CborDecodeError('cbor: invalid UTF-8 string');
        }
      }
    }
    return bytes.toString('latin1');
  }

  private item(depth: number, shape: ReadShape | undefined): Json | typeof BREAK {
    if (depth > MAX_DEPTH) throw new CborDecodeError(`cbor: exceeded max nested level ${MAX_DEPTH}`);
    const initial = this.byte();
    const major = initial >> 5;
    const info = initial & 0x1f;
    switch (major) {
      case MAJOR.unsigned:
        return this.argument(info);
      case MAJOR.negative:
        return -1 - this.argument(info);
      case MAJOR.bytes: {
        const bytes = this.chunks(major, this.argument(info));
        return shape?.bytes ? bytes.toString('base64') : bytes.toString('utf8');
      }
      case MAJOR.text: {
        const text = this.text(this.chunks(major, this.argument(info)));
        return shape?.bytes && shape !== BASE64 ? Buffer.from(text, 'utf8').toString('base64') : text;
      }
      case MAJOR.array: {
        const n = this.argument(info);
        const out: Json[] = [];
        const itemShape = shape?.item;
        for (let i = 0; n < 0 || i < n; i++) {
          const v = this.item(depth + 1, itemShape);
          if (v === BREAK) {
            if (n < 0) break;
            throw new CborDecodeError('cbor: unexpected break');
          }
          out.push(v);
        }
        return out;
      }
      case MAJOR.map:
        return this.map(this.argument(info), depth, shape);
      case MAJOR.tag: {
        const tag = this.argument(info);
        // Tag 22 marks bytes shown as base64; 55799 (self-described), dates and unknown tags
        // give their content (UnrecognizedTagContentToAny).
        const content = this.item(depth + 1, tag === TAG_EXPECTED_BASE64 ? BASE64 : shape);
        if (content === BREAK) throw new CborDecodeError('cbor: unexpected break');
        return content;
      }
      default:
        return this.simple(info);
    }
  }

  private map(n: number, depth: number, shape: ReadShape | undefined): { [key: string]: Json } {
    const out: { [key: string]: Json } = {};
    for (let i = 0; n < 0 || i < n; i++) {
      const k = this.item(depth + 1, undefined);
      if (k === BREAK) {
        if (n < 0) break;
        throw new CborDecodeError('cbor: unexpected break');
      }
      if (typeof k !== 'string') throw new CborDecodeError(`cbor: map key of type ${Array.isArray(k) ? 'array' : typeof k} is not a string`);
      const v = this.item(depth + 1, shape?.field ? shape.field(k) : shape?.item);
      if (v === BREAK) throw new CborDecodeError('cbor: unexpected break');
      // Values are never undefined, so the own-property check only runs for keys seen before (or Object's).
      if (out[k] !== undefined && Object.hasOwn(out, k)) {
        throw new CborDecodeError(`cbor: found duplicate map key "${k}" at map element index ${i}`);
      }
      if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      else out[k] = v;
    }
    return out;
  }

  private simple(info: number): Json | typeof BREAK {
    const view = this.view;
    let value: number;
    switch (info) {
      case 20:
        return false;
      case 21:
        return true;
      case 22:
      case 23:
        return null;
      case 25:
        this.need(2);
        value = this.float16(view.getUint16(this.pos));
        this.pos += 2;
        break;
      case 26:
        this.need(4);
        value = view.getFloat32(this.pos);
        this.pos += 4;
        break;
      case 27:
        this.need(8);
        value = view.getFloat64(this.pos);
        this.pos += 8;
        break;
      case 31:
        return BREAK;
      default:
        throw new CborDecodeError(`cbor: unsupported simple value ${info}`);
    }
    if (!Number.isFinite(value)) throw new CborDecodeError(`cbor: floating-point ${value} is not allowed`);
    return value;
  }

  /** The next complete data item, typed by `shape` when given. */
  read(shape?: ReadShape): Json {
    const v = this.item(0, shape);
    if (v === BREAK) throw new CborDecodeError('cbor: unexpected break');
    return v;
  }
}

/** Decode exactly one data item (RFC 8949 5.1: trailing bytes make the input invalid). */
export function readCbor(bytes: Uint8Array, shape?: ReadShape): unknown {
  if (bytes.length === 0) throw new CborDecodeError('cbor: unexpected EOF');
  const reader = new CborReader(bytes);
  const value = reader.read(shape);
  if (!reader.done) throw new CborDecodeError(`cbor: ${bytes.length - reader.pos} bytes of extraneous data starting at index ${reader.pos}`);
  return value;
}

/** Decode a CBOR sequence (RFC 8742, `application/cbor-seq`): every item, in order. */
export function readCborSequence(bytes: Uint8Array, shape?: ReadShape): unknown[] {
  const reader = new CborReader(bytes);
  const out: unknown[] = [];
  while (!reader.done) out.push(reader.read(shape));
  return out;
}
