/**
 * The etcd store's client: etcd's KV (Range, Txn, DeleteRange, Compact), Watch and Maintenance
 * Status calls as gRPC over one HTTP/2 connection of our own framing (h2-connection.ts, HPACK in
 * hpack.ts), with the message codecs generated from `proto/etcd` (wire-compatible with etcd's
 * own; `buf.gen.etcd.yaml`), except the Txn request every write sends, written in one pass by
 * txn-codec.ts straight into its frames. Keys and values are views of the response's
 * bytes, not copies (a copy per value was a fifth of the start-up profile); revisions are
 * numbers.
 *
 * Why neither etcd3, grpc-js nor node:http2: a store request is one of a few fixed shapes, and
 * the general machinery cost more CPU than the rest of a create's Keelson-side work. Measured
 * side by side against one etcd, 64 calls in flight, client CPU per call: etcd3 `kv.txn`
 * 104–120 µs, a bare grpc-js `makeUnaryRequest` 98–107 µs, a unary call on node:http2 51–66 µs,
 * this connection ~9 µs (docs/BENCHMARKS.md). A request's header block is built once per method
 * and connection; a call is one socket write of HEADERS and DATA.
 *
 * Connection handling, as a gRPC channel over several endpoints would do it: one connection at
 * a time; one that closes, fails or is told to go away is dropped, and the next call dials the
 * next endpoint. A call that outlives its deadline is cancelled and drops its connection too (a
 * member that stopped answering keeps its TCP connection open). A watch lives on the connection
 * it was opened on and ends, reporting it, when that connection does.
 */
import net from 'node:net';
import tls from 'node:tls';
import { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire';
import { GRPC_PREFIX_BYTES, sizedTxn } from './txn-codec';
import {
  CompactionRequest,
  CompactionResponse,
  DeleteRangeRequest,
  DeleteRangeResponse,
  RangeRequest,
  RangeResponse,
  StatusRequest,
  StatusResponse,
  TxnRequest,
  TxnResponse,
  WatchRequest,
  WatchResponse,
  type WatchCreateRequest,
} from '../../gen/etcd/etcdserverpb/rpc';
import { systemClock } from '../../clock';
import { type Deadline, Deadlines } from '../../clock/deadlines';
import { GrpcCode } from '../../status';
import { H2Connection, type H2Stream, type H2StreamHandler, type SizedBody } from './h2-connection';
import { encodeHeaderBlock } from './hpack';
import { decodeRangeResponseChunks } from './range-chunks';
import { RESPONSE_SHAPES, checkWire, type WireShape } from './wire-check';

/** A failed call: the gRPC status code and message etcd (or the transport) gave. */
export class EtcdCallError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'EtcdCallError';
  }
}

export interface EtcdClientOptions {
  /** Client URLs (`http://host:port`, `https://…`; a bare `host:port` is taken as http, or https with TLS). */
  endpoints: readonly string[];
  /** TLS to etcd: verify its certificate with `ca` (the host's roots when absent), present `cert`/`key`. */
  tls?: { ca?: string; cert?: string; key?: string };
  /** Deadline of each unary call (watches have none). */
  timeoutMs: number;
  /**
   * An HTTP/2 PING on each connected session this often (0: none); a session whose ping goes
   * unanswered for `keepaliveTimeoutMs` is destroyed, failing its calls and watches. A watch
   * has no deadline, so this is what ends one on a member that went silent without a reset.
   */
  keepaliveMs?: number;
  keepaliveTimeoutMs?: number;
  /**
   * Opens the byte stream to an endpoint: TCP, or TLS agreeing on `h2`, by default. A test hands
   * in a peer of its own (the fuzzer's in-memory etcd, test/store/etcd/fuzz/); the client speaks
   * HTTP/2 over whatever this returns.
   */
  dial?(endpoint: URL): EtcdTransport;
}

