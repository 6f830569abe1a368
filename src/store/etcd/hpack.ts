/**
 * HPACK (RFC 7541) for the etcd client's HTTP/2 connection (h2-connection.ts): a decoder for the
 * header blocks etcd sends, with the static and dynamic tables and Huffman-coded strings, and an
 * encoder for the few fixed request blocks the client sends.
 *
 * The encoder never indexes and never Huffman-codes: a request's block is built once per method
 * and sent as is, so the peer's table is never touched and its size setting does not matter.
 *
 * Strings are kept as latin1 text, one character per byte, so a field's length is its size in
 * octets as the table's accounting counts it, and bytes that are not UTF-8 survive.
 */

/** A block the peer sent that HPACK cannot decode: a connection error (COMPRESSION_ERROR). */
export class HpackError extends Error {
  constructor(message: string) {
    super(`HPACK: ${message}`);
    this.name = 'HpackError';
  }
}

/** The static table (Appendix A), name and value per 1-based index. */
const STATIC: readonly (readonly [string, string])[] = [
  ['', ''],
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];
const STATIC_COUNT = STATIC.length - 1;
/** The static table (1-based), for the tests' encoder. */
export { STATIC as HPACK_STATIC_TABLE };

/** Each byte's Huffman code (Appendix B), then EOS; lengths in HUFFMAN_BITS (exported for tests). */
export const HUFFMAN_CODES: readonly number[] = [
  0x1ff8, 0x7fffd8, 0xfffffe2, 0xfffffe3, 0xfffffe4, 0xfffffe5, 0xfffffe6, 0xfffffe7, 0xfffffe8, 0xffffea, 0x3ffffffc, 0xfffffe9, 0xfffffea, 0x3ffffffd,
  0xfffffeb, 0xfffffec, 0xfffffed, 0xfffffee, 0xfffffef, 0xffffff0, 0xffffff1, 0xffffff2, 0x3ffffffe, 0xffffff3, 0xffffff4, 0xffffff5, 0xffffff6, 0xffffff7,
  0xffffff8, 0xffffff9, 0xffffffa, 0xffffffb, 0x14, 0x3f8, 0x3f9, 0xffa, 0x1ff9, 0x15, 0xf8, 0x7fa, 0x3fa, 0x3fb, 0xf9, 0x7fb, 0xfa, 0x16, 0x17, 0x18, 0x0, 0x1,
  0x2, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x5c, 0xfb, 0x7ffc, 0x20, 0xffb, 0x3fc, 0x1ffa, 0x21, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62, 0x63, 0x64, 0x65,
  0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0xfc, 0x73, 0xfd, 0x1ffb, 0x7fff0, 0x1ffc, 0x3ffc, 0x22, 0x7ffd, 0x3, 0x23, 0x4,
  0x24, 0x5, 0x25, 0x26, 0x27, 0x6, 0x74, 0x75, 0x28, 0x29, 0x2a, 0x7, 0x2b, 0x76, 0x2c, 0x8, 0x9, 0x2d, 0x77, 0x78, 0x79, 0x7a, 0x7b, 0x7ffe, 0x7fc, 0x3ffd,
  0x1ffd, 0xffffffc, 0xfffe6, 0x3fffd2, 0xfffe7, 0xfffe8, 0x3fffd3, 0x3fffd4, 0x3fffd5, 0x7fffd9, 0x3fffd6, 0x7fffda, 0x7fffdb, 0x7fffdc, 0x7fffdd, 0x7fffde,
  0xffffeb, 0x7fffdf, 0xffffec, 0xffffed, 0x3fffd7, 0x7fffe0, 0xffffee, 0x7fffe1, 0x7fffe2, 0x7fffe3, 0x7fffe4, 0x1fffdc, 0x3fffd8, 0x7fffe5, 0x3fffd9,
  0x7fffe6, 0x7fffe7, 0xffffef, 0x3fffda, 0x1fffdd, 0xfffe9, 0x3fffdb, 0x3fffdc, 0x7fffe8, 0x7fffe9, 0x1fffde, 0x7fffea, 0x3fffdd, 0x3fffde, 0xfffff0, 0x1fffdf,
  0x3fffdf, 0x7fffeb, 0x7fffec, 0x1fffe0, 0x1fffe1, 0x3fffe0, 0x1fffe2, 0x7fffed, 0x3fffe1, 0x7fffee, 0x7fffef, 0xfffea, 0x3fffe2, 0x3fffe3, 0x3fffe4, 0x7ffff0,
  0x3fffe5, 0x3fffe6, 0x7ffff1, 0x3ffffe0, 0x3ffffe1, 0xfffeb, 0x7fff1, 0x3fffe7, 0x7ffff2, 0x3fffe8, 0x1ffffec, 0x3ffffe2, 0x3ffffe3, 0x3ffffe4, 0x7ffffde,
  0x7ffffdf, 0x3ffffe5, 0xfffff1, 0x1ffffed, 0x7fff2, 0x1fffe3, 0x3ffffe6, 0x7ffffe0, 0x7ffffe1, 0x3ffffe7, 0x7ffffe2, 0xfffff2, 0x1fffe4, 0x1fffe5, 0x3ffffe8,
  0x3ffffe9, 0xffffffd, 0x7ffffe3, 0x7ffffe4, 0x7ffffe5, 0xfffec, 0xfffff3, 0xfffed, 0x1fffe6, 0x3fffe9, 0x1fffe7, 0x1fffe8, 0x7ffff3, 0x3fffea, 0x3fffeb,
  0x1ffffee, 0x1ffffef, 0xfffff4, 0xfffff5, 0x3ffffea, 0x7ffff4, 0x3ffffeb, 0x7ffffe6, 0x3ffffec, 0x3ffffed, 0x7ffffe7, 0x7ffffe8, 0x7ffffe9, 0x7ffffea,
  0x7ffffeb, 0xffffffe, 0x7ffffec, 0x7ffffed, 0x7ffffee, 0x7ffffef, 0x7fffff0, 0x3ffffee, 0x3fffffff,
];
export const HUFFMAN_BITS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11,
  10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7,
  8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23,
  22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23,
  23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26,
  27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27,
  27, 27, 26, 30,
];
const EOS = 256;

