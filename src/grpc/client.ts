/**
 * CoreApi over gRPC: what a gateway started with `--core-address` uses instead of the
 * in-process core (docs/ARCHITECTURE.md, "The path of one create"). It behaves as the
 * in-process core does: failures reject with a StatusError equal to the one the core raised,
 * warnings land in `ctx.warnings`, and aborting `ctx.signal` cancels the call.
 */
import * as grpc from '@grpc/grpc-js';
import { CoreClient, CoreService, type WatchResponse } from '../gen/keelson/core/v1/core';
import type {
  ApiList,
  ApiObject,
  CoreApi,
  DeleteOptions,
  DeleteResult,
  GetOptions,
  ListOptions,
  Patch,
  RequestContext,
  ResourceTarget,
  WatchEvent,
  WatchStream,
  WriteBody,
  WriteOptions,
  WriteResult,
} from '../core';
import { StatusError, internalError } from '../status';
import {
  createCodec,
  decodeWatchResponse,
  deleteCodec,
  deleteCollectionCodec,
  getCodec,
  listCodec,
  patchCodec,
  updateCodec,
  watchRequestCodec,
  type Caller,
  type MethodCodec,
} from './codec';
import { fromGrpcError, statusErrorForGrpcCode } from './errors';
import { clientCredentials, type GrpcClientTlsOptions } from './tls';

export interface GrpcCoreClientOptions {
  /** Plaintext when absent. */
  tls?: GrpcClientTlsOptions;
  /**
   * A bearer token sent with every call (`authorization` metadata), for callers without a client
   * certificate; a function is asked on every call (a token that is renewed before it expires).
   */
  token?: string | (() => string | undefined);
}

export type GrpcCoreClient = CoreApi & {
  /** Ends open watches and closes the channel. */
  close(): void;
};

/** The parts of a generated method definition a call needs. */
interface MethodDefinition<Req, Res> {
  path: string;
  requestSerialize(value: Req): Buffer;
  responseDeserialize(value: Buffer): Res;
}

const CLIENT_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // Lists of a large cluster exceed gRPC's 4 MiB default by far.
  'grpc.max_receive_message_length': -1,
  'grpc.max_send_message_length': -1,
  // Notice a vanished core on long idle watches.
  'grpc.keepalive_time_ms': 60_000,
  'grpc.keepalive_timeout_ms': 20_000,
};

