/**
 * Upstream's protobuf envelope (docs/API.md, "Content negotiation" 3): the 4-byte prefix `6b 38 73 00`
 * and a proto2 `runtime.Unknown` — typeMeta (1: apiVersion 1, kind 2), raw (2), contentEncoding
 * (3), contentType (4). Upstream's marshaller writes typeMeta and both strings always (empty
 * strings included) and raw when non-nil, so re-encoding a decoded envelope gives the same bytes.
 */
import { Reader } from 'protobufjs/minimal';
import { ProtobufDecodeError, skipField, tag, WIRE } from './wire-format';
import { ProtoWriter } from './writer';

export const PROTOBUF_PREFIX: Uint8Array = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

export interface Envelope {
  apiVersion: string;
  kind: string;
  /** The object's own protobuf bytes; undefined when the field is absent. */
  raw: Uint8Array | undefined;
  /** Empty means none. */
  contentEncoding: string;
  /** Empty means protobuf. */
  contentType: string;
}

export function hasProtobufPrefix(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x6b && bytes[1] === 0x38 && bytes[2] === 0x73 && bytes[3] === 0x00;
}

/** The `Unknown` message without the prefix (as nested in watch events it is not used; see watch.ts). */
export function encodeUnknown(envelope: Envelope): Uint8Array {
  const w = new ProtoWriter((envelope.raw?.length ?? 0) + 64);
  w.uint32(tag(1, WIRE.bytes));
  const start = w.begin();
  w.uint32(tag(1, WIRE.bytes)).string(envelope.apiVersion);
  w.uint32(tag(2, WIRE.bytes)).string(envelope.kind);
  w.end(start);
  if (envelope.raw !== undefined) w.uint32(tag(2, WIRE.bytes)).bytes(envelope.raw);
  w.uint32(tag(3, WIRE.bytes)).string(envelope.contentEncoding);
  w.uint32(tag(4, WIRE.bytes)).string(envelope.contentType);
  return w.finish();
}

/** Prefix + `Unknown`: a complete protobuf body. */
export function encodeEnvelope(envelope: Envelope): Buffer {
  const unknown = encodeUnknown(envelope);
  const out = Buffer.allocUnsafe(PROTOBUF_PREFIX.length + unknown.length);
  out.set(PROTOBUF_PREFIX, 0);
  out.set(unknown, PROTOBUF_PREFIX.length);
  return out;
}

function readTypeMeta(r: Reader, end: number, into: Envelope): void {
  while (r.pos < end) {
    const t = r.uint32();
    if (t === tag(1, WIRE.bytes)) into.apiVersion = r.string();
    else if (t === tag(2, WIRE.bytes)) into.kind = r.string();
    else skipField(r, t & 7);
  }
}

/** Decode a protobuf body; errors carry upstream's messages. */
export function decodeEnvelope(bytes: Uint8Array): Envelope {
  if (bytes.length === 0) throw new ProtobufDecodeError('empty data');
  if (!hasProtobufPrefix(bytes)) {
    throw new ProtobufDecodeError('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  }
  if (bytes.length === PROTOBUF_PREFIX.length) throw new ProtobufDecodeError('empty body');
  const r = Reader.create(bytes.subarray(PROTOBUF_PREFIX.length));
  const envelope: Envelope = { apiVersion: '', kind: '', raw: undefined, contentEncoding: '', contentType: '' };
  try {
    while (r.pos < r.len) {
      const t = r.uint32();
      switch (t) {
        case tag(1, WIRE.bytes): {
          const end = r.uint32() + r.pos;
          readTypeMeta(r, end, envelope);
          break;
        }
        case tag(2, WIRE.bytes):
          envelope.raw = r.bytes();
          break;
        case tag(3, WIRE.bytes):
          envelope.contentEncoding = r.string();
          break;
        case tag(4, WIRE.bytes):
          envelope.contentType = r.string();
          break;
        default:
          skipField(r, t & 7);
      }
    }
  } catch (err) {
    if (err instanceof ProtobufDecodeError) throw err;
    throw new ProtobufDecodeError(`unexpected EOF: ${(err as Error).message}`);
  }
  return envelope;
}
