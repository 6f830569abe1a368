/**
 * A CBOR (RFC 8949) writer into one growing buffer, producing the shortest forms upstream's
 * encoder (fxamacker/cbor in apimachinery's `modes.Encode`) produces: minimal-length heads,
 * definite lengths only, floats in the narrowest IEEE width that keeps the value
 * (`ShortestFloat16`), and Go strings as byte strings (`StringToByteString`).
 */
import { GrowableWriter } from '../growable-buffer';

/** Major types (RFC 8949 3.1). */
export const MAJOR = {
  unsigned: 0,
  negative: 1,
  bytes: 2,
  text: 3,
  array: 4,
  map: 5,
  tag: 6,
  simple: 7,
} as const;

/** Tag 55799 "self-described CBOR": upstream encloses every encoded object in it (`d9 d9 f7`). */
export const SELF_DESCRIBED_TAG = 55799;
export const SELF_DESCRIBED_PREFIX = Buffer.from([0xd9, 0xd9, 0xf7]);
/** Tag 22: a byte string expected to be shown as base64 (Go `[]byte`, JSON's base64 strings). */
export const TAG_EXPECTED_BASE64 = 22;

const f32 = new Float32Array(1);

/** The float16 bits of `value` when it is exactly representable there, else undefined. */
function float16Bits(value: number): number | undefined {
  if (value === 0) return Object.is(value, -0) ? 0x8000 : 0;
  const sign = value < 0 ? 0x8000 : 0;
  const abs = Math.abs(value);
  const exp = Math.floor(Math.log2(abs));
  if (exp > 15 || exp < -24) return undefined;
  if (exp >= -14) {
    // Normal: 10 fraction bits.
    const mantissa = abs / 2 ** exp - 1;
    const frac = mantissa * 1024;
    if (!Number.isInteger(frac)) return undefined;
    return sign | ((exp + 15) << 10) | frac;
  }
  // Subnormal: value = frac * 2^-24.
  const frac = abs * 2 ** 24;
  if (!Number.isInteger(frac) || frac >= 1024) return undefined;
  return sign | frac;
}

export class CborWriter extends GrowableWriter {
  constructor(initialSize = 4096) {
    super(initialSize);
  }

  /** A head: major type and argument in the shortest encoding. */
  head(major: number, n: number): this {
    this.ensure(9);
    const buf = this.buf;
    const m = major << 5;
    if (n < 24) buf[this.pos++] = m | n;
    else if (n < 0x100) {
      buf[this.pos++] = m | 24;
      buf[this.pos++] = n;
    } else if (n < 0x10000) {
      buf[this.pos++] = m | 25;
      buf.writeUInt16BE(n, this.pos);
      this.pos += 2;
    } else if (n < 0x100000000) {
      buf[this.pos++] = m | 26;
      buf.writeUInt32BE(n, this.pos);
      this.pos += 4;
    } else {
      buf[this.pos++] = m | 27;
      buf.writeBigUInt64BE(BigInt(n), this.pos);
      this.pos += 8;
    }
    return this;
  }

  /** An integer (major 0 or 1). */
  integer(value: number): this {
    return value >= 0 ? this.head(MAJOR.unsigned, value) : this.head(MAJOR.negative, -1 - value);
  }

  /** A float in the shortest of half, single and double precision that keeps its value. */
  float(value: number): this {
    if (!Number.isFinite(value)) throw new RangeError(`cbor: cannot encode ${value}: NaN and infinities have no JSON form`);
    this.ensure(9);
    const half = float16Bits(value);
    if (half !== undefined) {
      this.buf[this.pos++] = 0xf9;
      this.buf.writeUInt16BE(half, this.pos);
      this.pos += 2;
      return this;
    }
    f32[0] = value;
    if (f32[0] === value) {
      this.buf[this.pos++] = 0xfa;
      this.buf.writeFloatBE(value, this.pos);
      this.pos += 4;
      return this;
    }
    this.buf[this.pos++] = 0xfb;
    this.buf.writeDoubleBE(value, this.pos);
    this.pos += 8;
    return this;
  }

  /** A JSON number: integers as CBOR integers, everything else as a float (as Go's int64/float64 split). */
  number(value: number): this {
    return Number.isSafeInteger(value) ? this.integer(value) : this.float(value);
  }

  bool(value: boolean): this {
    this.ensure(1);
    this.buf[this.pos++] = value ? 0xf5 : 0xf4;
    return this;
  }

  null(): this {
    this.ensure(1);
    this.buf[this.pos++] = 0xf6;
    return this;
  }

  /** A JS string's UTF-8 bytes as a string of `major` (byte string by default, as upstream). */
  string(value: string, major: number = MAJOR.bytes): this {
    const n = value.length;
    if (n < 24) {
      // Short ASCII strings (most keys and values): one head byte, then the characters.
      this.ensure(n + 1);
      const start = this.pos;
      if (this.copyAscii(value, start + 1) === n) {
        this.buf[start] = (major << 5) | n;
        this.pos = start + 1 + n;
        return this;
      }
    }
    const length = Buffer.byteLength(value, 'utf8');
    this.head(major, length);
    this.ensure(length);
    this.pos += this.buf.write(value, this.pos, 'utf8');
    return this;
  }

  bytes(value: Uint8Array): this {
    this.head(MAJOR.bytes, value.length);
    return this.raw(value);
  }

  /** Bytes already encoded as CBOR (e.g. a cached object inside a watch event). */
  raw(value: Uint8Array): this {
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
    return this;
  }

  tag(n: number): this {
    return this.head(MAJOR.tag, n);
  }
}

/**
 * Map keys in the order of their encoded bytes (RFC 8949 4.2.1 "Core Deterministic Encoding"),
 * upstream's deterministic order; for its response mode (`EncodeNondeterministic`) map order is
 * unspecified, and this order is one of them. A minimal head grows with the length, so the
 * encoded order is: shorter UTF-8 first, then bytewise.
 */
export function sortedKeys(keys: string[]): string[] {
  if (keys.length < 2) return keys;
  if (keys.every((k) => !/[^\x00-\x7f]/.test(k))) {
    // ASCII: byte length is the string length, bytes compare as code units.
    return keys.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  }
  return keys
    .map((k) => ({ k, b: Buffer.from(k, 'utf8') }))
    .sort((x, y) => x.b.length - y.b.length || Buffer.compare(x.b, y.b))
    .map((x) => x.k);
}
