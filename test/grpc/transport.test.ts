/**
 * The transport's own duties, in one process: context (user, user agent, warnings,
 * cancellation), large error trailers, watch cancellation, backpressure and shutdown. The
 * CoreApi behind the server is a test double so each duty can be provoked on purpose; the
 * real core is exercised in second-process.test.ts.
 */
import type { ApiObject, CoreApi, RequestContext, ResourceTarget, WatchEvent, WatchStream } from '../../src/core/api';
import { createGrpcCoreClient, startGrpcCoreServer, type GrpcCoreClient, type GrpcCoreServer } from '../../src/grpc';
import { StatusError, badRequest, invalid, methodNotSupported, notFound, resourceExpired } from '../../src/status';
import { eventually } from '../support/eventually';

const target: ResourceTarget = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default', name: 'cm' };
const object: ApiObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' } };

function context(extra: Partial<RequestContext> = {}): RequestContext & { warnings: string[] } {
  return { user: { username: 'alice', groups: ['devs'] }, warnings: [], ...extra };
}

/** A CoreApi whose methods refuse unless the test provides them. */
function testCore(methods: Partial<CoreApi>): CoreApi {
  const refuse = (verb: string) => () => Promise.reject(methodNotSupported({ group: '', resource: 'configmaps' }, verb));
  return {
    get: refuse('get'),
    list: refuse('list'),
    watch: refuse('watch'),
    create: refuse('create'),
    update: refuse('update'),
    patch: refuse('patch'),
    delete: refuse('delete'),
    deleteCollection: refuse('deletecollection'),
    ...methods,
  };
}

/** A WatchStream over a generator, recording how far it was pulled and whether it was closed. */
function testWatch(produce: () => AsyncGenerator<WatchEvent>): WatchStream & { pulled: number; closed: boolean } {
  const generator = produce();
  let wake: (() => void) | undefined;
  const stream = {
    pulled: 0,
    closed: false,
    close() {
      stream.closed = true;
      wake?.();
    },
    async *[Symbol.asyncIterator]() {
      while (!stream.closed) {
        const stopped = new Promise<'stopped'>((resolve) => (wake = () => resolve('stopped')));
        const next = await Promise.race([generator.next(), stopped]);
        if (next === 'stopped' || next.done) return;
        stream.pulled++;
        yield next.value;
      }
    },
  };
  return stream;
}

