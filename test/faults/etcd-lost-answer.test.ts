/**
 * A write whose answer is lost: the server process reaches etcd through a TCP proxy that lets
 * the write's request through and cuts the connection as etcd starts to answer, so etcd has
 * applied it and the server never hears. What the API does (docs/RELIABILITY.md, "The store's
 * etcd client"): it answers 503 (storage unavailable) and makes no second write. The write is
 * there, once: a read shows it, and a client that sends it again is told it is already done
 * (409), as with upstream's etcd client. The same for an update and a delete.
 *
 * And what the API answers for objects at etcd's edges: over etcd's request limit, and over the
 * client's send limit.
 */
import { Etcd3 } from 'etcd3';
import { API_ONLY, startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { startEtcd, type EtcdInstance } from '../support/etcd';
import { eventually } from '../support/eventually';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { call, FAULT_TIMEOUT_MS, FULL, summary } from './support';

jest.setTimeout(FAULT_TIMEOUT_MS);

const ROUNDS = FULL ? 20 : 3;
const NS = 'default';
const BASE = `/api/v1/namespaces/${NS}/configmaps`;

let etcd: EtcdInstance;
let proxy: TcpProxy;
let server: ServerProcess;
let raw: Etcd3;

beforeAll(async () => {
  etcd = await startEtcd();
  proxy = await startTcpProxy(etcd.endpoint);
  server = await startServerProcess(['--vendor', 'kubernetes', ...API_ONLY, '--disable-admission-plugins', 'ServiceAccount', '--etcd-servers', proxy.endpoint]);
  raw = new Etcd3({ hosts: etcd.endpoint });
});

afterAll(async () => {
  await server?.stop();
  raw?.close();
  await proxy?.close();
  await etcd?.stop();
});

/** The key as etcd holds it: its value's data, and how many times it was written since created. */
async function inEtcd(name: string): Promise<{ data: unknown; version: number; createRevision: number; modRevision: number } | undefined> {
  const res = await raw.kv.range({ key: Buffer.from(`/registry/configmaps/${NS}/${name}`) });
  const kv = res.kvs[0];
  if (!kv) return undefined;
  return {
    data: JSON.parse(kv.value.toString()).data,
    version: Number(kv.version),
    createRevision: Number(kv.create_revision),
    modRevision: Number(kv.mod_revision),
  };
}

/**
 * Sends `request` with the proxy set to cut the connection once etcd answers the write of `name`:
 * a transaction or delete (by the method its HEADERS name) whose message names the key; a read of
 * the key, or another write sent alongside, passes.
 */
async function withAnswerLost<T>(name: string, request: () => Promise<T>): Promise<T> {
  const key = Buffer.from(`/registry/configmaps/${NS}/${name}`);
  const writes = [Buffer.from('/etcdserverpb.KV/Txn'), Buffer.from('/etcdserverpb.KV/DeleteRange')];
  const cut = proxy.cutAfterRequest({
    headers: (block) => writes.some((method) => block.includes(method)),
    message: (payload) => payload.includes(key),
  });
  const answer = await request();
  await cut;
  return answer;
}

/** The server is back on etcd (its next connection): a read answers. */
const ready = () => eventually(async () => (await call(server, 'GET', BASE)).status === 200, { what: 'the server to reach etcd again', timeoutMs: 30_000 });

test(`a write whose answer is lost is answered 503 and is there once: create, update and delete (${ROUNDS} rounds)`, async () => {
  const figures = {
    creates: 0,
    updates: 0,
    deletes: 0,
    answered: {} as Record<string, number>,
    retriedCreatesAnswered: {} as Record<string, number>,
    message: '',
  };
  const count = (into: Record<string, number>, status: number) => (into[status] = (into[status] ?? 0) + 1);
  for (let round = 0; round < ROUNDS; round++) {
    const name = `lost-${round}`;
    await ready();
    // Create: applied, the answer lost.
    const created = await withAnswerLost(name, () => call(server, 'POST', BASE, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: '1' } }));
    count(figures.answered, created.status);
    figures.creates++;
    expect(created.status).toBe(503);
    figures.message = created.body.message;
    expect(created.body).toMatchObject({
      kind: 'Status',
      reason: 'ServiceUnavailable',
      message: expect.stringContaining('storage is unavailable: etcd is unavailable'),
    });
    expect(await inEtcd(name)).toMatchObject({ data: { v: '1' }, version: 1 });
    await ready();
    // The truth, read back; a client that sends the create again is told it exists.
    const read = await call(server, 'GET', `${BASE}/${name}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual({ v: '1' });
    const again = await call(server, 'POST', BASE, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: '1' } });
    count(figures.retriedCreatesAnswered, again.status);
    expect(again.status).toBe(409);
    const stored = await inEtcd(name);
    expect(stored).toMatchObject({ version: 1 });
    expect(stored!.modRevision).toBe(stored!.createRevision);

    // Update, guarded by the resourceVersion read: applied once; sent again, a conflict.
    const rv = read.body.metadata.resourceVersion;
    const update = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, resourceVersion: rv }, data: { v: '2' } };
    const updated = await withAnswerLost(name, () => call(server, 'PUT', `${BASE}/${name}`, update));
    count(figures.answered, updated.status);
    figures.updates++;
    expect(updated.status).toBe(503);
    expect(await inEtcd(name)).toMatchObject({ data: { v: '2' }, version: 2 });
    await ready();
    expect((await call(server, 'PUT', `${BASE}/${name}`, update)).status).toBe(409);
    expect(await inEtcd(name)).toMatchObject({ version: 2 });

    // Delete: gone, once; sent again, not found.
    const deleted = await withAnswerLost(name, () => call(server, 'DELETE', `${BASE}/${name}`));
    count(figures.answered, deleted.status);
    figures.deletes++;
    expect(deleted.status).toBe(503);
    expect(await inEtcd(name)).toBeUndefined();
    await ready();
    expect((await call(server, 'DELETE', `${BASE}/${name}`)).status).toBe(404);
  }
  summary('etcd-lost-answer', { rounds: ROUNDS, ...figures, proxiedConnections: proxy.connections });
});

test("objects at etcd's limits: over its request limit, and over the client's send limit, are answered 500 with etcd's or gRPC's words, and not retried", async () => {
  await ready();
  // A pod: a ConfigMap's data is validated to 1 MiB before it could reach etcd's limit.
  const big = (name: string, bytes: number) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'busybox', args: ['x'.repeat(bytes)] }] },
  });
  const pods = `/api/v1/namespaces/${NS}/pods`;
  const before = proxy.bytesUp;
  const overEtcd = await call(server, 'POST', pods, big('over-etcd-limit', 1_600_000));
  expect(overEtcd.status).toBe(500);
  expect(overEtcd.body).toMatchObject({ kind: 'Status', message: 'etcdserver: request is too large' });
  expect(proxy.bytesUp - before).toBeGreaterThan(1_600_000); // sent, and refused by etcd
  const sent = proxy.bytesUp;
  const overClient = await call(server, 'POST', pods, big('over-client-limit', 2_200_000));
  expect(overClient.status).toBe(500);
  expect(overClient.body.message).toMatch(/^rpc error: code = ResourceExhausted desc = trying to send message larger than max \(\d+ vs\. 2097152\)$/);
  expect(proxy.bytesUp - sent).toBeLessThan(64 * 1024); // refused before sending
  expect((await raw.kv.range({ key: Buffer.from(`/registry/pods/${NS}/`), range_end: Buffer.from(`/registry/pods/${NS}0`) })).kvs).toEqual([]);
});
