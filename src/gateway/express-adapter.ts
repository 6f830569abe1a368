/**
 * The thin Express adapter: turns a node request/response into the gateway's plain objects
 * and hands them to the pipeline. Nothing else in the gateway knows about Express. Express'
 * own ETag, query parsing and `X-Powered-By` are off: the pipeline does its own work.
 */
import { atTurnEnd } from '../util/bulk-writes';
import { type IncomingMessage, ServerResponse, validateHeaderName, validateHeaderValue } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex, Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import express from 'express';
import { badRequest, requestEntityTooLarge } from '../status';
import { describePeer } from '../authn';
import { type ChunkWriter, type GatewayRequest, type GatewayResponse, type PeerCertificate, type UpgradeConnection, parseRequestTarget } from './types';

/** The gateway's `handle`: nothing when it answered within the call, else its promise; fails by rejecting. */
export type GatewayHandle = (request: GatewayRequest, response: GatewayResponse) => Promise<void> | void;

/**
 * What the TLS sockets of one listener know about their client certificates, asked once per
 * connection: getPeerCertificate() builds a fresh object on every call. One per listener, so
 * per server.
 */
export class PeerCertificates {
  private readonly bySocket = new WeakMap<TLSSocket, PeerCertificate | null>();

  of(socket: TLSSocket): PeerCertificate | undefined {
    const cached = this.bySocket.get(socket);
    if (cached !== undefined) return cached ?? undefined;
    const cert = readPeerCertificate(socket);
    this.bySocket.set(socket, cert ?? null);
    return cert;
  }
}

function readPeerCertificate(socket: TLSSocket): PeerCertificate | undefined {
  if (typeof socket.getPeerCertificate !== 'function') return undefined;
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  return describePeer(cert, socket.authorized, socket.authorizationError ? String(socket.authorizationError) : undefined);
}

/** Node already joins repeated request headers with ", " (only set-cookie stays a list, which requests do not use). */
function headersOf(req: IncomingMessage): Record<string, string | undefined> {
  return req.headers as Record<string, string | undefined>;
}

/** Read a request's whole body, at most `limit` bytes (413 past it). */
function readWholeBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (declared > limit) {
      req.resume();
      reject(requestEntityTooLarge(`limit is ${limit}`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        reject(requestEntityTooLarge(`limit is ${limit}`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      // A body that came in one piece (most do) is that piece: concat would copy it.
      if (!over) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.on('error', reject);
  });
}

/**
 * The body of a request that asked to upgrade, for a handler that reads it (a path nothing
 * upgrades): node stops parsing at the head, so the body is `head` and what follows on the
 * socket, `Content-Length` bytes of it. A chunked one is refused: the connection is no longer
 * parsed as HTTP.
 */
function readUpgradeBody(req: IncomingMessage, upgrade: NodeUpgrade, limit: number): Promise<Buffer> {
  if (req.headers['transfer-encoding'] !== undefined) {
    return Promise.reject(badRequest('a request that asks to upgrade the connection must send its body with Content-Length'));
  }
  const length = Number(req.headers['content-length'] ?? 0);
  if (length > limit) return Promise.reject(requestEntityTooLarge(`limit is ${limit}`));
  const { socket, head } = upgrade;
  if (head.length >= length) return Promise.resolve(head.subarray(0, length));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [head];
    let size = head.length;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size < length) return;
      socket.off('data', onData);
      socket.pause();
      resolve(Buffer.concat(chunks, size).subarray(0, length));
    };
    socket.on('data', onData);
    socket.once('close', () => reject(badRequest('the connection closed before the body was whole')));
  });
}

/** A body that `bodyStream` gave away: reading it again is a bug of the caller. */
const STREAMED_BODY: Promise<Buffer> = Promise.reject(new Error('the request body was already streamed'));
STREAMED_BODY.catch(() => undefined);

/** The connections of requests that asked to upgrade, by their node request (see `upgradeListener`). */
const upgrades = new WeakMap<IncomingMessage, NodeUpgrade>();

/** The connection of a request that asked to upgrade, until a step takes it (`UpgradeConnection`). */
class NodeUpgrade implements UpgradeConnection {
  taken = false;

  constructor(
    readonly socket: Duplex,
    readonly head: Buffer,
    private readonly res: ServerResponse,
  ) {}

  take(status: number): { socket: Duplex; head: Buffer } {
    if (this.taken || this.res.headersSent) throw new Error('the connection was already taken or answered');
    this.taken = true;
    // The response is over without a byte: detached, it never writes to the socket again, and
    // destroyed, it counts as done (`whenFlushed`), with the status the logs and metrics see.
    this.res.statusCode = status;
    this.res.detachSocket(this.socket as Socket);
    this.res.destroy();
    return { socket: this.socket, head: this.head };
  }
}

