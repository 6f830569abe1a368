/**
 * Events expire `--event-ttl` (default 1 hour) after their last write, as upstream's do: it
 * attaches an etcd lease to every write of an event, and etcd removes the key when the lease
 * runs out. Here one watch of the events' storage notes when each event's latest version was
 * seen, and a sweep on the injected clock removes those whose time is up with a delete guarded
 * by that version, so a write in between keeps the event (its new version starts the time
 * again, as its new lease would). As an expiring lease does, the removal skips admission,
 * finalizers and graceful deletion; watchers see the event DELETED.
 *
 * Times are this process's: an event written before it started counts from its start, so
 * across a restart an event can live up to two TTLs. Several processes on one store each
 * sweep; a delete another process already made fails its guard and is dropped.
 */
import { type Clock, type Pause, pause } from '../clock';
import { type Store, StoreError } from '../store';
import type { ApiObject, WatchStream } from './api';
import type { ResourceStorage } from './storage/resource-storage';
import { SELECT_ALL } from './selectors';
import { collectionPrefix, objectKey } from './storage/keys';

export const DEFAULT_EVENT_TTL_MS = 60 * 60_000;

/** How often the sweep looks (upstream's leases are reused for a minute of writes, so expiry is minute-grained there too). */
const MAX_SWEEP_INTERVAL_MS = 60_000;
/** The pause before the watch is opened again after it ended (the store away, the history compacted). */
const REWATCH_DELAY_MS = 1_000;

export interface EventExpiryOptions {
  store: Store;
  /** The stored Event's storage (through the watch cache). */
  storage: ResourceStorage;
  clock: Clock;
  /** > 0. */
  ttlMs: number;
  /** A failed sweep or watch is retried; this only reports it. */
  onError?: (err: unknown) => void;
}

interface Seen {
  revision: number;
  /** When this process saw that revision (ms since the epoch, the injected clock's). */
  at: number;
}

export class EventExpiry {
  /** Each event's key, the revision of its latest write and when it was seen, oldest first. */
  private readonly seen = new Map<string, Seen>();
  private stream?: WatchStream;
  private stopped = false;
  private sweeping?: Promise<void>;
  /** The pause before the next watch, which `stop` ends. */
  private pausing?: Pause;
  private readonly stopTimer: () => void;
  private readonly following: Promise<void>;

  constructor(private readonly options: EventExpiryOptions) {
    this.stopTimer = options.clock.setInterval(() => void this.sweep(), Math.min(options.ttlMs, MAX_SWEEP_INTERVAL_MS));
    this.following = this.follow();
  }

  /** One sweep (the timer runs it; tests may too). Sweeps never overlap. */
  sweep(): Promise<void> {
    this.sweeping ??= this.removeExpired().finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  /** Stops following and sweeping; `closed` resolves once both are done. */
  stop(): void {
    this.stopped = true;
    this.stopTimer();
    this.stream?.close();
    this.pausing?.wake();
  }

  /**
   * Resolves once a stopped expiry has let go of the store. A watch still waiting for the
   * cache to load ends when the cache closes, so close the cache before waiting on this.
   */
  async closed(): Promise<void> {
    await this.following;
    await this.sweeping;
  }

  /** Follows the events: the current state first (ended by a bookmark), then every change. */
  private async follow(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.watchOnce();
      } catch (err) {
        // A stopping core closes the cache under the watch: not a failure.
        if (!this.stopped) this.options.onError?.(err);
      }
      if (this.stopped) return;
      this.pausing = pause(this.options.clock, REWATCH_DELAY_MS);
      await this.pausing.done;
    }
  }

  private async watchOnce(): Promise<void> {
    const stream = await this.options.storage.watch({
      prefix: collectionPrefix('events'),
      selection: SELECT_ALL,
      freshness: { kind: 'any' },
      strict: false,
      sendState: true,
      markInitialEnd: true,
      bookmarks: true,
    });
    this.stream = stream;
    if (this.stopped) stream.close();
    // Keys in the current state, until its end: what the previous watch knew and this one does not is gone.
    let current: Set<string> | undefined = new Set();
    for await (const event of stream) {
      switch (event.type) {
        case 'ERROR':
          this.options.onError?.(new Error(event.object.message ?? 'the events watch failed'));
          stream.close();
          return;
        case 'BOOKMARK':
          if (current) for (const key of this.seen.keys()) if (!current.has(key)) this.seen.delete(key);
          current = undefined;
          break;
        case 'DELETED':
          this.seen.delete(keyOf(event.object));
          break;
        default: {
          const key = keyOf(event.object);
          current?.add(key);
          this.noteWrite(key, Number(event.object.metadata?.resourceVersion));
        }
      }
    }
  }

  /** A version of the event at `key`: its time starts now, unless this very version was seen before. */
  private noteWrite(key: string, revision: number): void {
    const known = this.seen.get(key);
    if (known?.revision === revision) return;
    // Moved to the end: the map stays ordered by time.
    this.seen.delete(key);
    this.seen.set(key, { revision, at: this.options.clock.now() });
  }

  private async removeExpired(): Promise<void> {
    const deadline = this.options.clock.now() - this.options.ttlMs;
    const due: Array<[string, Seen]> = [];
    for (const entry of this.seen) {
      if (entry[1].at > deadline) break;
      due.push(entry);
    }
    for (const [key, { revision }] of due) {
      if (this.stopped) return;
      try {
        await this.options.store.delete(key, revision);
      } catch (err) {
        // Written again meanwhile (its change is on its way), or gone already.
        if (StoreError.is(err, 'conflict')) continue;
        if (StoreError.is(err, 'not-found')) {
          if (this.seen.get(key)?.revision === revision) this.seen.delete(key);
          continue;
        }
        this.options.onError?.(err);
        return;
      }
    }
  }
}

function keyOf(obj: ApiObject): string {
  return objectKey('events', obj.metadata?.namespace, obj.metadata?.name ?? '');
}
