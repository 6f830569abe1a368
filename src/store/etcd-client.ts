/**
 * The etcd store's client: etcd's KV (Range, Txn, DeleteRange, Compact), Watch and Maintenance
 * Status calls as gRPC over one node:http2 session, with the message codecs generated from
 * `proto/etcd` (wire-compatible with etcd's own; `buf.gen.etcd.yaml`). Keys and values are views
 * of the response's bytes, not copies (a copy per value was a fifth of the start-up profile);
 * revisions are numbers.
 *
 * Why not etcd3 and grpc-js: a store request is one of a few fixed shapes, and grpc-js' per-call
 * machinery (interceptors, resolving, retry and load-balancing layers, metadata) cost as much
 * CPU as the rest of a create's Keelson-side work. Measured side by side against one etcd, 64
 * guarded creates in flight: etcd3 `kv.txn` 104–120 µs of client CPU per call, a bare grpc-js
 * `makeUnaryRequest` 98–107 µs, this path 51–66 µs (docs/BENCHMARKS.md). Neither is loaded by
 * the server any more (~26 MB of RSS with protobufjs).
 *
 * Connection handling, as a gRPC channel over several endpoints would do it: one session at a
 * time; a session that closes, fails or is told to go away is dropped, and the next call dials
 * the next endpoint. A call that outlives its deadline is cancelled and drops its session too
 * (a member that stopped answering keeps its TCP connection open). A watch lives on the session
 * it was opened on and ends, reporting it, when that session does.
 */
import http2 from 'node:http2';
import { BinaryReader } from '@bufbuild/protobuf/wire';
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
} from '../gen/etcd/etcdserverpb/rpc';
import { GrpcCode } from '../status';

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
}

/** Flow-control windows: a page of a list is megabytes, and etcd should not wait on window updates. */
const STREAM_WINDOW = 4 * 1024 * 1024;
const SESSION_WINDOW = 16 * 1024 * 1024;

const GRPC_HEADERS = { ':method': 'POST', 'content-type': 'application/grpc', te: 'trailers' };

/** A call's gRPC status, from the trailers (or the headers of a trailers-only answer). */
interface GrpcStatus {
  code: number;
  message: string;
}

function grpcStatusOf(headers: http2.IncomingHttpHeaders): GrpcStatus | undefined {
  const code = headers['grpc-status'];
  if (code === undefined) return undefined;
  const message = headers['grpc-message'];
  return { code: Number(code), message: typeof message === 'string' ? decodeGrpcMessage(message) : '' };
}

interface Codec<Req, Res> {
  path: string;
  encode(request: Req): Uint8Array;
  decode(bytes: Uint8Array): Res;
}

function method<Req, Res>(
  service: string,
  name: string,
  request: { encode(message: Req): { finish(): Uint8Array } },
  response: { decode(input: BinaryReader | Uint8Array): Res },
): Codec<Req, Res> {
  return {
    path: `/etcdserverpb.${service}/${name}`,
    encode: (message) => request.encode(message).finish(),
    decode: (bytes) => response.decode(new BinaryReader(bytes)),
  };
}

const RANGE = method('KV', 'Range', RangeRequest, RangeResponse);
const TXN = method('KV', 'Txn', TxnRequest, TxnResponse);
const DELETE_RANGE = method('KV', 'DeleteRange', DeleteRangeRequest, DeleteRangeResponse);
const COMPACT = method('KV', 'Compact', CompactionRequest, CompactionResponse);
const STATUS = method('Maintenance', 'Status', StatusRequest, StatusResponse);
const WATCH_PATH = '/etcdserverpb.Watch/Watch';

/** What a watch stream reports: each response, then its end (once, unless canceled). */
export interface WatchStreamHandlers {
  onResponse(response: WatchResponse): void;
  onEnd(err: EtcdCallError): void;
}

export interface WatchStream {
  /** Ends the stream without reporting it. */
  cancel(): void;
}

export class EtcdClient {
  private readonly endpoints: readonly string[];
  private session?: http2.ClientHttp2Session;
  /** Every session not yet closed: an old one stays open while a watch or call still uses it. */
  private readonly sessions = new Set<http2.ClientHttp2Session>();
  private readonly connected = new WeakSet<http2.ClientHttp2Session>();
  private next = 0;
  private closed = false;
  /** Open watch streams per session: only those are kept alive by pings (calls have deadlines). */
  private readonly watches = new WeakMap<http2.ClientHttp2Session, number>();
  /** Each method's request headers, built once (node:http2 copies what it is given). */
  private readonly headers = new Map<string, http2.OutgoingHttpHeaders>();

