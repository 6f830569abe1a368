/**
 * TLS between Keelson and etcd: a real etcd serving clients over TLS only, with client
 * certificates required, and the real server reaching it with `--etcd-cafile`,
 * `--etcd-certfile` and `--etcd-keyfile` (kubectl works end to end). A client without the
 * certificate is refused by etcd.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEtcd, type EtcdInstance } from '../support/etcd';
import { createTestPki } from '../grpc/fixtures/certs';
import { createEtcdStore } from '../../src/store/etcd';
import { StoreError } from '../../src/store';
import { API_ONLY, startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { kubectlFor } from './support/kubectl';

let dir: string;
let etcd: EtcdInstance;
let server: ServerProcess;
const files = { ca: '', cert: '', key: '', clientCert: '', clientKey: '' };
let pem: { ca: string; clientCert: string; clientKey: string };

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-etcd-tls-'));
  const pki = await createTestPki('keelson-etcd-ca');
  const client = await pki.issueClient('CN=keelson-apiserver');
  pem = { ca: pki.ca, clientCert: client.cert, clientKey: client.key };
  for (const [name, content] of [
    ['ca', pki.ca],
    ['cert', pki.server.cert],
    ['key', pki.server.key],
    ['clientCert', client.cert],
    ['clientKey', client.key],
  ] as const) {
    files[name] = path.join(dir, `${name}.pem`);
    await writeFile(files[name], content);
  }
  etcd = await startEtcd({ tls: { certFile: files.cert, keyFile: files.key, caFile: files.ca, clientCert: client.cert, clientKey: client.key, ca: pki.ca } });
  server = await startServerProcess([
    '--vendor',
    'kubernetes',
    ...API_ONLY,
    '--etcd-servers',
    etcd.endpoint,
    '--etcd-cafile',
    files.ca,
    '--etcd-certfile',
    files.clientCert,
    '--etcd-keyfile',
    files.clientKey,
  ]);
});

afterAll(async () => {
  await server?.stop();
  await etcd?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('the server stores in etcd over mutual TLS', async () => {
  expect(etcd.endpoint).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  const kubectl = kubectlFor(() => server);
  expect(await kubectl('create', 'configmap', 'over-tls', '--from-literal=a=b')).toBe('configmap/over-tls created\n');
  expect(await kubectl('get', 'configmap', 'over-tls', '-o', 'jsonpath={.data.a}')).toBe('b');
  // What the server wrote is in etcd, read back by a second client with the same credentials.
  const store = createEtcdStore({ endpoints: [etcd.endpoint], tls: { ca: pem.ca, cert: pem.clientCert, key: pem.clientKey } });
  try {
    const { kv } = await store.get('/registry/configmaps/default/over-tls');
    expect(JSON.parse(Buffer.from(kv!.value).toString('utf8')).data).toEqual({ a: 'b' });
  } finally {
    await store.close();
  }
});

test('etcd refuses a client without the client certificate', async () => {
  const store = createEtcdStore({ endpoints: [etcd.endpoint], tls: { ca: pem.ca }, requestTimeoutMs: 3000 });
  try {
    await expect(store.get('/registry/configmaps/default/over-tls')).rejects.toBeInstanceOf(StoreError);
  } finally {
    await store.close();
  }
});
