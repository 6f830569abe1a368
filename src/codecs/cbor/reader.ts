/**
 * A CBOR reader for request bodies and watch streams, with upstream's decode rules
 * (apimachinery `modes.Decode`): duplicate map keys are an error, text strings must be valid
 * UTF-8, NaN and infinities are refused, indefinite lengths are accepted, and tags are read
 * through (self-described 55799, expected-base64 22, and any other tag's content).
 *
 * Byte strings stay bytes (`Uint8Array`) here, and tag 22 is kept as a `Base64Bytes`: whether
 * they become text or base64 depends on the schema type they land in (codec.ts).
 */
import { MAJOR, TAG_EXPECTED_BASE64 } from './writer';

/** A byte string under tag 22: shown as base64 wherever it ends up as a string. */
export class Base64Bytes {
  constructor(readonly bytes: Uint8Array) {}
}

/** A decoded item: JSON-shaped, except byte strings. */
export type CborValue = null | boolean | number | string | Uint8Array | Base64Bytes | CborValue[] | { [key: string]: CborValue };

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

export class CborReader {
  pos = 0;

  constructor(private readonly buf: Uint8Array) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new CborDecodeError('cbor: unexpected EOF');
  }

  private byte(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  /** The argument of a head whose initial byte had additional info `info`; -1 for indefinite. */
  private argument(info: number): number {
    if (info < 24) return info;
    const view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
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

  private chunks(major: number, length: number): Uint8Array {
    if (length >= 0) {
      this.need(length);
      this.pos += length;
      return this.buf.subarray(this.pos - length, this.pos);
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

  private item(depth: number): CborValue | typeof BREAK {
    if (depth > MAX_DEPTH) throw new CborDecodeError(`cbor: exceeded max nested level ${MAX_DEPTH}`);
    const initial = this.byte();
    const major = initial >> 5;
    const info = initial & 0x1f;
    switch (major) {
      case MAJOR.unsigned:
        return this.argument(info);
      case MAJOR.negative:
        return -1 - this.argument(info);
      case MAJOR.bytes:
        return this.chunks(major, this.argument(info));
      case MAJOR.text: {
        try {
          return utf8.decode(this.chunks(major, this.argument(info)));
        } catch {
          throw new CborDecodeError('cbor: invalid UTF-8 string');
        }
      }
      case MAJOR.array: {
        const n = this.argument(info);
        const out: CborValue[] = [];
        for (let i = 0; n < 0 || i < n; i++) {
          const v = this.item(depth + 1);
          if (v === BREAK) {
            if (n < 0) break;
            throw new CborDecodeError('cbor: unexpected break');
          }
          out.push(v);
        }
        return out;
      }
      case MAJOR.map:
        return this.map(this.argument(info), depth);
      case MAJOR.tag: {
        const tag = this.argument(info);
        const content = this.item(depth + 1);
        if (content === BREAK) throw new CborDecodeError('cbor: unexpected break');
        if (tag === TAG_EXPECTED_BASE64 && content instanceof Uint8Array) return new Base64Bytes(content);
        // Self-described CBOR (55799), dates and unknown tags: the content (UnrecognizedTagContentToAny).
        return content;
      }
      default:
        return this.simple(info);
    }
  }

  private map(n: number, depth: number): { [key: string]: CborValue } {
    const out: { [key: string]: CborValue } = {};
    for (let i = 0; n < 0 || i < n; i++) {
      const k = this.item(depth + 1);
      if (k === BREAK) {
        if (n < 0) break;
        throw new CborDecodeError('cbor: unexpected break');
      }
      let key: string;
      if (typeof k === 'string') key = k;
      else if (k instanceof Uint8Array) key = Buffer.from(k.buffer, k.byteOffset, k.byteLength).toString('utf8');
      else throw new CborDecodeError(`cbor: map key of type ${Array.isArray(k) ? 'array' : typeof k} is not a string`);
      const v = this.item(depth + 1);
      if (v === BREAK) throw new CborDecodeError('cbor: unexpected break');
      if (Object.prototype.hasOwnProperty.call(out, key)) {
        throw new CborDecodeError(`cbor: found duplicate map key "${key}" at map element index ${i}`);
      }
      if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      else out[key] = v;
    }
    return out;
  }

  private simple(info: number): CborValue | typeof BREAK {
    const view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
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

  /** The next complete data item. */
  read(): CborValue {
    const v = this.item(0);
    if (v === BREAK) throw new CborDecodeError('cbor: unexpected break');
    return v;
  }
}

/** Decode exactly one data item (RFC 8949 5.1: trailing bytes make the input invalid). */
export function readCbor(bytes: Uint8Array): CborValue {
  if (bytes.length === 0) throw new CborDecodeError('cbor: unexpected EOF');
  const reader = new CborReader(bytes);
  const value = reader.read();
  if (!reader.done) throw new CborDecodeError(`cbor: ${bytes.length - reader.pos} bytes of extraneous data starting at index ${reader.pos}`);
  return value;
}

/** Decode a CBOR sequence (RFC 8742, `application/cbor-seq`): every item, in order. */
export function readCborSequence(bytes: Uint8Array): CborValue[] {
  const reader = new CborReader(bytes);
  const out: CborValue[] = [];
  while (!reader.done) out.push(reader.read());
  return out;
}
