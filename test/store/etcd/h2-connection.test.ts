/**
 * The etcd client's HTTP/2 connection (h2-connection.ts) against node:http2's server, a real
 * HTTP/2 peer (nghttp2) that enforces the protocol: flow control both ways, frames split and
 * padded, header blocks over CONTINUATION, resets, GOAWAY and pings; and against a raw socket
 * for what no well-behaved peer sends.
 */
import http2 from 'node:http2';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { H2Connection, H2Error, MAX_HEADER_BLOCK, type H2ConnectionEvents } from '../../../src/store/etcd/h2-connection';
import { encodeHeaderBlock } from '../../../src/store/etcd/hpack';
import { eventually } from '../../support/eventually';
import { frameBytes } from './fuzz/frames';
import { InMemorySocket } from './fuzz/in-memory-socket';

interface Answer {
  headers: Map<string, string>;
  data: Buffer;
  trailers: Map<string, string>;
}

function toMap(fields: string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!);
  return map;
}

function blockFor(port: number, path: string, method = 'POST'): Buffer {
  return encodeHeaderBlock([
    [':method', method],
    [':scheme', 'http'],
    [':path', path],
    [':authority', `127.0.0.1:${port}`],
  ]);
}

/** One request on `connection`, gathered until the peer ends it; rejects when it is aborted. */
function exchange(connection: H2Connection, block: Buffer, body?: Uint8Array | readonly Uint8Array[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const answer: Answer = { headers: new Map(), data: Buffer.alloc(0), trailers: new Map() };
    const chunks: Buffer[] = [];
    let sawHeaders = false;
    const done = () => resolve({ ...answer, data: Buffer.concat(chunks) });
    connection.request(
      block,
      {
        onHeaders: (fields, end) => {
          if (sawHeaders) answer.trailers = toMap(fields);
          else answer.headers = toMap(fields);
          sawHeaders = true;
          if (end) done();
        },
        onData: (data, end) => {
          chunks.push(Buffer.from(data));
          if (end) done();
        },
        onAbort: (reason, code) => reject(Object.assign(new Error(reason), { code })),
      },
      body,
      true,
    );
  });
}

interface Peer {
  server: http2.Http2Server;
  port: number;
  sessions: http2.ServerHttp2Session[];
  close(): Promise<void>;
}

