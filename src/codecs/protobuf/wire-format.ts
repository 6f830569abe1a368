/** Small protobuf wire helpers over protobufjs' Reader. */
import type { Reader } from 'protobufjs/minimal';

export const WIRE = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 } as const;

export function tag(number: number, wire: number): number {
  return ((number << 3) | wire) >>> 0;
}

/** A malformed or unexpected protobuf body. */
export class ProtobufDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufDecodeError';
  }
}

/**
 * Read a varint as a signed 64-bit integer in a JS number (exact up to 2^53; protobufjs would
 * allocate a Long for each).
 */
export function readInt64(r: Reader): number {
  const buf = r.buf;
  let lo = 0;
  let hi = 0;
  let shift = 0;
  let pos = r.pos;
  for (;;) {
    if (pos >= r.len) throw new ProtobufDecodeError('truncated varint');
    const b = buf[pos++]!;
    if (shift < 28) lo |= (b & 0x7f) << shift;
    else if (shift === 28) {
      lo |= (b & 0x0f) << 28;
      hi |= (b & 0x70) >>> 4;
    } else hi |= (b & 0x7f) << (shift - 32);
    if (b < 0x80) break;
    shift += 7;
    if (shift > 63) throw new ProtobufDecodeError('varint too long');
  }
  r.pos = pos;
  return (hi | 0) * 0x100000000 + (lo >>> 0);
}

export function skipField(r: Reader, wire: number): void {
  if (wire === 3 || wire === 4) throw new ProtobufDecodeError(`unsupported wire type ${wire}`);
  r.skipType(wire);
}
