/**
 * The core's gRPC door: serves any CoreApi (normally the in-process core) as the
 * `keelson.core.v1.Core` service, so gateways and controllers in other processes reach the
 * same pipeline as the in-process gateway (docs/ARCHITECTURE.md, "The path of one create").
 *
 * Authentication is not done here: the caller's UserInfo travels in each request and is
 * trusted as sent, because only gateways (which authenticated the original request) are
 * meant to reach this port. Restrict who can connect with mutual TLS
 * (`tls.requireClientCert`) or by binding to a private address.
 */
import * as grpc from '@grpc/grpc-js';
import { CoreService, type CoreServer, type WatchRequest, type WatchResponse } from '../gen/keelson/core/v1/core';
import type { CoreApi, RequestContext, WatchStream } from '../core/api';
import {
  createCodec,
  deleteCodec,
  deleteCollectionCodec,
  encodeWatchEvent,
  encodeWatchStarted,
  getCodec,
  listCodec,
  patchCodec,
  updateCodec,
  watchRequestCodec,
  type Caller,
  type MethodCodec,
} from './codec';
import { toGrpcStatus } from './errors';
import { toBuffer, type PemInput } from './tls';

export interface GrpcServerTlsOptions {
  /** PEM private key of the server certificate. */
  key: PemInput;
  /** PEM server certificate (chain). */
  cert: PemInput;
  /** PEM CA bundle that client certificates must chain to. */
  ca?: PemInput;
  /** Refuse clients without a certificate signed by `ca`. */
  requireClientCert?: boolean;
}

export interface GrpcCoreServerOptions {
  /** `host:port`; port 0 picks a free port (read it back from `address`). */
  address: string;
  /** Plaintext when absent. */
  tls?: GrpcServerTlsOptions;
}

export interface GrpcCoreServer {
  /** The bound `host:port`, with the actual port. */
  readonly address: string;
  /** Ends open watches (cleanly, as a server-side watch end), then stops the server. */
  close(): Promise<void>;
}

/** Requests are single objects or patches; the gateway already caps bodies far below this. */
const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
/** How long close() lets calls in flight finish before cutting them off. */
const SHUTDOWN_GRACE_MS = 5_000;

const SERVER_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': MAX_REQUEST_BYTES,
  'grpc.max_send_message_length': -1,
  // Ping idle connections so that watches of a vanished gateway are released.
  'grpc.keepalive_time_ms': 60_000,
  'grpc.keepalive_timeout_ms': 20_000,
};

export async function startGrpcCoreServer(core: CoreApi, options: GrpcCoreServerOptions): Promise<GrpcCoreServer> {
  const server = new grpc.Server(SERVER_CHANNEL_OPTIONS);
  const liveWatches = new Set<() => void>();
  server.addService(CoreService, coreHandlers(core, liveWatches));
  const port = await bind(server, options.address, serverCredentials(options.tls));
  let closing: Promise<void> | undefined;
  return {
    address: withPort(options.address, port),
    close() {
      closing ??= shutdown(server, liveWatches);
      return closing;
    },
  };
}

function coreHandlers(core: CoreApi, liveWatches: Set<() => void>): CoreServer {
  return {
    get: unary(getCodec, ([target, options], ctx) => core.get(target, options, ctx)),
    list: unary(listCodec, ([target, options], ctx) => core.list(target, options, ctx)),
    watch: watchHandler(core, liveWatches),
    create: unary(createCodec, ([target, object, options], ctx) => core.create(target, object, options, ctx)),
    update: unary(updateCodec, ([target, object, options], ctx) => core.update(target, object, options, ctx)),
    patch: unary(patchCodec, ([target, patch, options], ctx) => core.patch(target, patch, options, ctx)),
    delete: unary(deleteCodec, ([target, options], ctx) => core.delete(target, options, ctx)),
    deleteCollection: unary(deleteCollectionCodec, ([target, listOptions, deleteOptions], ctx) =>
      core.deleteCollection(target, listOptions, deleteOptions, ctx),
    ),
  };
}

