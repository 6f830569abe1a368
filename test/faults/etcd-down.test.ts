/**
 * etcd fully down, and back: the real server on a real etcd that is killed and, later,
 * restarted on the same data. While etcd is down `/readyz` fails within seconds, requests
 * answer 5xx Status objects within `--request-timeout` instead of hanging, and open watches
 * end with an ERROR event. When etcd returns, the same process recovers: ready again, writes
 * stored, the watch cache caught up, new watches delivering. Nothing acknowledged is lost.
 */
import { startEtcd, type EtcdInstance } from '../support/etcd';
import { API_ONLY, startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { httpsStream } from '../gateway/support/https-client';
import { FAULT_TIMEOUT_MS, call, summary } from './support';
import { eventually } from '../support/eventually';

jest.setTimeout(FAULT_TIMEOUT_MS);

const REQUEST_TIMEOUT_S = 5;
const BASE = '/api/v1/namespaces/default/configmaps';

let etcd: EtcdInstance;
let server: ServerProcess;

beforeAll(async () => {
  etcd = await startEtcd();
  server = await startServerProcess(['--vendor', 'kubernetes', ...API_ONLY, '--etcd-servers', etcd.endpoint, '--request-timeout', `${REQUEST_TIMEOUT_S}s`]);
});

afterAll(async () => {
  await server?.stop();
  await etcd?.stop();
});

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = Date.now();
  const r = await f();
  return [r, Date.now() - t0];
}

test('etcd down: readyz fails, requests fail fast with a Status, watches end; etcd back: the process recovers', async () => {
  const before = await call(server, 'POST', BASE, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before' }, data: { a: '1' } });
  expect(before.status).toBe(201);
  const watch = httpsStream(`${server.url}${BASE}?watch=true&resourceVersion=${before.body.metadata.resourceVersion}`, server.admin);
  await watch.opened;

  await etcd.kill();
  const down = Date.now();

  // readyz fails within seconds.
  await eventually(async () => (await call(server, 'GET', '/readyz')).status !== 200, { what: 'readyz to fail', timeoutMs: 30_000, intervalMs: 200 });
  const readyzFailedAfterMs = Date.now() - down;
  expect(readyzFailedAfterMs).toBeLessThan(15_000);

  // Requests answer a Status within the request timeout.
  const limit = REQUEST_TIMEOUT_S * 1000 + 2000;
  const [get, getMs] = await timed(() => call(server, 'GET', `${BASE}/before`));
  const [create, createMs] = await timed(() =>
    call(server, 'POST', BASE, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'during' }, data: { a: '1' } }),
  );
  const [list, listMs] = await timed(() => call(server, 'GET', BASE));
  for (const [r, ms] of [
    [get, getMs],
    [create, createMs],
    [list, listMs],
  ] as const) {
    expect(ms).toBeLessThan(limit);
    expect([500, 503, 504]).toContain(r.status);
    expect(r.body).toMatchObject({ kind: 'Status', status: 'Failure' });
  }
  // A read that accepts the cache's copy is still served.
  const cached = await call(server, 'GET', `${BASE}/before?resourceVersion=0`);

  // The open watch ends, with an ERROR event first; a new one gets the same answer at once.
  await eventually(() => watch.ended, { timeoutMs: limit, intervalMs: 50 }).catch(() => undefined);
  const lastEvent = watch.lines.length ? JSON.parse(watch.lines[watch.lines.length - 1]!) : undefined;
  const [fresh, freshMs] = await timed(async () => {
    const w = httpsStream(`${server.url}${BASE}?watch=true`, server.admin);
    await w.opened;
    await w.waitForLines(1, limit);
    return w;
  });
  const freshEvent = JSON.parse(fresh.lines[0]!);
  fresh.close();

  await etcd.restart();
  const back = Date.now();
  await eventually(async () => (await call(server, 'GET', '/readyz')).status === 200, { what: 'readyz to pass again', timeoutMs: 60_000, intervalMs: 200 });
  const readyAgainAfterMs = Date.now() - back;

  const after = await call(server, 'POST', BASE, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' }, data: { a: '2' } });
  expect(after.status).toBe(201);
  const got = await call(server, 'GET', `${BASE}/before`);
  expect(got.body.data).toEqual({ a: '1' });
  const all = await call(server, 'GET', BASE);
  expect(all.body.items.map((o: any) => o.metadata.name).sort()).toEqual(['after', 'before']);
  const w2 = httpsStream(`${server.url}${BASE}?watch=true&resourceVersion=${after.body.metadata.resourceVersion}`, server.admin);
  await w2.opened;
  await call(server, 'PUT', `${BASE}/after`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' }, data: { a: '3' } });
  await w2.waitForLines(1, 10_000);
  expect(JSON.parse(w2.lines[0]!)).toMatchObject({ type: 'MODIFIED', object: { metadata: { name: 'after' }, data: { a: '3' } } });
  w2.close();

  summary('etcd-down', {
    readyzFailedAfterMs,
    get: [get.status, getMs],
    create: [create.status, createMs],
    list: [list.status, listMs],
    cachedGet: cached.status,
    watchEnded: watch.ended,
    watchLastEvent: lastEvent?.type,
    newWatchDuringOutage: [freshEvent.type, freshEvent.object?.code, freshMs],
    readyAgainAfterMs,
  });
  expect(watch.ended).toBe(true);
  expect(lastEvent).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 503, reason: 'ServiceUnavailable' } });
  expect(freshEvent).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 503 } });
});
