/**
 * Corrupt data: values in a real etcd that cannot be decoded, under the real server. A GET of
 * one answers 500 naming its key, from the watch cache too (never the last good copy); a list
 * that covers it fails the same way, as a list from etcd does upstream; other objects read as
 * usual; a restart is not blocked by it (the watch cache loads around it); and it can be removed
 * with `ignoreStoreReadErrorWithClusterBreakingPotential`, after which a watcher that had seen
 * it good hears it DELETED and lists work again.
 */
import { Etcd3 } from 'etcd3';
import { startEtcd, type EtcdInstance } from '../support/etcd';
import { API_ONLY, startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { httpsStream } from '../gateway/support/https-client';
import { FAULT_TIMEOUT_MS, call, summary } from './support';
import { eventually } from '../support/eventually';

jest.setTimeout(FAULT_TIMEOUT_MS);

const BASE = '/apis/apps/v1/namespaces/default/replicasets';
const rs = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});
const GARBAGE = Buffer.from([0x00, 0xff, 0x13, 0x37]);

let etcd: EtcdInstance;
let server: ServerProcess;
let raw: Etcd3;

async function start(dataDir?: string): Promise<ServerProcess> {
  return startServerProcess(
    ['--vendor', 'kubernetes', ...API_ONLY, '--etcd-servers', etcd.endpoint, '--feature-gates', 'AllowUnsafeMalformedObjectDeletion=true'],
    dataDir ? { dataDir } : {},
  );
}

beforeAll(async () => {
  etcd = await startEtcd();
  server = await start();
  raw = new Etcd3({ hosts: etcd.endpoint });
});

afterAll(async () => {
  raw?.close();
  await server?.stop();
  await etcd?.stop();
});

const undecodable = (name: string) => new RegExp(`^Internal error occurred: unable to decode an object stored at /registry/replicasets/default/${name}: `);

test('an undecodable object: 500 on read and list, no block on restart, removable with the unsafe delete', async () => {
  for (const name of ['good', 'broken', 'seen']) expect((await call(server, 'POST', BASE, rs(name))).status).toBe(201);
  const watch = httpsStream(`${server.url}${BASE}?watch=true`, server.admin);
  await watch.opened;
  await watch.waitForLines(3);

  await raw.put('/registry/replicasets/default/broken').value(GARBAGE);
  await raw.put('/registry/replicasets/default/seen').value(GARBAGE);
  // Consistent reads and reads from the cache alike answer 500, once the cache has the change.
  const cached = await eventually(
    async () => {
      const r = await call(server, 'GET', `${BASE}/broken?resourceVersion=0`);
      return r.status !== 200 && r;
    },
    { what: 'the cache to have the change', timeoutMs: 2_000 },
  );
  const consistent = await call(server, 'GET', `${BASE}/broken`);
  for (const r of [cached, consistent]) {
    expect(r.status).toBe(500);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'InternalError' });
    expect(r.body.message).toMatch(undecodable('broken'));
  }
  expect((await call(server, 'GET', `${BASE}/good`)).status).toBe(200);
  const list = await call(server, 'GET', BASE);
  expect(list.status).toBe(500);
  expect(list.body.message).toMatch(undecodable('broken'));
  const update = await call(server, 'PUT', `${BASE}/broken`, rs('broken'));
  expect(update.status).toBe(500);

  // A restart loads the cache around them.
  await server.kill();
  server = await start(server.dataDir);
  expect((await call(server, 'GET', '/readyz')).status).toBe(200);
  expect((await call(server, 'GET', `${BASE}/good`)).status).toBe(200);
  expect((await call(server, 'GET', `${BASE}/broken?resourceVersion=0`)).body.message).toMatch(undecodable('broken'));

  // The unsafe delete removes each; a plain one still answers 500.
  expect((await call(server, 'DELETE', `${BASE}/broken`)).status).toBe(500);
  const unsafe = { kind: 'DeleteOptions', apiVersion: 'v1', ignoreStoreReadErrorWithClusterBreakingPotential: true };
  expect((await call(server, 'DELETE', `${BASE}/broken`, unsafe)).status).toBe(200);
  expect((await call(server, 'GET', `${BASE}/broken`)).status).toBe(404);
  expect((await call(server, 'GET', BASE)).status).toBe(500); // `seen` is still there

  // A watcher that saw `seen` good hears it leave.
  const after = httpsStream(`${server.url}${BASE}?watch=true`, server.admin);
  await after.opened;
  await after.waitForLines(1);
  expect(after.lines.map((l) => JSON.parse(l).object.metadata.name)).toEqual(['good']);
  expect((await call(server, 'DELETE', `${BASE}/seen`, unsafe)).status).toBe(200);
  const listed = await call(server, 'GET', BASE);
  expect(listed.status).toBe(200);
  expect(listed.body.items.map((o: any) => o.metadata.name)).toEqual(['good']);
  after.close();
  watch.close();
  summary('corrupt-data', { cachedGet: cached.status, consistentGet: consistent.status, list: list.status, restartReady: true, unsafeDelete: 200 });
});

test('on one server, a watcher that saw the object good hears it DELETED when it is removed while undecodable', async () => {
  expect((await call(server, 'POST', BASE, rs('twice'))).status).toBe(201);
  const watch = httpsStream(`${server.url}${BASE}?watch=true`, server.admin);
  await watch.opened;
  await watch.waitForLines(2); // good, twice
  await raw.put('/registry/replicasets/default/twice').value(GARBAGE);
  const r = await eventually(
    async () => {
      const answer = await call(server, 'GET', `${BASE}/twice?resourceVersion=0`);
      return answer.status !== 200 && answer;
    },
    { what: 'the cache to have the change', timeoutMs: 2_000 },
  );
  expect(r.status).toBe(500);
  const unsafe = { kind: 'DeleteOptions', apiVersion: 'v1', ignoreStoreReadErrorWithClusterBreakingPotential: true };
  expect((await call(server, 'DELETE', `${BASE}/twice`, unsafe)).status).toBe(200);
  await watch.waitForLines(3);
  expect(JSON.parse(watch.lines[2]!)).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'twice' } } });
  watch.close();
});