  constructor(private readonly options: EtcdClientOptions) {
    if (options.endpoints.length === 0) throw new TypeError('etcd client needs at least one endpoint');
    const tls = !!options.tls;
    this.endpoints = options.endpoints.map((e) => (e.includes('://') ? (tls ? e.replace(/^http:/, 'https:') : e) : `${tls ? 'https' : 'http'}://${e}`));
  }

  range(request: RangeRequest): Promise<RangeResponse> {
    return this.call(RANGE, request);
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
   * handed over as it arrives, and the stream's end (etcd closing it, the session failing) is
   * reported once as UNAVAILABLE.
   */
  watch(create: WatchCreateRequest, handlers: WatchStreamHandlers): WatchStream {
    let ended = false;
    const end = (err: EtcdCallError) => {
      if (ended) return;
      ended = true;
      handlers.onEnd(err);
    };
    let stream: http2.ClientHttp2Stream;
    try {
      if (this.closed) throw new Error('etcd client is closed');
      const session = this.connect();
      stream = session.request({ ...GRPC_HEADERS, ':path': WATCH_PATH }, { endStream: false });
      this.watches.set(session, (this.watches.get(session) ?? 0) + 1);
      stream.once('close', () => this.watches.set(session, this.watches.get(session)! - 1));
    } catch (err) {
      queueMicrotask(() => end(new EtcdCallError(GrpcCode.UNAVAILABLE, (err as Error).message)));
      return { cancel: () => void (ended = true) };
    }
    const messages = new MessageReader();
    let status: GrpcStatus | undefined;
    const statusOf = (headers: http2.IncomingHttpHeaders) => {
      status = grpcStatusOf(headers) ?? status;
    };
    stream.on('response', statusOf);
    stream.on('trailers', statusOf);
    stream.on('data', (chunk: Buffer) => {
      if (ended) return;
      let responses: WatchResponse[];
      try {
        responses = messages.push(chunk).map((bytes) => WatchResponse.decode(new BinaryReader(bytes)));
      } catch (err) {
        end(new EtcdCallError(GrpcCode.INTERNAL, `undecodable watch response from etcd: ${(err as Error).message}`));
        stream.close(http2.constants.NGHTTP2_CANCEL);
        return;
      }
      for (const response of responses) if (!ended) handlers.onResponse(response);
    });
    stream.on('error', (err) => end(new EtcdCallError(GrpcCode.UNAVAILABLE, err.message)));
    stream.on('close', () => {
      if (status === undefined || status.code === GrpcCode.OK) end(new EtcdCallError(GrpcCode.UNAVAILABLE, 'etcd closed the watch stream'));
      else end(new EtcdCallError(status.code, `${status.message} (gRPC status ${status.code})`));
    });
    stream.write(frame(WatchRequest.encode({ createRequest: create }).finish()));
    return {
      cancel: () => {
        ended = true;
        stream.close(http2.constants.NGHTTP2_CANCEL);
      },
    };
  }

  close(): void {
    this.closed = true;
    for (const session of this.sessions) session.destroy();
    this.session = undefined;
  }

  private connect(): http2.ClientHttp2Session {
    const current = this.session;
    if (current && !current.closed && !current.destroyed) return current;
    const endpoint = this.endpoints[this.next++ % this.endpoints.length]!;
    const { ca, cert, key } = this.options.tls ?? {};
    const session = http2.connect(endpoint, {
      ...(ca ? { ca } : {}),
      ...(cert ? { cert } : {}),
      ...(key ? { key } : {}),
      settings: { initialWindowSize: STREAM_WINDOW, enablePush: false },
    });
    const drop = () => {
      if (this.session === session) this.session = undefined;
    };
    // A failed session fails its streams, which report it to their callers.
    session.on('error', drop);
    session.on('goaway', drop);
    session.on('close', () => {
      drop();
      this.sessions.delete(session);
    });
    this.sessions.add(session);
    session.once('connect', () => {
      this.connected.add(session);
      session.setLocalWindowSize(SESSION_WINDOW);
      this.keepAlive(session);
    });
    this.session = session;
    return session;
  }

  /**
   * Pings `session` every `keepaliveMs` while it carries a watch, one ping outstanding at a time
   * (as grpc-go's keepalive without PermitWithoutStream: etcd counts pings on an idle connection
   * as abuse and answers GOAWAY).
   */
  private keepAlive(session: http2.ClientHttp2Session): void {
    const { keepaliveMs = 0, keepaliveTimeoutMs = 10_000 } = this.options;
    if (keepaliveMs <= 0) return;
    let waiting = false;
    const interval = setInterval(() => {
      if (waiting || session.closed || session.destroyed || !this.watches.get(session)) return;
      waiting = true;
      const deadline = setTimeout(() => {
        session.destroy(new Error(`etcd did not answer a keepalive ping within ${keepaliveTimeoutMs} ms`));
      }, keepaliveTimeoutMs);
      deadline.unref();
      session.ping(() => {
        // Answered, or the session ended (which fails its streams on its own).
        waiting = false;
        clearTimeout(deadline);
      });
    }, keepaliveMs);
    interval.unref();
    session.once('close', () => clearInterval(interval));
  }

  private headersOf(codec: Codec<unknown, unknown>): http2.OutgoingHttpHeaders {
    let headers = this.headers.get(codec.path);
    if (!headers) {
      headers = { ...GRPC_HEADERS, ':path': codec.path, 'grpc-timeout': grpcTimeout(this.options.timeoutMs) };
      this.headers.set(codec.path, headers);
    }
    return headers;
  }

  /**
   * One call. A session that never connected has sent nothing, so its calls go on to the next
   * endpoint (each endpoint once); once a request may have reached etcd, a failure is the caller's.
   */
  private async call<Req, Res>(codec: Codec<Req, Res>, request: Req): Promise<Res> {
    const message = codec.encode(request);
    // clientv3's default send limit, refused before sending as grpc-go refuses it (etcd itself
    // refuses requests above its --max-request-bytes, 1.5 MiB by default, as "request is too large").
    if (message.length > MAX_SEND_BYTES) {
      throw new EtcdCallError(GrpcCode.RESOURCE_EXHAUSTED, `rpc error: code = ResourceExhausted desc = trying to send message larger than max (${message.length} vs. ${MAX_SEND_BYTES})`);
    }
    const bytes = frame(message);
    for (let tries = 1; ; tries++) {
      if (this.closed) throw new EtcdCallError(GrpcCode.CANCELLED, 'etcd client is closed');
      const session = this.connect();
      try {
        return await this.send(session, codec, bytes);
      } catch (err) {
        if (this.connected.has(session) || tries >= this.endpoints.length) throw err;
        if (this.session === session) this.session = undefined;
      }
    }
  }

  private send<Res>(session: http2.ClientHttp2Session, codec: Codec<unknown, Res>, bytes: Buffer): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      let stream: http2.ClientHttp2Stream;
      try {
        stream = session.request(this.headersOf(codec), { endStream: false });
      } catch (err) {
        reject(new EtcdCallError(GrpcCode.UNAVAILABLE, (err as Error).message));
        return;
      }
      const chunks: Buffer[] = [];
      let status: GrpcStatus | undefined;
      let settled = false;
      const fail = (err: EtcdCallError) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err);
      };
      const timer = setTimeout(() => {
        fail(new EtcdCallError(GrpcCode.DEADLINE_EXCEEDED, 'context deadline exceeded'));
        stream.close(http2.constants.NGHTTP2_CANCEL);
        // A member that stopped answering keeps its connection: dial another for the next call.
        if (this.session === session) this.session = undefined;
        session.close();
      }, this.options.timeoutMs);
      const statusOf = (headers: http2.IncomingHttpHeaders) => {
        status = grpcStatusOf(headers) ?? status;
      };
      stream.on('response', (headers) => {
        const httpStatus = headers[':status'];
        if (httpStatus !== 200) {
          const code = httpStatus === 502 || httpStatus === 503 || httpStatus === 504 ? GrpcCode.UNAVAILABLE : GrpcCode.UNKNOWN;
          fail(new EtcdCallError(code, `HTTP status ${httpStatus} from etcd`));
          stream.close(http2.constants.NGHTTP2_CANCEL);
          return;
        }
        statusOf(headers); // a trailers-only answer (an error) carries its status here
      });
      stream.on('trailers', statusOf);
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', (err) => fail(new EtcdCallError(GrpcCode.UNAVAILABLE, err.message)));
      stream.on('close', () => {
        if (settled) return;
        if (status === undefined) return fail(new EtcdCallError(GrpcCode.UNAVAILABLE, `stream closed without a status (code ${stream.rstCode ?? 0})`));
        if (status.code !== GrpcCode.OK) return fail(new EtcdCallError(status.code, status.message));
        let decoded: Res;
        try {
          decoded = codec.decode(unframe(chunks));
        } catch (err) {
          return fail(new EtcdCallError(GrpcCode.INTERNAL, `undecodable response from etcd: ${(err as Error).message}`));
        }
        settled = true;
        clearTimeout(timer);
        resolve(decoded);
      });
      stream.end(bytes);
    });
  }
}

/** The largest request message sent (clientv3's default MaxCallSendMsgSize, 2 MiB). */
export const MAX_SEND_BYTES = 2 * 1024 * 1024;

/** A message in gRPC's length-prefixed frame (uncompressed). */
function frame(message: Uint8Array): Buffer {
  const bytes = Buffer.allocUnsafe(5 + message.length);
  bytes[0] = 0;
  bytes.writeUInt32BE(message.length, 1);
  bytes.set(message, 5);
  return bytes;
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
