import { RangeResponse } from '../../../src/gen/etcd/etcdserverpb/rpc';
import { decodeRangeResponseChunks } from '../../../src/store/etcd/range-chunks';

/** A deterministic generator, so a failure names its seed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function framed(message: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

/** `bytes` cut at random places into pieces of 1 to `max` bytes. */
function cut(bytes: Buffer, next: () => number, max: number): Buffer[] {
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    const n = 1 + Math.floor(next() * max);
    pieces.push(bytes.subarray(at, at + n));
    at += n;
  }
  return pieces;
}

function response(next: () => number, kvs: number): RangeResponse {
  return {
    header: { revision: 1 + Math.floor(next() * 1e9) },
    kvs: Array.from({ length: kvs }, (_, i) => ({
      key: Buffer.from(`/registry/replicasets/ns/rs-${i}`),
      createRevision: 1 + i,
      modRevision: 2 + i,
      version: 1,
      value: Buffer.alloc(Math.floor(next() * 4000), 97 + (i % 26)),
      lease: 0,
    })),
    more: next() < 0.5,
    count: Math.floor(next() * 2 ** 40),
  };
}

const plain = (r: RangeResponse) => JSON.parse(JSON.stringify(r, (_k, v) => (v && v.type === 'Buffer' ? Buffer.from(v.data).toString('latin1') : v)));

describe('a Range response decoded from its frames', () => {
  it('matches the generated decoder of the joined message, however the frames cut it', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const next = random(seed);
      const original = response(next, Math.floor(next() * 30));
      const bytes = framed(RangeResponse.encode(original).finish());
      const expected = RangeResponse.decode(bytes.subarray(5));
      for (const max of [1, 7, 100, 5000, 20_000]) {
        const decoded = decodeRangeResponseChunks(cut(bytes, next, max));
        expect({ seed, max, r: plain(decoded) }).toEqual({ seed, max, r: plain(expected) });
      }
    }
  });

  it('skips fields it does not know, of every wire type, as the generated decoder does', () => {
    const known = RangeResponse.encode(response(random(7), 4)).finish();
    // Field 9 varint, 10 length-delimited, 11 fixed64, 12 fixed32: etcd's newer fields would look so.
    const unknown = Buffer.from([9 << 3, 0x96, 0x01, (10 << 3) | 2, 3, 1, 2, 3, (11 << 3) | 1, 1, 2, 3, 4, 5, 6, 7, 8, (12 << 3) | 5, 1, 2, 3, 4]);
    const message = Buffer.concat([unknown.subarray(0, 3), known, unknown.subarray(3)]);
    const expected = RangeResponse.decode(message);
    for (const max of [1, 5, 64]) expect(plain(decodeRangeResponseChunks(cut(framed(message), random(max), max)))).toEqual(plain(expected));
  });

  it('answers with views of the frames, copying only a key-value that spans two', () => {
    const next = random(99);
    const bytes = framed(RangeResponse.encode(response(next, 3)).finish());
    const half = Math.floor(bytes.length / 2);
    const frames = [bytes.subarray(0, half), bytes.subarray(half)];
    const decoded = decodeRangeResponseChunks(frames);
    const shares = (v: Uint8Array) => frames.some((f) => v.buffer === f.buffer);
    expect(decoded.kvs.filter((kv) => shares(kv.value)).length).toBeGreaterThanOrEqual(2);
  });

  it('refuses a truncated, a compressed or a mislabelled frame', () => {
    const bytes = framed(RangeResponse.encode(response(random(5), 2)).finish());
    expect(() => decodeRangeResponseChunks([bytes.subarray(0, bytes.length - 1)])).toThrow(/a frame of \d+ bytes/);
    const compressed = Buffer.from(bytes);
    compressed[0] = 1;
    expect(() => decodeRangeResponseChunks([compressed])).toThrow('a compressed response');
    expect(() => decodeRangeResponseChunks([bytes.subarray(0, 3)])).toThrow('a response of 3 bytes');
    const short = Buffer.from(bytes);
    short.writeUInt32BE(bytes.length - 5 + 10, 1);
    expect(() => decodeRangeResponseChunks([short])).toThrow(/a frame of/);
  });

  it('refuses what the wire check refuses, as the joined path does: a stray end-group tag, a zero tag, a group (found by the fuzzer)', () => {
    const bytes = framed(RangeResponse.encode(response(random(6), 2)).finish());
    for (const [at, value] of [
      [7, 0x1c],
      [7, 0x00],
      [5, 0x0b],
    ] as const) {
      const corrupt = Buffer.from(bytes);
      corrupt[at] = value;
      const halves = [corrupt.subarray(0, 40), corrupt.subarray(40)];
      expect(() => decodeRangeResponseChunks(halves)).toThrow();
    }
  });
});
