/**
 * The core's gRPC door: serves any CoreApi (normally the in-process core) as the
 * `keelson.core.v1.Core` service, so gateways and controllers in other processes reach the
 * same pipeline as the in-process gateway (docs/ARCHITECTURE.md, "The path of one create").
 *
 * Each call is admitted first (admission.ts: authenticated, then authorized, as the HTTPS door
 * does), and only then is its request decoded and validated: grpc-js hands the handlers the
 * request's bytes, so that even bytes that are not a message are answered 401 to a caller
 * without credentials. `authentication: 'trust-caller'` believes the user each request names,
 * for processes that own both ends (tests, an embedding program).
 */
import * as grpc from '@grpc/grpc-js';
import { CoreService, type WatchRequest, type WatchResponse } from '../gen/keelson/core/v1/core';
import type { CoreApi, RequestContext, WatchStream } from '../core';
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
  type RequestCodec,
} from './codec';
import { toGrpcStatus } from './errors';
import { toBuffer, type PemInput } from './tls';
import { type AddressedRequest, type Admit, type CallCredentials, type GrpcAuthentication, type ReceivedRequest, createAdmission } from './admission';
import { badRequest } from '../status';
import type { FlowControl } from '../flowcontrol';
import { type Gate, type Seat, createGate } from './flow-control';

export type { GrpcAuthentication } from './admission';

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
  /** How callers are identified; `'trust-caller'` believes the user each request names. */
  authentication: GrpcAuthentication | 'trust-caller';
  /** API Priority and Fairness: every admitted call is classified and limited by it, as on the HTTPS door. */
  flowControl?: FlowControl;
  /** `--request-timeout`: a call waits for its seats at most a quarter of it (default 60 s). */
  requestTimeoutMs?: number;
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
  const admit = createAdmission(options.authentication, options.tls?.ca);
  const gate = options.flowControl && createGate(options.flowControl, options.requestTimeoutMs ?? 60_000);
  server.addService(requestsAsBytes(CoreService), coreHandlers(core, liveWatches, admit, gate));
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

/**
 * The service with every method's request left as its bytes. grpc-js decodes a request before
 * any handler runs and answers bytes that do not decode itself (INTERNAL, with the decoder's
 * message), to callers without credentials too; the handlers decode once the call is admitted.
 */
function requestsAsBytes(service: typeof CoreService): grpc.ServiceDefinition {
  return Object.fromEntries(Object.entries(service).map(([name, method]) => [name, { ...method, requestDeserialize: (bytes: Buffer) => bytes }]));
}

/** One handler for each method of the service, each taking its request as bytes. */
type CoreHandlers = Record<keyof typeof CoreService, grpc.UntypedHandleCall>;

/** One method as its handler sees it: the authorization verb, the generated method (its message decoder), its codec. */
interface Endpoint<Req extends AddressedRequest, Codec> {
  verb: string;
  definition: { requestDeserialize(bytes: Buffer): Req };
  codec: Codec;
}

function coreHandlers(core: CoreApi, liveWatches: Set<() => void>, admit: Admit, gate: Gate | undefined): CoreHandlers {
  const unary = <Args extends unknown[], Result, Req extends AddressedRequest, Res>(
    admit: Admit,
    endpoint: Endpoint<Req, MethodCodec<Args, Result, Req, Res>>,
    invoke: (args: Args, ctx: RequestContext) => Promise<Result>,
  ) => unaryCall(admit, gate, endpoint, invoke);
  return {
    get: unary(admit, { verb: 'get', definition: CoreService.get, codec: getCodec }, ([target, options], ctx) => core.get(target, options, ctx)),
    list: unary(admit, { verb: 'list', definition: CoreService.list, codec: listCodec }, ([target, options], ctx) => core.list(target, options, ctx)),
    watch: watchHandler(core, liveWatches, admit, gate, { verb: 'watch', definition: CoreService.watch, codec: watchRequestCodec }),
    create: unary(admit, { verb: 'create', definition: CoreService.create, codec: createCodec }, ([target, object, options], ctx) =>
      core.create(target, object, options, ctx),
    ),
    update: unary(admit, { verb: 'update', definition: CoreService.update, codec: updateCodec }, ([target, object, options], ctx) =>
      core.update(target, object, options, ctx),
    ),
    patch: unary(admit, { verb: 'patch', definition: CoreService.patch, codec: patchCodec }, ([target, patch, options], ctx) =>
      core.patch(target, patch, options, ctx),
    ),
    delete: unary(admit, { verb: 'delete', definition: CoreService.delete, codec: deleteCodec }, ([target, options], ctx) => core.delete(target, options, ctx)),
    deleteCollection: unary(
      admit,
      { verb: 'deletecollection', definition: CoreService.deleteCollection, codec: deleteCollectionCodec },
      ([target, listOptions, deleteOptions], ctx) => core.deleteCollection(target, listOptions, deleteOptions, ctx),
    ),
  };
}

/**
 * Admits the call (401, 403), then decodes its request (400): the CoreApi arguments and the
 * caller, running as the user admission established.
 */
async function admitThenDecode<Args extends unknown[], Req extends AddressedRequest>(
  admit: Admit,
  call: CallCredentials & { request: Buffer },
  endpoint: Endpoint<Req, RequestCodec<Args, Req>>,
): Promise<{ args: Args; caller: Caller }> {
  const request = receive(endpoint.definition, call.request);
  const user = await admit(call, endpoint.verb, request);
  if (!request.decoded) throw request.error;
  const { args, caller } = endpoint.codec.decodeRequest(request.message);
  return { args, caller: { ...caller, user } };
}

