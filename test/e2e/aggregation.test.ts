/**
 * The aggregation layer end to end (issue 55): a real extension API server on loopback
 * (test/support/extension-apiserver.ts: HTTPS, a serving certificate for `api.wardle.svc`,
 * requiring the front-proxy client certificate) registered through an ExternalName Service and
 * an APIService with its caBundle, in a library server started with `--proxy-client-cert-file`.
 * kubectl 1.32 lists the extension's resources and its APIService; the proxy carries the
 * caller's identity, refuses a caller without permission before the extension sees it, streams
 * a watch, a large body and an upgraded connection (bytes both ways, as exec and port-forward
 * through an extension use it); discovery (legacy and aggregated, with the fallback) and OpenAPI v2/v3 are merged; a
 * backend that hangs, sends garbage or is gone answers 503 without touching other groups; the
 * group goes with its APIService. The server's clock is a ManualClock: the proxy's timeout and
 * the availability controller's resync run when the test advances it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import tls from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ManualClock, startServer, type RunningServer } from '../../src/library';
import { type ExtensionServer, FRONT_PROXY_CLIENT, startExtensionServer, WARDLE_GROUP } from '../support/extension-apiserver';
import { eventually } from '../support/eventually';
import { KUBECTL } from './support/kubectl';

const run = promisify(execFile);
const GV = `${WARDLE_GROUP}/v1alpha1`;
const API_SERVICE = `v1alpha1.${WARDLE_GROUP}`;

let server: RunningServer;
let ext: ExtensionServer;
let dir: string;
const clock = new ManualClock(Date.now());

async function kubectl(...args: string[]): Promise<string> {
  try {
    return (await run(KUBECTL, ['--kubeconfig', server.kubeconfigPath, ...args], { timeout: 30_000 })).stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')} failed: ${e.stderr ?? e.message}`);
  }
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request to Keelson as `who` (default the admin). */
function request(
  pathAndQuery: string,
  options: { who?: { cert: string; key: string }; accept?: string; method?: string; body?: string } = {},
): Promise<Answer> {
  const who = options.who ?? server.adminCredentials;
  const url = new URL(pathAndQuery, server.url);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: options.method ?? 'GET',
        ca: server.ca,
        cert: who.cert,
        key: who.key,
        headers: { Accept: options.accept ?? 'application/json', ...(options.body ? { 'Content-Type': 'application/json' } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A connection that asked to upgrade: the answer's head, then what follows on it. */
interface Upgraded {
  status: number;
  head: string;
  socket: tls.TLSSocket;
  /** Resolves with what arrived after the head once it holds `text` (or the connection closed). */
  read(text: string): Promise<string>;
  /** The answer's body once the connection closed (a chunked one decoded). */
  body(): Promise<string>;
  closed: Promise<void>;
}

/** Ask Keelson to switch protocols on `path`, as `who`, writing the request by hand as client-go's SPDY and websocket dialers do. */
async function upgradeRequest(
  pathAndQuery: string,
  options: { who?: { cert: string; key: string }; method?: string; protocol?: string; body?: string } = {},
): Promise<Upgraded> {
  const who = options.who ?? server.adminCredentials;
  const url = new URL(server.url);
  const socket = tls.connect({ host: url.hostname, port: Number(url.port), ca: server.ca, cert: who.cert, key: who.key });
  let received = Buffer.alloc(0);
  let ended = false;
  let wake = () => {};
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    wake();
  });
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      ended = true;
      wake();
      resolve();
    }),
  );
  socket.on('error', () => undefined);
  const until = (done: () => boolean) =>
    new Promise<void>((resolve) => {
      wake = () => (done() || ended) && resolve();
      wake();
    });
  const body = options.body ?? '';
  socket.write(
    `${options.method ?? 'POST'} ${pathAndQuery} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: Upgrade\r\nUpgrade: ${options.protocol ?? 'SPDY/3.1'}\r\n` +
      `X-Stream-Protocol-Version: v4.channel.k8s.io\r\n${body ? `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : ''}\r\n${body}`,
  );
  await until(() => received.includes('\r\n\r\n'));
  const at = received.indexOf('\r\n\r\n');
  const head = received.subarray(0, at).toString('latin1');
  const rest = () => received.subarray(at + 4).toString('utf8');
  return {
    status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]),
    head,
    socket,
    closed,
    read: async (text) => {
      await until(() => rest().includes(text));
      return rest();
    },
    body: async () => {
      await closed;
      if (!/\r\nTransfer-Encoding: chunked(\r\n|$)/i.test(head)) return rest();
      let chunked = received.subarray(at + 4);
      const parts: Buffer[] = [];
      for (;;) {
        const line = chunked.indexOf('\r\n');
        const size = Number.parseInt(chunked.subarray(0, line).toString('latin1'), 16);
        if (!(size > 0)) return Buffer.concat(parts).toString('utf8');
        parts.push(chunked.subarray(line + 2, line + 2 + size));
        chunked = chunked.subarray(line + 2 + size + 2);
      }
    },
  };
}

async function apiService(): Promise<{ status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } }> {
  return JSON.parse(await kubectl('get', 'apiservice', API_SERVICE, '-o', 'json'));
}

async function availability(): Promise<string> {
  const available = (await apiService()).status?.conditions?.find((c) => c.type === 'Available');
  return `${available?.status} ${available?.reason}`;
}

/** An APIService `<version>.<group>` served by `service`, trusted through the CA `ca` (PEM). */
function apiServiceOf(group: string, version: string, service: { namespace: string; name: string; port: number }, ca: string) {
  return {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: `${version}.${group}` },
    spec: { group, version, service, caBundle: Buffer.from(ca).toString('base64'), groupPriorityMinimum: 1000, versionPriority: 15 },
  };
}

function registration(port: number) {
  return apiServiceOf(WARDLE_GROUP, 'v1alpha1', { namespace: 'wardle', name: 'api', port }, ext.servingCa);
}

/** `kubectl apply -f` of one object written to a file named after it. */
async function applyObject(obj: { metadata: { name: string } }): Promise<void> {
  const file = path.join(dir, `${obj.metadata.name}.json`);
  await writeFile(file, JSON.stringify(obj));
  await kubectl('apply', '-f', file);
}

beforeAll(async () => {
  ext = await startExtensionServer({ name: 'api', namespace: 'wardle' });
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-aggregation-'));
  await writeFile(path.join(dir, 'proxy.crt'), ext.proxyClient.cert);
  await writeFile(path.join(dir, 'proxy.key'), ext.proxyClient.key);
  server = await startServer({
    clock,
    controllers: [],
    simulatedNodes: 0,
    flags: ['--proxy-client-cert-file', path.join(dir, 'proxy.crt'), '--proxy-client-key-file', path.join(dir, 'proxy.key')],
  });
  const manifests = path.join(dir, 'wardle.json');
  await writeFile(
    manifests,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'wardle' } },
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api', namespace: 'wardle' }, spec: { type: 'ExternalName', externalName: '127.0.0.1' } },
        registration(ext.port),
      ],
    }),
  );
  await kubectl('apply', '-f', manifests);
  await eventually(async () => (await availability()) === 'True Passed', { what: 'the APIService to be Available', timeoutMs: 20_000 });
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await ext?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('kubectl get apiservices shows the extension Available, local ones Local', async () => {
  clock.advance(0); // the local APIServices are made on the clock's next turn
  await eventually(async () => /^v1\.apps\s+Local\s+True/m.test(await kubectl('get', 'apiservices')), { what: 'local APIServices' });
  const out = await kubectl('get', 'apiservices');
  expect(out).toMatch(new RegExp(`^${API_SERVICE.replace(/\./g, '\\.')}\\s+wardle/api\\s+True\\s`, 'm'));
});

test("kubectl lists and gets the extension's resources through the proxy", async () => {
  const list = await kubectl('get', 'flunders', '-n', 'wardle');
  expect(list).toMatch(/^NAME\s+AGE/);
  expect(list).toMatch(/^first\s/m);
  expect(list).toMatch(/^second\s/m);
  const one = JSON.parse(await kubectl('get', 'flunder', 'first', '-n', 'wardle', '-o', 'json'));
  expect(one).toMatchObject({ apiVersion: GV, kind: 'Flunder', metadata: { name: 'first', namespace: 'wardle' } });
  // The extension's own errors come back as it wrote them.
  await expect(kubectl('get', 'flunder', 'missing', '-n', 'wardle')).rejects.toThrow(`flunders.${WARDLE_GROUP} "missing" not found`);
  // A body goes through as well.
  const created = await request(`/apis/${GV}/namespaces/wardle/flunders`, {
    method: 'POST',
    body: JSON.stringify({ apiVersion: GV, kind: 'Flunder', metadata: { name: 'made' }, spec: { reference: 'first' } }),
  });
  expect(created.status).toBe(201);
  expect(JSON.parse(created.body)).toMatchObject({ metadata: { name: 'made' }, spec: { reference: 'first' } });
});

test('the extension sees the caller as X-Remote-User and X-Remote-Group, through the front-proxy certificate, with no credentials of the caller', async () => {
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'flunder-reader' },
    rules: [{ apiGroups: [WARDLE_GROUP], resources: ['flunders'], verbs: ['get', 'list', 'watch'] }],
  };
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'flunder-readers' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'flunder-reader' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'wardle-readers' }],
  };
  const file = path.join(dir, 'rbac.json');
  await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [role, binding] }));
  await kubectl('apply', '-f', file);
  const alice = await server.newUser('alice', ['wardle-readers']);
  const seen = ext.nextRequest();
  const answer = await eventually(async () => {
    const a = await request(`/apis/${GV}/namespaces/wardle/flunders?limit=5&labelSelector=a%3Db`, { who: alice });
    return a.status === 200 && a;
  });
  expect(JSON.parse(answer.body).items).toHaveLength(2);
  const got = await seen;
  expect(got).toMatchObject({
    method: 'GET',
    user: 'alice',
    proxyCommonName: FRONT_PROXY_CLIENT,
    authorization: undefined,
    impersonate: undefined,
  });
  expect(got.groups).toEqual(expect.arrayContaining(['wardle-readers', 'system:authenticated']));
  // The query as Go's url.Values.Encode writes it: keys sorted.
  expect(got.url).toBe(`/apis/${GV}/namespaces/wardle/flunders?labelSelector=a%3Db&limit=5`);
});

test('a caller without permission gets 403 from Keelson, and the extension never sees the request', async () => {
  const mallory = await server.newUser('mallory');
  const before = ext.seen.length;
  const answer = await request(`/apis/${GV}/namespaces/wardle/flunders`, { who: mallory });
  expect(answer.status).toBe(403);
  const status = JSON.parse(answer.body);
  expect(status).toMatchObject({ kind: 'Status', reason: 'Forbidden' });
  expect(status.message).toMatch(
    /^flunders\.wardle\.example\.com is forbidden: User "mallory" cannot list resource "flunders" in API group "wardle\.example\.com" in the namespace "wardle"/,
  );
  expect(ext.seen.slice(before).filter((r) => r.user === 'mallory')).toEqual([]);
});

test('a watch is streamed: events the extension sends later arrive while the request stays open', async () => {
  const url = new URL(`/apis/${GV}/namespaces/wardle/flunders?watch=true`, server.url);
  const lines: string[] = [];
  let more: (() => void) | undefined;
  const req = https.get(url, { ca: server.ca, cert: server.adminCredentials.cert, key: server.adminCredentials.key }, (res) => {
    let rest = '';
    res.on('data', (c: Buffer) => {
      rest += c.toString('utf8');
      const parts = rest.split('\n');
      rest = parts.pop()!;
      lines.push(...parts.filter(Boolean));
      more?.();
    });
  });
  const atLeast = (n: number) =>
    new Promise<void>((resolve) => {
      more = () => lines.length >= n && resolve();
      more();
    });
  try {
    await atLeast(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'first' } } });
    ext.emit('MODIFIED', { apiVersion: GV, kind: 'Flunder', metadata: { name: 'first', namespace: 'wardle', resourceVersion: '8' } });
    await atLeast(2);
    expect(JSON.parse(lines[1]!)).toMatchObject({ type: 'MODIFIED', object: { metadata: { resourceVersion: '8' } } });
  } finally {
    req.destroy();
  }
});

test('a body larger than what the server reads whole goes to the extension as it comes', async () => {
  // 4 MiB: past the 3 MiB a read-whole body may have (and the server's own request limit).
  const reference = 'r'.repeat(4 * 1024 * 1024);
  const created = await request(`/apis/${GV}/namespaces/wardle/flunders`, {
    method: 'POST',
    body: JSON.stringify({ apiVersion: GV, kind: 'Flunder', metadata: { name: 'large' }, spec: { reference } }),
  });
  expect(created.status).toBe(201);
  expect(JSON.parse(created.body).spec.reference).toHaveLength(reference.length);
});

describe('a request that asks to upgrade', () => {
  const EXEC = `/apis/${GV}/namespaces/wardle/flunders/first/exec`;

  beforeAll(async () => {
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'flunder-exec' },
      rules: [{ apiGroups: [WARDLE_GROUP], resources: ['flunders/exec'], verbs: ['create'] }],
    };
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'flunder-exec' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'flunder-exec' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'wardle-exec' }],
    };
    const file = path.join(dir, 'exec-rbac.json');
    await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [role, binding] }));
    await kubectl('apply', '-f', file);
  });

  test('is switched through to the extension: its 101 relayed, bytes echoed both ways, both ends closed; the extension sees the caller', async () => {
    const erin = await server.newUser('erin', ['wardle-exec']);
    const seen = ext.nextRequest();
    const conn = await eventually(async () => {
      const c = await upgradeRequest(EXEC, { who: erin });
      if (c.status === 101) return c;
      c.socket.destroy();
      return false;
    });
    expect(conn.head).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/);
    expect(conn.head).toMatch(/\r\nUpgrade: SPDY\/3\.1(\r\n|$)/);
    expect(conn.head).toMatch(/\r\nX-Stream-Protocol-Version: v4\.channel\.k8s\.io(\r\n|$)/);
    conn.socket.write('hello');
    expect(await conn.read('hello')).toBe('hello');
    conn.socket.write(' and bye');
    expect(await conn.read('bye!')).toBe('hello and byebye!');
    // The extension closed its end; Keelson closes the caller's.
    await conn.closed;
    await eventually(async () => ext.openUpgrades === 0, { what: 'the extension side closed' });
    const got = await seen;
    expect(got).toMatchObject({
      method: 'POST',
      url: EXEC,
      user: 'erin',
      upgrade: 'SPDY/3.1',
      proxyCommonName: FRONT_PROXY_CLIENT,
      authorization: undefined,
      impersonate: undefined,
      forwardedFor: '127.0.0.1',
    });
    expect(got.groups).toEqual(expect.arrayContaining(['wardle-exec', 'system:authenticated']));
  });

  test('a websocket (GET) switches too, and the caller closing ends both sides', async () => {
    const conn = await upgradeRequest(EXEC, { method: 'GET', protocol: 'websocket' });
    expect(conn.status).toBe(101);
    expect(conn.head).toMatch(/\r\nUpgrade: websocket(\r\n|$)/);
    conn.socket.write('ping');
    expect(await conn.read('ping')).toBe('ping');
    expect(ext.openUpgrades).toBe(1);
    conn.socket.end();
    await conn.closed;
    await eventually(async () => ext.openUpgrades === 0, { what: 'the extension side closed' });
  });

  test('a caller without permission gets 403 from Keelson, and no upgrade reaches the extension', async () => {
    const mallory = await server.newUser('mallory');
    const before = ext.seen.length;
    const conn = await upgradeRequest(EXEC, { who: mallory });
    expect(conn.status).toBe(403);
    const status = JSON.parse(await conn.body());
    expect(status).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect(status.message).toMatch(
      /^flunders\.wardle\.example\.com "first" is forbidden: User "mallory" cannot create resource "flunders\/exec" in API group "wardle\.example\.com" in the namespace "wardle"/,
    );
    expect(ext.seen.slice(before)).toEqual([]);
  });

  test('an upgrade the extension refuses: its error relayed; an answer that is no switch and no error: 503', async () => {
    const refused = await upgradeRequest(`/apis/${GV}/namespaces/wardle/flunders/refuse/exec`);
    expect(refused.status).toBe(403);
    await refused.closed;
    expect(JSON.parse(await refused.body())).toMatchObject({ reason: 'Forbidden', message: 'the extension refuses' });

    const plain = await upgradeRequest(`/apis/${GV}/namespaces/wardle/flunders/plain/exec`);
    await plain.closed;
    expect(plain.status).toBe(503);
    expect(plain.head).toMatch(/\r\nContent-Type: text\/plain; charset=utf-8\r\n/);
    expect(await plain.body()).toBe('invalid upgrade response: status code 200\n');
  });

  test('a path the aggregator does not proxy is answered as any request (a body too), on a connection closed after it', async () => {
    const get = await upgradeRequest('/api/v1/namespaces/wardle', { method: 'GET', protocol: 'websocket' });
    await get.closed;
    expect(get.status).toBe(200);
    expect(get.head).toMatch(/\r\nConnection: close(\r\n|$)/i);
    expect(JSON.parse(await get.body())).toMatchObject({ kind: 'Namespace', metadata: { name: 'wardle' } });

    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'upgraded' }, data: { a: 'b' } });
    const post = await upgradeRequest('/api/v1/namespaces/wardle/configmaps', { body });
    await post.closed;
    expect(post.status).toBe(201);
    expect(JSON.parse(await post.body())).toMatchObject({ metadata: { name: 'upgraded' }, data: { a: 'b' } });
  });
});

test('discovery: kubectl api-resources lists the group; aggregated discovery is what the extension said, legacy its fallback', async () => {
  const resources = await kubectl('api-resources', `--api-group=${WARDLE_GROUP}`);
  expect(resources).toMatch(new RegExp(`^flunders\\s+fl\\s+${GV.replace(/\./g, '\\.')}\\s+true\\s+Flunder`, 'm'));
  const legacy = JSON.parse((await request('/apis')).body);
  expect(legacy.groups.map((g: { name: string }) => g.name)).toContain(WARDLE_GROUP);
  expect(JSON.parse((await request(`/apis/${WARDLE_GROUP}`)).body)).toMatchObject({ kind: 'APIGroup', preferredVersion: { groupVersion: GV } });

  const aggregatedAccept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
  const wardle = async () =>
    (
      JSON.parse((await request('/apis', { accept: aggregatedAccept })).body).items as {
        metadata: { name: string };
        versions: { resources?: { categories?: string[] }[] }[];
      }[]
    ).find((g) => g.metadata.name === WARDLE_GROUP);
  // The aggregated document's own categories (the legacy list has no 'aggregated-said-so').
  expect((await wardle())?.versions[0]?.resources?.[0]?.categories).toEqual(['wardle', 'aggregated-said-so']);
  // An extension without aggregated discovery: its legacy APIResourceList, on the next check.
  ext.aggregatedDiscovery = false;
  clock.advance(30_000);
  await eventually(async () => JSON.stringify((await wardle())?.versions[0]?.resources?.[0]?.categories) === '["wardle"]', { what: 'the legacy fallback' });
  ext.aggregatedDiscovery = true;
});

test("OpenAPI v2 and v3 carry the extension's group version, kubectl explain reads it", async () => {
  const v2 = JSON.parse((await request('/openapi/v2')).body);
  const listPath = `/apis/${GV}/namespaces/{namespace}/flunders`;
  expect(v2.paths[listPath]).toBeDefined();
  expect(v2.paths['/apis/other.example.com/v1/things']).toBeUndefined();
  expect(v2.definitions['com.example.other.Thing']).toBeUndefined();
  // A definition of a name this server has, different: renamed, and the reference follows it.
  expect(v2.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta_v2']).toMatchObject({ description: 'the extension server’s own ObjectMeta' });
  expect(v2.definitions['com.example.wardle.v1alpha1.Flunder'].properties.metadata.$ref).toBe(
    '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta_v2',
  );
  expect(v2.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'].description).not.toBe('the extension server’s own ObjectMeta');
  // The protobuf form kubectl asks for holds the same.
  const proto = await request('/openapi/v2', { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' });
  expect(proto.status).toBe(200);
  expect(proto.body).toContain(listPath);

  const index = JSON.parse((await request('/openapi/v3')).body);
  const entry = index.paths[`apis/${GV}`];
  expect(entry.serverRelativeURL).toMatch(new RegExp(`^/openapi/v3/apis/${GV.replace(/\./g, '\\.')}\\?hash=[0-9A-F]{128}$`));
  const v3 = await request(entry.serverRelativeURL);
  expect(v3.status).toBe(200);
  expect(JSON.parse(v3.body).components.schemas['com.example.wardle.v1alpha1.Flunder']).toBeDefined();
  expect(await kubectl('explain', 'flunders.spec.reference')).toContain('What the flunder refers to.');
});

test('a backend that hangs answers 503 when the timeout passes, and other groups are served meanwhile', async () => {
  ext.mode = 'hang';
  try {
    const arrived = ext.nextRequest();
    const answer = request(`/apis/${GV}/namespaces/wardle/flunders`);
    await arrived;
    expect(await kubectl('get', 'namespace', 'wardle', '-o', 'name')).toBe('namespace/wardle\n');
    clock.advance(30_000);
    const got = await answer;
    expect(got.status).toBe(503);
    expect(got.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(got.body).toBe('timed out awaiting response headers\n');
  } finally {
    ext.mode = 'ok';
  }
  // The availability check the clock started meanwhile (its probes hung too) times out, and the next one passes.
  clock.advance(6_000);
  clock.advance(30_000);
  await eventually(async () => (await availability()) === 'True Passed', { what: 'Available again' });
});

test('a backend that sends garbage answers 503 with the transport error', async () => {
  ext.mode = 'garbage';
  try {
    const got = await request(`/apis/${GV}/namespaces/wardle/flunders`);
    expect({ status: got.status, body: got.body }).toEqual({
      status: 503,
      body: expect.stringMatching(/^net\/http: HTTP\/1\.x transport connection broken: .+\n$/),
    });
    expect((await request('/api/v1/namespaces/wardle')).status).toBe(200);
  } finally {
    ext.mode = 'ok';
  }
});

test('a stopped extension: the APIService turns False (FailedDiscoveryCheck) and its group answers 503 service unavailable', async () => {
  await ext.stop();
  clock.advance(30_000);
  await eventually(async () => (await availability()) === 'False FailedDiscoveryCheck', { what: 'the APIService to turn unavailable' });
  const condition = (await apiService()).status!.conditions!.find((c) => c.type === 'Available')!;
  expect(condition.message).toMatch(new RegExp(`^failing or missing response from https://127\\.0\\.0\\.1:${ext.port}/apis/${GV.replace(/\./g, '\\.')}: `));
  expect(await kubectl('get', 'apiservices', API_SERVICE)).toMatch(/wardle\/api\s+False \(FailedDiscoveryCheck\)/);
  const got = await request(`/apis/${GV}/namespaces/wardle/flunders`);
  expect(got).toMatchObject({ status: 503, body: 'service unavailable\n' });
  expect(got.headers['x-content-type-options']).toBe('nosniff');
  // Back again on the same port: Available on the next check.
  await ext.start();
  clock.advance(30_000);
  await eventually(async () => (await availability()) === 'True Passed', { what: 'Available again' });
});

