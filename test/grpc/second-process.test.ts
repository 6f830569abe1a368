/**
 * The gRPC door end to end: a real core on an embedded store runs in a second process
 * (fixtures/serve-core.ts) and this process reaches it only through createGrpcCoreClient.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { ApiObject, RequestContext, ResourceTarget, WatchEvent, WatchStream } from '../../src/core/api';
import { createGrpcCoreClient, type GrpcCoreClient, type GrpcServerTlsOptions } from '../../src/grpc';
import { StatusError } from '../../src/status';
import { createTestPki, type TestPki } from './fixtures/certs';

const ROOT = path.resolve(__dirname, '../..');
const FIXTURE = path.join(__dirname, 'fixtures/serve-core.ts');

interface CoreProcess {
  address: string;
  stop(): Promise<void>;
}

/** Starts the fixture and resolves with the address it printed. */
function startCoreProcess(tls?: GrpcServerTlsOptions): Promise<CoreProcess> {
  const env = { ...process.env };
  if (tls) env.KEELSON_TEST_GRPC_TLS = JSON.stringify(tls);
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['-r', '@swc-node/register', FIXTURE], {
    cwd: ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let stopping = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', (code) => {
    // A crash of the core process explains every later failure: show why it died.
    if (!stopping) console.error(`core process exited with ${code}:\n${stderr}`);
  });
  const stop = async () => {
    stopping = true;
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      const { address } = JSON.parse(line) as { address: string };
      resolve({ address, stop });
    });
    child.once('exit', (code) => reject(new Error(`core process exited with ${code} before serving:\n${stderr}`)));
  });
}

function context(): RequestContext & { warnings: string[] } {
  return { user: { username: 'alice', groups: ['system:masters', 'system:authenticated'] }, userAgent: 'grpc-test', warnings: [] };
}

const configMaps = (name?: string): ResourceTarget => ({
  group: '',
  version: 'v1',
  resource: 'configmaps',
  namespace: 'default',
  ...(name !== undefined ? { name } : {}),
});

function configMap(name: string, data: Record<string, string>): ApiObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data };
}

