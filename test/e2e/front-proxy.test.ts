/**
 * Keelson behind an authenticating proxy (docs/FRONT-PROXY.md): a server process started with
 * the `--requestheader-*` flags, and in front of it a small HTTPS proxy written here that logs
 * its own users in by bearer token and passes them on in `X-Remote-User`, `X-Remote-Group` and
 * `X-Remote-Extra-*`, presenting a front-proxy client certificate the test made. Unmodified
 * kubectl through the proxy is the proxy's user (`kubectl auth whoami`), RBAC decides what that
 * user may do, the same headers sent without the front proxy's certificate are not believed,
 * and the `extension-apiserver-authentication` ConfigMap tells extension servers all of it.
 */
import { execFile } from 'node:child_process';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { X509Certificate } from 'node:crypto';
import { API_ONLY, startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { httpsRequest } from '../gateway/support/https-client';
import { type TestPki, createTestPki } from '../grpc/fixtures/certs';
import { KUBECTL, kubectlFor } from './support/kubectl';
import { eventually } from '../support/eventually';
import { startServer as startLibraryServer } from '../../src/library';

const run = promisify(execFile);

/** The proxy's own users: a bearer token each, as an identity provider in front would give them. */
const PROXY_USERS: Record<string, { name: string; groups: string[]; extra: Record<string, string[]> }> = {
  'alice-token': { name: 'alice', groups: ['devs', 'on-call'], extra: { 'acme.com/team': ['platform'] } },
};

let dir: string;
let frontProxy: TestPki;
let proxyCert: { cert: string; key: string };
let proxyServing: TestPki;
let server: ServerProcess;
let proxy: https.Server;
let proxyUrl: string;
let aliceKubeconfig: string;
const admin = kubectlFor(() => server);

async function kubectlAsAlice(...args: string[]): Promise<{ ok: boolean; out: string }> {
  try {
    return { ok: true, out: (await run(KUBECTL, ['--kubeconfig', aliceKubeconfig, ...args], { timeout: 30_000 })).stdout };
  } catch (err) {
    return { ok: false, out: (err as { stderr?: string }).stderr ?? String(err) };
  }
}

/**
 * The authenticating proxy: a token it knows becomes the identity headers; every incoming
 * `Authorization` and `X-Remote-*` header is dropped first, so a client cannot name itself.
 */
function startProxy(upstream: URL, serverCa: string): Promise<https.Server> {
  const proxyServer = https.createServer({ cert: proxyServing.server.cert, key: proxyServing.server.key }, (req, res) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const user = token ? PROXY_USERS[token] : undefined;
    if (!user) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('the proxy does not know you');
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || name === 'authorization' || name === 'host' || name.startsWith('x-remote-')) continue;
      headers[name] = value;
    }
    headers['x-remote-user'] = user.name;
    headers['x-remote-group'] = user.groups;
    for (const [key, values] of Object.entries(user.extra)) headers[`x-remote-extra-${encodeURIComponent(key)}`] = values;
    const forwarded = https.request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, ca: serverCa, cert: proxyCert.cert, key: proxyCert.key },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', (err) => res.destroy(err));
    req.pipe(forwarded);
  });
  return new Promise((resolve) => proxyServer.listen(0, '127.0.0.1', () => resolve(proxyServer)));
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-front-proxy-'));
  [frontProxy, proxyServing] = await Promise.all([createTestPki('front-proxy-ca'), createTestPki('proxy-serving-ca')]);
  proxyCert = await frontProxy.issueClient('CN=front-proxy-client');
  const caFile = path.join(dir, 'front-proxy-ca.crt');
  await writeFile(caFile, frontProxy.ca);
  server = await startServerProcess([
    '--vendor',
    'kubernetes',
    ...API_ONLY,
    '--requestheader-client-ca-file',
    caFile,
    '--requestheader-allowed-names',
    'front-proxy-client',
    '--requestheader-username-headers',
    'X-Remote-User',
    '--requestheader-group-headers',
    'X-Remote-Group',
    '--requestheader-extra-headers-prefix',
    'X-Remote-Extra-',
  ]);
  proxy = await startProxy(new URL(server.url), server.admin.ca);
  proxyUrl = `https://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  aliceKubeconfig = path.join(dir, 'alice.kubeconfig');
  // The proxy logs its users in by bearer token, not by client certificate.
  const kubeconfig = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: through-proxy`,
    '  cluster:',
    `    server: ${proxyUrl}`,
    `    certificate-authority-data: ${Buffer.from(proxyServing.ca).toString('base64')}`,
    'users:',
    '- name: alice',
    '  user:',
    '    token: alice-token',
    'contexts:',
    '- name: alice',
    '  context: {cluster: through-proxy, user: alice}',
    'current-context: alice',
    '',
  ].join('\n');
  await writeFile(aliceKubeconfig, kubeconfig, { mode: 0o600 });
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

test("kubectl through the proxy is the proxy's user, with its groups and extra", async () => {
  expect(await readFile(aliceKubeconfig, 'utf8')).toContain('token: alice-token');
  const whoami = await kubectlAsAlice('auth', 'whoami', '-o', 'json');
  expect(whoami.ok).toBe(true);
  expect(JSON.parse(whoami.out).status.userInfo).toEqual({
    username: 'alice',
    groups: ['devs', 'on-call', 'system:authenticated'],
    extra: { 'acme.com/team': ['platform'] },
  });
});

