/**
 * etcd's TxnRequest written by hand, for the transactions the store sends on every write: the
 * message's size worked out first, then written once, behind the gRPC frame's 5-byte prefix,
 * straight into the buffer of the HTTP/2 frames that carry it (a `SizedBody`). The generated
 * encoder writes each nested message (a RequestOp holding a PutRequest holding the value)
 * behind a one-byte length placeholder and shifts the message along when its length needs more
 * bytes, then copies the whole out of its writer, and the frame's prefix is one more
 * allocation: a create's ~3 KB value was copied three times and landed in an ArrayBuffer of its
 * own (the copy out of the writer and the prefix alone were ~1.7% of a create's CPU on etcd in
 * its profile).
 *
 * The bytes are the generated encoder's, field for field (proto3: defaults left out, oneof
 * members written when set); a request with a negative number or one past 2^53 (no request the
 * store makes has one) is left to it (`undefined`).
 */
import type { Compare, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest } from '../../gen/etcd/etcdserverpb/rpc';
import type { SizedBody } from './h2-connection';

/** gRPC's message prefix: a compression flag and the message length (big-endian). */
export const GRPC_PREFIX_BYTES = 5;

/** Thrown (and caught below) for a number only the generated encoder writes. */
class NotPlain extends Error {}

/** Bytes of a varint holding `n`, a non-negative safe integer. */
function varintSize(n: number): number {
  if (!(n >= 0 && Number.isSafeInteger(n))) throw new NotPlain();
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    size++;
  }
  return size;
}

/** A length-delimited field of `length` bytes behind a one-byte tag. */
function delimited(length: number): number {
  return 1 + varintSize(length) + length;
}

function compareSize(c: Compare): number {
  let size = 0;
  if (c.result !== 0) size += 1 + varintSize(c.result);
  if (c.target !== 0) size += 1 + varintSize(c.target);
  if (c.key.length !== 0) size += delimited(c.key.length);
  if (c.version !== undefined) size += 1 + varintSize(c.version);
  if (c.createRevision !== undefined) size += 1 + varintSize(c.createRevision);
  if (c.modRevision !== undefined) size += 1 + varintSize(c.modRevision);
  if (c.value !== undefined) size += delimited(c.value.length);
  if (c.lease !== undefined) size += 1 + varintSize(c.lease);
  // range_end is field 64: a two-byte tag.
  if (c.rangeEnd.length !== 0) size += 1 + delimited(c.rangeEnd.length);
  return size;
}

function rangeSize(r: RangeRequest): number {
  let size = 0;
  if (r.key.length !== 0) size += delimited(r.key.length);
  if (r.rangeEnd.length !== 0) size += delimited(r.rangeEnd.length);
  if (r.limit !== 0) size += 1 + varintSize(r.limit);
  if (r.revision !== 0) size += 1 + varintSize(r.revision);
  if (r.serializable) size += 2;
  if (r.keysOnly) size += 2;
  if (r.countOnly) size += 2;
  return size;
}

function putSize(p: PutRequest): number {
  let size = 0;
  if (p.key.length !== 0) size += delimited(p.key.length);
  if (p.value.length !== 0) size += delimited(p.value.length);
  if (p.lease !== 0) size += 1 + varintSize(p.lease);
  if (p.prevKv) size += 2;
  return size;
}

function deleteSize(d: DeleteRangeRequest): number {
  let size = 0;
  if (d.key.length !== 0) size += delimited(d.key.length);
  if (d.rangeEnd.length !== 0) size += delimited(d.rangeEnd.length);
  if (d.prevKv) size += 2;
  return size;
}

function opSize(op: RequestOp): number {
  let size = 0;
  if (op.requestRange !== undefined) size += delimited(rangeSize(op.requestRange));
  if (op.requestPut !== undefined) size += delimited(putSize(op.requestPut));
  if (op.requestDeleteRange !== undefined) size += delimited(deleteSize(op.requestDeleteRange));
  return size;
}

function txnSize(t: TxnRequest): number {
  let size = 0;
  for (const c of t.compare) size += delimited(compareSize(c));
  for (const op of t.success) size += delimited(opSize(op));
  for (const op of t.failure) size += delimited(opSize(op));
  return size;
}