/**
 * The Huffman code as a binary tree, read one bit at a time: node `n`'s children are at
 * `2n` (bit 0) and `2n + 1` (bit 1); a child above zero is the next node, below zero a leaf
 * holding `-(symbol + 1)`, zero no code. Header strings etcd sends are short and, once in the
 * dynamic table, not sent again, so the bitwise walk costs nothing that shows.
 */
const HUFFMAN_TREE = (() => {
  const tree = new Int32Array(2 * 512);
  let nodes = 1;
  for (let symbol = 0; symbol <= EOS; symbol++) {
    const code = HUFFMAN_CODES[symbol]!;
    const bits = HUFFMAN_BITS[symbol]!;
    let node = 0;
    for (let i = bits - 1; i > 0; i--) {
      const slot = 2 * node + ((code >>> i) & 1);
      if (tree[slot] === 0) tree[slot] = nodes++;
      node = tree[slot]!;
    }
    tree[2 * node + (code & 1)] = -(symbol + 1);
  }
  return tree;
})();

/** `bytes` as a Huffman-coded string (section 5.2): at most 7 bits of padding, all ones, no EOS. */
export function huffmanDecode(bytes: Uint8Array, start: number, end: number): string {
  let out = '';
  let node = 0;
  let depth = 0; // bits read since the last symbol
  let ones = true; // whether those bits were all ones
  for (let at = start; at < end; at++) {
    const byte = bytes[at]!;
    for (let bit = 7; bit >= 0; bit--) {
      const b = (byte >>> bit) & 1;
      const next = HUFFMAN_TREE[2 * node + b]!;
      if (next < 0) {
        const symbol = -next - 1;
        if (symbol === EOS) throw new HpackError('a Huffman-coded string holds EOS');
        out += String.fromCharCode(symbol);
        node = 0;
        depth = 0;
        ones = true;
      } else {
        node = next;
        depth++;
        if (b === 0) ones = false;
      }
    }
  }
  if (depth > 7 || !ones) throw new HpackError('a Huffman-coded string ends in bad padding');
  return out;
}

/**
 * Decodes a connection's header blocks, in the order they arrive; the dynamic table lives
 * across them. A block that cannot be decoded leaves the table unusable: the connection must go.
 */
export class HpackDecoder {
  /** Dynamic table entries, oldest first, as name then value. */
  private entries: string[] = [];
  private size = 0;
  private limit: number;

  /** `maxTableSize` is what this side advertised as SETTINGS_HEADER_TABLE_SIZE (4,096 by default). */
  constructor(private readonly maxTableSize = 4096) {
    this.limit = maxTableSize;
  }