/** The byte stream to one endpoint, as `dial` opens it. */
export interface EtcdTransport {
  socket: net.Socket;
  /** The event `socket` emits once it can carry HTTP/2 ('connect', or 'secureConnect' for TLS). */
  connectEvent: 'connect' | 'secureConnect';
  /** Checked at connect (for TLS: that ALPN chose h2); an error fails the connection. */
  check?(): Error | undefined;
}

/**
 * The calls the etcd store makes (store.ts, watch.ts): the store's own client, or, in the
 * differential oracle of the tests, that client checked call by call against etcd3's.
 */
export interface EtcdCalls {
  /** A Range; `now` sends it at once rather than with the rest of the event-loop turn's calls. */
  range(request: RangeRequest, now?: boolean): Promise<RangeResponse>;
  txn(request: TxnRequest): Promise<TxnResponse>;
  deleteRange(request: DeleteRangeRequest): Promise<DeleteRangeResponse>;
  compact(request: CompactionRequest): Promise<CompactionResponse>;
  status(): Promise<StatusResponse>;
  /** One watch on a stream of its own; its end is reported once, unless canceled. */
  watch(create: WatchCreateRequest, handlers: WatchStreamHandlers): WatchStream;
  close(): void;
}

/** Flow-control windows: a page of a list is megabytes, and etcd should not wait on window updates. */
const STREAM_WINDOW = 4 * 1024 * 1024;
const SESSION_WINDOW = 16 * 1024 * 1024;

/** A call's gRPC status, from the trailers (or the headers of a trailers-only answer). */
interface GrpcStatus {
  code: number;
  message: string;
}

interface Codec<Req, Res> {
  path: string;
  encode(request: Req, writer: RequestWriter): Uint8Array;
  decode(bytes: Uint8Array): Res;
  /** The response from the frames it came in, length prefix included, without joining them (large responses). */
  decodeChunks?(chunks: readonly Uint8Array[]): Res;
  /** The request with its gRPC prefix, written where its frames go (undefined: `encode` then frame it). */
  sized?(request: Req): SizedBody | undefined;
}

/**
 * One protobuf writer for every request message of a client, reused: a fresh writer grows from
 * 128 bytes to a create's ~3 KB by doubling, zero-filling and copying each time (~3 µs per create
 * in its profile). Encoding is synchronous, so no two messages share it at once; one that fails,
 * or grew it past REUSED_WRITER_BYTES, leaves a fresh writer behind. Each client has its own (a
 * server's store has one client), so no server's messages size another's buffer.
 */
class RequestWriter {
  private writer = new BinaryWriter();

  encode<Req>(encode: (message: Req, writer: BinaryWriter) => BinaryWriter, message: Req): Uint8Array {
    let bytes: Uint8Array;
    try {
      bytes = encode(message, this.writer).finish();
    } catch (err) {
      this.writer = new BinaryWriter();
      throw err;
    }
    if (bytes.length > REUSED_WRITER_BYTES) this.writer = new BinaryWriter();
    return bytes;
  }
}

const REUSED_WRITER_BYTES = 64 * 1024;

/** A method's codec; a response is held to its wire shape before it is decoded (wire-check.ts). */
function method<Req, Res>(
  service: string,
  name: string,
  request: { encode(message: Req, writer: BinaryWriter): BinaryWriter },
  response: { decode(input: BinaryReader | Uint8Array): Res },
  shape: WireShape,
): Codec<Req, Res> {
  const encode = request.encode.bind(request);
  return {
    path: `/etcdserverpb.${service}/${name}`,
    encode: (message, writer) => writer.encode(encode, message),
    decode: (bytes) => {
      checkWire(bytes, shape);
      return response.decode(new BinaryReader(bytes));
    },
  };
}

