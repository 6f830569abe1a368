/**
 * A strict walk over a response message's protobuf wire format, made before it is decoded.
 *
 * The generated decoders (ts-proto) end a message at a zero tag or a stray end-group tag, even
 * one inside a nested message, and then read on from the middle of it: a corrupt response can
 * decode to something else entirely, such as a Range with no keys (a key that exists read as
 * absent). protobuf-go and protobufjs refuse such bytes; the etcd client's fuzzer found a Range
 * response that the generated decoder read as empty and the chunked decoder
 * (range-chunks.ts) refused. Here a response must be well formed all the way down (every tag a
 * field number and a wire type protobuf 3 has, no groups, varints of at most ten bytes, lengths
 * within their message) before either decoder reads it, so the two cannot disagree and a corrupt
 * answer fails its call.
 *
 * A shape names the fields of a message that are messages themselves (by field number), which
 * the walk enters; other length-delimited fields (keys, values, strings) are skipped.
 */

export interface WireShape {
  readonly [field: number]: WireShape;
}

/** Messages nested no deeper than the generated decoders allow. */
const MAX_DEPTH = 100;

/** Throws an Error naming what is wrong when `bytes[start, end)` is not a well-formed message of `shape`. */
export function checkWire(bytes: Uint8Array, shape: WireShape, start = 0, end = bytes.length, depth = 0): void {
  if (depth > MAX_DEPTH) throw new Error('messages nested too deeply');
  let at = start;
  while (at < end) {
    let tag = bytes[at]!;
    if (tag < 0x80) at++;
    else {
      const tagStart = at;
      at = varint(bytes, at, end);
      if (at - tagStart > 5 || varintValue > 0xffffffff) throw new Error('a tag past 32 bits');
      tag = varintValue;
    }
    const field = tag >>> 3;
    const wire = tag & 7;
    if (field === 0) throw new Error('a field number of 0');
    if (wire === 0) at = varint(bytes, at, end);
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      at = varint(bytes, at, end);
      const length = varintValue;
      if (length > end - at) throw new Error(`field ${field} runs past its message`);
      const nested = shape[field];
      if (nested) checkWire(bytes, nested, at, at + length, depth + 1);
      at += length;
    } else throw new Error(`wire type ${wire} in field ${field}`);
    if (at > end) throw new Error(`field ${field} runs past its message`);
  }
}

/**
 * The value of the varint `varint` read last (exact below 2^53): scratch that holds nothing from
 * one call to the next, so that a read allocates nothing (the walk runs on every response).
 */
let varintValue = 0;

/** Reads the varint at `at` into `varintValue`; the position after it. */
function varint(bytes: Uint8Array, at: number, end: number): number {
  if (at < end && bytes[at]! < 0x80) {
    varintValue = bytes[at]!;
    return at + 1;
  }
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (at + i >= end) throw new Error('a varint cut off');
    const b = bytes[at + i]!;
    if (i === 9 && b > 1) throw new Error('a varint past 64 bits');
    value += (b & 0x7f) * scale;
    if (b < 0x80) {
      varintValue = value;
      return at + i + 1;
    }
    scale *= 128;
  }
  throw new Error('a varint longer than ten bytes');
}

const HEADER: WireShape = {};
const KEY_VALUE: WireShape = {};
const RANGE: WireShape = { 1: HEADER, 2: KEY_VALUE };
const PUT: WireShape = { 1: HEADER, 2: KEY_VALUE };
const DELETE_RANGE: WireShape = { 1: HEADER, 3: KEY_VALUE };
// proto/etcd has no nested Txn response (field 4): the decoder skips it, so the walk does too.
const RESPONSE_OP: WireShape = { 1: RANGE, 2: PUT, 3: DELETE_RANGE };
const TXN: WireShape = { 1: HEADER, 3: RESPONSE_OP };
const EVENT: WireShape = { 2: KEY_VALUE, 3: KEY_VALUE };

/**
 * The shapes of the responses the client decodes: the messages of proto/etcd (etcd's field
 * numbers) that the generated decoders read as messages.
 */
export const RESPONSE_SHAPES = {
  ResponseHeader: HEADER,
  KeyValue: KEY_VALUE,
  RangeResponse: RANGE,
  TxnResponse: TXN,
  DeleteRangeResponse: DELETE_RANGE,
  CompactionResponse: { 1: HEADER },
  StatusResponse: { 1: HEADER },
  WatchResponse: { 1: HEADER, 11: EVENT },
} as const satisfies Record<string, WireShape>;
