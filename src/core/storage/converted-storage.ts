/**
 * The reads of a version kept as another (`ResourceDefinition.storedAs`, upstream's one storage
 * per resource with conversion at every read): the stored version's storage and watch cache
 * answer, and every object on the way out becomes this version's.
 *
 * The watch cache hands out frozen objects and events shared by every reader, which a door
 * encodes once (codecs/encode-once.ts); their conversions are frozen and shared the same way,
 * made once per stored object and per event, and dropped with them.
 */
import type { ApiObject, WatchEvent, WatchStream } from '../api';
import type { EquivalentVersion } from '../resources/definition';
import type { Chunk, Freshness, ListRequest, ResourceStorage, WatchRequest } from './resource-storage';
import { isFrozen } from '../../util/frozen';

export class ConvertedStorage implements ResourceStorage {
  private readonly objects = new WeakMap<ApiObject, ApiObject>();
  private readonly events = new WeakMap<WatchEvent, WatchEvent>();

  constructor(
    private readonly storage: ResourceStorage,
    /** The stored version, as this one's equivalent. */
    private readonly stored: EquivalentVersion,
    /** This version's `apiVersion`, for bookmarks (which carry no object to convert). */
    private readonly apiVersion: string,
  ) {}

  /** `obj` as this version's: shared and frozen (memoised) when the stored one is `Frozen`, else made afresh. */
  convert(obj: ApiObject): ApiObject {
    if (!isFrozen(obj)) return this.stored.fromThat(obj);
    let view = this.objects.get(obj);
    if (!view) this.objects.set(obj, (view = Object.freeze(this.stored.fromThat(obj))));
    return view;
  }

  get(key: string, freshness: Freshness): ApiObject | undefined | Promise<ApiObject | undefined> {
    const found = this.storage.get(key, freshness);
    if (found instanceof Promise) return found.then((obj) => obj && this.convert(obj));
    return found && this.convert(found);
  }

  peek(key: string): ApiObject | undefined {
    const obj = this.storage.peek?.(key);
    return obj && this.convert(obj);
  }

  async list(request: ListRequest): Promise<Chunk> {
    const chunk = await this.storage.list(request);
    return { ...chunk, items: chunk.items.map((item) => this.convert(item)) };
  }

  currentRevision(): Promise<number> {
    return this.storage.currentRevision();
  }

  async watch(request: WatchRequest): Promise<WatchStream> {
    const inner = await this.storage.watch(request);
    const convertEvent = (event: WatchEvent): WatchEvent => this.convertEvent(event);
    return {
      close: () => inner.close(),
      async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent> {
        for await (const event of inner) yield convertEvent(event);
      },
    };
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
