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
import { type Codec, ETCD_METHODS, EtcdCallError, EtcdClient, WATCH_METHOD, type EtcdCalls, type EtcdClientOptions, type WatchStream, type WatchStreamHandlers } from './etcd-client';

/** The unary methods the worker makes, by their index in messages. */
export const THREAD_METHODS = ['txn', 'deleteRange', 'compact', 'status'] as const;
type ThreadMethod = (typeof THREAD_METHODS)[number];

/** What an entry of a message to the worker asks: [kind, id, method index, offset, length]. */
export const ToThread = { Call: 0, Watch: 1, Cancel: 2, Close: 3 } as const;

/** What an entry of a message from the worker reports: [kind, id, code, offset or text index, length]. */
export const FromThread = { Answer: 0, Failed: 1, WatchMessage: 2, WatchEnded: 3 } as const;

/** One message between the threads: its entries, five numbers each, and the bytes they point into. */
export interface ThreadMessage {
  entries: number[];
  bytes: ArrayBuffer;
  /** Failure messages, pointed at by index. */
  texts: string[];
}

/** Entries and their bytes gathered during a turn, sent as one ThreadMessage. */
export class Outbox {
  entries: number[] = [];
  private chunks: Uint8Array[] = [];
  private length = 0;
  texts: string[] = [];

  get empty(): boolean {
    return this.entries.length === 0;
  }

  add(kind: number, id: number, detail: number, bytes?: Uint8Array): void {
    this.entries.push(kind, id, detail, this.length, bytes?.length ?? 0);
    if (bytes && bytes.length > 0) {
      this.chunks.push(bytes);
      this.length += bytes.length;
    }
  }

  /** A failure: its code (-1: not a call error) and message. */
  fail(kind: number, id: number, err: unknown): void {
    const code = err instanceof EtcdCallError ? err.code : -1;
    this.texts.push(err instanceof Error ? err.message : String(err));
    this.entries.push(kind, id, code, this.texts.length - 1, 0);
  }

  /** The message, its bytes copied into one buffer (to be transferred); the outbox is empty again. */
  take(): ThreadMessage {
    const bytes = new ArrayBuffer(this.length);
    const all = new Uint8Array(bytes);
    let at = 0;
    for (const chunk of this.chunks) {
      all.set(chunk, at);
      at += chunk.length;
    }
    const message = { entries: this.entries, bytes, texts: this.texts };
    this.entries = [];
    this.chunks = [];
    this.length = 0;
    this.texts = [];
    return message;
  }
}

/** A failure that crossed: EtcdCallError when it was one, as the in-thread client throws it. */
export function crossedError(code: number, message: string): Error {
  return code < 0 ? new Error(message) : new EtcdCallError(code, message);
}

interface PendingCall {
  codec: Codec<unknown, unknown>;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

export class EtcdClientThread implements EtcdCalls {
  private worker?: Worker;
  private readonly calls = new Map<number, PendingCall>();
  private readonly watches = new Map<number, WatchStreamHandlers>();
  private outbox = new Outbox();
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
    const cancel = () => {
      if (this.watches.delete(id)) this.send(ToThread.Cancel, id, 0);
    };
    let request: Uint8Array;
    try {
      request = WATCH_METHOD.encode({ createRequest: create });
    } catch (err) {
      queueMicrotask(() => handlers.onEnd(new EtcdCallError(GrpcCode.INTERNAL, (err as Error).message)));
      return { cancel() {} };
    }
    this.watches.set(id, handlers);
    this.send(ToThread.Watch, id, 0, request);
    return { cancel };
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
      const closing = new Outbox();
      closing.add(ToThread.Close, 0, 0);
      worker.postMessage(closing.take());
      worker.unref();
    }
    this.outbox = new Outbox();
    this.direct?.close();
    this.failAll('etcd client is closed');
  }

  private call(method: ThreadMethod, request: unknown): Promise<unknown> {
    if (this.closed) return Promise.reject(new EtcdCallError(GrpcCode.CANCELLED, 'etcd client is closed'));
    const codec = ETCD_METHODS[method] as Codec<unknown, unknown>;
    let bytes: Uint8Array;
    try {
      bytes = codec.encode(request);
    } catch (err) {
      return Promise.reject(err);
    }
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      this.calls.set(id, { codec, resolve, reject });
      this.send(ToThread.Call, id, THREAD_METHODS.indexOf(method), bytes);
    });
  }

  private send(kind: number, id: number, detail: number, bytes?: Uint8Array): void {
    this.outbox.add(kind, id, detail, bytes);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.outbox.empty || this.closed) return;
    const message = this.outbox.take();
    let worker = this.worker;
    if (!worker) {
      try {
        worker = this.start();
      } catch (err) {
        this.failAll(`cannot start the etcd client thread: ${(err as Error).message}`);
        return;
      }
    }
    worker.postMessage(message, [message.bytes]);
    this.reference();
  };

  private start(): Worker {
    const worker = new Worker(this.file, { workerData: this.options });
    this.worker = worker;
    this.referenced = true;
    worker.on('message', (message: ThreadMessage) => this.receive(message));
    // An uncaught error ends the thread: 'exit' follows, and fails what it carried.
    worker.on('error', () => {});
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failAll(`etcd client thread exited with code ${code}`);
    });
    return worker;
  }

  private receive({ entries, bytes, texts }: ThreadMessage): void {
    for (let i = 0; i < entries.length; i += 5) {
      const kind = entries[i]!;
      const id = entries[i + 1]!;
      const detail = entries[i + 2]!;
      const offset = entries[i + 3]!;
      const length = entries[i + 4]!;
      switch (kind) {
        case FromThread.Answer: {
          const call = this.calls.get(id);
          if (!call) break;
          this.calls.delete(id);
          let answer: unknown;
          try {
            answer = call.codec.decode(new Uint8Array(bytes, offset, length));
          } catch (err) {
            call.reject(new EtcdCallError(GrpcCode.INTERNAL, `undecodable response from etcd: ${(err as Error).message}`));
            break;
          }
          call.resolve(answer);
          break;
        }
        case FromThread.Failed: {
          const call = this.calls.get(id);
          if (!call) break;
          this.calls.delete(id);
          call.reject(crossedError(detail, texts[offset]!));
          break;
        }
        case FromThread.WatchMessage: {
          const handlers = this.watches.get(id);
          if (!handlers) break;
          let response: WatchResponse;
          try {
            response = WATCH_METHOD.decode(new Uint8Array(bytes, offset, length));
          } catch (err) {
            this.watches.delete(id);
            this.send(ToThread.Cancel, id, 0);
            handlers.onEnd(new EtcdCallError(GrpcCode.INTERNAL, `undecodable watch response from etcd: ${(err as Error).message}`));
            break;
          }
          handlers.onResponse(response);
          break;
        }
        case FromThread.WatchEnded: {
          const handlers = this.watches.get(id);
          if (!handlers) break;
          this.watches.delete(id);
          handlers.onEnd(crossedError(detail, texts[offset]!) as EtcdCallError);
          break;
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
    this.outbox = new Outbox();
    for (const call of calls) call.reject(new EtcdCallError(GrpcCode.UNAVAILABLE, reason));
    for (const handlers of watches) handlers.onEnd(new EtcdCallError(GrpcCode.UNAVAILABLE, reason));
  }
}
