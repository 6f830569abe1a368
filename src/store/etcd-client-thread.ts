/**
 * The etcd client on a thread of its own. Framing, HTTP/2, protobuf and the socket to etcd
 * were a sixth of the API server's main thread in a create's profile on etcd, and nothing
 * there needs the main thread: this class keeps the calls' interface (EtcdCalls) and hands the
 * work to an EtcdClient in a worker thread (etcd-client-worker.ts), as kube-apiserver's etcd
 * client runs beside its request handlers. docs/ARCHITECTURE.md ("The etcd store").
 *
 * Messages are batched per event-loop turn both ways: the calls made during a turn go over in
 * one message when its I/O is done (the in-thread client writes its frames to etcd at the same
 * point), and the worker answers with one message per turn of its own.
 *
 * Reads (Range) stay in this thread, on an in-thread client with a connection of its own: a
 * list's pages are megabytes the caller keeps, which crossing would copy twice (peak RSS of a
 * start-up with 10,000 objects 237 MB against 170), and the current-revision read that
 * concurrent consistent reads share would wait for two more hops (a fifth fewer consistent
 * gets at 16 clients). Writes, compaction, status and watches go to the worker.
 *
 * The thread is started with the first call. While it has calls or watches open it keeps the
 * process alive, as the in-thread client's socket would; idle, it does not. Should it exit or
 * fail, its calls fail and its watches end as UNAVAILABLE (as a lost connection ends them), and
 * the next call starts another.
 */
import { Worker } from 'node:worker_threads';
import type {
  CompactionRequest,
  CompactionResponse,
  DeleteRangeRequest,
  DeleteRangeResponse,
  RangeRequest,
  RangeResponse,
  StatusResponse,
  TxnRequest,
  TxnResponse,
  WatchCreateRequest,
  WatchResponse,
} from '../gen/etcd/etcdserverpb/rpc';
import { GrpcCode } from '../status';
import { EtcdCallError, EtcdClient, type EtcdCalls, type EtcdClientOptions, type WatchStream, type WatchStreamHandlers } from './etcd-client';

export type EtcdMethod = 'txn' | 'deleteRange' | 'compact' | 'status';

/** What the main thread sends: calls, watches and their cancellation, and the end. */
export type ToEtcdThread =
  | { call: EtcdMethod; id: number; request: unknown }
  | { watch: WatchCreateRequest; id: number }
  | { cancel: number }
  | { close: true };

/** A call's failure as it crosses: the gRPC code and message (code undefined: not a call error). */
export interface CrossingError {
  code?: number;
  message: string;
}

/** What the worker sends back: a call's answer or failure, a watch's response or end. */
export type FromEtcdThread =
  | { id: number; ok: unknown }
  | { id: number; failed: CrossingError }
  | { id: number; response: WatchResponse }
  | { id: number; ended: CrossingError };

/** A failure as the caller sees it: EtcdCallError when it was one, as the in-thread client throws it. */
export function crossedError(err: CrossingError): Error {
  return err.code === undefined ? new Error(err.message) : new EtcdCallError(err.code, err.message);
}

export function crossingError(err: unknown): CrossingError {
  if (err instanceof EtcdCallError) return { code: err.code, message: err.message };
  return { message: err instanceof Error ? err.message : String(err) };
}

interface PendingCall {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

export class EtcdClientThread implements EtcdCalls {
  private worker?: Worker;
  private readonly calls = new Map<number, PendingCall>();
  private readonly watches = new Map<number, WatchStreamHandlers>();
  private outbox: ToEtcdThread[] = [];
  private scheduled = false;
  private nextId = 1;
  private referenced = false;
  private closed = false;
  /** The in-thread client for reads, made with the first. */
  private direct?: EtcdClient;

  /** `file`: the compiled worker entry (etcd-client-worker.js). */
  constructor(
    private readonly options: EtcdClientOptions,
    private readonly file: string,
  ) {}

  /** The thread the client runs on now, if one is running (diagnostics, tests). */
  get thread(): Worker | undefined {
    return this.worker;
  }

  range(request: RangeRequest, now = false): Promise<RangeResponse> {
    if (this.closed) return Promise.reject(new EtcdCallError(GrpcCode.CANCELLED, 'etcd client is closed'));
    return (this.direct ??= new EtcdClient(this.options)).range(request, now);
  }

  txn(request: TxnRequest): Promise<TxnResponse> {
    return this.call('txn', request) as Promise<TxnResponse>;
  }

  deleteRange(request: DeleteRangeRequest): Promise<DeleteRangeResponse> {
    return this.call('deleteRange', request) as Promise<DeleteRangeResponse>;
  }

