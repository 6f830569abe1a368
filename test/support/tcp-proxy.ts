/**
 * A TCP proxy in front of a server (etcd, in the tests of the store's client), with the faults a
 * network or a member can cause: the answers held back (the client stops hearing, as when a
 * member falls behind or its link is congested), and a connection cut right after a request
 * went through, before its answer could come back (the write whose answer is lost).
 */
import net from 'node:net';

export interface TcpProxy {
  /** `http://127.0.0.1:<port>`: where clients connect. */
  endpoint: string;
  /** Bytes forwarded towards the server, and towards the clients. */
  readonly bytesUp: number;
  readonly bytesDown: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Stop reading the server's answers (they back up in the server's buffers); `resume` reads on. */
  holdAnswers(): void;
  /** Hold the answers from the moment a client sends bytes containing `marker` (forwarded first). */
  holdAnswersAfter(marker: Buffer): void;
  resume(): void;
  /**
   * The next request a client sends whose HTTP/2 HEADERS satisfy `request.headers` and whose
   * message (a DATA frame on the same stream) satisfies `request.message`: forward it and, as
   * soon as the server starts to answer that stream, cut the connection without forwarding the
   * answer. Resolves once cut. Other requests on the connection, and their answers (a read of
   * the same key, a lease renewal sent in the same TCP write), pass through and do not cut it.
   * The request's HEADERS must carry what `headers` looks for uncompressed (the store's etcd
   * client never indexes or Huffman-codes its header blocks).
   */
  cutAfterRequest(request: RequestMatch): Promise<void>;
  close(): Promise<void>;
}

export interface RequestMatch {
  headers(block: Buffer): boolean;
  message(payload: Buffer): boolean;
}

interface Frame {
  type: number;
  stream: number;
  payload: Buffer;
}

const HEADERS = 0x1;
const DATA = 0x0;
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/**
 * Splits one direction of an HTTP/2 connection into frames across reads (a frame may span
 * several, a read may hold several); the client's connection preface is skipped.
 */
function frameReader(fromClient: boolean): (chunk: Buffer) => Frame[] {
  let pending: Buffer = Buffer.alloc(0);
  let prefaceLeft = fromClient ? PREFACE.length : 0;
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    if (prefaceLeft > 0) {
      const skip = Math.min(prefaceLeft, pending.length);
      prefaceLeft -= skip;
      pending = pending.subarray(skip);
    }
    const frames: Frame[] = [];
    while (pending.length >= 9) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) break;
      frames.push({ type: pending[3]!, stream: pending.readUInt32BE(5) & 0x7fffffff, payload: pending.subarray(9, 9 + length) });
      pending = pending.subarray(9 + length);
    }
    return frames;
  };
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  let bytesUp = 0;
  let bytesDown = 0;
  let connections = 0;
  let holding = false;
  const upstreams = new Set<net.Socket>();
  const sockets = new Set<net.Socket>();
  let armed: { request: RequestMatch; cut: () => void } | undefined;
  let holdAfter: Buffer | undefined;

  const server = net.createServer((client) => {
    connections++;
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    upstreams.add(upstream);
    if (holding) upstream.pause();
    // The request to cut after: its stream, and what to call once cut.
    let cutting: { stream: number; done: () => void } | undefined;
    // Streams whose HEADERS the armed request's `headers` took.
    const candidates = new Set<number>();
    const requestFrames = frameReader(true);
    const answerFrames = frameReader(false);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
      upstreams.delete(upstream);
    };
    client.on('data', (chunk: Buffer) => {
      bytesUp += chunk.length;
      for (const frame of requestFrames(chunk)) {
        if (!armed) break;
        if (frame.type === HEADERS && armed.request.headers(frame.payload)) candidates.add(frame.stream);
        else if (frame.type === DATA && candidates.has(frame.stream) && armed.request.message(frame.payload)) {
          cutting = { stream: frame.stream, done: armed.cut };
          armed = undefined;
        }
      }
      upstream.write(chunk);
      if (holdAfter && chunk.includes(holdAfter)) {
        holdAfter = undefined;
        holding = true;
        for (const u of upstreams) u.pause();
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      const frames = answerFrames(chunk);
      if (cutting && frames.some((f) => f.type === HEADERS && f.stream === cutting!.stream)) {
        // The server has the request and is answering it (a unary gRPC answer's HEADERS come
        // with its message, after the handler ran): the answer is lost with the connection.
        const { done } = cutting;
        cutting = undefined;
        end();
        done();
        return;
      }
      bytesDown += chunk.length;
      client.write(chunk);
    });
    for (const socket of [client, upstream]) {
      socket.on('error', end);
      socket.on('close', end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    endpoint: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    get bytesUp() {
      return bytesUp;
    },
    get bytesDown() {
      return bytesDown;
    },
    get connections() {
      return connections;
    },
    holdAnswers() {
      holding = true;
      for (const upstream of upstreams) upstream.pause();
    },
    holdAnswersAfter(marker) {
      holdAfter = marker;
    },
    resume() {
      holding = false;
      for (const upstream of upstreams) upstream.resume();
    },
    cutAfterRequest(request) {
      return new Promise<void>((resolve) => {
        armed = { request, cut: resolve };
      });
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
