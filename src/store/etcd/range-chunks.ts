/**
 * A Range response decoded from the DATA frames it arrived in, without joining them first.
 *
 * A page of the watch cache's load is ~14 MB in ~850 frames. Joining them into one buffer to
 * hand the generated decoder cost a copy of every byte into freshly mapped memory (8.5% of
 * start-up with 100,000 objects, docs/BENCHMARKS.md) and, as external memory, prodded V8 into
 * extra full GCs on a heap that is growing by the page. Here the response's top-level fields
 * are read across the frames; each key-value (a few KB) is decoded by the generated decoder
 * from its own bytes: a view of the frame that holds it, or a copy of just those bytes when it
 * spans two. What the result holds (keys and values as views) keeps frames alive as the joined
 * buffer did. The other fields (header, more, count) are gathered as they came and read by the
 * generated decoder, and the message is held to the same strict wire format as a joined response
 * (wire-check.ts), so the result is what the joined message decodes to, or the same refusal.
 */
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { KeyValue } from '../../gen/etcd/mvccpb/kv';
import { RangeResponse } from '../../gen/etcd/etcdserverpb/rpc';
import { RESPONSE_SHAPES, checkWire } from './wire-check';

/** Reads bytes in order across a list of chunks. */
class ChunkCursor {
  private index = 0;
  private at = 0;
  /** Bytes left from the cursor on. */
  left: number;

  /** The whole length of the chunks. */
  readonly total: number;

  constructor(private readonly chunks: readonly Uint8Array[]) {
    let total = 0;
    for (const chunk of chunks) total += chunk.length;
    this.total = total;
    this.left = total;
  }

  /** Bytes read so far. */
  get offset(): number {
    return this.total - this.left;
  }

  /** A copy of the bytes from offset `from` to offset `to` (already read). */
  copy(from: number, to: number): Buffer {
    const out = Buffer.allocUnsafe(to - from);
    let base = 0;
    for (const chunk of this.chunks) {
      const start = Math.max(from, base);
      const end = Math.min(to, base + chunk.length);
      if (start < end) out.set(chunk.subarray(start - base, end - base), start - from);
      base += chunk.length;
      if (base >= to) break;
    }
    return out;
  }

  private advanceChunk(): void {
    while (this.index < this.chunks.length && this.at >= this.chunks[this.index]!.length) {
      this.index++;
      this.at = 0;
    }
  }

  byte(): number {
    if (this.left <= 0) throw new Error('premature end of message');
    this.advanceChunk();
    this.left--;
    return this.chunks[this.index]![this.at++]!;
  }

  /** A varint, exact up to 2^53 (lengths, tags), held to the wire check's rules. */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      if (i === 9 && b > 1) throw new Error('a varint past 64 bits');
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    throw new Error('a varint longer than ten bytes');
  }

  /** The next `n` bytes: a view when they sit in one chunk, else a copy. */
  take(n: number): Uint8Array {
    if (n > this.left) throw new Error('premature end of message');
    this.advanceChunk();
    this.left -= n;
    const chunk = this.chunks[this.index];
    if (chunk === undefined) return Buffer.alloc(0);
    if (this.at + n <= chunk.length) {
      const view = chunk.subarray(this.at, this.at + n);
      this.at += n;
      return view;
    }
    // A Buffer, as the views are (the frames are Buffers): callers may read values as Buffers.
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      this.advanceChunk();
      const from = this.chunks[this.index]!;
      const count = Math.min(n - filled, from.length - this.at);
      out.set(from.subarray(this.at, this.at + count), filled);
      filled += count;
      this.at += count;
    }
    return out;
  }

  skip(n: number): void {
    if (n > this.left) throw new Error('premature end of message');
    this.left -= n;
    while (n > 0) {
      this.advanceChunk();
      const step = Math.min(n, this.chunks[this.index]!.length - this.at);
      this.at += step;
      n -= step;
    }
  }
}

/**
 * The gRPC message in `chunks` (its 5-byte length prefix first), decoded as a RangeResponse:
 * the same result as `RangeResponse.decode` of the joined message.
 */
export function decodeRangeResponseChunks(chunks: readonly Uint8Array[]): RangeResponse {
  const cursor = new ChunkCursor(chunks);
  if (cursor.left < 5) throw new Error(`a response of ${cursor.left} bytes`);
  if (cursor.byte() !== 0) throw new Error('a compressed response (none was asked for)');
  const length = cursor.byte() * 0x1000000 + ((cursor.byte() << 16) | (cursor.byte() << 8) | cursor.byte());
  if (cursor.left !== length) throw new Error(`a frame of ${length} bytes in ${cursor.left}`);
  const kvs: KeyValue[] = [];
  /** Every field but the key-values, as it came (a few bytes: the header, more, count). */
  const rest: Buffer[] = [];
  while (cursor.left > 0) {
    const start = cursor.offset;
    const tag = cursor.varint();
    if (cursor.offset - start > 5 || tag > 0xffffffff) throw new Error('a tag past 32 bits');
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    if (field === 0) throw new Error('a field number of 0');
    if (wire === 2) {
      const bytes = cursor.take(cursor.varint());
      if (field === 2) {
        checkWire(bytes, RESPONSE_SHAPES.KeyValue);
        kvs.push(KeyValue.decode(new BinaryReader(bytes)));
        continue;
      }
    } else if (wire === 0) {
      cursor.varint();
    } else if (wire === 1) {
      cursor.skip(8);
    } else if (wire === 5) {
      cursor.skip(4);
    } else {
      throw new Error(`wire type ${wire} in field ${field}`);
    }
    rest.push(cursor.copy(start, cursor.offset));
  }
  const others = rest.length === 1 ? rest[0]! : Buffer.concat(rest);
  checkWire(others, RESPONSE_SHAPES.RangeResponse);
  const message = RangeResponse.decode(new BinaryReader(others));
  message.kvs = kvs;
  return message;
}
