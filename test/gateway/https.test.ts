/**
 * The gateway over a real HTTPS socket, in process, with the real PKI: client-certificate
 * authentication (admin, anonymous, a foreign CA), and watch streaming with a client that goes
 * away. The core is a recording double.
 */
import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createNaming } from '../../src/naming';
import { type RunningServer, keelsonVersion, startGateway } from '../../src/gateway';
import { type Pki, ensurePki } from '../../src/server/pki';
import { testDefinitions } from './support/definitions';
import { type ClientTls, httpsRequest, httpsStream } from './support/https-client';
import { PushWatch, RecordingCore } from './support/recording-core';
import { eventually } from '../support/eventually';

const naming = createNaming('kubernetes');
let dir: string;
let otherDir: string;
let pki: Pki;
let foreign: Pki;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-https-'));
  otherDir = await mkdtemp(path.join(os.tmpdir(), 'keelson-https-other-'));
  pki = await ensurePki({ dataDir: dir });
  foreign = await ensurePki({ dataDir: otherDir });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(otherDir, { recursive: true, force: true });
});

describe.each(['express', 'node'] as const)('gateway over HTTPS (%s adapter)', (adapter) => {
  let server: RunningServer;
  let core: RecordingCore;
  let base: string;
  let admin: ClientTls;

  beforeAll(async () => {
    core = new RecordingCore();
    server = await startGateway({
      core,
      resources: testDefinitions(naming),
      naming,
      health: { livez: [{ name: 'ping', check: () => {} }], readyz: [{ name: 'ping', check: () => {} }], healthz: [] },
      version: keelsonVersion(),
      tls: { cert: pki.servingCert, key: pki.servingKey, clientCa: pki.caCert },
      host: '127.0.0.1',
      port: 0,
      adapter,
    });
    base = `https://127.0.0.1:${server.port}`;
    admin = { ca: pki.caCert, cert: pki.adminCert, key: pki.adminKey };
  });

  afterAll(async () => {
    await server.close();
  });

  it('authenticates the admin client certificate', async () => {
    const res = await httpsRequest(`${base}/api`, admin);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'APIVersions', serverAddressByClientCIDRs: [{ serverAddress: `127.0.0.1:${server.port}` }] });
  });

  it('treats a client without a certificate as anonymous', async () => {
    expect((await httpsRequest(`${base}/version`, { ca: pki.caCert })).status).toBe(200);
    const res = await httpsRequest(`${base}/api`, { ca: pki.caCert });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).message).toBe('forbidden: User "system:anonymous" cannot get path "/api"');
  });

  it('answers 401 to a certificate from another CA', async () => {
    const res = await httpsRequest(`${base}/version`, { ca: pki.caCert, cert: foreign.adminCert, key: foreign.adminKey });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  it('reads request bodies and answers 201 for create', async () => {
    const res = await httpsRequest(`${base}/api/v1/namespaces/ns/configmaps`, admin, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'x' } }),
    });
    expect(res.status).toBe(201);
    expect(core.last).toMatchObject({ method: 'create', args: [{ kind: 'ConfigMap', metadata: { name: 'x' } }, {}] });
    expect(core.last.ctx.user).toEqual({ username: 'admin', groups: ['system:masters', 'system:authenticated'] });
  });

  it('streams watch events as they happen and stops when the client leaves', async () => {
    core.watchStream = new PushWatch();
    const watch = httpsStream(`${base}/api/v1/namespaces/ns/pods?watch=true`, admin);
    await watch.opened;
    expect(watch.status).toBe(200);
    expect(watch.headers['content-type']).toBe('application/json');
    expect(watch.headers['transfer-encoding']).toBe('chunked');
    core.watchStream.push({ type: 'ADDED', object: { kind: 'Pod', metadata: { name: 'a' } } });
    await watch.waitForLines(1);
    core.watchStream.push({ type: 'MODIFIED', object: { kind: 'Pod', metadata: { name: 'a' } } });
    await watch.waitForLines(2);
    expect(watch.lines.map((l) => JSON.parse(l).type)).toEqual(['ADDED', 'MODIFIED']);
    watch.close();
    await eventually(() => core.watchStream.closed, { what: 'the core watch to close' });
  });

  it("streams a large list to curl indented (upstream's pretty output for curl), chunked rather than made whole", async () => {
    core.listItems = Array.from({ length: 2_000 }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `p-${i}`, namespace: 'ns', labels: { app: 'x' } },
      spec: { containers: [{ name: 'c', image: 'registry.example/x:1' }] },
    }));
    try {
      const res = await httpsRequest(`${base}/api/v1/namespaces/ns/pods`, admin, { headers: { 'user-agent': 'curl/8.5.0' } });
      expect(res.status).toBe(200);
      expect(res.headers['transfer-encoding']).toBe('chunked');
      expect(res.headers['content-length']).toBeUndefined();
      const list = JSON.parse(res.body) as { items: unknown[] };
      expect(list.items).toHaveLength(2_000);
      expect(res.body).toBe(JSON.stringify(list, null, 2));
    } finally {
      core.listItems = [];
    }
  });

  it('serves HEAD without a body', async () => {
    const res = await httpsRequest(`${base}/api/v1/namespaces/ns/pods/p`, admin, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.body).toBe('');
  });
});