const RANGE: Codec<RangeRequest, RangeResponse> = {
  ...method('KV', 'Range', RangeRequest, RangeResponse, RESPONSE_SHAPES.RangeResponse),
  decodeChunks: decodeRangeResponseChunks,
};
const TXN: Codec<TxnRequest, TxnResponse> = { ...method('KV', 'Txn', TxnRequest, TxnResponse, RESPONSE_SHAPES.TxnResponse), sized: sizedTxn };
const DELETE_RANGE = method('KV', 'DeleteRange', DeleteRangeRequest, DeleteRangeResponse, RESPONSE_SHAPES.DeleteRangeResponse);
const COMPACT = method('KV', 'Compact', CompactionRequest, CompactionResponse, RESPONSE_SHAPES.CompactionResponse);
const STATUS = method('Maintenance', 'Status', StatusRequest, StatusResponse, RESPONSE_SHAPES.StatusResponse);
const WATCH = method('Watch', 'Watch', WatchRequest, WatchResponse, RESPONSE_SHAPES.WatchResponse);

/** What a watch stream reports: each response, then its end (once, unless canceled). */
export interface WatchStreamHandlers {
  onResponse(response: WatchResponse): void;
  onEnd(err: EtcdCallError): void;
}

export interface WatchStream {
  /** Ends the stream without reporting it. */
  cancel(): void;
}

export class EtcdClient implements EtcdCalls {
  private readonly endpoints: readonly URL[];
  private connection?: EtcdConnection;
  /** Every connection not yet closed: an old one stays open while a watch or call still uses it. */
  private readonly connections = new Set<EtcdConnection>();
  /** What every request message is encoded with (RequestWriter). */
  private readonly writer = new RequestWriter();
  /** The calls' deadlines, on one timer (clock/deadlines.ts: a node timer per call cost 5% of a create). */
  private readonly deadlines = new Deadlines<TimedCall>(systemClock, (call) => this.expire(call));
  private next = 0;
  private closed = false;

  constructor(private readonly options: EtcdClientOptions) {
    if (options.endpoints.length === 0) throw new TypeError('etcd client needs at least one endpoint');
    const tls = !!options.tls;
    this.endpoints = options.endpoints.map((e) => new URL(e.includes('://') ? (tls ? e.replace(/^http:/, 'https:') : e) : `${tls ? 'https' : 'http'}://${e}`));
  }

  /**
   * A Range. `now` sends it at once rather than with the rest of the event-loop turn's calls: for
   * a call made at the end of a turn already (a revision read shared by the turn's reads), where
   * waiting would add a turn to every read waiting on it.
   */
  range(request: RangeRequest, now = false): Promise<RangeResponse> {
    return this.call(RANGE, request, now);
  }

  txn(request: TxnRequest): Promise<TxnResponse> {
    return this.call(TXN, request);
  }

  deleteRange(request: DeleteRangeRequest): Promise<DeleteRangeResponse> {
    return this.call(DELETE_RANGE, request);
  }

  compact(request: CompactionRequest): Promise<CompactionResponse> {
    return this.call(COMPACT, request);
  }

  status(): Promise<StatusResponse> {
    return this.call(STATUS, {});
  }

  /**
   * One watch on a stream of its own: the create request is sent at once, each response is
   * handed over as it arrives, and the stream's end (etcd closing it, the connection failing) is
   * reported once as UNAVAILABLE.
   */
  watch(create: WatchCreateRequest, handlers: WatchStreamHandlers): WatchStream {
    const call = new WatchCall(handlers);
    try {
      if (this.closed) throw new Error('etcd client is closed');
      const connection = this.connect();
      call.open(connection, framed(WATCH.encode({ createRequest: create }, this.writer)));
    } catch (err) {
      queueMicrotask(() => call.fail(new EtcdCallError(GrpcCode.UNAVAILABLE, (err as Error).message)));
    }
    return call;
  }

  close(): void {
    this.closed = true;
    for (const connection of this.connections) connection.h2.destroy(new Error('etcd client is closed'));
    this.connection = undefined;
    // The calls ended with their connections; the deadline timer would hold the client until it fired.
    this.deadlines.clear();
  }