function receive<Req>(definition: { requestDeserialize(bytes: Buffer): Req }, bytes: Buffer): ReceivedRequest<Req> {
  try {
    return { decoded: true, message: definition.requestDeserialize(bytes) };
  } catch (err) {
    return { decoded: false, error: badRequest(`request: not a valid message: ${err instanceof Error ? err.message : String(err)}`) };
  }
}

/** One unary method: admit and decode, call the core with a fresh context, encode the result or the failure. */
function unaryCall<Args extends unknown[], Result, Req extends AddressedRequest, Res>(
  admit: Admit,
  gate: Gate | undefined,
  endpoint: Endpoint<Req, MethodCodec<Args, Result, Req, Res>>,
  invoke: (args: Args, ctx: RequestContext) => Promise<Result>,
): grpc.handleUnaryCall<Buffer, Res> {
  return (call, callback) => {
    const abort = new AbortController();
    call.once('cancelled', () => abort.abort());
    const warnings: string[] = [];
    void (async () => {
      try {
        const { args, caller } = await admitThenDecode(admit, call, endpoint);
        const seat = gate && (await gate(endpoint.verb, args, caller.user, abort.signal));
        let result: Result;
        try {
          result = await invoke(args, contextFor(caller, warnings, abort.signal));
        } finally {
          seat?.end();
        }
        callback(null, endpoint.codec.encodeResponse(result, warnings));
      } catch (err) {
        answerFailure(callback, err, warnings);
      }
    })();
  };
}

/**
 * Ends a failed call. Should grpc-js refuse the status (it throws from the callback on details
 * it cannot put in a header), the call still ends, as INTERNAL without details, rather than
 * being left for the client's deadline.
 */
function answerFailure<Res>(callback: grpc.sendUnaryData<Res>, err: unknown, warnings: readonly string[]) {
  try {
    callback(toGrpcStatus(err, warnings));
  } catch {
    callback({ code: grpc.status.INTERNAL, details: 'the error could not be encoded' });
  }
}

/**
 * Watch: `started` once the core accepted the watch, then its events until the client
 * cancels (the core's stream is closed) or the core ends the stream (the call ends OK).
 * A failure before `started` fails the call, so the client's `watch()` rejects.
 */
function watchHandler(
  core: CoreApi,
  liveWatches: Set<() => void>,
  admit: Admit,
  gate: Gate | undefined,
  endpoint: Endpoint<WatchRequest, typeof watchRequestCodec>,
): grpc.handleServerStreamingCall<Buffer, WatchResponse> {
  return (call) => {
    const abort = new AbortController();
    const warnings: string[] = [];
    let stream: WatchStream | undefined;
    let seat: Seat | undefined;
    // Server shutdown: end the core's stream; the loop below then ends the call cleanly.
    const stop = () => stream?.close();
    call.once('cancelled', () => {
      abort.abort();
      stream?.close();
    });
    void (async () => {
      try {
        const { args, caller } = await admitThenDecode(admit, call, endpoint);
        seat = gate && (await gate(endpoint.verb, args, caller.user, abort.signal));
        stream = await core.watch(args[0], args[1], contextFor(caller, warnings, abort.signal));
        if (abort.signal.aborted) return;
        liveWatches.add(stop);
        await send(call, encodeWatchStarted(warnings), abort.signal);
        // Its seats go back once it started, as upstream's watch initialization signal.
        seat?.leave();
        for await (const event of stream) {
          if (abort.signal.aborted) break;
          await send(call, encodeWatchEvent(event), abort.signal);
        }
        if (!abort.signal.aborted) call.end();
      } catch (err) {
        if (!abort.signal.aborted) call.emit('error', toGrpcStatus(err, warnings));
      } finally {
        seat?.end();
        liveWatches.delete(stop);
        stream?.close();
      }
    })();
  };
}

/** Writes one message, waiting for 'drain' when the transport buffer is full (or the call ends). */
async function send(call: grpc.ServerWritableStream<Buffer, WatchResponse>, message: WatchResponse, signal: AbortSignal) {
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
  if (tls.ca && !tls.requireClientCert) {
    // Ask for a client certificate without requiring one (callers may use bearer tokens);
    // the authenticator verifies what is presented against the CA.
    const provider = staticCertificates(toBuffer(tls.ca), toBuffer(tls.cert), toBuffer(tls.key));
    return grpc.experimental.createCertificateProviderServerCredentials(provider, provider, false);
  }
  return grpc.ServerCredentials.createSsl(
    tls.ca ? toBuffer(tls.ca) : null,
    [{ private_key: toBuffer(tls.key), cert_chain: toBuffer(tls.cert) }],
    tls.requireClientCert ?? false,
  );
}

/** Fixed certificates for grpc-js's certificate-provider credentials (the only way to ask for an optional client certificate). */
function staticCertificates(ca: Buffer, certificate: Buffer, privateKey: Buffer): grpc.experimental.CertificateProvider {
  // grpc-js registers its watcher after adding the listener: answer on the next tick.
  return {
    addCaCertificateListener: (listener) => queueMicrotask(() => listener({ caCertificate: ca })),
    removeCaCertificateListener: () => undefined,
    addIdentityCertificateListener: (listener) => queueMicrotask(() => listener({ certificate, privateKey })),
    removeIdentityCertificateListener: () => undefined,
  };
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
