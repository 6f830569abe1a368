/**
 * The reads of a version kept as another (`ResourceDefinition.storedAs`, upstream's one storage
 * per resource with conversion at every read): the stored version's storage and watch cache
 * answer, and every object on the way out becomes this version's.
 *
 * The watch cache hands out frozen objects and events shared by every reader, which a door
 * encodes once (codecs/encode-once.ts); their conversions are frozen and shared the same way,
 * made once per stored object and per event, and dropped with them.
 *
 * A conversion that waits (`EquivalentVersion.waits`, a custom resource's conversion webhook)
 * memoises its promise the same way, so concurrent readers share one call: a get converts one
 * object, a list all it lacks in one call, a watch each event as it comes; a failed call is
 * not remembered (the next read calls again) and ends a watch with an ERROR event.
 * `passThrough`: objects already of this version are this version's as they are (the storage
 * version's reads of a store that may hold an earlier storage version's objects).
 */
import type { ApiObject, WatchEvent, WatchStream } from '../api';
import type { EquivalentVersion } from '../resources/definition';
import type { Chunk, Freshness, ListRequest, ResourceStorage, WatchRequest } from './resource-storage';
import { isFrozen } from '../../util/frozen';
import { StatusError, internalError } from '../../status';

export class ConvertedStorage implements ResourceStorage {
  private readonly objects = new WeakMap<ApiObject, ApiObject>();
  private readonly events = new WeakMap<WatchEvent, WatchEvent>();
  private readonly waiting = new WeakMap<ApiObject, Promise<ApiObject>>();
  private readonly waitingEvents = new WeakMap<WatchEvent, Promise<WatchEvent>>();

  constructor(
    private readonly storage: ResourceStorage,
    /** The stored version, as this one's equivalent. */
    private readonly stored: EquivalentVersion,
    /** This version's `apiVersion`, for bookmarks (which carry no object to convert). */
    private readonly apiVersion: string,
    private readonly passThrough = false,
  ) {}

  /** `obj` as this version's: shared and frozen (memoised) when the stored one is `Frozen`, else made afresh. */
  convert(obj: ApiObject): ApiObject {
    if (this.passThrough && obj.apiVersion === this.apiVersion) return obj;
    if (!isFrozen(obj)) return this.stored.fromThat(obj);
    let view = this.objects.get(obj);
    if (!view) this.objects.set(obj, (view = Object.freeze(this.stored.fromThat(obj))));
    return view;
  }

  /** Objects as this version's through a conversion that waits: those not converted yet in one call. */
  private async convertAll(objs: readonly ApiObject[]): Promise<ApiObject[]> {
    const waits = this.stored.waits!;
    const out: (ApiObject | Promise<ApiObject>)[] = new Array(objs.length);
    const send: number[] = [];
    objs.forEach((obj, i) => {
      if (this.passThrough && obj.apiVersion === this.apiVersion) out[i] = obj;
      else if (isFrozen(obj) && (this.objects.get(obj) ?? this.waiting.get(obj))) out[i] = (this.objects.get(obj) ?? this.waiting.get(obj))!;
      else send.push(i);
    });
    if (send.length) {
      const call = waits.fromThat(send.map((i) => objs[i]!));
      send.forEach((i, k) => {
        const obj = objs[i]!;
        const one = call.then((converted) => converted[k]!);
        if (!isFrozen(obj)) {
          out[i] = one;
          return;
        }
        const shared = one.then(
          (view) => {
            Object.freeze(view);
            this.objects.set(obj, view);
            this.waiting.delete(obj);
            return view;
          },
          (err: unknown) => {
            this.waiting.delete(obj);
            throw err;
          },
        );
        this.waiting.set(obj, shared);
        out[i] = shared;
      });
      // One failure is the answer: the others' rejections are the same call's.
      for (const p of out) if (p instanceof Promise) p.catch(() => {});
    }
    return Promise.all(out);
  }

  get(key: string, freshness: Freshness): ApiObject | undefined | Promise<ApiObject | undefined> {
    const found = this.storage.get(key, freshness);
    if (this.stored.waits) {
      return Promise.resolve(found).then(async (obj) => obj && (await this.convertAll([obj]))[0]);
    }
    if (found instanceof Promise) return found.then((obj) => obj && this.convert(obj));
    return found && this.convert(found);
  }

  peek(key: string): ApiObject | undefined {
    const obj = this.storage.peek?.(key);
    if (obj && this.stored.waits) return this.passThrough && obj.apiVersion === this.apiVersion ? obj : this.objects.get(obj);
    return obj && this.convert(obj);
  }

  async list(request: ListRequest): Promise<Chunk> {
    const chunk = await this.storage.list(request);
    if (this.stored.waits) return { ...chunk, items: await this.convertAll(chunk.items) };
    return { ...chunk, items: chunk.items.map((item) => this.convert(item)) };
  }

  currentRevision(): Promise<number> {
    return this.storage.currentRevision();
  }

  async watch(request: WatchRequest): Promise<WatchStream> {
    const inner = await this.storage.watch(request);
    if (this.stored.waits) {
      const convertEvent = (event: WatchEvent): Promise<WatchEvent> => this.convertEventWaiting(event);
      return {
        close: () => inner.close(),
        async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent> {
          for await (const event of inner) {
            let view: WatchEvent;
            try {
              view = await convertEvent(event);
            } catch (err) {
              // A conversion that failed ends the watch with its Status, as upstream's watcher does.
              yield { type: 'ERROR', object: StatusError.is(err) ? err.status : internalError(String(err)).status };
              inner.close();
              return;
            }
            yield view;
          }
        },
      };
    }
    const convertEvent = (event: WatchEvent): WatchEvent => this.convertEvent(event);
    return {
      close: () => inner.close(),
      async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent> {
        for await (const event of inner) yield convertEvent(event);
      },
    };
  }

  private convertEventWaiting(event: WatchEvent): Promise<WatchEvent> {
    if (event.type === 'ERROR') return Promise.resolve(event);
    if (event.type === 'BOOKMARK') return Promise.resolve(this.convertEvent(event));
    const known = this.waitingEvents.get(event);
    if (known) return known;
    const view = this.convertAll([event.object]).then(([object]) => {
      const converted: WatchEvent = { type: event.type, object: object! };
      return isFrozen(event) ? Object.freeze(converted) : converted;
    });
    if (isFrozen(event)) {
      this.waitingEvents.set(event, view);
      view.catch(() => this.waitingEvents.delete(event));
    }
    return view;
  }

  private convertEvent(event: WatchEvent): WatchEvent {
    if (event.type === 'ERROR') return event;
    let view = this.events.get(event);
    if (view) return view;
    // A bookmark names only a resourceVersion (and annotations): it changes its apiVersion alone.
    const object = event.type === 'BOOKMARK' ? { ...event.object, apiVersion: this.apiVersion } : this.convert(event.object);
    view = { type: event.type, object };
    if (isFrozen(event)) {
      Object.freeze(object);
      this.events.set(event, Object.freeze(view));
    }
    return view;
  }
}