async function peer(onStream: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void, options: http2.ServerOptions = {}): Promise<Peer> {
  const server = http2.createServer(options);
  const sessions: http2.ServerHttp2Session[] = [];
  server.on('session', (session) => sessions.push(session));
  server.on('stream', (stream, headers) => {
    // A stream this side resets, or the server refuses, errors on the server's side too.
    stream.on('error', () => undefined);
    onStream(stream, headers);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    sessions,
    port: (server.address() as AddressInfo).port,
    close: () => {
      for (const session of sessions) session.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function connectTo(port: number, events: H2ConnectionEvents = {}, windows = { stream: 65_535, connection: 1 << 20 }): H2Connection {
  return new H2Connection(net.connect(port, '127.0.0.1'), events, windows, 'connect');
}

/** Echoes the request body's length and a digest-free checksum, then trailers. */
function echoSize(stream: http2.ServerHttp2Stream): void {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => {
    const body = Buffer.concat(chunks);
    let sum = 0;
    for (const b of body) sum = (sum + b) % 65_521;
    stream.respond({ ':status': 200 }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'x-sum': String(sum) }));
    stream.end(String(body.length));
  });
}

describe('HTTP/2 connection against node:http2', () => {
  let connection: H2Connection | undefined;
  let server: Peer | undefined;
  afterEach(async () => {
    connection?.destroy();
    await server?.close();
    connection = server = undefined;
  });

  it('sends a large body within a small stream window and the default connection window, in frames the peer allows', async () => {
    server = await peer(echoSize, { settings: { initialWindowSize: 1000 } });
    connection = connectTo(server.port);
    const body = Buffer.alloc(300_000);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7) & 0xff;
    let sum = 0;
    for (const b of body) sum = (sum + b) % 65_521;
    const answers = await Promise.all([1, 2, 3].map(() => exchange(connection!, blockFor(server!.port, '/echo'), body)));
    for (const answer of answers) {
      expect(answer.headers.get(':status')).toBe('200');
      expect(answer.data.toString()).toBe('300000');
      expect(answer.trailers.get('x-sum')).toBe(String(sum));
    }
  });

  it('takes a response far larger than its windows, topping them up as data arrives, padded or not', async () => {
    for (const paddingStrategy of [http2.constants.PADDING_STRATEGY_NONE, http2.constants.PADDING_STRATEGY_MAX]) {
      const big = Buffer.alloc(3_000_000, 'z');
      server = await peer(
        (stream) => {
          stream.respond({ ':status': 200 });
          stream.end(big);
        },
        { paddingStrategy },
      );
      connection = connectTo(server.port, {}, { stream: 65_535, connection: 100_000 });
      const [a, b] = await Promise.all([
        exchange(connection, blockFor(server.port, '/big', 'GET')),
        exchange(connection, blockFor(server.port, '/big', 'GET')),
      ]);
      expect(a.data.equals(big)).toBe(true);
      expect(b.data.equals(big)).toBe(true);
      connection.destroy();
      await server.close();
    }
    server = undefined;
  });

  it('reads a header block split over CONTINUATION frames', async () => {
    const long = 'v'.repeat(40_000);
    server = await peer((stream) => stream.respond({ ':status': 200, 'x-long': long }, { endStream: true }), { maxHeaderListPairs: 4096 });
    connection = connectTo(server.port);
    const answer = await exchange(connection, blockFor(server.port, '/long', 'GET'));
    expect(answer.headers.get('x-long')).toBe(long);
  });

  it('reports a stream the peer resets, and goes on with the others', async () => {
    server = await peer((stream, headers) => {
      if (headers[':path'] === '/reset') stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      else echoSize(stream);
    });
    connection = connectTo(server.port);
    await expect(exchange(connection, blockFor(server.port, '/reset'), Buffer.from('x'))).rejects.toMatchObject({
      code: H2Error.REFUSED_STREAM,
      message: expect.stringContaining('reset the stream'),
    });
    expect((await exchange(connection, blockFor(server.port, '/ok'), Buffer.from('abc'))).data.toString()).toBe('3');
    // A body in parts is sent as one.
    expect((await exchange(connection, blockFor(server.port, '/ok'), [Buffer.from('ab'), Buffer.from('cde'), new Uint8Array(0)])).data.toString()).toBe('5');
    expect(connection.openStreams).toBe(0);
  });

  it('on GOAWAY: streams the peer took finish, those above its last stream are refused, and no new stream opens', async () => {
    let held: http2.ServerHttp2Stream | undefined;
    let arrived = 0;
    server = await peer((stream) => {
      arrived++;
      if (!held) {
        held = stream;
        return;
      }
    });
    const goaways: number[] = [];
    const closed = new Promise<void>((resolve) => (connection = connectTo(server!.port, { onGoaway: (code) => goaways.push(code), onClose: () => resolve() })));
    const first = exchange(connection!, blockFor(server.port, '/one'), Buffer.from('1'));
    await eventually(() => held, { what: 'the first stream at the peer', intervalMs: 5 });
    const second = exchange(connection!, blockFor(server.port, '/two'), Buffer.from('2'));
    // Wait for the second stream to reach the peer, then go away naming the first as the last.
    await eventually(() => arrived === 2, { what: 'the second stream at the peer', intervalMs: 5 });
    server.sessions[0]!.goaway(http2.constants.NGHTTP2_NO_ERROR, 1);
    await expect(second).rejects.toMatchObject({ code: H2Error.REFUSED_STREAM, message: expect.stringContaining('going away') });
    expect(goaways).toEqual([0]);
    expect(connection!.usable).toBe(false);
    expect(() => connection!.request(blockFor(server!.port, '/three'), { onHeaders() {}, onData() {}, onAbort() {} })).toThrow('going away');
    held!.respond({ ':status': 200 });
    held!.end('done');
    expect((await first).data.toString()).toBe('done');
    // With its last stream done, the connection ends.
    await closed;
  });

  it('sends the frames of one event-loop turn in one socket write, or at once when told to', async () => {
    server = await peer(echoSize);
    const socket = net.connect(server.port, '127.0.0.1');
    connection = new H2Connection(socket, {}, { stream: 65_535, connection: 1 << 20 }, 'connect');
    await exchange(connection, blockFor(server.port, '/warm'), Buffer.from('w'));
    const writes: number[] = [];
    const write = socket.write.bind(socket);
    socket.write = ((chunk: Buffer, ...rest: never[]) => (writes.push(chunk.length), write(chunk, ...rest))) as typeof socket.write;
    const answers = Promise.all(['a', 'bb', 'ccc'].map((body) => exchange(connection!, blockFor(server!.port, '/echo'), Buffer.from(body))));
    expect(writes).toEqual([]);
    expect((await answers).map((a) => a.data.toString())).toEqual(['1', '2', '3']);
    expect(writes[0]).toBe(3 * (9 + blockFor(server.port, '/echo').length + 9) + 6);
    writes.length = 0;
    const now = exchange(connection, blockFor(server.port, '/echo'), Buffer.from('dddd'));
    connection.flushNow();
    expect(writes).toHaveLength(1);
    expect((await now).data.toString()).toBe('4');
  });

  it('answers the peer’s pings, and its own ping is answered', async () => {
    server = await peer(echoSize);
    connection = connectTo(server.port);
    await new Promise<void>((resolve, reject) => connection!.ping((err) => (err ? reject(err) : resolve())));
    const rtt = await new Promise<number>((resolve, reject) => server!.sessions[0]!.ping((err, duration) => (err ? reject(err) : resolve(duration))));
    expect(rtt).toBeGreaterThanOrEqual(0);
  });

  it('aborts open streams and pending pings when the connection drops', async () => {
    let arrive: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    server = await peer(() => arrive());
    let closedWith: Error | undefined;
    const closed = new Promise<void>((resolve) => (connection = connectTo(server!.port, { onClose: (err) => ((closedWith = err), resolve()) })));
    const pending = exchange(connection!, blockFor(server.port, '/hang'), Buffer.from('x'));
    await arrived;
    server.sessions[0]!.destroy();
    await expect(pending).rejects.toThrow();
    await closed;
    expect(closedWith).toBeInstanceOf(Error);
    await expect(new Promise<void>((resolve, reject) => connection!.ping((err) => (err ? reject(err) : resolve())))).rejects.toThrow('closed');
  });

  it('cancels a stream with RST_STREAM (CANCEL), which the peer sees, reporting nothing more', async () => {
    let resetCode: number | undefined;
    let cancel: () => void = () => undefined;
    const reset = new Promise<void>((resolve) => {
      void peer((stream) => {
        stream.on('close', () => {
          resetCode = stream.rstCode;
          resolve();
        });
        // The peer has the stream: now the client cancels it.
        cancel();
      }).then((p) => {
        server = p;
        connection = connectTo(p.port);
        const stream = connection.request(
          blockFor(p.port, '/cancel'),
          { onHeaders: () => fail(), onData: () => fail(), onAbort: () => fail() },
          Buffer.from('x'),
          false,
        );
        cancel = () => stream.cancel();
      });
    });
    const fail = () => {
      throw new Error('a cancelled stream reported');
    };
    await reset;
    expect(resetCode).toBe(http2.constants.NGHTTP2_CANCEL);
    expect(connection!.openStreams).toBe(0);
  });

  it('closes gracefully: open streams finish, then the socket ends', async () => {
    // The peer holds its answer until the client has started closing.
    let answerNow: () => void = () => undefined;
    let arrive: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    server = await peer((stream) => {
      answerNow = () => echoSize(stream);
      arrive();
    });
    const closed = new Promise<void>((resolve) => (connection = connectTo(server!.port, { onClose: () => resolve() })));
    const answer = exchange(connection!, blockFor(server.port, '/slow'), Buffer.from('abcd'));
    await arrived;
    connection!.close();
    answerNow();
    expect(connection!.usable).toBe(false);
    expect((await answer).data.toString()).toBe('4');
    await closed;
  });
});