/** Writes into a buffer sized beforehand, from `at` on. */
class Out {
  constructor(
    readonly buf: Buffer,
    public at: number,
  ) {}

  varint(n: number): void {
    const buf = this.buf;
    let at = this.at;
    while (n >= 0x80) {
      buf[at++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    buf[at++] = n;
    this.at = at;
  }

  bytes(tag: number, b: Uint8Array): void {
    this.buf[this.at++] = tag;
    this.varint(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  number(tag: number, n: number): void {
    this.buf[this.at++] = tag;
    this.varint(n);
  }

  /** A nested message's tag and length, its body written next. */
  head(tag: number, length: number): void {
    this.buf[this.at++] = tag;
    this.varint(length);
  }
}

function writeCompare(out: Out, c: Compare): void {
  if (c.result !== 0) out.number(8, c.result);
  if (c.target !== 0) out.number(16, c.target);
  if (c.key.length !== 0) out.bytes(26, c.key);
  if (c.version !== undefined) out.number(32, c.version);
  if (c.createRevision !== undefined) out.number(40, c.createRevision);
  if (c.modRevision !== undefined) out.number(48, c.modRevision);
  if (c.value !== undefined) out.bytes(58, c.value);
  if (c.lease !== undefined) out.number(64, c.lease);
  if (c.rangeEnd.length !== 0) {
    // Field 64, wire type 2: the varint 514.
    out.buf[out.at++] = 0x82;
    out.bytes(0x04, c.rangeEnd);
  }
}

function writeRange(out: Out, r: RangeRequest): void {
  if (r.key.length !== 0) out.bytes(10, r.key);
  if (r.rangeEnd.length !== 0) out.bytes(18, r.rangeEnd);
  if (r.limit !== 0) out.number(24, r.limit);
  if (r.revision !== 0) out.number(32, r.revision);
  if (r.serializable) out.number(56, 1);
  if (r.keysOnly) out.number(64, 1);
  if (r.countOnly) out.number(72, 1);
}

function writePut(out: Out, p: PutRequest): void {
  if (p.key.length !== 0) out.bytes(10, p.key);
  if (p.value.length !== 0) out.bytes(18, p.value);
  if (p.lease !== 0) out.number(24, p.lease);
  if (p.prevKv) out.number(32, 1);
}

function writeDelete(out: Out, d: DeleteRangeRequest): void {
  if (d.key.length !== 0) out.bytes(10, d.key);
  if (d.rangeEnd.length !== 0) out.bytes(18, d.rangeEnd);
  if (d.prevKv) out.number(24, 1);
}

function writeOp(out: Out, tag: number, op: RequestOp): void {
  out.head(tag, opSize(op));
  if (op.requestRange !== undefined) {
    out.head(10, rangeSize(op.requestRange));
    writeRange(out, op.requestRange);
  }
  if (op.requestPut !== undefined) {
    out.head(18, putSize(op.requestPut));
    writePut(out, op.requestPut);
  }
  if (op.requestDeleteRange !== undefined) {
    out.head(26, deleteSize(op.requestDeleteRange));
    writeDelete(out, op.requestDeleteRange);
  }
}

/**
 * `request` as a gRPC message (the 5-byte prefix: uncompressed, its length; then the
 * TxnRequest), written where the frames put it; undefined for a request only the generated
 * encoder writes.
 */
export function sizedTxn(request: TxnRequest): SizedBody | undefined {
  let message: number;
  try {
    message = txnSize(request);
  } catch (err) {
    if (err instanceof NotPlain) return undefined;
    throw err;
  }
  return {
    size: GRPC_PREFIX_BYTES + message,
    writeTo(buf, at) {
      buf[at] = 0;
      buf.writeUInt32BE(message, at + 1);
      const out = new Out(buf, at + GRPC_PREFIX_BYTES);
      for (const c of request.compare) {
        out.head(10, compareSize(c));
        writeCompare(out, c);
      }
      for (const op of request.success) writeOp(out, 18, op);
      for (const op of request.failure) writeOp(out, 26, op);
    },
  };
}
