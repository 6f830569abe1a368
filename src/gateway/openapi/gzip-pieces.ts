/**
 * One gzip stream (RFC 1952, a single member, as every client reads it) put together from
 * pieces compressed once each: a piece is raw DEFLATE ending in a sync flush (RFC 1951: byte
 * aligned, its blocks not final), and a run of such pieces followed by an empty final block is
 * one DEFLATE stream (pigz makes its parallel streams so). The stream's CRC-32 is combined from
 * the pieces' own (zlib's crc32_combine, by multiplication modulo the CRC polynomial). A v2
 * document of many custom resources is then compressed once per piece, not once per change.
 *
 * A piece may be compressed with the piece before it as its preset dictionary: the decoder's
 * window then holds those very bytes (the output before the piece ends with them), so the
 * piece may refer back into them as one stream would. Many pieces of a document are alike (one
 * custom resource's paths after another's), and compress several times smaller so.
 */
import zlib from 'node:zlib';

/** A piece's part of a gzip stream. */
export interface DeflatedPiece {
  readonly deflated: Buffer;
  readonly crc: number;
  readonly length: number;
}

/** Reflected CRC-32 polynomial (gzip's). */
const POLY = 0xedb88320;

let table: Uint32Array | undefined;

function crc32(bytes: Buffer): number {
  // zlib.crc32 is node's since 20.15; before it, a table.
  const native = (zlib as unknown as { crc32?: (data: Uint8Array) => number }).crc32;
  if (native) return native(bytes) >>> 0;
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? POLY ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = table[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** a(x) * b(x) modulo the CRC polynomial (reflected bit order), zlib's multmodp. */
function multmodp(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** x^(2^k) modulo the polynomial, for k = 0..31 (zlib's x2n_table). */
const X2N = (() => {
  const out = new Uint32Array(32);
  let p = 0x40000000; // x^1
  out[0] = p;
  for (let n = 1; n < 32; n++) out[n] = p = multmodp(p, p);
  return out;
})();

/** x^(n * 2^k) modulo the polynomial (zlib's x2nmodp). */
function x2nmodp(n: number, k: number): number {
  let p = 0x80000000; // x^0
  while (n) {
    if (n & 1) p = multmodp(X2N[k & 31]!, p);
    n = Math.floor(n / 2);
    k++;
  }
  return p;
}

/** The CRC-32 of A then B from A's, B's and B's length (zlib's crc32_combine). */
function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multmodp(x2nmodp(lengthB, 3), crcA) ^ crcB) >>> 0;
}

/** DEFLATE's window: how far back a piece may refer. */
const WINDOW = 32 * 1024;

/** A piece's bytes compressed, after `before` (bytes that end the stream before it, if any). */
export function deflatePiece(bytes: Buffer, level: number, before: readonly Buffer[] = []): DeflatedPiece {
  let dictionary: Buffer | undefined;
  if (before.length) {
    const joined = before.length === 1 ? before[0]! : Buffer.concat(before as Buffer[]);
    if (joined.length) dictionary = joined.subarray(Math.max(0, joined.length - WINDOW));
  }
  const out = zlib.deflateRawSync(bytes, { level, finishFlush: zlib.constants.Z_SYNC_FLUSH, ...(dictionary ? { dictionary } : {}) });
  // A small result is a view of zlib's whole output chunk: kept, it would hold all of it.
  const deflated = out.byteLength < out.buffer.byteLength / 2 ? Buffer.from(out) : out;
  return { deflated, crc: crc32(bytes), length: bytes.length };
}

/** Below this a piece is compressed on its own, and those after it see past it (commas, frames). */
const TINY = 256;

/** What a piece was compressed after: the last piece before it that is not tiny, and the tiny ones between. */
interface Compressed {
  readonly anchor: Buffer | undefined;
  readonly between: readonly Buffer[];
  readonly piece: DeflatedPiece;
}

/**
 * Compresses pieces and keeps them, each with what it was compressed after: a piece is
 * compressed again only when it follows something else than it did (its predecessor changed).
 */
export class PieceCompressor {
  private readonly kept = new WeakMap<Buffer, Compressed>();
  private readonly tiny = new WeakMap<Buffer, DeflatedPiece>();

  constructor(private readonly level: number) {}

  /** The gzip stream of `pieces`' bytes, as pieces to send. */
  gzip(pieces: readonly Buffer[]): Buffer[] {
    const out: DeflatedPiece[] = [];
    let anchor: Buffer | undefined;
    let between: Buffer[] = [];
    for (const p of pieces) {
      if (p.length < TINY) {
        let d = this.tiny.get(p);
        if (!d) this.tiny.set(p, (d = deflatePiece(p, this.level)));
        out.push(d);
        between.push(p);
        continue;
      }
      const kept = this.kept.get(p);
      if (kept && kept.anchor === anchor && kept.between.length === between.length && kept.between.every((b, i) => b === between[i])) {
        out.push(kept.piece);
      } else {
        const piece = deflatePiece(p, this.level, anchor ? [anchor, ...between] : between);
        this.kept.set(p, { anchor, between, piece });
        out.push(piece);
      }
      anchor = p;
      between = [];
    }
    return gzipPieces(out);
  }
}

/** gzip's header: DEFLATE, no flags, no time, unknown OS. */
const HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty final block (fixed Huffman, just the end of block). */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);

/** The gzip stream of the pieces' bytes in order, as pieces to send. */
export function gzipPieces(pieces: readonly DeflatedPiece[]): Buffer[] {
  let crc = 0;
  let length = 0;
  const out: Buffer[] = [HEADER];
  for (const p of pieces) {
    if (!p.length) continue;
    crc = crc32Combine(crc, p.crc, p.length);
    length += p.length;
    out.push(p.deflated);
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(length % 0x100000000, 4);
  out.push(FINAL_BLOCK, trailer);
  return out;
}
