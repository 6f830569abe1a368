/**
 * The etcd client on its worker thread (etcd-client-thread.ts), against a real etcd and the
 * compiled worker entry the server runs: answers, watch events and failures cross unchanged;
 * reads stay in the calling thread; a thread that dies ends what it carried as UNAVAILABLE and
 * the next call starts another; it holds the process only while a call or watch is open.
 * The store conformance suite runs over it as well (conformance.test.ts).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Compare_CompareResult, Compare_CompareTarget, type WatchResponse } from '../../src/gen/etcd/etcdserverpb/rpc';
import { GrpcCode } from '../../src/status';
import { EtcdCallError, EtcdClient, MAX_SEND_BYTES } from '../../src/store/etcd-client';
import { EtcdClientThread } from '../../src/store/etcd-client-thread';
import { compiledFile, etcdClientWorker } from '../support/compiled';
import { startEtcd, type EtcdInstance } from '../support/etcd';

const run = promisify(execFile);
let etcd: EtcdInstance;
let workerFile: string;
const clients: Array<{ close(): void }> = [];

function options() {
  return { endpoints: [etcd.endpoint], timeoutMs: 10_000 };
}

function threadClient(): EtcdClientThread {
  const client = new EtcdClientThread(options(), workerFile);
  clients.push(client);
  return client;
}

const key = (name: string) => Buffer.from(`/thread-test/${name}`);

function createIfAbsent(name: string, value: string) {
  return {
    compare: [{ key: key(name), target: Compare_CompareTarget.CREATE, result: Compare_CompareResult.EQUAL, createRevision: 0, rangeEnd: Buffer.alloc(0) }],
    success: [{ requestPut: { key: key(name), value: Buffer.from(value), lease: 0, prevKv: false } }],
    failure: [],
  };
}

beforeAll(async () => {
  workerFile = etcdClientWorker();
  etcd = await startEtcd();
}, 120_000);

afterAll(async () => {
  for (const client of clients) client.close();
  await etcd?.stop();
});

it('answers calls and delivers watch events as the in-thread client does', async () => {
  const client = threadClient();
  const responses: WatchResponse[] = [];
  const watch = client.watch(
    { key: key('a'), rangeEnd: Buffer.alloc(0), startRevision: 0, prevKv: true },
    { onResponse: (r) => responses.push(r), onEnd: () => {} },
  );
  await waitFor(() => responses.length > 0); // the created response
  const first = await client.txn(createIfAbsent('a', 'one'));
  const again = await client.txn(createIfAbsent('a', 'two'));
  expect(first.succeeded).toBe(true);
  expect(again.succeeded).toBe(false);
  await waitFor(() => responses.some((r) => r.events.length > 0));
  const event = responses.find((r) => r.events.length > 0)!.events[0]!;
  expect(Buffer.from(event.kv!.key).toString()).toBe('/thread-test/a');
  expect(Buffer.from(event.kv!.value).toString()).toBe('one');
  expect(event.kv!.modRevision).toBe(first.header!.revision);
  const read = await client.range({ key: key('a'), rangeEnd: Buffer.alloc(0), limit: 0, revision: 0, serializable: false, keysOnly: false, countOnly: false });
  expect(Buffer.from(read.kvs[0]!.value).toString()).toBe('one');
  watch.cancel();
});

it('fails a call with the gRPC code and message the in-thread client gives', async () => {
  const big = { ...createIfAbsent('big', ''), success: [{ requestPut: { key: key('big'), value: Buffer.alloc(MAX_SEND_BYTES + 1), lease: 0, prevKv: false } }] };
  const inThread = new EtcdClient(options());
  clients.push(inThread);
  const expected = await inThread.txn(big).catch((err: unknown) => err);
  const crossed = await threadClient().txn(big).catch((err: unknown) => err);
  expect(expected).toBeInstanceOf(EtcdCallError);
  expect(crossed).toBeInstanceOf(EtcdCallError);
  expect(crossed).toMatchObject({ code: GrpcCode.RESOURCE_EXHAUSTED, message: (expected as EtcdCallError).message });
});

it('fails a request that cannot be encoded as the in-thread client does, and goes on', async () => {
  const client = threadClient();
  const unencodable = { ...createIfAbsent('unencodable', 'x'), compare: [{ key: 42 }] } as unknown as ReturnType<typeof createIfAbsent>;
  const inThread = new EtcdClient(options());
  clients.push(inThread);
  const expected = await inThread.txn(unencodable).catch((err: unknown) => err);
  expect(expected).toBeInstanceOf(Error);
  await expect(client.txn(unencodable)).rejects.toThrow((expected as Error).message);
  expect((await client.txn(createIfAbsent('encodable', 'x'))).succeeded).toBe(true);
});

describe('the thread', () => {
  it('is not started for reads, which stay in the calling thread', async () => {
    const client = threadClient();
    await client.range({ key: key('none'), rangeEnd: Buffer.alloc(0), limit: 0, revision: 0, serializable: false, keysOnly: false, countOnly: true });
    await client.range({ key: key('none'), rangeEnd: Buffer.alloc(0), limit: 0, revision: 0, serializable: false, keysOnly: false, countOnly: true }, true);
    expect(client.thread).toBeUndefined();
    await client.txn(createIfAbsent('started', 'x'));
    expect(client.thread).toBeDefined();
  });

  it('ends its watches as UNAVAILABLE when it dies, and the next call starts another', async () => {
    const client = threadClient();
    const ended: EtcdCallError[] = [];
    let created = false;
    client.watch(
      { key: key('w'), rangeEnd: Buffer.alloc(0), startRevision: 0, prevKv: false },
      { onResponse: () => (created = true), onEnd: (err) => ended.push(err) },
    );
    await waitFor(() => created);
    const first = client.thread!;
    await first.terminate();
    await waitFor(() => ended.length > 0);
    expect(ended[0]).toBeInstanceOf(EtcdCallError);
    expect(ended[0]).toMatchObject({ code: GrpcCode.UNAVAILABLE, message: expect.stringContaining('etcd client thread exited') });
    expect(client.thread).toBeUndefined();
    expect((await client.txn(createIfAbsent('after', 'x'))).succeeded).toBe(true);
    expect(client.thread).toBeDefined();
    expect(client.thread).not.toBe(first);
  });

  it('fails what is open when closed, and every call after', async () => {
    const client = threadClient();
    const ended: EtcdCallError[] = [];
    client.watch(
      { key: key('c'), rangeEnd: Buffer.alloc(0), startRevision: 0, prevKv: false },
      { onResponse: () => {}, onEnd: (err) => ended.push(err) },
    );
    const pending = client.txn(createIfAbsent('closing', 'x')).catch((err: unknown) => err);
    client.close();
    expect(ended).toEqual([expect.objectContaining({ code: GrpcCode.UNAVAILABLE, message: 'etcd client is closed' })]);
    expect(await pending).toMatchObject({ code: GrpcCode.UNAVAILABLE, message: 'etcd client is closed' });
    await expect(client.txn(createIfAbsent('closed', 'x'))).rejects.toMatchObject({ code: GrpcCode.CANCELLED });
  });
});

it('holds the process while a watch is open, and not once idle', async () => {
  // The compiled store, as `npm start` uses it: its client is on the worker thread by default.
  const store = compiledFile('src/store/index');
  const script = `
    const { createStore } = require(${JSON.stringify(store)});
    const store = createStore({ kind: 'etcd', endpoints: [${JSON.stringify(etcd.endpoint)}] });
    const mode = process.argv[1];
    store.create('/thread-test/held-' + mode + '-' + Date.now(), Buffer.from('x')).then(() => {
      if (mode === 'idle') return process.stdout.write('idle;');
      // Nothing but the watch holds the process from here: it must still be alive to close it.
      store.watch('/thread-test/', {}, { onEvents() {}, onError() {} });
      setTimeout(() => { process.stdout.write('alive;'); store.close(); }, 300).unref();
    });
  `;
  const idle = await run(process.execPath, ['-e', script, 'idle'], { timeout: 20_000 });
  expect(idle.stdout).toBe('idle;');
  const watching = await run(process.execPath, ['-e', script, 'watch'], { timeout: 20_000 });
  expect(watching.stdout).toBe('alive;');
}, 60_000);

async function waitFor(condition: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
