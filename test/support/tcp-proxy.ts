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
   * The next time a client sends bytes that `matches` (one read of them), forward them and, as
   * soon as the server starts to answer, cut that connection without forwarding the answer.
   * Resolves once cut.
   */
  cutAfterRequest(matches: (bytes: Buffer) => boolean): Promise<void>;
  close(): Promise<void>;
}

/**
 * Whether a chunk from the server holds an HTTP/2 HEADERS frame (an answer starting), as far as
 * its frames can be walked: pings, window updates and settings pass through, so a cut waits for
 * the answer itself rather than for the first byte of anything (etcd answers a ping before a
 * transaction it is still applying). A chunk whose frames cannot be walked counts as an answer.
 */
function answersSomething(chunk: Buffer): boolean {
  let at = 0;
  while (at + 9 <= chunk.length) {
    const length = chunk.readUIntBE(at, 3);
    const type = chunk[at + 3]!;
    if (type === 0x1) return true;
    if (type > 0x9) return true;
    at += 9 + length;
  }
  return at !== chunk.length;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  let bytesUp = 0;
  let bytesDown = 0;
  let connections = 0;
  let holding = false;
  const upstreams = new Set<net.Socket>();
  const sockets = new Set<net.Socket>();
  let armed: { matches: (bytes: Buffer) => boolean; cut: () => void } | undefined;
  let holdAfter: Buffer | undefined;

  const server = net.createServer((client) => {
    connections++;
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    upstreams.add(upstream);
    if (holding) upstream.pause();
    let cutting: (() => void) | undefined;
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
      upstreams.delete(upstream);
    };
    client.on('data', (chunk: Buffer) => {
      bytesUp += chunk.length;
      if (armed?.matches(chunk)) {
        cutting = armed.cut;
        armed = undefined;
      }
      upstream.write(chunk);
      if (holdAfter && chunk.includes(holdAfter)) {
        holdAfter = undefined;
        holding = true;
        for (const u of upstreams) u.pause();
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (cutting && answersSomething(chunk)) {
        // The server has the request and is answering it: the answer is lost with the connection.
        const done = cutting;
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
    cutAfterRequest(matches) {
      return new Promise<void>((resolve) => {
        armed = { matches, cut: resolve };
      });
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
