/** A CoreApi test double that records calls and answers with canned results. */
import type {
  ApiList,
  ApiObject,
  CoreApi,
  DeleteOptions,
  DeleteResult,
  GetOptions,
  ListOptions,
  Patch,
  RequestContext,
  ResourceTarget,
  WatchEvent,
  WatchStream,
  WriteBody,
  WriteOptions,
  WriteResult,
} from '../../../src/core/api';
import { bodyValue } from '../../../src/core/api';
import { successStatus } from '../../../src/status';

export interface CoreCall {
  method: keyof CoreApi;
  target: ResourceTarget;
  args: unknown[];
  ctx: RequestContext;
}

/** A watch fed by the test: push events, then end it. */
export class PushWatch implements WatchStream {
  private queue: WatchEvent[] = [];
  private waiting?: () => void;
  closed = false;

  push(event: WatchEvent): void {
    this.queue.push(event);
    this.waiting?.();
  }
  close(): void {
    this.closed = true;
    this.waiting?.();
  }
  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    for (;;) {
      while (this.queue.length) yield this.queue.shift()!;
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = undefined;
    }
  }
}

export class RecordingCore implements CoreApi {
  calls: CoreCall[] = [];
  nextError?: unknown;
  created = true;
  deleteStatus: 200 | 202 = 200;
  watchStream = new PushWatch();
  /** The items every list answers with. */
  listItems: ApiObject[] = [];

  private record(method: keyof CoreApi, target: ResourceTarget, ctx: RequestContext, ...args: unknown[]): void {
    this.calls.push({ method, target, args, ctx });
    if (this.nextError) {
      const err = this.nextError;
      this.nextError = undefined;
      throw err;
    }
  }
  get last(): CoreCall {
    return this.calls[this.calls.length - 1];
  }

  async get(target: ResourceTarget, options: GetOptions, ctx: RequestContext): Promise<ApiObject> {
    this.record('get', target, ctx, options);
    return { apiVersion: 'v1', kind: 'Pod', metadata: { name: target.name, namespace: target.namespace } };
  }
  async list(target: ResourceTarget, options: ListOptions, ctx: RequestContext): Promise<ApiList> {
    this.record('list', target, ctx, options);
    return { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '7' }, items: this.listItems };
  }
  async watch(target: ResourceTarget, options: ListOptions, ctx: RequestContext): Promise<WatchStream> {
    this.record('watch', target, ctx, options);
    return this.watchStream;
  }
  // The gateway hands its bodies over (`Owned`): recorded as the values they hold.
  async create(target: ResourceTarget, body: WriteBody<ApiObject>, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    const object = bodyValue(body);
    this.record('create', target, ctx, object, options);
    return { object, created: true };
  }
  async update(target: ResourceTarget, body: WriteBody<ApiObject>, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    const object = bodyValue(body);
    this.record('update', target, ctx, object, options);
    return { object, created: this.created };
  }
  async patch(target: ResourceTarget, body: WriteBody<Patch>, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    this.record('patch', target, ctx, bodyValue(body), options);
    return { object: { kind: 'Pod', metadata: { name: target.name } }, created: this.created };
  }
  async delete(target: ResourceTarget, options: DeleteOptions, ctx: RequestContext): Promise<DeleteResult> {
    this.record('delete', target, ctx, options);
    return { object: successStatus({ name: target.name, kind: target.resource }), httpStatus: this.deleteStatus };
  }
  async deleteCollection(target: ResourceTarget, listOptions: ListOptions, deleteOptions: DeleteOptions, ctx: RequestContext): Promise<ApiList> {
    this.record('deleteCollection', target, ctx, listOptions, deleteOptions);
    return { apiVersion: 'v1', kind: 'PodList', metadata: {}, items: [] };
  }
}