  compact(request: CompactionRequest): Promise<CompactionResponse> {
    return this.call('compact', request) as Promise<CompactionResponse>;
  }

  status(): Promise<StatusResponse> {
    return this.call('status', {}) as Promise<StatusResponse>;
  }

  watch(create: WatchCreateRequest, handlers: WatchStreamHandlers): WatchStream {
    if (this.closed) {
      queueMicrotask(() => handlers.onEnd(new EtcdCallError(GrpcCode.UNAVAILABLE, 'etcd client is closed')));
      return { cancel() {} };
    }
    const id = this.nextId++;
    this.watches.set(id, handlers);
    this.send({ watch: create, id });
    return {
      cancel: () => {
        if (this.watches.delete(id)) this.send({ cancel: id });
      },
    };
  }

  /**
   * Ends every call and watch at once, as the in-thread client's close does by destroying its
   * connections; the worker closes its client and exits.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    if (worker) {
      this.outbox.push({ close: true });
      worker.postMessage(this.outbox);
      this.outbox = [];
      worker.unref();
    }
    this.direct?.close();
    this.failAll('etcd client is closed');
  }

  private call(method: EtcdMethod, request: unknown): Promise<unknown> {
    if (this.closed) return Promise.reject(new EtcdCallError(GrpcCode.CANCELLED, 'etcd client is closed'));
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      this.send({ call: method, id, request });
    });
  }

  private send(message: ToEtcdThread): void {
    this.outbox.push(message);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.outbox.length === 0 || this.closed) return;
    const batch = this.outbox;
    this.outbox = [];
    let worker = this.worker;
    if (!worker) {
      try {
        worker = this.start();
      } catch (err) {
        this.failAll(`cannot start the etcd client thread: ${(err as Error).message}`);
        return;
      }
    }
    try {
      worker.postMessage(batch);
    } catch (err) {
      // A request that cannot be copied across (nothing the store sends): its calls fail here.
      this.failSent(batch, `cannot send to the etcd client thread: ${(err as Error).message}`);
      return;
    }
    this.reference();
  };

  /** The calls and watches of a batch that did not reach the thread fail with `reason`. */
  private failSent(batch: ToEtcdThread[], reason: string): void {
    for (const message of batch) {
      if ('call' in message) {
        const call = this.calls.get(message.id);
        this.calls.delete(message.id);
        call?.reject(new EtcdCallError(GrpcCode.INTERNAL, reason));
      } else if ('watch' in message) {
        const handlers = this.watches.get(message.id);
        this.watches.delete(message.id);
        handlers?.onEnd(new EtcdCallError(GrpcCode.INTERNAL, reason));
      }
    }
  }

  private start(): Worker {
    const worker = new Worker(this.file, { workerData: this.options });
    this.worker = worker;
    this.referenced = true;
    worker.on('message', (batch: FromEtcdThread[]) => this.receive(batch));
    // An uncaught error ends the thread: 'exit' follows, and fails what it carried.
    worker.on('error', () => {});
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failAll(`etcd client thread exited with code ${code}`);
    });
    return worker;
  }

  private receive(batch: FromEtcdThread[]): void {
    for (const message of batch) {
      if ('ok' in message) {
        const call = this.calls.get(message.id);
        if (call) {
          this.calls.delete(message.id);
          call.resolve(message.ok);
        }
      } else if ('failed' in message) {
        const call = this.calls.get(message.id);
        if (call) {
          this.calls.delete(message.id);
          call.reject(crossedError(message.failed));
        }
      } else if ('response' in message) {
        this.watches.get(message.id)?.onResponse(message.response);
      } else {
        const handlers = this.watches.get(message.id);
        if (handlers) {
          this.watches.delete(message.id);
          handlers.onEnd(crossedError(message.ended) as EtcdCallError);
        }
      }
    }
    this.reference();
  }

  /** The thread keeps the process alive only while something waits on it. */
  private reference(): void {
    const busy = this.calls.size > 0 || this.watches.size > 0;
    if (busy === this.referenced || !this.worker) return;
    this.referenced = busy;
    if (busy) this.worker.ref();
    else this.worker.unref();
  }

  /** Every open call fails and every watch ends as UNAVAILABLE, with `reason`. */
  private failAll(reason: string): void {
    const calls = [...this.calls.values()];
    const watches = [...this.watches.values()];
    this.calls.clear();
    this.watches.clear();
    this.outbox = this.outbox.filter((m) => 'close' in m);
    for (const call of calls) call.reject(new EtcdCallError(GrpcCode.UNAVAILABLE, reason));
    for (const handlers of watches) handlers.onEnd(new EtcdCallError(GrpcCode.UNAVAILABLE, reason));
  }
}