/**
 * A node request as the gateway sees it. A class rather than an object literal: its getters and
 * methods live on the prototype, so a request costs one small object (a literal with getters
 * and closures was built the slow way, a dozen allocations, on every request).
 */
class NodeGatewayRequest implements GatewayRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly peerCertificate: PeerCertificate | undefined;
  private aborter: AbortController | undefined;
  private body: Promise<Buffer> | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    peers: PeerCertificates,
  ) {
    const { path, query } = parseRequestTarget(req.url ?? '/');
    this.method = (req.method ?? 'GET').toUpperCase();
    this.path = path;
    this.query = query;
    this.headers = headersOf(req);
    this.peerCertificate = peers.of(req.socket as TLSSocket);
  }

  /** Read only by the audit log and the request log. */
  get remoteAddress(): string | undefined {
    return this.req.socket.remoteAddress;
  }

  /**
   * Fires when the client goes away before the response finished. Made when first read: only
   * watches and long requests ask, and it costs a listener per request.
   */
  get signal(): AbortSignal {
    if (!this.aborter) {
      const a = new AbortController();
      this.aborter = a;
      const { req, res } = this;
      if ((res.destroyed || req.socket.destroyed) && !res.writableFinished) a.abort();
      else res.on('close', () => !res.writableFinished && a.abort());
    }
    return this.aborter.signal;
  }

  readBody(limit: number): Promise<Buffer> {
    if (this.body) return this.body;
    // A request node handed to the upgrade listener: its body was not parsed.
    const upgrade = upgrades.get(this.req);
    this.body = upgrade ? readUpgradeBody(this.req, upgrade, limit) : readWholeBody(this.req, limit);
    return this.body;
  }

  bodyStream(): Readable | undefined {
    if (this.body || upgrades.has(this.req)) return undefined;
    this.body = STREAMED_BODY;
    return this.req;
  }

  get upgrade(): UpgradeConnection | undefined {
    return upgrades.get(this.req);
  }

  headerValues(name: string): readonly string[] {
    return this.req.headersDistinct[name] ?? [];
  }

  removeHeader(name: string): void {
    // `headers` is node's own object; its distinct view is made once, when first read.
    delete this.req.headers[name];
    delete this.req.headersDistinct[name];
  }
}

export function toGatewayRequest(req: IncomingMessage, res: ServerResponse, peers: PeerCertificates): GatewayRequest {
  return new NodeGatewayRequest(req, res, peers);
}

/**
 * A node response as the gateway sees it (a class for the same reason as the request).
 *
 * Headers are kept here as name/value pairs until the head goes out, then handed to node in one
 * `writeHead`: node's `setHeader` keeps a map it later walks to write the head, which cost more
 * than the rest of a cached GET's own header work (a get's four headers: 0.92 against 0.33 µs
 * in a scratch measurement; the head's bytes are the same). Each header is still checked when
 * it is set, as node's `setHeader` checks it, so a bad one fails where it was set.
 */
class NodeGatewayResponse implements GatewayResponse {
  /** Names and values in turn, in the order first set (node writes them in that order too). */
  private readonly pending: (string | readonly string[])[] = [];
  /** The length of what `end` was given, until then -1. */
  private endBytes = -1;
  /** A framed chunk written to the socket was not taken whole (see chunkWriter). */
  private socketFull = false;

  constructor(
    private readonly res: ServerResponse,
    /** The listener's batch of responses ended in this turn, which `end` joins. */
    private readonly ends: ResponseEnds,
  ) {}

  get headersSent(): boolean {
    return this.res.headersSent;
  }

  get statusCode(): number {
    return this.res.statusCode;
  }

  setHeader(name: string, value: string | readonly string[]): void {
    const { res, pending } = this;
    if (res.headersSent) {
      res.setHeader(name, value as string | string[]); // node's ERR_HTTP_HEADERS_SENT
      return;
    }
    validateHeaderName(name);
    if (typeof value === 'string') validateHeaderValue(name, value);
    else for (const v of value) validateHeaderValue(name, v);
    // A name set again replaces its value, as node's setHeader does (names are case-insensitive).
    for (let i = 0; i < pending.length; i += 2) {
      const set = pending[i] as string;
      if (set === name || (set.length === name.length && set.toLowerCase() === name.toLowerCase())) {
        pending[i + 1] = value;
        return;
      }
    }
    pending.push(name, value);
  }

  writeHead(status: number): void {
    this.res.statusCode = status;
  }

  flushHeaders(): void {
    this.sendHead();
    this.res.flushHeaders();
  }

