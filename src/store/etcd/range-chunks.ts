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
 * buffer did.
 */
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { KeyValue } from '../../gen/etcd/mvccpb/kv';
import { type RangeResponse, ResponseHeader } from '../../gen/etcd/etcdserverpb/rpc';

/** Reads bytes in order across a list of chunks. */
class ChunkCursor {
  private index = 0;
  private at = 0;
  /** Bytes left from the cursor on. */
  left: number;

  constructor(private readonly chunks: readonly Uint8Array[]) {
    let total = 0;
    for (const chunk of chunks) total += chunk.length;
    this.left = total;
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

  /** A varint, up to 2^53 (lengths, tags, counts, booleans). */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    throw new Error('varint too long');
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
  const message: RangeResponse = { header: undefined, kvs: [], more: false, count: 0 };
  while (cursor.left > 0) {
    const tag = cursor.varint();
    // As the generated decoder: a zero tag or an end-group ends the message.
    if (tag === 0 || (tag & 7) === 4) break;
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (wire === 2) {
      const bytes = cursor.take(cursor.varint());
      if (field === 1) message.header = ResponseHeader.decode(new BinaryReader(bytes));
      else if (field === 2) message.kvs.push(KeyValue.decode(new BinaryReader(bytes)));
    } else if (wire === 0) {
      const value = cursor.varint();
      if (field === 3) message.more = value !== 0;
      else if (field === 4) message.count = value;
    } else if (wire === 1) {
      cursor.skip(8);
    } else if (wire === 5) {
      cursor.skip(4);
    } else {
      throw new Error(`unexpected wire type ${wire}`);
    }
  }
  return message;
}