/** One unary method: decode, call the core with a fresh context, encode the result or the failure. */
function unary<Args extends unknown[], Result, Req, Res>(
  codec: MethodCodec<Args, Result, Req, Res>,
  invoke: (args: Args, ctx: RequestContext) => Promise<Result>,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const abort = new AbortController();
    call.once('cancelled', () => abort.abort());
    const warnings: string[] = [];
    void (async () => {
      try {
        const { args, caller } = codec.decodeRequest(call.request);
        const result = await invoke(args, contextFor(caller, warnings, abort.signal));
        callback(null, codec.encodeResponse(result, warnings));
      } catch (err) {
        callback(toGrpcStatus(err, warnings));
      }
    })();
  };
}

/**
 * Watch: `started` once the core accepted the watch, then its events until the client
 * cancels (the core's stream is closed) or the core ends the stream (the call ends OK).
 * A failure before `started` fails the call, so the client's `watch()` rejects.
 */
function watchHandler(core: CoreApi, liveWatches: Set<() => void>): grpc.handleServerStreamingCall<WatchRequest, WatchResponse> {
  return (call) => {
    const abort = new AbortController();
    const warnings: string[] = [];
    let stream: WatchStream | undefined;
    // Server shutdown: end the core's stream; the loop below then ends the call cleanly.
    const stop = () => stream?.close();
    call.once('cancelled', () => {
      abort.abort();
      stream?.close();
    });
    void (async () => {
      try {
        const { args, caller } = watchRequestCodec.decodeRequest(call.request);
        stream = await core.watch(args[0], args[1], contextFor(caller, warnings, abort.signal));
        if (abort.signal.aborted) return;
        liveWatches.add(stop);
        await send(call, encodeWatchStarted(warnings), abort.signal);
        for await (const event of stream) {
          if (abort.signal.aborted) break;
          await send(call, encodeWatchEvent(event), abort.signal);
        }
        if (!abort.signal.aborted) call.end();
      } catch (err) {
        if (!abort.signal.aborted) call.emit('error', toGrpcStatus(err, warnings));
      } finally {
        liveWatches.delete(stop);
        stream?.close();
      }
    })();
  };
}

/** Writes one message, waiting for 'drain' when the transport buffer is full (or the call ends). */
async function send(call: grpc.ServerWritableStream<WatchRequest, WatchResponse>, message: WatchResponse, signal: AbortSignal) {
  if (call.write(message)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      call.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    call.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

function contextFor(caller: Caller, warnings: string[], signal: AbortSignal): RequestContext {
  const ctx: RequestContext = { user: caller.user, warnings, signal };
  if (caller.userAgent !== undefined) ctx.userAgent = caller.userAgent;
  if (caller.decodeReport !== undefined) ctx.decodeReport = caller.decodeReport;
  return ctx;
}

function serverCredentials(tls: GrpcServerTlsOptions | undefined): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  if (tls.requireClientCert && !tls.ca) throw new Error('grpc server: requireClientCert needs a ca to verify client certificates');
  return grpc.ServerCredentials.createSsl(
    tls.ca ? toBuffer(tls.ca) : null,
    [{ private_key: toBuffer(tls.key), cert_chain: toBuffer(tls.cert) }],
    tls.requireClientCert ?? false,
  );
}

function bind(server: grpc.Server, address: string, credentials: grpc.ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (err, port) => (err ? reject(err) : resolve(port)));
  });
}

/** `127.0.0.1:0` → `127.0.0.1:43121`; `[::1]:0` → `[::1]:43121`; unix sockets unchanged. */
function withPort(address: string, port: number): string {
  if (address.startsWith('unix:')) return address;
  const colon = address.lastIndexOf(':');
  const host = colon > address.lastIndexOf(']') ? address.slice(0, colon) : address;
  return `${host}:${port}`;
}

async function shutdown(server: grpc.Server, liveWatches: Set<() => void>): Promise<void> {
  for (const stop of [...liveWatches]) stop();
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, SHUTDOWN_GRACE_MS);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