describe('gRPC transport', () => {
  let server: GrpcCoreServer | undefined;
  let client: GrpcCoreClient | undefined;

  async function serve(core: CoreApi): Promise<GrpcCoreClient> {
    server = await startGrpcCoreServer(core, { address: '127.0.0.1:0', authentication: 'trust-caller' });
    client = createGrpcCoreClient(server.address);
    return client;
  }

  afterEach(async () => {
    client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });

  it('hands the caller, user agent and a fresh signal to the core, and returns warnings', async () => {
    let seen: RequestContext | undefined;
    const api = await serve(
      testCore({
        async get(_target, _options, ctx) {
          seen = ctx;
          ctx.warnings?.push('deprecated field used', 'ünïcode warning');
          return object;
        },
      }),
    );
    const ctx = context({
      user: { username: 'alice', uid: 'u1', groups: ['devs'], extra: { scope: ['x'] } },
      userAgent: 'kubectl/v1.32',
      warnings: ['earlier warning'],
    });
    expect(await api.get(target, {}, ctx)).toEqual(object);
    expect(seen?.user).toEqual(ctx.user);
    expect(seen?.userAgent).toBe('kubectl/v1.32');
    expect(seen?.signal).toBeInstanceOf(AbortSignal);
    expect(ctx.warnings).toEqual(['earlier warning', 'deprecated field used', 'ünïcode warning']);
  });

  it('returns warnings collected before a failure', async () => {
    const api = await serve(
      testCore({
        async create(_target, _object, _options, ctx) {
          ctx.warnings?.push('unknown field "spec.foo"');
          throw badRequest('nope');
        },
      }),
    );
    const ctx = context();
    await expect(api.create(target, object, {}, ctx)).rejects.toMatchObject({ code: 400, reason: 'BadRequest', message: 'nope' });
    expect(ctx.warnings).toEqual(['unknown field "spec.foo"']);
  });

  function invalidWith(count: number): StatusError {
    const errors = Array.from({ length: count }, (_, i) => ({
      field: `data.key-${i}`,
      causeReason: 'FieldValueInvalid',
      causeMessage: `Invalid value: "${'x'.repeat(100)}": a lowercase RFC 1123 subdomain must consist of ...`,
      message: `data.key-${i}: Invalid value`,
    }));
    return invalid({ group: '', kind: 'ConfigMap' }, 'cm', errors);
  }

  it('carries a large Invalid status whole', async () => {
    const thrown = invalidWith(100);
    expect(JSON.stringify(thrown.status).length).toBeGreaterThan(20_000);
    const api = await serve(testCore({ update: () => Promise.reject(thrown) }));
    const err = await api.update(target, object, {}, context()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).status).toStrictEqual(thrown.status);
  });

  it('shrinks a Status too large for a trailer instead of hanging the call', async () => {
    const thrown = invalidWith(3_000);
    const api = await serve(testCore({ update: () => Promise.reject(thrown) }));
    const ctx = context();
    const err = await api.update(target, object, {}, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    const { status } = err as StatusError;
    expect(status).toMatchObject({ code: 422, reason: 'Invalid', details: { name: 'cm', kind: 'ConfigMap' } });
    expect(status.message).toMatch(/^ConfigMap "cm" is invalid: \[data\.key-0: Invalid value, /);
    const causes = status.details?.causes ?? [];
    expect(causes.length).toBeLessThan(3_000);
    expect(causes).toEqual(thrown.status.details?.causes?.slice(0, causes.length));
  });

  it('answers a failure whose message holds a lone surrogate (grpc-js cannot send one in a header)', async () => {
    const thrown = badRequest(`object: invalid JSON: Unexpected token '\uD83D', "\uD83D"... is not valid JSON`);
    const api = await serve(testCore({ create: () => Promise.reject(thrown) }));
    const err = await api.create(target, object, {}, context()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).status).toMatchObject({ code: 400, reason: 'BadRequest' });
  });

  it('turns anything else the core throws into 500 InternalError', async () => {
    const api = await serve(testCore({ list: () => Promise.reject(new Error('disk on fire')) }));
    await expect(api.list(target, {}, context())).rejects.toMatchObject({
      code: 500,
      reason: 'InternalError',
      message: 'Internal error occurred: disk on fire',
    });
  });

  it('cancels the call when ctx.signal aborts, and the core sees its signal abort', async () => {
    let coreSignal: AbortSignal | undefined;
    const api = await serve(
      testCore({
        get: (_target, _options, ctx) =>
          new Promise(() => {
            coreSignal = ctx.signal;
          }),
      }),
    );
    const abort = new AbortController();
    const pending = api.get(target, {}, context({ signal: abort.signal }));
    await eventually(() => coreSignal !== undefined, { what: 'the core to be called' });
    abort.abort();
    await expect(pending).rejects.toBeInstanceOf(StatusError);
    await eventually(() => coreSignal?.aborted === true, { what: 'the core signal to abort' });
  });

  it('does not call out with an already aborted signal', async () => {
    const get = jest.fn(() => Promise.resolve(object));
    const api = await serve(testCore({ get }));
    const abort = new AbortController();
    abort.abort();
    await expect(api.get(target, {}, context({ signal: abort.signal }))).rejects.toBeInstanceOf(StatusError);
    await expect(api.watch(target, {}, context({ signal: abort.signal }))).rejects.toBeInstanceOf(StatusError);
    expect(get).not.toHaveBeenCalled();
  });

  it('passes watch events through and closes the core stream when the client closes', async () => {
    const watch = testWatch(async function* () {
      yield { type: 'ADDED', object };
      yield { type: 'MODIFIED', object: { ...object, data: { a: 'b' } } };
      await new Promise(() => {});
    });
    const api = await serve(
      testCore({
        async watch(_target, _options, ctx) {
          ctx.warnings?.push('watch warning');
          return watch;
        },
      }),
    );
    const ctx = context();
    const stream = await api.watch(target, {}, ctx);
    expect(ctx.warnings).toEqual(['watch warning']);
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual({ type: 'ADDED', object });
    expect((await iterator.next()).value).toEqual({ type: 'MODIFIED', object: { ...object, data: { a: 'b' } } });
    stream.close();
    expect((await iterator.next()).done).toBe(true);
    await eventually(() => watch.closed, { what: 'the core watch to close' });
  });

  it('closes the core stream when ctx.signal aborts a watch', async () => {
    const watch = testWatch(async function* () {
      await new Promise(() => {});
    });
    const api = await serve(testCore({ watch: async () => watch }));
    const abort = new AbortController();
    const stream = await api.watch(target, {}, context({ signal: abort.signal }));
    const next = stream[Symbol.asyncIterator]().next();
    abort.abort();
    expect((await next).done).toBe(true);
    await eventually(() => watch.closed, { what: 'the core watch to close' });
  });

  it('rejects watch() when the core refuses it, and throws from iteration when the stream fails', async () => {
    let fail = true;
    const api = await serve(
      testCore({
        async watch() {
          if (fail) throw resourceExpired('too old resource version: 1 (5)');
          return testWatch(async function* () {
            yield { type: 'ADDED', object };
            throw notFound({ group: '', resource: 'configmaps' }, 'cm');
          });
        },
      }),
    );
    await expect(api.watch(target, {}, context())).rejects.toMatchObject({ code: 410, reason: 'Expired' });
    fail = false;
    const stream = await api.watch(target, {}, context());
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual({ type: 'ADDED', object });
    await expect(iterator.next()).rejects.toMatchObject({ code: 404, reason: 'NotFound' });
  });

  it('carries ERROR events as Status objects', async () => {
    const status = resourceExpired('too old resource version: 1 (5)').status;
    const api = await serve(
      testCore({
        watch: async () =>
          testWatch(async function* () {
            yield { type: 'ERROR', object: status };
          }),
      }),
    );
    const stream = await api.watch(target, {}, context());
    const events: WatchEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events).toEqual([{ type: 'ERROR', object: status }]);
  });

  it('stops pulling events from the core while the client does not read (backpressure)', async () => {
    const big: ApiObject = { ...object, data: { blob: 'x'.repeat(256 * 1024) } };
    const watch = testWatch(async function* () {
      for (;;) yield { type: 'MODIFIED', object: big };
    });
    const api = await serve(testCore({ watch: async () => watch }));
    const stream = await api.watch(target, {}, context());
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    // The pause is the point: half a second of a consumer that reads nothing, to count the pulls meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const pulledWhileIdle = watch.pulled;
    // An unbounded producer with no backpressure would have been pulled thousands of times.
    expect(pulledWhileIdle).toBeLessThan(200);
    for (let i = 0; i < 50; i++) await iterator.next();
    expect(watch.pulled).toBeGreaterThan(50);
    stream.close();
  });

  it('ends open watches cleanly when the server closes', async () => {
    const watch = testWatch(async function* () {
      yield { type: 'ADDED', object };
      await new Promise(() => {});
    });
    const api = await serve(testCore({ watch: async () => watch }));
    const stream = await api.watch(target, {}, context());
    const events: WatchEvent[] = [];
    const drained = (async () => {
      for await (const event of stream) events.push(event);
    })();
    await eventually(() => events.length === 1, { what: 'the first event' });
    await server!.close();
    await drained;
    expect(watch.closed).toBe(true);
    expect(events).toEqual([{ type: 'ADDED', object }]);
  });

  it('reports an unreachable core as 503 ServiceUnavailable', async () => {
    const probe = await startGrpcCoreServer(testCore({}), { address: '127.0.0.1:0', authentication: 'trust-caller' });
    const address = probe.address;
    await probe.close();
    const api = createGrpcCoreClient(address);
    try {
      await expect(api.get(target, {}, context())).rejects.toMatchObject({ code: 503, reason: 'ServiceUnavailable' });
    } finally {
      api.close();
    }
  });
});
