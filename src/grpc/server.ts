/**
 * The core's gRPC door: serves any CoreApi (normally the in-process core) as the
 * `keelson.core.v1.Core` service, so gateways and controllers in other processes reach the
 * same pipeline as the in-process gateway (docs/ARCHITECTURE.md, "The path of one create").
 *
 * Every call is authenticated by the same chain as the HTTPS door (src/authn): the bearer token
 * of the `authorization` metadata and the client certificate, checked against the client CA.
 * The user a request names (its `Caller`) is believed only from a caller allowed to act for
 * others — a gateway in front of this core, identified by its own client certificate — as
 * upstream believes an authenticating proxy's headers only from `--requestheader-allowed-names`;
 * any other caller is the user it authenticated as. `authentication: 'trust-caller'` keeps the
 * old behaviour for processes that own both ends (tests, an embedding program).
 */
import type { X509Certificate } from 'node:crypto';
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
import { type Authenticator, type Credentials, describePeer, parseCaBundle, verifyLeaf } from '../authn';
import type { ResourceTarget, UserInfo } from '../core/api';
import { type AuthorizationAttributes, type Decision, forbiddenError } from '../authz';
import { unauthorized } from '../status';
import { type Clock, systemClock } from '../clock';

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

export interface GrpcAuthentication {
  /** The server's authenticator chain, shared with the HTTPS door. */
  authenticator: Authenticator;
  /**
   * The server's authorizer chain, shared with the HTTPS door: each call is authorized for the
   * user it runs as (the end user, when a gateway names one), as the HTTPS door authorizes.
   */
  authorize?: (attributes: AuthorizationAttributes) => Promise<Decision>;
  /**
   * Authenticated usernames allowed to act for the user each request names (gateways in front
   * of this core). Empty: nobody may.
   */
  proxyUsers?: readonly string[];
  /** Why a call was refused as unauthenticated, for the server log (never the client). */
  onRejected?: (reason: string) => void;
  clock?: Clock;
}

export interface GrpcCoreServerOptions {
  /** `host:port`; port 0 picks a free port (read it back from `address`). */
  address: string;
  /** Plaintext when absent. */
  tls?: GrpcServerTlsOptions;
  /** How callers are identified; `'trust-caller'` believes the user each request names. */
  authentication: GrpcAuthentication | 'trust-caller';
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
  const identify = identifier(options);
  server.addService(CoreService, coreHandlers(core, liveWatches, identify));
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
 * Who a call is — from its credentials, or the user it names when the caller may act for others —
 * and whether that user may make it (`verb` on `target`).
 */
type Identify = (call: SurfaceCall, caller: Caller, verb: string, target: ResourceTarget) => Promise<UserInfo>;
type SurfaceCall = grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>;

function identifier(options: GrpcCoreServerOptions): Identify {
  const auth = options.authentication;
  if (auth === 'trust-caller') return async (_call, caller) => caller.user;
  const cas = options.tls?.ca ? parseCaBundle(toBuffer(options.tls.ca)) : [];
  const clock = auth.clock ?? systemClock;
  const proxies = new Set(auth.proxyUsers ?? []);
  return async (call, caller, verb, target) => {
    const result = await auth.authenticator.authenticate(credentialsOf(call, cas, clock.now()));
    if (result.outcome !== 'authenticated') {
      auth.onRejected?.(result.outcome === 'rejected' ? result.reason : 'no opinion');
      throw unauthorized();
    }
    const user = proxies.has(result.user.username) ? caller.user : result.user;
    if (auth.authorize) {
      const attributes: AuthorizationAttributes = {
        user,
        verb,
        isResourceRequest: true,
        path: '',
        namespace: target.namespace ?? '',
        apiGroup: target.group,
        apiVersion: target.version,
        resource: target.resource,
        subresource: target.subresource ?? '',
        name: target.name ?? '',
      };
      const decision = await auth.authorize(attributes);
      if (decision.decision !== 'allow') throw forbiddenError(attributes, decision.reason ?? '');
    }
    return user;
  };
}

/**
 * The bearer token of the `authorization` metadata and the client certificate, verified against
 * the client CA. grpc-js shows a call only the certificates its TLS layer verified, so a
 * certificate from another CA looks like none at all here (the call is anonymous, or 401 with
 * anonymous requests disabled) where the HTTPS door refuses it outright.
 */
function credentialsOf(call: SurfaceCall, cas: readonly X509Certificate[], now: number): Credentials {
  const credentials: Credentials = {};
  const header = call.metadata.get('authorization')[0];
  const match = typeof header === 'string' ? /^\s*bearer ([^ ]+)/i.exec(header) : null;
  if (match) credentials.token = match[1]!;
  const peer = call.getAuthContext?.()?.sslPeerCertificate;
  if (peer?.raw && cas.length > 0) {
    const { verified, error } = verifyLeaf(peer.raw, cas, now);
    const described = describePeer(peer, verified, error);
    if (described) credentials.certificate = described;
  }
  return credentials;
}

function coreHandlers(core: CoreApi, liveWatches: Set<() => void>, identify: Identify): CoreServer {
  return {
    get: unary(identify, 'get', getCodec, ([target, options], ctx) => core.get(target, options, ctx)),
    list: unary(identify, 'list', listCodec, ([target, options], ctx) => core.list(target, options, ctx)),
    watch: watchHandler(core, liveWatches, identify),
    create: unary(identify, 'create', createCodec, ([target, object, options], ctx) => core.create(target, object, options, ctx)),
    update: unary(identify, 'update', updateCodec, ([target, object, options], ctx) => core.update(target, object, options, ctx)),
    patch: unary(identify, 'patch', patchCodec, ([target, patch, options], ctx) => core.patch(target, patch, options, ctx)),
    delete: unary(identify, 'delete', deleteCodec, ([target, options], ctx) => core.delete(target, options, ctx)),
    deleteCollection: unary(identify, 'deletecollection', deleteCollectionCodec, ([target, listOptions, deleteOptions], ctx) =>
      core.deleteCollection(target, listOptions, deleteOptions, ctx),
    ),
  };
}

/** One unary method: decode, call the core with a fresh context, encode the result or the failure. */
function unary<Args extends unknown[], Result, Req, Res>(
  identify: Identify,
  verb: string,
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
        const user = await identify(call, caller, verb, args[0] as ResourceTarget);
        const result = await invoke(args, contextFor({ ...caller, user }, warnings, abort.signal));
        callback(null, codec.encodeResponse(result, warnings));
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
function watchHandler(core: CoreApi, liveWatches: Set<() => void>, identify: Identify): grpc.handleServerStreamingCall<WatchRequest, WatchResponse> {
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
        const user = await identify(call, caller, 'watch', args[0]);
        stream = await core.watch(args[0], args[1], contextFor({ ...caller, user }, warnings, abort.signal));
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
