/**
 * An informer: one kind's objects held in memory, listed and then kept current by a watch
 * through `CoreApi` (so it works in process and across the gRPC door alike); when the watch
 * ends or expires it lists again. The authorizers and controllers read from it instead of the
 * store. Controllers share them (`SharedInformers`), as upstream's controller manager shares one
 * informer per resource among its controllers: one list and one watch of pods, and one map of
 * them, however many controllers follow pods.
 */
import { type ApiObject, type CoreApi, type RequestContext, type ResourceTarget, type WatchStream, storeNotAnswering } from './api';
import { type Clock, type Pause, pause } from '../clock';

const RELIST_DELAY_MS = 1_000;

/** One object's change, with what the informer held before; none for a (re)list, which replaces everything. */
export interface InformerChange {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: ApiObject;
  previous: ApiObject | undefined;
}

type Listener = (change?: InformerChange) => void;

/** What a controller reads of an informer, and the end of its interest in it. */
export interface InformerView {
  readonly objects: ReadonlyMap<string, ApiObject>;
  /** The objects in one namespace ('' for cluster-scoped ones). */
  inNamespace(namespace: string): Iterable<ApiObject>;
  /** Resolves once the first list is in. */
  readonly synced: Promise<void>;
  /** No more changes for this view's listener; the informer stops when no listener is left. */
  stop(): void;
}

/** One kind's objects, listed then followed by a watch; relisted when the watch ends. */
export class Informer implements InformerView {
  readonly objects = new Map<string, ApiObject>();
  /** The same objects by namespace ('' for cluster-scoped ones), for controllers that work per namespace. */
  private readonly byNamespace = new Map<string, Map<string, ApiObject>>();
  private stream?: WatchStream;
  private stopped = false;
  /** The pause before the next list, which `stop` ends. */
  private pausing?: Pause;
  private readonly listeners = new Set<Listener>();
  private listed = false;
  readonly synced: Promise<void>;

  /**
   * `onChange` is told of every change, and (without one) of each list, which replaces
   * everything; more listeners come with `listen`.
   */
  constructor(
    private readonly api: CoreApi,
    private readonly target: ResourceTarget,
    private readonly ctx: RequestContext,
    onChange: Listener | undefined,
    private readonly clock: Clock,
  ) {
    if (onChange) this.listeners.add(onChange);
    this.synced = this.run();
  }

  /**
   * Another listener on this informer, with a view whose `stop` ends only its own interest. One
   * that joins after the first list is told of it at once (on the next microtask), as it would
   * have been had it been there, so that it can take in everything held.
   */
  listen(onChange: Listener): InformerView {
    this.listeners.add(onChange);
    if (this.listed) {
      queueMicrotask(() => {
        try {
          if (this.listeners.has(onChange)) onChange();
        } catch {
          // As a listener's throw in the watch loop, which only starts a new list there.
        }
      });
    }
    const stop = (): void => {
      this.listeners.delete(onChange);
      if (this.listeners.size === 0) this.stop();
    };
    return { objects: this.objects, inNamespace: (namespace) => this.inNamespace(namespace), synced: this.synced, stop };
  }

  /** Every listener told, in the order they came; a listener's throw is passed on after the rest were told. */
  private onChange(change?: InformerChange): void {
    let failure: { err: unknown } | undefined;
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        failure ??= { err };
      }
    }
    if (failure) throw failure.err;
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
    this.listed = true;
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
    this.listeners.clear();
    this.stream?.close();
    this.pausing?.wake();
  }

  get isStopped(): boolean {
    return this.stopped;
  }
}

/**
 * The informers a group of controllers shares, one per resource, all watching as the group's
 * identity (upstream's controller manager lists and watches for its shared informers with its
 * own credentials, whichever account each controller writes as). An informer starts with its
 * first listener and stops when its last one stops.
 */
export class SharedInformers {
  private readonly informers = new Map<string, Informer>();

  constructor(
    private readonly api: CoreApi,
    private readonly ctx: RequestContext,
    private readonly clock: Clock,
  ) {}

  /** `target`'s objects, with `onChange` told of their changes. */
  watch(target: ResourceTarget, onChange: Listener): InformerView {
    const key = `${target.group}/${target.version}/${target.resource}/${target.namespace ?? ''}`;
    const shared = this.informers.get(key);
    if (shared && !shared.isStopped) return shared.listen(onChange);
    // The first list is awaited before anyone is told, so the listener added next hears it.
    const informer = new Informer(this.api, target, this.ctx, undefined, this.clock);
    this.informers.set(key, informer);
    return informer.listen(onChange);
  }

  /** How many informers run. */
  get size(): number {
    let n = 0;
    for (const informer of this.informers.values()) if (!informer.isStopped) n++;
    return n;
  }
}

/** What a controller needs to follow a resource: the core, a clock, and its group's informers if it has a group. */
export interface InformerSource {
  core: CoreApi;
  clock: Clock;
  informers?: SharedInformers;
}

/**
 * `target` followed for a controller: through its group's shared informers (as the group's
 * identity), else through an informer of its own watching as `ctx`.
 */
export function followResource(source: InformerSource, target: ResourceTarget, ctx: RequestContext, onChange: Listener): InformerView {
  if (source.informers) return source.informers.watch(target, onChange);
  const informer = new Informer(source.core, target, ctx, undefined, source.clock);
  return informer.listen(onChange);
}