  write(chunk: Uint8Array | string): boolean {
    this.sendHead();
    return this.res.write(chunk);
  }

  /**
   * node's `write` of a chunk corks the socket, writes the chunk's size line, the data and the
   * CRLF, and uncorks on the next tick: three buffers joined per write. A framed chunk goes to
   * the socket whole, in order after anything written before (node's own buffer for this
   * response is empty: checked here, and nothing but this response writes to its socket while it
   * streams). The head is out, so `end` still writes the last chunk as for any chunked body.
   */
  chunkWriter(): ChunkWriter | undefined {
    const { res } = this;
    const socket = res.socket;
    if (!res.headersSent || !res.chunkedEncoding || res.writableEnded || !socket || res.writableLength !== socket.writableLength) return undefined;
    return (framed) => {
      // Gone: the response's 'close' ends the stream; there is nothing to wait for.
      if (socket.destroyed) return true;
      if (socket.write(framed)) return true;
      this.socketFull = true;
      return false;
    };
  }

  drain(): Promise<void> {
    if (this.socketFull) {
      this.socketFull = false;
      // node's response emits 'drain' only after a `write` of its own said no: the socket's.
      const socket = this.res.socket;
      if (!socket || socket.destroyed || !socket.writableNeedDrain) return Promise.resolve();
      return firstOf(socket, 'drain', 'close');
    }
    return firstOf(this.res, 'drain', 'close');
  }

  /** Ends at the end of this turn of the event loop, with the listener's other responses ended in it (ResponseEnds). */
  end(chunk?: Uint8Array | string): void {
    this.sendHead();
    this.endBytes = chunk === undefined ? 0 : typeof chunk === 'string' ? chunk.length : chunk.byteLength;
    this.ends.end(this.res, chunk);
  }

  abort(): void {
    this.res.destroy();
  }

  whenFlushed(): Promise<void> | undefined {
    const { res } = this;
    if (res.writableFinished || res.destroyed) return undefined;
    // Ended here, still waiting for its turn's writes: small enough to count as sent already.
    if (this.endBytes >= 0 && !res.writableEnded && this.endBytes <= FLUSHED_ENOUGH_BYTES) return undefined;
    // Ended, and what is left of it in the process is at most a socket buffer's worth (a TLS
    // write completes a tick later even when the kernel took it at once): as a Go handler's
    // write of a small answer returns at once, the request lets go now rather than after
    // listening for 'finish'.
    // (A response's writableLength counts its socket's queue too.)
    if (res.writableEnded && res.writableLength <= FLUSHED_ENOUGH_BYTES) return undefined;
    return firstOf(res, 'finish', 'close');
  }

  /** The status line and the headers set so far, now (they go out with the first bytes written). */
  private sendHead(): void {
    const { res } = this;
    if (res.headersSent) return;
    res.writeHead(res.statusCode, this.pending as string[]);
  }
}

/**
 * The responses one listener ended in this turn of the event loop, ended together once the
 * turn's I/O is handled. One per listener, so per server: another server's responses are not in
 * its batches, and its graceful close waits for its own only (`whenWritten`).
 */
export class ResponseEnds {
  /** Responses ended in this turn and the chunk each ends with, in turn. */
  private ending: (ServerResponse | Uint8Array | string | undefined)[] = [];
  private waiters: (() => void)[] = [];

  /**
   * End `res` once this turn's I/O is handled (`setImmediate`), together with every other response
   * ended in the turn. A server busier than its clients otherwise writes each answer as it is
   * ready, and each write wakes a client that went to sleep after the previous one: the kernel's
   * wake-up, paid by the writer, cost as much as the rest of a cached GET (docs/BENCHMARKS.md).
   * Written back to back, the first answer wakes the client and the others find it awake. The head
   * was already stored (`headersSent` holds); only the bytes wait, microseconds. While large lists
   * stream in write turns the wait would be a slice of theirs, not microseconds: then the
   * response is written at once (`atTurnEnd`, `util/bulk-writes.ts`).
   */
  end(res: ServerResponse, chunk: Uint8Array | string | undefined): void {
    this.ending.push(res, chunk);
    if (this.ending.length === 2) atTurnEnd(this.endAll);
  }

