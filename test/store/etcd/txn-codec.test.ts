/**
 * The hand-written TxnRequest encoder (src/store/etcd/txn-codec.ts) against the generated one: the same
 * bytes for every field and size class, behind gRPC's prefix; what it cannot write is left to
 * the generated encoder. The calls it carries are exercised against a real etcd by the store
 * conformance suite.
 */
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import {
  type Compare,
  Compare_CompareResult,
  Compare_CompareTarget,
  type RangeRequest,
  type RequestOp,
  TxnRequest,
} from '../../../src/gen/etcd/etcdserverpb/rpc';
import { GRPC_PREFIX_BYTES, sizedTxn } from '../../../src/store/etcd/txn-codec';

/** The sized body's bytes, written at an offset into a larger buffer (as into its frames), twice. */
function encodeTxnFramed(request: TxnRequest): Buffer | undefined {
  const body = sizedTxn(request);
  if (!body) return undefined;
  const out = Buffer.alloc(body.size + 20, 0xee);
  body.writeTo(out, 11);
  expect(out.subarray(0, 11).every((b) => b === 0xee) && out.subarray(11 + body.size).every((b) => b === 0xee)).toBe(true);
  const again = Buffer.alloc(body.size);
  body.writeTo(again, 0);
  expect(again.equals(out.subarray(11, 11 + body.size))).toBe(true);
  return again;
}

const bytes = (text: string | number, fill = 0x61) => (typeof text === 'number' ? Buffer.alloc(text, fill) : Buffer.from(text));

function compare(fields: Partial<Compare>): Compare {
  return { result: Compare_CompareResult.EQUAL, target: Compare_CompareTarget.VERSION, key: new Uint8Array(), rangeEnd: new Uint8Array(), ...fields };
}

function range(fields: Partial<RangeRequest>): RequestOp {
  return {
    requestRange: {
      key: new Uint8Array(),
      rangeEnd: new Uint8Array(),
      limit: 0,
      revision: 0,
      serializable: false,
      keysOnly: false,
      countOnly: false,
      ...fields,
    },
  };
}

function put(key: Uint8Array, value: Uint8Array, more: { lease?: number; prevKv?: boolean } = {}): RequestOp {
  return { requestPut: { key, value, lease: more.lease ?? 0, prevKv: more.prevKv ?? false } };
}

function generated(request: TxnRequest): Buffer {
  return Buffer.from(TxnRequest.encode(request, new BinaryWriter()).finish());
}

function expectSameBytes(request: TxnRequest): void {
  const framed = encodeTxnFramed(request);
  expect(framed).toBeDefined();
  const message = generated(request);
  // Buffer#equals: a byte-wise toEqual of a 2 MiB message takes half a minute.
  expect(framed!.subarray(GRPC_PREFIX_BYTES).equals(message)).toBe(true);
  expect(framed![0]).toBe(0);
  expect(framed!.readUInt32BE(1)).toBe(message.length);
}

describe('the hand-written TxnRequest encoder', () => {
  const key = bytes('/registry/apps/replicasets/bench/rs-1');

  it.each([0, 1, 127, 128, 2845, 16_383, 16_384, 70_000, 2_097_152])('writes a guarded create of a %i-byte value as the generated encoder does', (size) => {
    expectSameBytes({
      compare: [compare({ target: Compare_CompareTarget.CREATE, key, createRevision: 0 })],
      success: [put(key, bytes(size))],
      failure: [range({ key })],
    });
  });

  it('writes an update guarded by a revision past 2^32, with the read of the key after it', () => {
    expectSameBytes({
      compare: [compare({ target: Compare_CompareTarget.MOD, key, modRevision: 2 ** 40 + 3 })],
      success: [put(key, bytes(300)), range({ key, keysOnly: true })],
      failure: [range({ key })],
    });
  });

  it('writes every field of every message it knows', () => {
    expectSameBytes({
      compare: [
        compare({ result: Compare_CompareResult.NOT_EQUAL, target: Compare_CompareTarget.VALUE, key, value: bytes(200), rangeEnd: bytes(150) }),
        compare({ result: Compare_CompareResult.GREATER, target: Compare_CompareTarget.VERSION, key, version: 7 }),
        compare({ result: Compare_CompareResult.LESS, target: Compare_CompareTarget.LEASE, key, lease: 2 ** 50 }),
        compare({ key, value: new Uint8Array() }),
      ],
      success: [
        range({ key, rangeEnd: bytes('\u0000'), limit: 500, revision: 123_456_789_012, serializable: true, keysOnly: true, countOnly: true }),
        put(key, bytes(5), { lease: 99, prevKv: true }),
        { requestDeleteRange: { key, rangeEnd: bytes('/registry0'), prevKv: true } },
        { requestPut: { key: new Uint8Array(), value: new Uint8Array(), lease: 0, prevKv: false } },
        {},
      ],
      failure: [{ requestDeleteRange: { key, rangeEnd: new Uint8Array(), prevKv: false } }, range({})],
    });
  });

  it('writes an empty transaction as an empty message', () => {
    expectSameBytes({ compare: [], success: [], failure: [] });
  });

  it.each([
    ['a negative revision', { compare: [compare({ key, modRevision: -1 })], success: [], failure: [] }],
    ['an unrecognised enum value', { compare: [compare({ key, result: Compare_CompareResult.UNRECOGNIZED })], success: [], failure: [] }],
    ['a negative limit', { compare: [], success: [range({ key, limit: -5 })], failure: [] }],
    ['a revision past 2^53', { compare: [], success: [range({ key, revision: 2 ** 60 })], failure: [] }],
  ] as [string, TxnRequest][])('leaves %s to the generated encoder', (_what, request) => {
    expect(encodeTxnFramed(request)).toBeUndefined();
  });
});
