/**
 * One store watch on etcd, on its own raw gRPC Watch stream.
 *
 * Why not etcd3's high-level `Watcher`: it silently reconnects and resumes (the store contract is
 * to report a lost connection once and stop), and on etcd 3.4 it drops the `compact_revision`
 * of a watch canceled for compaction (etcd3's watcher only emits "Watcher canceled: "), which
 * callers need to relist. One stream per watch keeps the bookkeeping trivial; the API server
 * holds a handful of watches (one per resource in the watch cache), so the extra HTTP/2 streams
 * cost nothing that matters.
 */
import type { Etcd3, IDuplexStream, IEvent, IKeyValue, IWatchRequest, IWatchResponse } from 'etcd3';
import { classifyEtcdError, errorMessage } from './etcd-errors';
import { StoreError, type KeyValue, type StoreEvent, type StoreWatch, type WatchHandlers } from './types';

export interface EtcdWatchRequest {
  /** First key of the watched range, store prefix applied. */
  key: Buffer;
  rangeEnd: Buffer;
  /** Inclusive; undefined for "from now on". */
  startRevision?: number;
}

export interface EtcdWatchContext {
  client: Etcd3;
  /** Strips the store prefix from an etcd key. */
  toStoreKey(key: Buffer): string;
  toKeyValue(kv: IKeyValue): KeyValue;
  compactedRevision(): Promise<number>;
  /** Called once when the watch ends (canceled or failed), so the store stops tracking it. */
  onClosed(watch: EtcdWatch): void;
}

type WatchStream = IDuplexStream<IWatchRequest, IWatchResponse> & { writable?: boolean };

export class EtcdWatch implements StoreWatch {
  private done = false;
  private stream?: WatchStream;

  constructor(
    private readonly context: EtcdWatchContext,
    private readonly request: EtcdWatchRequest,
    private readonly handlers: WatchHandlers,
  ) {
    void this.open().catch((err: unknown) => this.fail(toWatchError(err)));
  }

  cancel(): void {
    if (this.done) return;
    this.done = true;
    this.closeStream();
    this.context.onClosed(this);
  }

  /** Ends the watch with an error (also used by the store on close). */
  fail(err: StoreError): void {
    if (this.done) return;
    this.done = true;
    this.closeStream();
    this.context.onClosed(this);
    this.handlers.onError(err);
  }

  private async open(): Promise<void> {
    const { startRevision } = this.request;
    if (startRevision !== undefined) {
      // The store contract rejects a start at or below the compacted revision, one stricter than
      // etcd (which rejects only below): compaction at R may already have dropped a tombstone
      // at R, so a watch from R could silently miss that delete.
      const compacted = await this.context.compactedRevision();
      if (this.done) return;
      if (startRevision <= compacted) {
        this.fail(compactedError(startRevision, compacted));
        return;
      }
    }
    const stream = (await this.context.client.watchClient.watch()) as WatchStream;
    if (this.done) {
      closeQuietly(stream);
      return;
    }
    this.stream = stream;
    stream.on('data', (res) => this.onResponse(res));
    // Always listen for 'error': an unhandled stream error would crash the process.
    stream.on('error', (err) => this.fail(toWatchError(err)));
    stream.on('end', () => this.fail(new StoreError('unavailable', 'etcd closed the watch stream')));
    stream.write({
      create_request: {
        key: this.request.key,
        range_end: this.request.rangeEnd,
        start_revision: startRevision ?? 0,
        prev_kv: true,
      },
    });
  }

  private onResponse(res: IWatchResponse): void {
    if (this.done) return;
    if (res.canceled || Number(res.compact_revision) > 0) {
      // etcd cancels a watch whose start fell below its compaction (created, then canceled with
      // compact_revision set and an empty reason on 3.4) or that fell too far behind.
      const compactRevision = Number(res.compact_revision);
      this.fail(
        compactRevision > 0
          ? compactedError(this.request.startRevision ?? 0, compactRevision)
          : new StoreError('unavailable', `etcd canceled the watch: ${res.cancel_reason || 'no reason given'}`),
      );
      return;
    }
    if (res.events.length === 0) return; // created / progress notifications
    const events = res.events.map((event) => this.toStoreEvent(event));
    try {
      this.handlers.onEvents(events);
    } catch (err) {
      // A throwing handler is the caller's bug: surface it as an uncaught exception rather than
      // letting it unwind into the gRPC stream, where it would look like a lost connection.
      queueMicrotask(() => {
        throw err;
      });
    }
  }

  private toStoreEvent(event: IEvent): StoreEvent {
    const revision = Number(event.kv.mod_revision);
    const prevKv = event.prev_kv ? this.context.toKeyValue(event.prev_kv) : undefined;
    if (String(event.type).toUpperCase() === 'DELETE') {
      return {
        type: 'delete',
        // etcd's delete event carries the key, the deletion revision and create revision 0.
        kv: { key: this.context.toStoreKey(event.kv.key), value: new Uint8Array(0), createRevision: 0, modRevision: revision },
        prevKv,
        revision,
      };
    }
    return { type: 'put', kv: this.context.toKeyValue(event.kv), prevKv, revision };
  }

  private closeStream(): void {
    const stream = this.stream;
    this.stream = undefined;
    if (stream) closeQuietly(stream);
  }
}

/**
 * Half-close first, then cancel: etcd3's stream wrapper marks the host failed (resetting every
 * channel to it) on an error while the stream is still writable, and cancelling raises a
 * CANCELLED error. Ending first makes it non-writable, so our own cancel is not taken for an
 * outage.
 */
function closeQuietly(stream: WatchStream): void {
  stream.on('error', () => undefined);
  try {
    stream.end();
    stream.cancel();
  } catch {
    // already closed
  }
}

function compactedError(startRevision: number, compactRevision: number): StoreError {
  return new StoreError(
    'compacted',
    `watch from revision ${startRevision}: history up to revision ${compactRevision} has been compacted`,
    { revision: compactRevision },
  );
}

function toWatchError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const message = errorMessage(err);
  const kind = classifyEtcdError(err);
  return new StoreError('unavailable', `etcd watch failed${kind === 'unavailable' ? '' : ' unexpectedly'}: ${message}`);
}
