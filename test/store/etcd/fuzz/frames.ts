/**
 * HTTP/2 frames and HPACK blocks as the fuzzer takes them apart and builds them: frames parsed
 * from a captured byte stream and written back (a length may be written that is not the
 * payload's), and an HPACK encoder that uses what the client's own encoder never does (Huffman
 * strings, the dynamic table, table size updates), so that valid blocks of every shape exist to
 * mutate and to read back.
 */
import { HUFFMAN_BITS, HUFFMAN_CODES } from '../../../../src/store/etcd/hpack';

export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
  /** The length written in the header, when it is not the payload's (a mutation). */
  declaredLength?: number;
}

/** The frames of a well-formed stream of them (throws on a cut-off frame). */
export function parseFrames(bytes: Buffer): Frame[] {
  const frames: Frame[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < 9) throw new Error(`a frame header cut off at ${at}`);
    const length = bytes.readUIntBE(at, 3);
    if (bytes.length - at - 9 < length) throw new Error(`a frame cut off at ${at}`);
    frames.push({
      type: bytes[at + 3]!,
      flags: bytes[at + 4]!,
      streamId: bytes.readUInt32BE(at + 5) & 0x7fffffff,
      payload: Buffer.from(bytes.subarray(at + 9, at + 9 + length)),
    });
    at += 9 + length;
  }
  return frames;
}

export function frameBytes(frame: Frame): Buffer {
  const out = Buffer.alloc(9 + frame.payload.length);
  out.writeUIntBE((frame.declaredLength ?? frame.payload.length) & 0xffffff, 0, 3);
  out[3] = frame.type;
  out[4] = frame.flags;
  out.writeUInt32BE(frame.streamId >>> 0, 5);
  frame.payload.copy(out, 9);
  return out;
}

export function serializeFrames(frames: readonly Frame[]): Buffer {
  return Buffer.concat(frames.map(frameBytes));
}

/** An HPACK integer with a `prefixBits` prefix, the first byte's high bits `flags` (RFC 7541 5.1). */
export function hpackInteger(value: number, prefixBits: number, flags: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [flags | value];
  const out = [flags | max];
  let rest = value - max;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
  return out;
}

/** `text` (latin1) Huffman-coded, padded with ones (RFC 7541 5.2). */
export function huffmanEncode(text: string): number[] {
  const out: number[] = [];
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < text.length; i++) {
    const symbol = text.charCodeAt(i) & 0xff;
    const code = HUFFMAN_CODES[symbol]!;
    const length = HUFFMAN_BITS[symbol]!;
    for (let b = length - 1; b >= 0; b--) {
      acc = (acc << 1) | ((code >>> b) & 1);
      if (++bits === 8) {
        out.push(acc);
        acc = 0;
        bits = 0;
      }
    }
  }
  if (bits > 0) out.push(((acc << (8 - bits)) | ((1 << (8 - bits)) - 1)) & 0xff);
  return out;
}

export function hpackString(text: string, huffman: boolean): number[] {
  const bytes = huffman ? huffmanEncode(text) : [...Buffer.from(text, 'latin1')];
  return [...hpackInteger(bytes.length, 7, huffman ? 0x80 : 0), ...bytes];
}

/** How one field is represented (RFC 7541 6.1–6.2). */
export type Representation = 'indexed-if-possible' | 'incremental' | 'without-indexing' | 'never-indexed';

export interface EncodeChoice {
  representation: Representation;
  huffman: boolean;
  /** Name by index when the table has it (static or dynamic). */
  indexName: boolean;
}

/**
 * An HPACK encoder with a dynamic table mirrored from the decoder's rules: what a peer like
 * grpc-go or nghttp2 may send, field by field as `choose` says.
 */
export class TestHpackEncoder {
  private entries: Array<[string, string]> = []; // newest first
  private size = 0;
  private limit = 4096;

  constructor(private readonly staticTable: readonly (readonly [string, string])[]) {}

  /** A table size update to put at the start of the next block. */
  resize(size: number): number[] {
    this.limit = size;
    this.evict(0);
    return hpackInteger(size, 5, 0x20);
  }

  encode(fields: readonly (readonly [string, string])[], choose: (name: string, value: string) => EncodeChoice, prefix: number[] = []): Buffer {
    const out = [...prefix];
    for (const [name, value] of fields) {
      const choice = choose(name, value);
      const full = this.find(name, value);
      if (choice.representation === 'indexed-if-possible' && full > 0) {
        out.push(...hpackInteger(full, 7, 0x80));
        continue;
      }
      const nameIndex = choice.indexName ? this.findName(name) : 0;
      const [prefixBits, flags] =
        choice.representation === 'incremental' || choice.representation === 'indexed-if-possible'
          ? [6, 0x40]
          : choice.representation === 'never-indexed'
            ? [4, 0x10]
            : [4, 0];
      out.push(...hpackInteger(nameIndex, prefixBits, flags));
      if (nameIndex === 0) out.push(...hpackString(name, choice.huffman));
      out.push(...hpackString(value, choice.huffman));
      if (flags === 0x40) this.add(name, value);
    }
    return Buffer.from(out);
  }