  /** The block's fields, as name then value, in order. */
  decode(block: Uint8Array): string[] {
    const fields: string[] = [];
    let at = 0;
    const integer = (prefixBits: number): number => {
      const mask = (1 << prefixBits) - 1;
      let value = block[at++]! & mask;
      if (value < mask) return value;
      for (let shift = 0; ; shift += 7) {
        if (at >= block.length) throw new HpackError('a block ends inside an integer');
        if (shift > 28) throw new HpackError('an integer too large');
        const byte = block[at++]!;
        value += (byte & 0x7f) * 2 ** shift;
        if ((byte & 0x80) === 0) return value;
      }
    };
    const string = (): string => {
      if (at >= block.length) throw new HpackError('a block ends before a string');
      const huffman = (block[at]! & 0x80) !== 0;
      const length = integer(7);
      const end = at + length;
      if (end > block.length) throw new HpackError('a string runs past its block');
      const text = huffman ? huffmanDecode(block, at, end) : latin1(block, at, end);
      at = end;
      return text;
    };
    let fieldSeen = false;
    while (at < block.length) {
      const first = block[at]!;
      if (first & 0x80) {
        // Indexed field.
        const index = integer(7);
        const [name, value] = this.entry(index);
        fields.push(name, value);
        fieldSeen = true;
      } else if (first & 0x40) {
        // Literal, added to the table.
        const index = integer(6);
        const name = index === 0 ? string() : this.entry(index)[0];
        const value = string();
        fields.push(name, value);
        this.add(name, value);
        fieldSeen = true;
      } else if (first & 0x20) {
        // Table size update: only before the block's first field, and within what was advertised.
        if (fieldSeen) throw new HpackError('a table size update after a field');
        const size = integer(5);
        if (size > this.maxTableSize) throw new HpackError(`a table size of ${size} over the ${this.maxTableSize} advertised`);
        this.limit = size;
        this.evict(0);
      } else {
        // Literal not added (0000) or never to be added (0001).
        const index = integer(4);
        const name = index === 0 ? string() : this.entry(index)[0];
        fields.push(name, string());
        fieldSeen = true;
      }
    }
    return fields;
  }

  private entry(index: number): readonly [string, string] {
    if (index === 0) throw new HpackError('index 0');
    if (index <= STATIC_COUNT) return STATIC[index]!;
    const at = this.entries.length - 2 * (index - STATIC_COUNT);
    if (at < 0) throw new HpackError(`index ${index} past the dynamic table`);
    return [this.entries[at]!, this.entries[at + 1]!];
  }

  private add(name: string, value: string): void {
    const size = name.length + value.length + 32;
    this.evict(size);
    // An entry larger than the table empties it and is not added (section 4.4).
    if (size > this.limit) return;
    this.entries.push(name, value);
    this.size += size;
  }

  /** Evicts the oldest entries until `room` more octets fit. */
  private evict(room: number): void {
    let drop = 0;
    while (this.size + room > this.limit && drop < this.entries.length) {
      this.size -= this.entries[drop]!.length + this.entries[drop + 1]!.length + 32;
      drop += 2;
    }
    if (drop > 0) this.entries.splice(0, drop);
  }
}

function latin1(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
}

/** `value` as an HPACK integer with a `prefixBits` prefix, the first byte's high bits `flags`. */
function encodeInteger(value: number, prefixBits: number, flags: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [flags | value];
  const out = [flags | max];
  let rest = value - max;
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

/**
 * A header block of `fields` (name, value pairs): a static entry where name and value match
 * one, else a literal not added to the table, naming a static entry where the name matches.
 * Strings are sent as they are (ASCII), not Huffman-coded.
 */
export function encodeHeaderBlock(fields: readonly (readonly [string, string])[]): Buffer {
  const out: number[] = [];
  for (const [name, value] of fields) {
    const full = STATIC.findIndex(([n, v], i) => i > 0 && n === name && v === value);
    if (full > 0) {
      out.push(...encodeInteger(full, 7, 0x80));
      continue;
    }
    const named = STATIC.findIndex(([n], i) => i > 0 && n === name);
    if (named > 0) out.push(...encodeInteger(named, 4, 0));
    else out.push(0, ...encodeString(name));
    out.push(...encodeString(value));
  }
  return Buffer.from(out);
}

function encodeString(text: string): number[] {
  const bytes = Buffer.from(text, 'latin1');
  return [...encodeInteger(bytes.length, 7, 0), ...bytes];
}