  private connect(): EtcdConnection {
    const current = this.connection;
    if (current?.h2.usable) return current;
    const endpoint = this.endpoints[this.next++ % this.endpoints.length]!;
    const secure = endpoint.protocol === 'https:';
    const transport = this.options.dial ? this.options.dial(endpoint) : this.dial(endpoint);
    const connection: EtcdConnection = {
      h2: new H2Connection(
        transport.socket,
        {
          onConnect: () => this.keepAlive(connection),
          onGoaway: () => this.dropConnection(connection),
          onClose: () => {
            this.dropConnection(connection);
            connection.stopKeepalive?.();
            this.connections.delete(connection);
          },
        },
        { stream: STREAM_WINDOW, connection: SESSION_WINDOW },
        transport.connectEvent,
        transport.check,
      ),
      scheme: secure ? 'https' : 'http',
      authority: endpoint.host,
      blocks: new Map(),
      watches: 0,
    };
    this.connections.add(connection);
    this.connection = connection;
    return connection;
  }

  /** TCP to an `http:` endpoint, TLS (with the client's certificate, ALPN `h2`) to an `https:` one. */
  private dial(endpoint: URL): EtcdTransport {
    const host = endpoint.hostname.replace(/^\[(.*)\]$/, '$1');
    if (endpoint.protocol !== 'https:') return { socket: net.connect({ host, port: Number(endpoint.port || 80) }), connectEvent: 'connect' };
    const { ca, cert, key } = this.options.tls ?? {};
    const socket = tls.connect({
      host,
      port: Number(endpoint.port || 443),
      servername: net.isIP(host) ? undefined : host,
      ALPNProtocols: ['h2'],
      ...(ca ? { ca } : {}),
      ...(cert ? { cert } : {}),
      ...(key ? { key } : {}),
    });
    return {
      socket,
      connectEvent: 'secureConnect',
      check: () => (socket.alpnProtocol === 'h2' ? undefined : new Error(`etcd at ${endpoint.host} did not agree to HTTP/2`)),
    };
  }

  /** The next call dials a new connection, unless one replaced `connection` already. */
  private dropConnection(connection: EtcdConnection): void {
    if (this.connection === connection) this.connection = undefined;
  }

  /**
   * Pings `connection` every `keepaliveMs` while it carries a watch, one ping outstanding at a
   * time (as grpc-go's keepalive without PermitWithoutStream: etcd counts pings on an idle
   * connection as abuse and answers GOAWAY).
   */
  private keepAlive(connection: EtcdConnection): void {
    const { keepaliveMs = 0, keepaliveTimeoutMs = 10_000 } = this.options;
    if (keepaliveMs <= 0) return;
    const { h2 } = connection;
    let waiting = false;
    const interval = setInterval(() => {
      if (!h2.connected || waiting || connection.watches === 0) return;
      waiting = true;
      const deadline = setTimeout(() => {
        h2.destroy(new Error(`etcd did not answer a keepalive ping within ${keepaliveTimeoutMs} ms`));
      }, keepaliveTimeoutMs);
      deadline.unref();
      h2.ping(() => {
        // Answered, or the connection ended (which aborts its streams on its own).
        waiting = false;
        clearTimeout(deadline);
      });
    }, keepaliveMs);
    interval.unref();
    connection.stopKeepalive = () => clearInterval(interval);
  }

  /**
   * One call. A connection that never connected has sent nothing, so its calls go on to the next
   * endpoint (each endpoint once); once a request may have reached etcd, a failure is the caller's.
   */
  private async call<Req, Res>(codec: Codec<Req, Res>, request: Req, now = false): Promise<Res> {
    const sized = codec.sized?.(request);
    const message = sized ? undefined : codec.encode(request, this.writer);
    const size = message ? message.length : sized!.size - GRPC_PREFIX_BYTES;
    // clientv3's default send limit, refused before sending as grpc-go refuses it (etcd itself
    // refuses requests above its --max-request-bytes, 1.5 MiB by default, as "request is too large").
    if (size > MAX_SEND_BYTES) {
      throw new EtcdCallError(
        GrpcCode.RESOURCE_EXHAUSTED,
        `rpc error: code = ResourceExhausted desc = trying to send message larger than max (${size} vs. ${MAX_SEND_BYTES})`,
      );
    }
    const bytes = message ? framed(message) : sized!;
    for (let tries = 1; ; tries++) {
      if (this.closed) throw new EtcdCallError(GrpcCode.CANCELLED, 'etcd client is closed');
      const connection = this.connect();
      try {
        return await this.send(connection, codec, bytes, now);
      } catch (err) {
        if (connection.h2.connected || tries >= this.endpoints.length) throw err;
        this.dropConnection(connection);
      }
    }
  }

