/**
 * An informer: one kind's objects held in memory, listed and then kept current by a watch
 * through `CoreApi` (so it works in process and across the gRPC door alike); when the watch
 * ends or expires it lists again. The authorizers and controllers read from it instead of the
 * store.
 */
import type { ApiObject, CoreApi, RequestContext, ResourceTarget, WatchStream } from './api';
import { type Clock, type Pause, pause } from '../clock';
import { storeNotAnswering } from './registry/storage-errors';

const RELIST_DELAY_MS = 1_000;

/** One object's change, with what the informer held before; none for a (re)list, which replaces everything. */
export interface InformerChange {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: ApiObject;
  previous: ApiObject | undefined;
}

/** One kind's objects, listed then followed by a watch; relisted when the watch ends. */
export class Informer {
  readonly objects = new Map<string, ApiObject>();
  /** The same objects by namespace ('' for cluster-scoped ones), for controllers that work per namespace. */
  private readonly byNamespace = new Map<string, Map<string, ApiObject>>();
  private stream?: WatchStream;
  private stopped = false;
  /** The pause before the next list, which `stop` ends. */
  private pausing?: Pause;
  readonly synced: Promise<void>;

  constructor(
    private readonly api: CoreApi,
    private readonly target: ResourceTarget,
    private readonly ctx: RequestContext,
    private readonly onChange: (change?: InformerChange) => void,
    private readonly clock: Clock,
  ) {
    this.synced = this.run();
  }

  private key(obj: ApiObject): string {
    return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
  }

  /** The objects in one namespace. */
  inNamespace(namespace: string): Iterable<ApiObject> {
    return this.byNamespace.get(namespace)?.values() ?? [];
  }

  private put(key: string, obj: ApiObject): void {
    this.objects.set(key, obj);
    const ns = obj.metadata?.namespace ?? '';
    let inNs = this.byNamespace.get(ns);
    if (!inNs) this.byNamespace.set(ns, (inNs = new Map()));
    inNs.set(key, obj);
  }

  private remove(key: string, obj: ApiObject): void {
    this.objects.delete(key);
    const ns = obj.metadata?.namespace ?? '';
    const inNs = this.byNamespace.get(ns);
    inNs?.delete(key);
    if (inNs?.size === 0) this.byNamespace.delete(ns);
  }

  /** Replace everything with a fresh list; its resourceVersion is where the watch resumes. */
  private async relist(): Promise<string> {
    const list = await this.api.list(this.target, {}, this.ctx);
    this.objects.clear();
    this.byNamespace.clear();
    for (const item of list.items) this.put(this.key(item), item);
    this.onChange();
    return list.metadata.resourceVersion ?? '0';
  }

  /**
   * The first list, then the watch. A store that does not answer yet (503, 504: a server started
   * before its etcd) is asked again each second, as client-go's reflector keeps listing; any
   * other refusal fails `synced`.
   */
  private async run(): Promise<void> {
    for (;;) {
      try {
        void this.follow(await this.relist());
        return;
      } catch (err) {
        if (this.stopped) return;
        if (!storeNotAnswering(err)) throw err;
        await this.pause();
        if (this.stopped) return;
      }
    }
  }

  private pause(): Promise<void> {
    this.pausing = pause(this.clock, RELIST_DELAY_MS);
    return this.pausing.done;
  }

  private async follow(resourceVersion: string): Promise<void> {
    let rv = resourceVersion;
    while (!this.stopped) {
      try {
        this.stream = await this.api.watch(this.target, { resourceVersion: rv, allowWatchBookmarks: true }, this.ctx);
        for await (const event of this.stream) {
          if (event.type === 'ERROR') throw new Error('watch expired');
          rv = event.object.metadata?.resourceVersion ?? rv;
          if (event.type === 'BOOKMARK') continue;
          const key = this.key(event.object);
          const previous = this.objects.get(key);
          if (event.type === 'DELETED') this.remove(key, event.object);
          else this.put(key, event.object);
          this.onChange({ type: event.type, object: event.object, previous });
        }
      } catch {
        if (this.stopped) return;
        // Start over from a fresh list (the history may be gone).
        try {
          rv = await this.relist();
        } catch {
          await this.pause();
        }
      }
    }
  }

  stop(): void {
    this.stopped = true;
    this.stream?.close();
    this.pausing?.wake();
  }
}