export function createGrpcCoreClient(address: string, options: GrpcCoreClientOptions = {}): GrpcCoreClient {
  const channelOptions: grpc.ChannelOptions = { ...CLIENT_CHANNEL_OPTIONS };
  if (options.tls?.serverName) channelOptions['grpc.ssl_target_name_override'] = options.tls.serverName;
  const stub = new CoreClient(address, clientCredentials(options.tls), channelOptions);
  const liveWatches = new Set<WatchStream>();
  const metadata = (): grpc.Metadata => {
    const m = new grpc.Metadata();
    const token = typeof options.token === 'function' ? options.token() : options.token;
    if (token !== undefined) m.set('authorization', `Bearer ${token}`);
    return m;
  };

  function unary<Args extends unknown[], Result, Req, Res>(
    method: MethodDefinition<Req, Res>,
    codec: MethodCodec<Args, Result, Req, Res>,
    args: Args,
    ctx: RequestContext,
  ): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const { signal } = ctx;
      if (signal?.aborted) throw cancelledError();
      const request = codec.encodeRequest(args, callerOf(ctx));
      const onAbort = () => call.cancel();
      const call = stub.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, request, metadata(), {}, (err, response) => {
        signal?.removeEventListener('abort', onAbort);
        if (err && signal?.aborted) {
          reject(cancelledError());
          return;
        }
        if (err || response === undefined) {
          const failure = fromGrpcError(err ?? new Error('empty response'));
          ctx.warnings?.push(...failure.warnings);
          reject(failure.error);
          return;
        }
        try {
          const { result, warnings } = codec.decodeResponse(response);
          ctx.warnings?.push(...warnings);
          resolve(result);
        } catch (decodeErr) {
          reject(StatusError.from(decodeErr));
        }
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Resolves once the server reports the watch started (so setup failures reject here, as
   * with the in-process core); the stream then yields events until either side ends it.
   */
  async function watch(target: ResourceTarget, options: ListOptions, ctx: RequestContext): Promise<WatchStream> {
    const { signal } = ctx;
    if (signal?.aborted) throw cancelledError();
    const request = watchRequestCodec.encodeRequest([target, options], callerOf(ctx));
    const method = CoreService.watch;
    const call = stub.makeServerStreamRequest(method.path, method.requestSerialize, method.responseDeserialize, request, metadata(), {});
    // The call reports its final status as an 'error' event even after the consumer stopped
    // reading; without a listener that would be an uncaught exception.
    call.on('error', () => {});
    const messages: AsyncIterator<WatchResponse> = call[Symbol.asyncIterator]();

    let closed = false;
    const stream: WatchStream = {
      close() {
        if (closed) return;
        closed = true;
        liveWatches.delete(stream);
        signal?.removeEventListener('abort', stream.close);
        call.cancel();
      },
      async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent> {
        try {
          for (;;) {
            const next = await nextMessage();
            if (next.done) return;
            const decoded = decodeWatchResponse(next.value);
            if (decoded.kind === 'event') yield decoded.event;
          }
        } finally {
          stream.close();
        }
      },
    };

    /** The next message; done when the call ended, or when we cancelled it ourselves. */
    async function nextMessage(): Promise<IteratorResult<WatchResponse>> {
      try {
        return await messages.next();
      } catch (err) {
        if (closed) return { done: true, value: undefined };
        const failure = fromGrpcError(err);
        ctx.warnings?.push(...failure.warnings);
        throw failure.error;
      }
    }

    signal?.addEventListener('abort', stream.close, { once: true });
    liveWatches.add(stream);
    try {
      const first = await nextMessage();
      if (closed) throw cancelledError();
      if (first.done) throw internalError('watch ended before it started');
      const decoded = decodeWatchResponse(first.value);
      if (decoded.kind !== 'started') throw internalError('watch stream did not begin with started');
      ctx.warnings?.push(...decoded.warnings);
      return stream;
    } catch (err) {
      stream.close();
      throw StatusError.from(err);
    }
  }

  return {
    get: (target: ResourceTarget, options: GetOptions, ctx: RequestContext): Promise<ApiObject> => unary(CoreService.get, getCodec, [target, options], ctx),
    list: (target: ResourceTarget, options: ListOptions, ctx: RequestContext): Promise<ApiList> => unary(CoreService.list, listCodec, [target, options], ctx),
    watch,
    create: (target: ResourceTarget, object: WriteBody<ApiObject>, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> =>
      unary(CoreService.create, createCodec, [target, object, options], ctx),
    update: (target: ResourceTarget, object: WriteBody<ApiObject>, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> =>
      unary(CoreService.update, updateCodec, [target, object, options], ctx),
    patch: (target: ResourceTarget, patch: WriteBody<Patch>, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> =>
      unary(CoreService.patch, patchCodec, [target, patch, options], ctx),
    delete: (target: ResourceTarget, options: DeleteOptions, ctx: RequestContext): Promise<DeleteResult> =>
      unary(CoreService.delete, deleteCodec, [target, options], ctx),
    deleteCollection: (target: ResourceTarget, listOptions: ListOptions, deleteOptions: DeleteOptions, ctx: RequestContext): Promise<ApiList> =>
      unary(CoreService.deleteCollection, deleteCollectionCodec, [target, listOptions, deleteOptions], ctx),
    close() {
      for (const stream of [...liveWatches]) stream.close();
      stub.close();
    },
  };
}

function callerOf(ctx: RequestContext): Caller {
  const caller: Caller = { user: ctx.user };
  if (ctx.userAgent !== undefined) caller.userAgent = ctx.userAgent;
  if (ctx.decodeReport !== undefined) caller.decodeReport = ctx.decodeReport;
  return caller;
}

/** What a call aborted through `ctx.signal` rejects with (gRPC CANCELLED has no reason of its own). */
function cancelledError(): StatusError {
  return statusErrorForGrpcCode(grpc.status.CANCELLED, 'the request was cancelled by the caller');
}