  private send<Res>(connection: EtcdConnection, codec: Codec<unknown, Res>, bytes: readonly Uint8Array[] | SizedBody, now: boolean): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      const call = new UnaryCall(codec, resolve, reject, this.deadlines);
      try {
        call.stream = connection.h2.request(headerBlock(connection, codec.path, this.options.timeoutMs), call, bytes, true);
        if (now) connection.h2.flushNow();
      } catch (err) {
        reject(new EtcdCallError(GrpcCode.UNAVAILABLE, (err as Error).message));
        return;
      }
      call.connection = connection;
      call.deadline = this.deadlines.add(this.options.timeoutMs, call);
    });
  }

  /** A call's deadline passed (its `timeoutMs`). */
  private expire(call: TimedCall): void {
    call.deadline = undefined;
    call.fail(new EtcdCallError(GrpcCode.DEADLINE_EXCEEDED, 'context deadline exceeded'));
    call.stream?.cancel();
    // A member that stopped answering keeps its connection: dial another for the next call.
    const connection = call.connection!;
    this.dropConnection(connection);
    connection.h2.close();
  }
}

/** A connection to one member, with what its calls share. */
interface EtcdConnection {
  h2: H2Connection;
  scheme: 'http' | 'https';
  authority: string;
  /** Request header blocks per method path. */
  blocks: Map<string, Buffer>;
  /** Open watch streams: only those are kept alive by pings (calls have deadlines). */
  watches: number;
  stopKeepalive?: () => void;
}

/** The gRPC status in a header block, if it holds one (trailers, or a trailers-only answer). */
function statusIn(fields: string[], into: { status?: GrpcStatus }): number | undefined {
  let httpStatus: number | undefined;
  let code: number | undefined;
  let message = '';
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i];
    if (name === ':status') httpStatus = Number(fields[i + 1]);
    else if (name === 'grpc-status') code = grpcStatusCode(fields[i + 1]!);
    else if (name === 'grpc-message') message = decodeGrpcMessage(fields[i + 1]!);
  }
  // A failure always says something: an operator reads it in the API's answer and the log.
  if (code !== undefined)
    into.status = { code, message: message !== '' || code === GrpcCode.OK ? message : `etcd answered gRPC status ${code} without a message` };
  return httpStatus;
}

/**
 * grpc-status as gRPC clients read it: a decimal code; one outside gRPC's codes is UNKNOWN (as
 * grpc-js reads it), one that is not a number INTERNAL (grpc-go's "malformed grpc-status").
 */
function grpcStatusCode(text: string): number {
  if (!/^[0-9]{1,10}$/.test(text)) return GrpcCode.INTERNAL;
  const code = Number(text);
  return code <= GrpcCode.UNAUTHENTICATED ? code : GrpcCode.UNKNOWN;
}

/** An HTTP status other than 200 as gRPC reads it. */
function httpStatusError(httpStatus: number): EtcdCallError {
  const code = httpStatus === 502 || httpStatus === 503 || httpStatus === 504 ? GrpcCode.UNAVAILABLE : GrpcCode.UNKNOWN;
  return new EtcdCallError(code, `HTTP status ${httpStatus} from etcd`);
}

/**
 * A gRPC call on one stream: its header blocks read for the HTTP and gRPC status; an HTTP status
 * other than 200 fails it, and the peer's end of the stream finishes it.
 */