  /** Resolves once the responses ended so far have been handed to their sockets (before closing them). */
  whenWritten(): Promise<void> {
    if (this.ending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private readonly endAll = (): void => {
    // Taken first: a response ended while these are (an end's listeners run synchronously) goes
    // into a batch of its own, which `end` schedules as the queue is empty again.
    const batch = this.ending;
    this.ending = [];
    for (let i = 0; i < batch.length; i += 2) {
      const res = batch[i] as ServerResponse;
      const chunk = batch[i + 1] as Uint8Array | string | undefined;
      if (res.destroyed) continue;
      try {
        if (chunk === undefined) res.end();
        else res.end(chunk);
      } catch (err) {
        // Not expected of node; one response failing must not keep the others from going out.
        res.destroy(err as Error);
      }
    }
    if (this.ending.length > 0) return;
    const waiting = this.waiters;
    this.waiters = [];
    for (const resolve of waiting) resolve();
  };
}

/** Bytes an ended response may still have queued in the process and count as sent (a socket buffer's worth). */
const FLUSHED_ENOUGH_BYTES = 64 * 1024;

/** Resolves at the first of two events of `res`, then listens no more. */
function firstOf(res: NodeJS.EventEmitter, one: string, other: string): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off(one, done);
      res.off(other, done);
      resolve();
    };
    res.on(one, done);
    res.on(other, done);
  });
}

export function toGatewayResponse(res: ServerResponse, ends: ResponseEnds): GatewayResponse {
  return new NodeGatewayResponse(res, ends);
}

/** What a listener keeps between its requests (never another server's). */
interface ListenerState {
  readonly peers: PeerCertificates;
  readonly ends: ResponseEnds;
}

/** Hand one node request to the gateway. */
function dispatch(handle: GatewayHandle, req: IncomingMessage, res: ServerResponse, onError: (err: unknown) => void, state: ListenerState): void {
  let request: GatewayRequest;
  try {
    request = toGatewayRequest(req, res, state.peers);
  } catch {
    // Only a malformed path gets here; answer as Go's server does.
    res.statusCode = 400;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end('400 Bad Request');
    return;
  }
  handle(request, toGatewayResponse(res, state.ends))?.catch((err: unknown) => {
    onError(err);
    if (!res.headersSent) res.statusCode = 500;
    res.end();
  });
}

/**
 * The Kubernetes API surface: `/api`, `/apis` and every path below them (resources and
 * discovery), with or without a query.
 */
export function isApiPath(url: string): boolean {
  if (!url.startsWith('/api')) return false;
  const at = url.charCodeAt(4) === 0x73 /* s */ ? 5 : 4;
  return url.length === at || url[at] === '/' || url[at] === '?';
}

/** The listener `createExpressApp` returns: a node request listener with the Express app behind it. */
export type ExpressListener = ((req: IncomingMessage, res: ServerResponse) => void) & { readonly app: express.Express };

/**
 * An Express app whose only middleware hands every request to the gateway, behind a listener
 * that dispatches the API surface (`isApiPath`) to the gateway before Express sees it.
 *
 * Why: Express' per-request work (swapping the prototypes of req and res, which also slows every
 * later property access on them, walking the router's layers, finalhandler) measured ~180 µs of
 * CPU per request, as much as the rest of a cached GET (docs/BENCHMARKS.md), and none of it is
 * used: the gateway parses, routes and answers on plain node objects. The other paths (health,
 * version, OpenAPI) still pass through Express, so middleware added to `app` applies to them only.
 *
 * `ends` batches the listener's responses; its server's graceful close waits for them.
 */
export function createExpressApp(handle: GatewayHandle, ends: ResponseEnds, onError: (err: unknown) => void = () => {}): ExpressListener {
  const state: ListenerState = { peers: new PeerCertificates(), ends };
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);
  app.use((req, res) => dispatch(handle, req, res, onError, state));
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    if (isApiPath(req.url ?? '/')) dispatch(handle, req, res, onError, state);
    else app(req, res);
  };
  return Object.assign(listener, { app });
}

/**
 * The listener for node's `upgrade` event, in front of `listener` (either of the above): a
 * request that asks to switch protocols goes through the gateway as any request, answered on a
 * response made for its connection, which closes after the answer (node no longer parses it as
 * HTTP); a step that switches protocols takes the connection instead (`GatewayRequest.upgrade`).
 */
export function upgradeListener(listener: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    // node took its own listeners off the socket: its errors are this listener's now.
    socket.on('error', () => socket.destroy());
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    const upgrade = new NodeUpgrade(socket, head, res);
    upgrades.set(req, upgrade);
    res.on('finish', () => {
      res.detachSocket(socket as Socket);
      socket.end();
    });
    listener(req, res);
  };
}

/**
 * The same dispatch without Express, for deployments that measure Express' per-request cost
 * against the budgets in docs/BENCHMARKS.md (see `StartGatewayOptions.adapter`).
 */
export function createNodeListener(
  handle: GatewayHandle,
  ends: ResponseEnds,
  onError: (err: unknown) => void = () => {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const state: ListenerState = { peers: new PeerCertificates(), ends };
  return (req, res) => dispatch(handle, req, res, onError, state);
}
