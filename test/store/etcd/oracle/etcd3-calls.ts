/**
 * The etcd store's calls (`EtcdCalls`) made through etcd3, on @grpc/grpc-js and protobufjs: the
 * reference the differential oracle holds the store's own client to.
 *
 * Each request is the same message: encoded by the generated codecs, read back by etcd3's own
 * protobufjs types, and sent by etcd3, which encodes it again. Each answer is what etcd3 decoded,
 * written out by protobufjs and read by the generated decoder, so the two clients' answers
 * compare field by field. etcd3 retries nothing here (its fault handling is a pass-through), as
 * the store's client retries nothing once a request may have reached etcd.
 */
import type { Duplex } from 'node:stream';
import type { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire';
import { Etcd3, type IOptions } from 'etcd3';
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
  type WatchCreateRequest,
  WatchRequest,
  WatchResponse,
} from '../../../../src/gen/etcd/etcdserverpb/rpc';
import { GrpcCode } from '../../../../src/status';
import { EtcdCallError, type EtcdCalls, type WatchStream, type WatchStreamHandlers } from '../../../../src/store/etcd/client';

interface Codec<T> {
  encode(message: T, writer?: BinaryWriter): BinaryWriter;
  decode(input: BinaryReader | Uint8Array): T;
}

/** grpc-js's serializers of one method (its service definition). */
interface MethodDefinition {
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(value: unknown): Buffer;
}

type Service = Record<string, MethodDefinition>;

/** etcd3 without retries or circuit breakers: each call is made once. */
const once = {
  execute: <T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T) => Promise.resolve().then(() => fn({ signal: new AbortController().signal })),
};

export interface Etcd3CallsOptions {
  endpoint: string;
  /** PEM: the CA, and the client certificate and key (TLS with client certificates). */
  tls?: { ca: string; cert?: string; key?: string };
  timeoutMs?: number;
}

export class Etcd3Calls implements EtcdCalls {
  readonly etcd: Etcd3;
  private services?: Promise<{ kv: Service; maintenance: Service; watch: Service }>;

  constructor(options: Etcd3CallsOptions) {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const etcdOptions: IOptions = {
      hosts: options.endpoint,
      // grpc-js refuses answers over 4 MiB by default; clientv3 and the store's client take up to 2 GiB.
      grpcOptions: { 'grpc.max_receive_message_length': -1 },
      faultHandling: { global: once as never, host: () => once as never },
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + timeoutMs }),
      ...(options.tls
        ? {
            credentials: {
              rootCertificate: Buffer.from(options.tls.ca),
              ...(options.tls.cert ? { certChain: Buffer.from(options.tls.cert) } : {}),
              ...(options.tls.key ? { privateKey: Buffer.from(options.tls.key) } : {}),
            },
          }
        : {}),
    };
    this.etcd = new Etcd3(etcdOptions);
  }

  range(request: RangeRequest): Promise<RangeResponse> {
    return this.unary('kv', 'Range', RangeRequest, RangeResponse, request, (payload) => this.etcd.kv.range(payload as never));
  }

  txn(request: TxnRequest): Promise<TxnResponse> {
    return this.unary('kv', 'Txn', TxnRequest, TxnResponse, request, (payload) => this.etcd.kv.txn(payload as never));
  }

  deleteRange(request: DeleteRangeRequest): Promise<DeleteRangeResponse> {
    return this.unary('kv', 'DeleteRange', DeleteRangeRequest, DeleteRangeResponse, request, (payload) => this.etcd.kv.deleteRange(payload as never));
  }

  compact(request: CompactionRequest): Promise<CompactionResponse> {
    return this.unary('kv', 'Compact', CompactionRequest, CompactionResponse, request, (payload) => this.etcd.kv.compact(payload as never));
  }

  status(): Promise<StatusResponse> {
    return this.unary('maintenance', 'Status', StatusRequest, StatusResponse, {}, () => this.etcd.maintenance.status());
  }

  watch(create: WatchCreateRequest, handlers: WatchStreamHandlers): WatchStream {
    let stream: Duplex | undefined;
    let ended = false;
    const end = (err: EtcdCallError) => {
      if (ended) return;
      ended = true;
      handlers.onEnd(err);
    };
    void (async () => {
      const { watch } = await this.definitions();
      const s = (await this.etcd.watchClient.watch()) as unknown as Duplex;
      stream = s;
      if (ended) return void s.destroy();
      s.on('data', (response: unknown) => {
        if (!ended) handlers.onResponse(WatchResponse.decode(watch.Watch!.responseSerialize(response)));
      });
      s.on('error', (err: Error) => end(callError(err)));
      s.on('end', () => end(new EtcdCallError(GrpcCode.UNAVAILABLE, 'etcd closed the watch stream')));
      s.write(withoutEmptyBytes(watch.Watch!.requestDeserialize(Buffer.from(WatchRequest.encode({ createRequest: create }).finish()))));
    })().catch((err: unknown) => end(callError(err)));
    return {
      cancel: () => {
        ended = true;
        (stream as { cancel?: () => void } | undefined)?.cancel?.();
        stream?.destroy();
      },
    };
  }

  close(): void {
    this.etcd.close();
  }

  private async unary<Req, Res>(
    service: 'kv' | 'maintenance',
    name: string,
    requestCodec: Codec<Req>,
    responseCodec: Codec<Res>,
    request: Req,
    send: (payload: unknown) => Promise<unknown>,
  ): Promise<Res> {
    const method = (await this.definitions())[service][name]!;
    const payload = withoutEmptyBytes(method.requestDeserialize(Buffer.from(requestCodec.encode(request).finish())));
    let response: unknown;
    try {
      response = await send(payload);
    } catch (err) {
      throw callError(err);
    }
    return responseCodec.decode(method.responseSerialize(response));
  }

  /** The service definitions grpc-js made from etcd3's proto files. */
  private definitions(): Promise<{ kv: Service; maintenance: Service; watch: Service }> {
    const pool = (
      this.etcd as unknown as { pool: { withConnection<T>(service: string, fn: (c: { client: { constructor: { service: Service } } }) => T): Promise<T> } }
    ).pool;
    const of = (name: string) => pool.withConnection(name, ({ client }) => client.constructor.service);
    this.services ??= Promise.all([of('KV'), of('Maintenance'), of('Watch')]).then(([kv, maintenance, watch]) => ({ kv, maintenance, watch }));
    return this.services;
  }
}

/**
 * The message read back with its empty bytes fields left out, as the generated encoder leaves
 * them out. Read back, protobufjs fills in every default, and would send an empty `range_end`
 * explicitly, which etcd (gogoproto keeps a present empty field as non-nil) reads as "to the
 * end of the keyspace", not "this key only": the oracle's first disagreement, and the adapter's.
 */
function withoutEmptyBytes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutEmptyBytes);
  if (!value || typeof value !== 'object' || value instanceof Uint8Array) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!(v instanceof Uint8Array && v.length === 0)) out[k] = withoutEmptyBytes(v);
  return out;
}

/** etcd3's error as the store's client would report it: grpc-js writes "<code> <NAME>: <details>". */
function callError(err: unknown): EtcdCallError {
  const message = err instanceof Error ? err.message : String(err);
  const match = /^(\d+) [A-Z_]+: ([\s\S]*)$/.exec(message);
  if (match) return new EtcdCallError(Number(match[1]), match[2]!);
  const code = (err as { code?: unknown }).code;
  return new EtcdCallError(typeof code === 'number' ? code : GrpcCode.UNKNOWN, message);
}