abstract class GrpcCall implements H2StreamHandler {
  stream?: H2Stream;
  status?: GrpcStatus;

  onHeaders(fields: string[], endStream: boolean): void {
    const httpStatus = statusIn(fields, this);
    if (httpStatus !== undefined && httpStatus !== 200) {
      this.fail(httpStatusError(httpStatus));
      if (!endStream) this.stream?.cancel();
      return;
    }
    if (endStream) this.finish();
  }

  /** Reset, refused or cut off with its connection: UNAVAILABLE. */
  onAbort(reason: string): void {
    this.fail(new EtcdCallError(GrpcCode.UNAVAILABLE, reason));
  }

  abstract onData(data: Buffer, endStream: boolean): void;
  /** Ends the call with `err`, once. */
  abstract fail(err: EtcdCallError): void;
  /** The peer ended the stream: the call ends as its status says. */
  protected abstract finish(): void;
}

/** What a call's deadline needs of it. */
interface TimedCall {
  connection?: EtcdConnection;
  deadline?: Deadline<TimedCall>;
  stream?: H2Stream;
  fail(err: EtcdCallError): void;
}

/** One unary call's response, gathered from its stream. */
class UnaryCall<Res> extends GrpcCall implements TimedCall {
  connection?: EtcdConnection;
  deadline?: Deadline<TimedCall>;
  private chunks: Buffer[] = [];
  private settled = false;

  constructor(
    private readonly codec: Codec<unknown, Res>,
    private readonly resolve: (response: Res) => void,
    private readonly reject: (err: EtcdCallError) => void,
    private readonly deadlines: Deadlines<TimedCall>,
  ) {
    super();
  }

  private release(): void {
    if (this.deadline) this.deadlines.cancel(this.deadline);
    this.deadline = undefined;
  }

  onData(data: Buffer, endStream: boolean): void {
    this.chunks.push(data);
    if (endStream) this.finish();
  }

  fail(err: EtcdCallError): void {
    if (this.settled) return;
    this.settled = true;
    this.release();
    this.reject(err);
  }

  protected finish(): void {
    if (this.settled) return;
    const status = this.status;
    if (status === undefined) return this.fail(new EtcdCallError(GrpcCode.UNAVAILABLE, 'stream closed without a status'));
    if (status.code !== GrpcCode.OK) return this.fail(new EtcdCallError(status.code, status.message));
    let decoded: Res;
    try {
      const { chunks, codec } = this;
      decoded = chunks.length > 1 && codec.decodeChunks ? codec.decodeChunks(chunks) : codec.decode(unframe(chunks));
    } catch (err) {
      return this.fail(new EtcdCallError(GrpcCode.INTERNAL, `undecodable response from etcd: ${(err as Error).message}`));
    }
    this.settled = true;
    this.release();
    this.resolve(decoded);
  }
}

/** One watch stream: its responses as they arrive, then its end, reported once. */
class WatchCall extends GrpcCall implements WatchStream {
  private connection?: EtcdConnection;
  private readonly messages = new MessageReader();
  private ended = false;

  constructor(private readonly handlers: WatchStreamHandlers) {
    super();
  }

  open(connection: EtcdConnection, request: readonly Uint8Array[]): void {
    this.stream = connection.h2.request(headerBlock(connection, WATCH.path), this, request, false);
    this.connection = connection;
    connection.watches++;
  }

  onData(data: Buffer, endStream: boolean): void {
    if (!this.ended) {
      let responses: WatchResponse[];
      try {
        responses = this.messages.push(data).map((bytes) => WATCH.decode(bytes));
      } catch (err) {
        this.fail(new EtcdCallError(GrpcCode.INTERNAL, `undecodable watch response from etcd: ${(err as Error).message}`));
        this.stream?.cancel();
        return;
      }
      for (const response of responses) if (!this.ended) this.handlers.onResponse(response);
    }
    if (endStream) this.finish();
  }