test('an APIService pointing back at this server (default/kubernetes) answers 503 at once and never loops; other groups are served', async () => {
  const name = 'v1.loop.example.com';
  await applyObject(apiServiceOf('loop.example.com', 'v1', { namespace: 'default', name: 'kubernetes', port: 443 }, server.ca));
  try {
    clock.advance(30_000);
    // The probe comes back to this server, which refuses to proxy it again: not Available.
    await eventually(
      async () => {
        const status = JSON.parse(await kubectl('get', 'apiservice', name, '-o', 'json')).status;
        return status?.conditions?.find((c: { type: string; status: string }) => c.type === 'Available' && c.status === 'False');
      },
      { what: 'the looping APIService unavailable' },
    );
    const got = await request('/apis/loop.example.com/v1/namespaces/default/things');
    expect({ status: got.status, body: got.body }).toEqual({ status: 503, body: 'service unavailable\n' });
    expect((await request('/api/v1/namespaces/default')).status).toBe(200);
  } finally {
    await kubectl('delete', 'apiservice', name);
  }
});

test('an APIService whose Service is missing turns False (ServiceNotFound) and its group answers 503', async () => {
  const name = 'v1.missing.example.com';
  await applyObject(apiServiceOf('missing.example.com', 'v1', { namespace: 'wardle', name: 'nowhere', port: 443 }, ext.servingCa));
  try {
    await eventually(async () => /wardle\/nowhere\s+False \(ServiceNotFound\)/.test(await kubectl('get', 'apiservices', name)), {
      what: 'the APIService without its Service unavailable',
    });
    const condition = JSON.parse(await kubectl('get', 'apiservice', name, '-o', 'json')).status.conditions.find(
      (c: { type: string }) => c.type === 'Available',
    );
    expect(condition.message).toBe('service/nowhere in "wardle" is not present');
    expect(await request('/apis/missing.example.com/v1/namespaces/wardle/things')).toMatchObject({ status: 503, body: 'service unavailable\n' });
  } finally {
    await kubectl('delete', 'apiservice', name);
  }
});

test('deleting the APIService takes the group out of discovery, OpenAPI and routing', async () => {
  await kubectl('delete', 'apiservice', API_SERVICE);
  await eventually(async () => !JSON.parse((await request('/apis')).body).groups.some((g: { name: string }) => g.name === WARDLE_GROUP), {
    what: 'the group gone',
  });
  expect((await request(`/apis/${GV}/namespaces/wardle/flunders`)).status).toBe(404);
  const v2 = JSON.parse((await request('/openapi/v2')).body);
  expect(v2.paths[`/apis/${GV}/namespaces/{namespace}/flunders`]).toBeUndefined();
  expect(JSON.parse((await request('/openapi/v3')).body).paths[`apis/${GV}`]).toBeUndefined();
  expect(await kubectl('api-resources', `--api-group=${WARDLE_GROUP}`)).not.toContain('flunders');
});