test("RBAC decides what the proxy's user may do", async () => {
  const denied = await kubectlAsAlice('get', 'configmaps', '-n', 'default');
  expect(denied.ok).toBe(false);
  expect(denied.out).toContain('User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"');
  // A binding to one of the groups the proxy named is as good as one to the user.
  await admin('create', 'rolebinding', 'devs-view', '--clusterrole', 'view', '--group', 'devs', '-n', 'default');
  const allowed = await eventually(
    async () => {
      const r = await kubectlAsAlice('get', 'configmaps', '-n', 'default', '-o', 'name');
      return r.ok ? r : undefined;
    },
    { what: 'alice allowed to list configmaps', timeoutMs: 30_000, intervalMs: 250 },
  );
  expect(allowed.out).toBeDefined();
  const write = await kubectlAsAlice('create', 'configmap', 'nope', '-n', 'default');
  expect(write.ok).toBe(false);
  expect(write.out).toContain('User "alice" cannot create resource "configmaps"');
});

test("the identity headers are believed from the front proxy's certificate only", async () => {
  const review = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  const post = (tls: { cert?: string; key?: string }) =>
    httpsRequest(
      `${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      { ca: server.admin.ca, ...tls },
      { method: 'POST', headers: { 'content-type': 'application/json', 'x-remote-user': 'system:admin', 'x-remote-group': 'system:masters' }, body: review },
    );
  // No certificate: the headers are nothing; the request is anonymous (which may not even ask who it is).
  const anonymous = await post({});
  expect(anonymous.status).toBe(403);
  expect(JSON.parse(anonymous.body).message).toContain('User "system:anonymous" cannot create resource "selfsubjectreviews"');
  // The admin's own certificate: the admin, not whom the headers name.
  const asAdmin = await post({ cert: server.admin.cert, key: server.admin.key });
  expect(JSON.parse(asAdmin.body).status.userInfo.username).toBe('admin');
  // The front-proxy CA's certificate with a name not allowed: refused, and not an ordinary client either.
  const stranger = await post(await frontProxy.issueClient('CN=not-the-proxy'));
  expect(stranger.status).toBe(401);
  expect(JSON.parse(stranger.body)).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  // The front proxy's certificate: the headers name the user.
  const proxied = await post(proxyCert);
  expect(JSON.parse(proxied.body).status.userInfo).toEqual({ username: 'system:admin', groups: ['system:masters', 'system:authenticated'] });
});

test('the extension-apiserver-authentication ConfigMap tells extension servers whom to trust', async () => {
  const configMap = await eventually(
    async () => JSON.parse(await admin('get', 'configmap', 'extension-apiserver-authentication', '-n', 'kube-system', '-o', 'json')),
    {
      what: 'the ConfigMap published',
      timeoutMs: 30_000,
      intervalMs: 250,
    },
  );
  const data = configMap.data as Record<string, string>;
  const certs = (pem: string) =>
    (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((b) => new X509Certificate(b).fingerprint256);
  expect(certs(data['requestheader-client-ca-file']!)).toEqual(certs(frontProxy.ca));
  expect(certs(data['client-ca-file']!)).toContain(certs(await readFile(path.join(server.dataDir, 'ca.crt'), 'utf8'))[0]);
  expect(data['requestheader-allowed-names']).toBe('["front-proxy-client"]');
  expect(data['requestheader-username-headers']).toBe('["X-Remote-User"]');
  expect(data['requestheader-group-headers']).toBe('["X-Remote-Group"]');
  expect(data['requestheader-extra-headers-prefix']).toBe('["X-Remote-Extra-"]');
  expect(data['requestheader-uid-headers']).toBe('[]');
  // Upstream's reader role and binding for it, in the system namespace.
  expect(await admin('auth', 'can-i', 'get', 'configmaps/extension-apiserver-authentication', '-n', 'kube-system', '--as', 'system:kube-scheduler')).toBe(
    'yes\n',
  );
  const reader = await kubectlAsAlice('get', 'configmap', 'extension-apiserver-authentication', '-n', 'kube-system');
  expect(reader.ok).toBe(false);
});

test("the library's frontProxy option: the conventional headers, the proxy client pair loaded", async () => {
  const proxyClient = await frontProxy.issueClient('CN=aggregator');
  const lib = await startLibraryServer({ controllers: [], simulatedNodes: 0, frontProxy: { clientCa: frontProxy.ca }, proxyClient });
  try {
    const answer = await httpsRequest(
      `${lib.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      { ca: lib.ca, ...proxyCert },
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-remote-user': 'bob', 'x-remote-group': 'qa', 'x-remote-extra-scopes': 'read' },
        body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
      },
    );
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body).status.userInfo).toEqual({ username: 'bob', groups: ['qa', 'system:authenticated'], extra: { scopes: ['read'] } });
  } finally {
    await lib.stop();
  }
  // A key that is not the certificate's is refused at start, naming the flag.
  const other = await frontProxy.issueClient('CN=other');
  await expect(startLibraryServer({ proxyClient: { cert: proxyClient.cert, key: other.key } })).rejects.toThrow('--proxy-client-key-file: the key in');
});