  cancel(): void {
    if (!this.ended) this.release();
    this.ended = true;
    this.stream?.cancel();
  }

  /** etcd finished the stream: with its status, or UNAVAILABLE when that was OK or missing. */
  protected finish(): void {
    const status = this.status;
    if (status === undefined || status.code === GrpcCode.OK) this.fail(new EtcdCallError(GrpcCode.UNAVAILABLE, 'etcd closed the watch stream'));
    else this.fail(new EtcdCallError(status.code, `${status.message} (gRPC status ${status.code})`));
  }

  fail(err: EtcdCallError): void {
    if (this.ended) return;
    this.ended = true;
    this.release();
    this.handlers.onEnd(err);
  }

  private release(): void {
    if (this.connection) this.connection.watches--;
    this.connection = undefined;
  }
}

/** A method's request header block on `connection`, built once; with a deadline when `timeoutMs` is given. */
function headerBlock(connection: EtcdConnection, path: string, timeoutMs?: number): Buffer {
  let block = connection.blocks.get(path);
  if (!block) {
    const fields: [string, string][] = [
      [':method', 'POST'],
      [':scheme', connection.scheme],
      [':path', path],
      [':authority', connection.authority],
      ['content-type', 'application/grpc'],
      ['te', 'trailers'],
    ];
    if (timeoutMs !== undefined) fields.push(['grpc-timeout', grpcTimeout(timeoutMs)]);
    block = encodeHeaderBlock(fields);
    connection.blocks.set(path, block);
  }
  return block;
}

/** The largest request message sent (clientv3's default MaxCallSendMsgSize, 2 MiB). */
export const MAX_SEND_BYTES = 2 * 1024 * 1024;

/** A message in gRPC's length-prefixed framing (uncompressed): the prefix, sent before the message rather than copied with it. */
function framed(message: Uint8Array): readonly Uint8Array[] {
  const prefix = new Uint8Array(GRPC_PREFIX_BYTES);
  new DataView(prefix.buffer).setUint32(1, message.length);
  return [prefix, message];
}

/**
 * Splits a stream's bytes into its length-prefixed messages, across chunk boundaries. Chunks
 * are kept as they come until a message is complete, then joined once: joining at every chunk
 * would copy a large message (a watch response of many events) once per 16 KiB frame.
 */
export class MessageReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  /** The messages complete once `chunk` is added (none if still partial). */
  push(chunk: Buffer): Uint8Array[] {
    if (chunk.length === 0) return [];
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const out: Uint8Array[] = [];
    while (this.buffered >= 5) {
      let head = this.chunks[0]!;
      if (head.length < 5) this.chunks = [(head = Buffer.concat(this.chunks, this.buffered))];
      if (head[0] !== 0) throw new Error('a compressed message (none was asked for)');
      const end = 5 + head.readUInt32BE(1);
      if (this.buffered < end) break;
      const all = this.chunks.length === 1 ? head : Buffer.concat(this.chunks, this.buffered);
      out.push(all.subarray(5, end));
      const rest = all.subarray(end);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.buffered = rest.length;
    }
    return out;
  }
}

/** The one message of a unary response from its length-prefixed frame. */
function unframe(chunks: Buffer[]): Uint8Array {
  const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  if (all.length < 5) throw new Error(`a response of ${all.length} bytes`);
  if (all[0] !== 0) throw new Error('a compressed response (none was asked for)');
  const length = all.readUInt32BE(1);
  if (all.length !== 5 + length) throw new Error(`a frame of ${length} bytes in ${all.length - 5}`);
  return all.subarray(5);
}

/** The deadline as gRPC sends it: at most 8 digits and a unit (milliseconds, else seconds). */
export function grpcTimeout(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  return whole < 1e8 ? `${whole}m` : `${Math.min(Math.ceil(whole / 1000), 99_999_999)}S`;
}

/** grpc-message is percent-encoded UTF-8. */
function decodeGrpcMessage(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