describe('HTTP/2 connection against a peer that breaks the protocol', () => {
  /** A raw TCP peer that reads the preface and answers with `bytes`. */
  async function rawPeer(bytes: Buffer): Promise<{ port: number; received: Promise<Buffer>; close(): void }> {
    let resolveReceived!: (b: Buffer) => void;
    const received = new Promise<Buffer>((resolve) => (resolveReceived = resolve));
    const server = net.createServer((socket) => {
      const chunks: Buffer[] = [];
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.on('close', () => resolveReceived(Buffer.concat(chunks)));
      socket.on('error', () => undefined);
      socket.write(bytes);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port, received, close: () => server.close() };
  }

  const frame = (type: number, flags: number, stream: number, payload: Buffer) => {
    const head = Buffer.alloc(9);
    head.writeUIntBE(payload.length, 0, 3);
    head[3] = type;
    head[4] = flags;
    head.writeUInt32BE(stream, 5);
    return Buffer.concat([head, payload]);
  };
  const settings = frame(0x4, 0, 0, Buffer.alloc(0));

  it('reads frames cut anywhere by the reads, a few bytes at a time', async () => {
    const payload = Buffer.from('x'.repeat(100));
    const trailers = Buffer.concat([Buffer.from([0x00, 11]), Buffer.from('grpc-status'), Buffer.from([1]), Buffer.from('0')]);
    const bytes = Buffer.concat([
      settings,
      frame(0x1, 0x4, 1, Buffer.from([0x88])),
      frame(0x0, 0, 1, payload),
      frame(0x0, 0, 1, Buffer.alloc(0)),
      frame(0x1, 0x5, 1, trailers),
    ]);
    const server = net.createServer(async (socket) => {
      socket.setNoDelay(true);
      socket.on('error', () => undefined);
      for (let at = 0; at < bytes.length; at += 7) {
        await new Promise<void>((resolve) => socket.write(bytes.subarray(at, at + 7), () => resolve()));
        await new Promise((resolve) => setTimeout(resolve, 1)); // the point: each 7 bytes in a read of its own
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const connection = connectTo(port);
    try {
      const reads: number[] = [];
      const socketOf = (connection as unknown as { socket: net.Socket }).socket;
      socketOf.prependListener('data', (chunk: Buffer) => reads.push(chunk.length));
      const answer = await exchange(connection, blockFor(port, '/'), Buffer.from('x'));
      expect(answer.headers.get(':status')).toBe('200');
      expect(answer.data.equals(payload)).toBe(true);
      expect(answer.trailers.get('grpc-status')).toBe('0');
      // The bytes did arrive in pieces: with 7-byte writes, no frame ends where a write does,
      // so any second read means a frame was cut.
      expect(reads.length).toBeGreaterThan(1);
    } finally {
      connection.destroy();
      server.close();
    }
  });

  it.each([
    [
      'a frame over the 16 KiB this side allows',
      Buffer.concat([settings, frame(0x0, 0, 1, Buffer.alloc(20_000))]),
      H2Error.FRAME_SIZE_ERROR,
      'a frame of 20000 bytes',
    ],
    ['a header block HPACK cannot decode', Buffer.concat([settings, frame(0x1, 0x5, 1, Buffer.from([0xff, 0xff]))]), H2Error.COMPRESSION_ERROR, 'HPACK'],
    ['PUSH_PROMISE, which the preface disabled', Buffer.concat([settings, frame(0x5, 0x4, 1, Buffer.alloc(4))]), H2Error.PROTOCOL_ERROR, 'PUSH_PROMISE'],
    [
      'a header block interrupted by another frame',
      Buffer.concat([settings, frame(0x1, 0, 1, Buffer.from([0x88])), frame(0x0, 0, 1, Buffer.alloc(1))]),
      H2Error.PROTOCOL_ERROR,
      'interrupted',
    ],
  ])('fails the connection on %s, telling the peer with GOAWAY', async (_what, bytes, code, message) => {
    const raw = await rawPeer(bytes);
    let closedWith: Error | undefined;
    const closed = new Promise<void>((resolve) => {
      const connection = connectTo(raw.port, { onClose: (err) => ((closedWith = err), resolve()) });
      connection.request(blockFor(raw.port, '/'), { onHeaders() {}, onData() {}, onAbort() {} }, Buffer.from('x'), true);
    });
    await closed;
    expect(closedWith?.message).toContain(message);
    const sent = await raw.received;
    // This side's last frame is GOAWAY with the code.
    const goaway = sent.subarray(sent.length - 17);
    expect(goaway[3]).toBe(0x7);
    expect(goaway.readUInt32BE(13)).toBe(code);
    raw.close();
  });
});

describe('HTTP/2 connection: what the fuzzer found (test/store/etcd/fuzz.test.ts)', () => {
  const frame = (type: number, flags: number, stream: number, payload: Buffer) => frameBytes({ type, flags, streamId: stream, payload });
  const settings = frame(0x4, 0, 0, Buffer.alloc(0));

  function openOver(socket: InMemorySocket): { connection: H2Connection; aborted: string[]; closed: () => Error | undefined } {
    const aborted: string[] = [];
    let closedWith: Error | undefined;
    const connection = new H2Connection(
      socket.asTransport().socket,
      { onClose: (err) => (closedWith = err) },
      { stream: 65_535, connection: 1 << 20 },
      'connect',
    );
    connection.request(encodeHeaderBlock([[':path', '/']]), { onHeaders() {}, onData() {}, onAbort: (reason) => aborted.push(reason) }, Buffer.from('x'), true);
    socket.connect();
    return { connection, aborted, closed: () => closedWith };
  }

  it('aborts the stream a DATA frame was ending when its padding is longer than the frame (it was forgotten, and a watch hung for ever)', () => {
    const socket = new InMemorySocket();
    const { aborted, closed } = openOver(socket);
    // END_STREAM | PADDED, a pad length of 15 in a payload of 4 (seed 56, case 302).
    socket.deliver(Buffer.concat([settings, frame(0x1, 0x4, 1, Buffer.from([0x88])), frame(0x0, 0x9, 1, Buffer.from('0f2891ca', 'hex'))]));
    expect(closed()?.message).toContain('padding longer than its frame');
    expect(aborted).toEqual([expect.stringContaining('padding longer than its frame')]);
  });

  it('fails the connection once a header block passes 1 MiB over CONTINUATION frames, rather than gathering for as long as the peer sends', () => {
    const socket = new InMemorySocket();
    const { aborted, closed } = openOver(socket);
    socket.deliver(Buffer.concat([settings, frame(0x1, 0, 1, Buffer.from([0x88]))]));
    const continuation = frame(0x9, 0, 1, Buffer.alloc(16_384, 0x82));
    let sent = 0;
    while (!closed() && sent < 2 * MAX_HEADER_BLOCK) {
      socket.deliver(continuation);
      sent += 16_384;
    }
    expect(closed()?.message).toContain(`a header block over ${MAX_HEADER_BLOCK} bytes`);
    expect(sent).toBeLessThanOrEqual(MAX_HEADER_BLOCK + 16_384);
    expect(aborted).toHaveLength(1);
  });
});
