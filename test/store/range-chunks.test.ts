import { RangeResponse } from '../../src/gen/etcd/etcdserverpb/rpc';
import { decodeRangeResponseChunks } from '../../src/store/range-chunks';

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
    header: { clusterId: 17, memberId: 3, revision: 1 + Math.floor(next() * 1e9), raftTerm: 2 },
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
});
