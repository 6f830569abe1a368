/**
 * One store watch on etcd, on its own gRPC Watch stream (client.ts).
 *
 * It never reconnects and resumes by itself: the store contract is to report a lost connection
 * once and stop, and the caller relists. A watch canceled for compaction reports etcd's
 * `compact_revision`, which callers need to relist. One stream per watch keeps the bookkeeping
 * trivial; the API server holds a handful of watches (one per resource in the watch cache), so
 * the extra HTTP/2 streams cost nothing that matters.
 */
import type { WatchResponse } from '../../gen/etcd/etcdserverpb/rpc';
import { type Event as EtcdEvent, Event_EventType, type KeyValue as EtcdKeyValue } from '../../gen/etcd/mvccpb/kv';
import type { EtcdCalls, WatchStream } from './client';
import { classifyEtcdError, errorMessage } from './errors';
import { StoreError, type KeyValue, type StoreEvent, type StoreWatch, type WatchHandlers } from '../types';

export interface EtcdWatchRequest {
  /** First key of the watched range, store prefix applied. */
  key: Buffer;
  rangeEnd: Buffer;
  /** Inclusive; undefined for "from now on". */
  startRevision?: number;
  /** Ask etcd for each event's previous value. */
  prevKv: boolean;
}

export interface EtcdWatchContext {
  client: EtcdCalls;
  /** Strips the store prefix from an etcd key. */
  toStoreKey(key: Uint8Array): string;
  toKeyValue(kv: EtcdKeyValue): KeyValue;
  compactedRevision(): Promise<number>;
  /** Called once when the watch ends (canceled or failed), so the store stops tracking it. */
  onClosed(watch: EtcdWatch): void;
}

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
    this.stream = this.context.client.watch(
      { key: this.request.key, rangeEnd: this.request.rangeEnd, startRevision: startRevision ?? 0, prevKv: this.request.prevKv },
      { onResponse: (res) => this.onResponse(res), onEnd: (err) => this.fail(toWatchError(err)) },
    );
  }

  private onResponse(res: WatchResponse): void {
    if (this.done) return;
    if (res.canceled || res.compactRevision > 0) {
      // etcd cancels a watch whose start fell below its compaction (created, then canceled with
      // compact_revision set and an empty reason on 3.4) or that fell too far behind.
      const compactRevision = res.compactRevision;
      this.fail(
        compactRevision > 0
          ? compactedError(this.request.startRevision ?? 0, compactRevision)
          : new StoreError('unavailable', `etcd canceled the watch: ${res.cancelReason || 'no reason given'}`),
      );
      return;
    }
    if (res.events.length === 0) return; // created / progress notifications
    let events: StoreEvent[];
    try {
      events = res.events.map((event) => this.toStoreEvent(event));
    } catch (err) {
      this.fail(toWatchError(err));
      return;
    }
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

  private toStoreEvent(event: EtcdEvent): StoreEvent {
    const kv = event.kv;
    if (!kv) throw new StoreError('unavailable', 'etcd sent a watch event without its key');
    const revision = kv.modRevision;
    const prevKv = event.prevKv ? this.context.toKeyValue(event.prevKv) : undefined;
    if (event.type === Event_EventType.DELETE) {
      return {
        type: 'delete',
        // etcd's delete event carries the key, the deletion revision and create revision 0.
        kv: { key: this.context.toStoreKey(kv.key), value: new Uint8Array(0), createRevision: 0, modRevision: revision },
        prevKv,
        revision,
      };
    }
    return { type: 'put', kv: this.context.toKeyValue(kv), prevKv, revision };
  }

  private closeStream(): void {
    const stream = this.stream;
    this.stream = undefined;
    stream?.cancel();
  }
}

function compactedError(startRevision: number, compactRevision: number): StoreError {
  return new StoreError('compacted', `watch from revision ${startRevision}: history up to revision ${compactRevision} has been compacted`, {
    revision: compactRevision,
  });
}

function toWatchError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const message = errorMessage(err);
  const kind = classifyEtcdError(err);
  return new StoreError('unavailable', `etcd watch failed${kind === 'unavailable' ? '' : ' unexpectedly'}: ${message}`);
}
