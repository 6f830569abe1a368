/**
 * The etcd client (src/store/etcd/client.ts): its framing of gRPC messages on a stream (a watch stream's
 * bytes arrive in chunks that split and join messages anywhere), and its request encoding
 * against a real etcd, and its calls' deadline against a member that never answers.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { RangeResponse } from '../../../src/gen/etcd/etcdserverpb/rpc';
import { EtcdClient, MessageReader } from '../../../src/store/etcd/client';
import { GrpcCode } from '../../../src/status';
import { startEtcd, type EtcdInstance } from '../../support/etcd';
import { answerFrames } from './fuzz/frames';
import { clientOverMemory } from './fuzz/in-memory-socket';

function framed(...messages: Buffer[]): Buffer {
  return Buffer.concat(
    messages.map((m) => {
      const head = Buffer.alloc(5);
      head.writeUInt32BE(m.length, 1);
      return Buffer.concat([head, m]);
    }),
  );
}

describe('gRPC message framing', () => {
  const messages = [Buffer.from('first'), Buffer.alloc(0), Buffer.alloc(70_000, 7), Buffer.from('last')];
  const bytes = framed(...messages);

  it.each([1, 2, 3, 5, 6, 4096, bytes.length])('gives back every message whole, in order, from chunks of %i bytes', (size) => {
    const reader = new MessageReader();
    const out: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += size) out.push(...reader.push(bytes.subarray(at, at + size)).map((m) => Buffer.from(m)));
    expect(out).toEqual(messages);
  });

  it('holds a partial message until the rest arrives', () => {
    const reader = new MessageReader();
    expect(reader.push(bytes.subarray(0, 7))).toEqual([]);
    expect(reader.push(bytes.subarray(7, 10)).map((m) => Buffer.from(m).toString())).toEqual(['first']);
  });

  it('refuses a compressed message (none is asked for)', () => {
    const compressed = framed(Buffer.from('x'));
    compressed[0] = 1;
    expect(() => new MessageReader().push(compressed)).toThrow('compressed');
  });
});

describe('request encoding', () => {
  let etcd: EtcdInstance;
  let client: EtcdClient;
  beforeAll(async () => {
    etcd = await startEtcd();
    client = new EtcdClient({ endpoints: [etcd.endpoint], timeoutMs: 10_000 });
  });
  afterAll(async () => {
    client.close();
    await etcd.stop();
  });

  const put = (key: string, value: Buffer) =>
    client.txn({ compare: [], success: [{ requestPut: { key: Buffer.from(key), value, lease: 0, prevKv: false } }], failure: [] });
  const get = (key: string, limit: number) =>
    client.range({ key: Buffer.from(key), rangeEnd: Buffer.alloc(0), limit, revision: 0, serializable: false, keysOnly: false, countOnly: false });

  it('sends each request whole, however large the one before, and after one that failed to encode', async () => {
    const big = Buffer.alloc(200_000, 'b');
    await put('/enc/big', big);
    await put('/enc/small', Buffer.from('s'));
    // The limit is an int64: 1.5 fails to encode after the key was written.
    await expect(get('/enc/small', 1.5)).rejects.toThrow('1.5');
    const [bigRead, smallRead] = await Promise.all([get('/enc/big', 0), get('/enc/small', 0)]);
    expect(Buffer.from(bigRead.kvs[0]!.value).equals(big)).toBe(true);
    expect(Buffer.from(smallRead.kvs[0]!.value).toString()).toBe('s');
    expect(smallRead.kvs).toHaveLength(1);
  });
});

describe('call deadline', () => {
  // A member that takes calls and never answers them (HTTP/2 without TLS, as etcd's plain port).
  let server: http2.Http2Server;
  let sessions = 0;
  let port: number;
  beforeAll(async () => {
    server = http2.createServer();
    server.on('session', () => sessions++);
    server.on('stream', () => {
      // Taken, never answered.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('fails a call etcd does not answer in time with DEADLINE_EXCEEDED, and dials again for the next', async () => {
    const client = new EtcdClient({ endpoints: [`http://127.0.0.1:${port}`], timeoutMs: 200 });
    const range = () =>
      client.range({ key: Buffer.from('k'), rangeEnd: Buffer.alloc(0), limit: 0, revision: 0, serializable: false, keysOnly: false, countOnly: false });
    try {
      const started = Date.now();
      await expect(range()).rejects.toMatchObject({ code: GrpcCode.DEADLINE_EXCEEDED, message: 'context deadline exceeded' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      // Calls made together share the one timer and fail together.
      const both = await Promise.allSettled([range(), range()]);
      expect(both.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      expect(sessions).toBeGreaterThanOrEqual(2);
    } finally {
      client.close();
    }
  });
});

describe('what the fuzzer found (test/store/etcd/fuzz.test.ts)', () => {
  const range = (client: EtcdClient) =>
    client.range({ key: Buffer.from('k'), rangeEnd: Buffer.alloc(0), limit: 0, revision: 0, serializable: false, keysOnly: false, countOnly: false });

  it.each([
    ['a grpc-status that is no number', '99999999999999999999', GrpcCode.INTERNAL],
    ['a grpc-status outside gRPC’s codes', '17', GrpcCode.UNKNOWN],
    ['a grpc-status with a sign', '-1', GrpcCode.INTERNAL],
  ])('reads %s as gRPC does, so the store classifies it (it became code 1e20)', async (_what, status, code) => {
    const { client, sockets } = clientOverMemory();
    const call = range(client);
    sockets[0]!.connect();
    sockets[0]!.deliver(
      answerFrames({
        streamId: 1,
        settings: true,
        trailers: [
          ['grpc-status', status],
          ['grpc-message', 'x'],
        ],
      }),
    );
    await expect(call).rejects.toMatchObject({ code, message: 'x' });
    client.close();
  });

  it('names the status of a failure etcd sent without grpc-message (it failed with an empty message)', async () => {
    const { client, sockets } = clientOverMemory();
    const call = range(client);
    sockets[0]!.connect();
    sockets[0]!.deliver(answerFrames({ streamId: 1, settings: true, trailers: [['grpc-status', '11']] }));
    await expect(call).rejects.toMatchObject({ code: GrpcCode.OUT_OF_RANGE, message: 'etcd answered gRPC status 11 without a message' });
    client.close();
  });

  it('refuses a Range response with a stray end-group tag in its header (the generated decoder read it as no keys at all)', async () => {
    const response = Buffer.from(
      RangeResponse.encode({
        header: { revision: 7 },
        kvs: [{ key: Buffer.from('k'), value: Buffer.from('v'), createRevision: 2, modRevision: 3, version: 1, lease: 0 }],
        more: false,
        count: 1,
      }).finish(),
    );
    // The header is field 1 (0x0a, its length, then revision as field 3: 0x18 0x07); in its place
    // an end-group tag for field 3 (0x1c) and a zero byte.
    expect(response.subarray(0, 4)).toEqual(Buffer.from([0x0a, 0x02, 0x18, 0x07]));
    const corrupt = Buffer.from(response);
    corrupt[2] = 0x1c;
    corrupt[3] = 0x00;
    // What the client answered before: a range of no keys at revision 0.
    expect(RangeResponse.decode(corrupt)).toEqual({ header: { revision: 0 }, kvs: [], more: false, count: 0 });
    const { client, sockets } = clientOverMemory();
    const call = range(client);
    sockets[0]!.connect();
    sockets[0]!.deliver(answerFrames({ streamId: 1, settings: true, message: corrupt, trailers: [['grpc-status', '0']] }));
    await expect(call).rejects.toMatchObject({
      code: GrpcCode.INTERNAL,
      message: expect.stringContaining('undecodable response from etcd: wire type 4 in field 3'),
    });
    client.close();
  });

  it('lets go of a closed client at once (its calls’ deadline timer held it, and all it read, for the call timeout)', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const held = await (async () => {
      const { client, sockets } = clientOverMemory({ timeoutMs: 600_000 });
      const call = range(client).catch(() => undefined);
      sockets[0]!.connect();
      client.close();
      await call;
      return new WeakRef(client);
    })();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(held.deref()).toBeUndefined();
  });
});