/** Reads events until `count` arrived (or fails the test after a while). */
async function take(stream: WatchStream, count: number): Promise<WatchEvent[]> {
  const events: WatchEvent[] = [];
  const iterator = stream[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${events.length} events`)), 15_000);
  });
  try {
    while (events.length < count) {
      const next = await Promise.race([iterator.next(), timeout]);
      if (next.done) break;
      events.push(next.value);
    }
  } finally {
    clearTimeout(timer);
  }
  return events;
}

async function expectStatusError(promise: Promise<unknown>): Promise<StatusError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StatusError);
  return err as StatusError;
}

describe('core served over gRPC from a second process', () => {
  let core: CoreProcess;
  let client: GrpcCoreClient;

  beforeAll(async () => {
    core = await startCoreProcess();
    client = createGrpcCoreClient(core.address);
  });

  afterAll(async () => {
    client?.close();
    await core?.stop();
  });

  it('serves on the address it reports', () => {
    expect(core.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(core.address).not.toMatch(/:0$/);
  });

  it('creates, gets and lists a namespaced object', async () => {
    const ctx = context();
    const created = await client.create(configMaps(), configMap('first', { a: '1' }), {}, ctx);
    expect(created.created).toBe(true);
    expect(created.object).toMatchObject({
      kind: 'ConfigMap',
      metadata: { name: 'first', namespace: 'default', uid: expect.any(String), resourceVersion: expect.stringMatching(/^\d+$/) },
      data: { a: '1' },
    });

    const got = await client.get(configMaps('first'), {}, ctx);
    expect(got).toEqual(created.object);

    const list = await client.list(configMaps(), {}, ctx);
    expect(list.kind).toBe('ConfigMapList');
    expect(list.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(list.items.map((item) => item.metadata?.name)).toContain('first');
  });

  it('streams ADDED and MODIFIED events for a create and an update', async () => {
    const ctx = context();
    const start = await client.list(configMaps(), {}, ctx);
    const stream = await client.watch(configMaps(), { resourceVersion: start.metadata.resourceVersion }, ctx);
    try {
      const created = await client.create(configMaps(), configMap('watched', { v: '1' }), {}, ctx);
      const updated = await client.update(configMaps('watched'), { ...created.object, data: { v: '2' } }, {}, ctx);
      expect(updated.created).toBe(false);
      const events = await take(stream, 2);
      expect(events.map((e) => [e.type, e.type === 'ERROR' ? e.object.message : e.object.metadata?.name])).toEqual([
        ['ADDED', 'watched'],
        ['MODIFIED', 'watched'],
      ]);
      expect(events[1].object).toEqual(updated.object);
    } finally {
      stream.close();
    }
  });

  it('ends iteration when the consumer closes the watch', async () => {
    const stream = await client.watch(configMaps(), { resourceVersion: '0' }, context());
    const iterator = stream[Symbol.asyncIterator]();
    const pending = iterator.next();
    // resourceVersion 0 starts with the existing objects as ADDED events; read on until it idles.
    stream.close();
    let result = await pending;
    while (!result.done) result = await iterator.next();
    expect(result.done).toBe(true);
  });

  it('answers an update with a stale resourceVersion with 409 Conflict, details intact', async () => {
    const ctx = context();
    const created = await client.create(configMaps(), configMap('contended', { v: '1' }), {}, ctx);
    await client.update(configMaps('contended'), { ...created.object, data: { v: '2' } }, {}, ctx);
    const err = await expectStatusError(client.update(configMaps('contended'), { ...created.object, data: { v: '3' } }, {}, ctx));
    expect(err.status).toStrictEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'Operation cannot be fulfilled on configmaps "contended": the object has been modified; please apply your changes to the latest version and try again',
      reason: 'Conflict',
      details: { name: 'contended', group: '', kind: 'configmaps' },
      code: 409,
    });
  });

  it('answers a body whose kind is not a string with 400, as Go reads it', async () => {
    const ctx = context();
    const err = await expectStatusError(
      client.create(configMaps(), { apiVersion: 'v1', kind: { not: 'a string' }, metadata: { name: 'odd' } } as never, {}, ctx),
    );
    expect(err.status).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: "couldn't get version/kind; json parse error: json: cannot unmarshal object into Go struct field .kind of type string",
    });
  });

  it("answers a get of a missing object with 404 NotFound and upstream's message", async () => {
    const err = await expectStatusError(client.get(configMaps('x'), {}, context()));
    expect(err.code).toBe(404);
    expect(err.reason).toBe('NotFound');
    expect(err.message).toBe('configmaps "x" not found');
    expect(err.status.details).toEqual({ name: 'x', group: '', kind: 'configmaps' });
  });

  it('rejects watch() itself when the core refuses the watch', async () => {
    const err = await expectStatusError(client.watch({ group: '', version: 'v1', resource: 'nosuchthings', namespace: 'default' }, {}, context()));
    expect(err.code).toBe(404);
  });

  it('deletes an object', async () => {
    const ctx = context();
    await client.create(configMaps(), configMap('doomed', {}), {}, ctx);
    const result = await client.delete(configMaps('doomed'), {}, ctx);
    expect(result.httpStatus).toBe(200);
    await expectStatusError(client.get(configMaps('doomed'), {}, ctx));
  });
});

describe('core served over mutual TLS from a second process', () => {
  let pki: TestPki;
  let core: CoreProcess;

  beforeAll(async () => {
    pki = await createTestPki();
    core = await startCoreProcess({ key: pki.server.key, cert: pki.server.cert, ca: pki.ca, requireClientCert: true });
  });

  afterAll(async () => {
    await core?.stop();
  });

  it('serves a client that trusts the CA and presents a client certificate', async () => {
    // serverName: the certificate also names `localhost`; verifying against it avoids TLS SNI with an IP address.
    const client = createGrpcCoreClient(core.address, {
      tls: { ca: pki.ca, cert: pki.client.cert, key: pki.client.key, serverName: 'localhost' },
    });
    try {
      const ctx = context();
      await client.create(configMaps(), configMap('over-tls', { secure: 'yes' }), {}, ctx);
      expect(await client.get(configMaps('over-tls'), {}, ctx)).toMatchObject({ data: { secure: 'yes' } });
      const err = await expectStatusError(client.get(configMaps('absent'), {}, ctx));
      expect(err.reason).toBe('NotFound');
    } finally {
      client.close();
    }
  });

  it('refuses a client without a certificate, as 503 ServiceUnavailable', async () => {
    const client = createGrpcCoreClient(core.address, { tls: { ca: pki.ca, serverName: 'localhost' } });
    try {
      const err = await expectStatusError(client.get(configMaps('x'), {}, context()));
      expect(err.status).toMatchObject({ code: 503, reason: 'ServiceUnavailable' });
    } finally {
      client.close();
    }
  });

  it('refuses a plaintext client', async () => {
    const client = createGrpcCoreClient(core.address);
    try {
      const err = await expectStatusError(client.get(configMaps('x'), {}, context()));
      expect(err.code).toBe(503);
    } finally {
      client.close();
    }
  });
});