  private find(name: string, value: string): number {
    for (let i = 1; i < this.staticTable.length; i++) if (this.staticTable[i]![0] === name && this.staticTable[i]![1] === value) return i;
    const at = this.entries.findIndex(([n, v]) => n === name && v === value);
    return at < 0 ? 0 : this.staticTable.length + at;
  }

  private findName(name: string): number {
    for (let i = 1; i < this.staticTable.length; i++) if (this.staticTable[i]![0] === name) return i;
    const at = this.entries.findIndex(([n]) => n === name);
    return at < 0 ? 0 : this.staticTable.length + at;
  }

  private add(name: string, value: string): void {
    const size = name.length + value.length + 32;
    this.evict(size);
    if (size > this.limit) return;
    this.entries.unshift([name, value]);
    this.size += size;
  }

  private evict(room: number): void {
    while (this.size + room > this.limit && this.entries.length > 0) {
      const [n, v] = this.entries.pop()!;
      this.size -= n.length + v.length + 32;
    }
  }
}

/** Where the parts of one representation sit in a block, for mutations that aim at them. */
export interface BlockPart {
  kind: 'indexed' | 'literal' | 'size-update';
  start: number;
  end: number;
  /** The literal's strings: where the length prefix starts, where the octets start and end. */
  strings: Array<{ prefixAt: number; dataAt: number; end: number; huffman: boolean }>;
}

/** The representations of a block (undefined where it does not parse: a mutated block). */
export function scanBlock(block: Buffer): BlockPart[] | undefined {
  const parts: BlockPart[] = [];
  let at = 0;
  const integer = (prefixBits: number): number | undefined => {
    const mask = (1 << prefixBits) - 1;
    let value = block[at++]! & mask;
    if (value < mask) return value;
    for (let shift = 0; shift <= 28; shift += 7) {
      if (at >= block.length) return undefined;
      const byte = block[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
    return undefined;
  };
  const string = (strings: BlockPart['strings']): boolean => {
    if (at >= block.length) return false;
    const prefixAt = at;
    const huffman = (block[at]! & 0x80) !== 0;
    const length = integer(7);
    if (length === undefined || at + length > block.length) return false;
    strings.push({ prefixAt, dataAt: at, end: at + length, huffman });
    at += length;
    return true;
  };
  while (at < block.length) {
    const start = at;
    const first = block[at]!;
    const strings: BlockPart['strings'] = [];
    if (first & 0x80) {
      if (integer(7) === undefined) return undefined;
      parts.push({ kind: 'indexed', start, end: at, strings });
      continue;
    }
    if ((first & 0xe0) === 0x20) {
      if (integer(5) === undefined) return undefined;
      parts.push({ kind: 'size-update', start, end: at, strings });
      continue;
    }
    const index = integer(first & 0x40 ? 6 : 4);
    if (index === undefined) return undefined;
    if (index === 0 && !string(strings)) return undefined;
    if (!string(strings)) return undefined;
    parts.push({ kind: 'literal', start, end: at, strings });
  }
  return parts;
}

/** A gRPC message with its 5-byte prefix. */
export function grpcMessage(message: Uint8Array): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/**
 * What a server sends for one unary call on `streamId`: its SETTINGS first when `settings`, then
 * response headers, the message (when given) and trailers, each header block literal.
 */
export function answerFrames(o: {
  streamId: number;
  settings?: boolean;
  message?: Uint8Array;
  trailers: Array<[string, string]>;
  headers?: Array<[string, string]>;
}): Buffer {
  const literal = (fields: Array<[string, string]>) =>
    Buffer.from(fields.flatMap(([name, value]) => [0x00, ...hpackString(name, false), ...hpackString(value, false)]));
  const frames: Frame[] = [];
  if (o.settings) frames.push({ type: FRAME.SETTINGS, flags: 0, streamId: 0, payload: Buffer.alloc(0) });
  const headers = o.headers ?? [
    [':status', '200'],
    ['content-type', 'application/grpc'],
  ];
  if (o.message === undefined) {
    frames.push({ type: FRAME.HEADERS, flags: FLAG.END_HEADERS | FLAG.END_STREAM, streamId: o.streamId, payload: literal([...headers, ...o.trailers]) });
  } else {
    frames.push({ type: FRAME.HEADERS, flags: FLAG.END_HEADERS, streamId: o.streamId, payload: literal(headers) });
    frames.push({ type: FRAME.DATA, flags: 0, streamId: o.streamId, payload: grpcMessage(o.message) });
    frames.push({ type: FRAME.HEADERS, flags: FLAG.END_HEADERS | FLAG.END_STREAM, streamId: o.streamId, payload: literal(o.trailers) });
  }
  return serializeFrames(frames);
}
