/**
 * Upstream's protobuf watch stream (`;stream=watch`): a sequence of frames, each a 4-byte
 * big-endian length and then a metav1.WatchEvent written by upstream's *raw* serializer — no
 * prefix, no `Unknown` envelope around the event — with `type` (1) and `object` (2, a
 * RawExtension whose `raw` (1) holds the object as a complete protobuf body: prefix, envelope,
 * object bytes). That is how the API server's watch handler nests its stream encoder around the
 * embedded object encoder.
 */
import { Reader } from 'protobufjs/minimal';
import { ProtobufDecodeError, skipField, tag, WIRE } from './wire-format';
import { ProtoWriter } from './writer';

export interface RawWatchEvent {
  type: string;
  /** The object's complete protobuf body (prefix + envelope). */
  object: Uint8Array;
}

/** The WatchEvent message (no frame length). */
export function encodeWatchEventMessage(type: string, objectBody: Uint8Array): Uint8Array {
  const w = new ProtoWriter(objectBody.length + 32);
  w.uint32(tag(1, WIRE.bytes)).string(type);
  w.uint32(tag(2, WIRE.bytes));
  const start = w.begin();
  w.uint32(tag(1, WIRE.bytes)).bytes(objectBody);
  w.end(start);
  return w.finish();
}

/** One frame: length + WatchEvent. `objectBody` can be shared bytes encoded once per event. */
export function encodeWatchFrame(type: string, objectBody: Uint8Array): Buffer {
  const message = encodeWatchEventMessage(type, objectBody);
  const frame = Buffer.allocUnsafe(4 + message.length);
  frame.writeUInt32BE(message.length, 0);
  frame.set(message, 4);
  return frame;
}

export function decodeWatchEventMessage(bytes: Uint8Array): RawWatchEvent {
  const r = Reader.create(bytes);
  const event: RawWatchEvent = { type: '', object: new Uint8Array(0) };
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === tag(1, WIRE.bytes)) event.type = r.string();
    else if (t === tag(2, WIRE.bytes)) {
      const end = r.uint32() + r.pos;
      while (r.pos < end) {
        const inner = r.uint32();
        if (inner === tag(1, WIRE.bytes)) event.object = r.bytes();
        else skipField(r, inner & 7);
      }
    } else skipField(r, t & 7);
  }
  return event;
}

/**
 * Splits a byte stream into frames as chunks arrive (upstream's LengthDelimitedFramer on the
 * reading side). `push` returns the complete WatchEvent messages found so far.
 */
export class WatchFrameReader {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Uint8Array): RawWatchEvent[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : Buffer.from(chunk);
    const events: RawWatchEvent[] = [];
    let offset = 0;
    while (this.pending.length - offset >= 4) {
      const length = this.pending.readUInt32BE(offset);
      if (this.pending.length - offset - 4 < length) break;
      events.push(decodeWatchEventMessage(this.pending.subarray(offset + 4, offset + 4 + length)));
      offset += 4 + length;
    }
    this.pending = this.pending.subarray(offset);
    return events;
  }

  /** Bytes of an incomplete frame left at the end of the stream. */
  get remainder(): number {
    return this.pending.length;
  }
}

/** All frames of a complete stream; throws when it ends inside a frame. */
export function decodeWatchFrames(stream: Uint8Array): RawWatchEvent[] {
  const reader = new WatchFrameReader();
  const events = reader.push(stream);
  if (reader.remainder > 0) throw new ProtobufDecodeError(`watch stream ends inside a frame (${reader.remainder} bytes left)`);
  return events;
}
