/**
 * A request the core answers within the call (a get from the watch cache at resourceVersion 0)
 * goes through the whole pipeline without a promise: `handle` returns nothing and the response
 * is already ended. Everything else returns a promise, and every failure is a rejection or a
 * Status response, never a throw out of `handle`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Core, createCore } from '../../src/core';
import type { Gateway } from '../../src/gateway';
import { compose } from '../../src/gateway/pipeline';
import { type Exchange, type Handler, afterNext } from '../../src/gateway/types';
import { ServerMetrics } from '../../src/metrics';
import { createNaming } from '../../src/naming';
import { createStore } from '../../src/store';
import { gatewayOverCore } from '../../tools/bench/core-gateway';
import { ADMIN_CERT, RecordingResponse, fakeExchange, fakeRequest } from './support/http';
import { eventually } from '../support/eventually';

const naming = createNaming('kubernetes');
const admin = { user: { username: 'admin', groups: ['system:masters'] } };
const configmaps = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };

describe('a request answered within the call', () => {
  let dir: string;
  let core: Core;
  let metrics: ServerMetrics;
  let gateway: Gateway;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-now-'));
    core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0 });
    await core.ready();
    await core.create(configmaps, { metadata: { name: 'one' }, data: { k: 'v' } }, {}, admin);
    metrics = new ServerMetrics();
    gateway = gatewayOverCore(core, naming, { limits: { maxReadOnly: 10, maxMutating: 10, requestTimeoutMs: 60_000 }, metrics });
    // The cache has the object once a read at resourceVersion 0 finds it.
    await eventually(
      async () => {
        const response = new RecordingResponse();
        await gateway.handle(fakeRequest({ url: '/api/v1/namespaces/default/configmaps/one?resourceVersion=0', cert: ADMIN_CERT }), response);
        return response.statusCode === 200;
      },
      { what: 'the watch cache to hold the object' },
    );
  });

  afterAll(async () => {
    await core.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const handle = (url: string, response = new RecordingResponse()) => ({ outcome: gateway.handle(fakeRequest({ url, cert: ADMIN_CERT }), response), response });

  it('answers a get from the watch cache with no promise, through every step', () => {
    const { outcome, response } = handle('/api/v1/namespaces/default/configmaps/one?resourceVersion=0');
    expect(outcome).toBeUndefined();
    expect(response.ended).toBe(true);
    expect(response.statusCode).toBe(200);
    expect(response.json).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'one' }, data: { k: 'v' } });
    expect(response.header('audit-id')).toEqual(expect.any(String));
    expect(metrics.inflightNow.readOnly).toBe(0);
  });

  it('answers a missing object at resourceVersion 0 with its 404 Status: a failure is a rejection inside, never a throw', async () => {
    const { outcome, response } = handle('/api/v1/namespaces/default/configmaps/missing?resourceVersion=0');
    await expect(outcome).resolves.toBeUndefined();
    expect(response.statusCode).toBe(404);
    expect(response.json).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'configmaps "missing" not found' });
    expect(metrics.inflightNow.readOnly).toBe(0);
  });

  it('answers a bad resourceVersion with its 400 Status, never a throw', async () => {
    const { outcome, response } = handle('/api/v1/namespaces/default/configmaps/one?resourceVersion=abc');
    await expect(outcome).resolves.toBeUndefined();
    expect(response.statusCode).toBe(400);
    expect(response.json).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
  });

  it('returns a promise for a consistent get, which must read the store first', async () => {
    const { outcome, response } = handle('/api/v1/namespaces/default/configmaps/one');
    expect(outcome).toBeInstanceOf(Promise);
    expect(metrics.inflightNow.readOnly).toBe(1);
    await outcome;
    expect(response.statusCode).toBe(200);
    expect(response.json).toMatchObject({ metadata: { name: 'one' } });
    expect(metrics.inflightNow.readOnly).toBe(0);
  });

  it('counts what it answered within the call in the request metrics', async () => {
    const count = async () =>
      Number(/apiserver_request_total\{verb="GET",[^}]*resource="configmaps",[^}]*code="200"\} (\d+)/.exec((await metrics.text()).body)?.[1]);
    const before = await count();
    expect(handle('/api/v1/namespaces/default/configmaps/one?resourceVersion=0').outcome).toBeUndefined();
    expect(await count()).toBe(before + 1);
  });
});

describe('afterNext', () => {
  const { exchange } = fakeExchange({ url: '/' });
  const seen: unknown[] = [];
  const after = (err: unknown) => {
    seen.push(err);
  };
  beforeEach(() => (seen.length = 0));

  it('runs `after` within the call when `next` answered within it', () => {
    expect(afterNext(() => {}, exchange, after)).toBeUndefined();
    expect(seen).toEqual([undefined]);
  });

  it('runs `after` once the promise settles, with the error it rejected with', async () => {
    const boom = new Error('boom');
    const pending = afterNext(() => Promise.reject(boom), exchange, after);
    expect(seen).toEqual([]);
    await pending;
    expect(seen).toEqual([boom]);
  });

  it('turns a throw of `next` (a bug) and a throw of `after` into rejections', async () => {
    const boom = new Error('boom');
    const thrown = afterNext(
      () => {
        throw boom;
      },
      exchange,
      after,
    );
    await expect(thrown).resolves.toBeUndefined();
    expect(seen).toEqual([boom]);
    const again = afterNext(
      () => {},
      exchange,
      () => {
        throw boom;
      },
    );
    await expect(again).rejects.toBe(boom);
  });

  it('lets steps that answer within the call compose with ones that wait', async () => {
    const order: string[] = [];
    const sync = (name: string) => (next: Handler) => (e: Exchange) => afterNext(next, e, () => void order.push(name));
    const waiting = (next: Handler) => async (e: Exchange) => {
      await Promise.resolve();
      await next(e);
      order.push('waiting');
    };
    expect(compose([sync('a'), sync('b')], () => void order.push('handler'))(exchange)).toBeUndefined();
    expect(order).toEqual(['handler', 'b', 'a']);
    order.length = 0;
    const pending = compose([sync('a'), waiting, sync('b')], () => void order.push('handler'))(exchange);
    expect(pending).toBeInstanceOf(Promise);
    await pending;
    expect(order).toEqual(['handler', 'b', 'waiting', 'a']);
  });
});
