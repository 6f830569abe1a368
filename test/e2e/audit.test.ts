/**
 * Auditing on a real server: kubectl's requests land in the audit log as upstream's Events, with
 * the objects at RequestResponse (decoded from protobuf, as kubectl sends them), only metadata
 * elsewhere, and the authorization decision in the annotations.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { httpsRequest } from '../gateway/support/https-client';
import { kubectlFor } from './support/kubectl';
import { eventually } from '../support/eventually';

let server: ServerProcess;
let kubectl: (...args: string[]) => Promise<string>;
let logFile: string;

beforeAll(async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-audit-e2e-'));
  const policy = path.join(dir, 'policy.yaml');
  logFile = path.join(dir, 'audit.log');
  await writeFile(
    policy,
    [
      'apiVersion: audit.k8s.io/v1',
      'kind: Policy',
      'omitStages: [RequestReceived]',
      'rules:',
      '- level: RequestResponse',
      '  resources:',
      '  - group: ""',
      '    resources: [configmaps]',
      '- level: Metadata',
    ].join('\n'),
  );
  await writeFile(path.join(dir, 'tokens.csv'), 'nobody-token,nobody,1\n');
  server = await startServerProcess([
    '--vendor',
    'kubernetes',
    '--simulated-nodes',
    '0',
    '--audit-policy-file',
    policy,
    '--audit-log-path',
    logFile,
    '--token-auth-file',
    path.join(dir, 'tokens.csv'),
    '-v',
    '3',
  ]);
  kubectl = kubectlFor(() => server);
});

afterAll(async () => {
  await server?.stop();
});

/** The audit log's events, once one of them is `last` (the log is written after the answer). */
async function events(last: (e: Record<string, any>) => boolean): Promise<Array<Record<string, any>>> {
  return eventually(
    async () => {
      const all: Array<Record<string, any>> = (await readFile(logFile, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      return all.some(last) && all;
    },
    { what: 'the awaited event in the audit log' },
  );
}

test('kubectl’s requests are audited at the policy’s levels with upstream’s Event schema', async () => {
  await kubectl('create', 'configmap', 'audited', '--from-literal=k=v');
  await kubectl('get', 'secrets', '-n', 'kube-system');
  const all = await events((e) => e.verb === 'list' && e.objectRef?.resource === 'secrets' && e.stage === 'ResponseComplete');
  const create = all.find((e) => e.verb === 'create' && e.objectRef?.resource === 'configmaps' && e.objectRef?.namespace === 'default');
  expect(create).toMatchObject({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'RequestResponse',
    stage: 'ResponseComplete',
    user: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
    sourceIPs: ['127.0.0.1'],
    userAgent: expect.stringMatching(/^kubectl\//),
    objectRef: { resource: 'configmaps', namespace: 'default', apiVersion: 'v1' },
    responseStatus: { metadata: {}, code: 201 },
    requestObject: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'audited' }, data: { k: 'v' } },
    responseObject: { kind: 'ConfigMap', metadata: { name: 'audited', namespace: 'default' } },
    annotations: { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' },
  });
  expect(create!.auditID).toMatch(/^[0-9a-f-]{36}$/);
  const list = all.find((e) => e.verb === 'list' && e.objectRef?.resource === 'secrets');
  expect(list).toMatchObject({
    level: 'Metadata',
    objectRef: { resource: 'secrets', namespace: 'kube-system', apiVersion: 'v1' },
    responseStatus: { code: 200 },
  });
  expect(list).not.toHaveProperty('responseObject');
  expect(all.some((e) => e.stage === 'RequestReceived')).toBe(false);
});

test('a forbidden request is audited with the decision and the refusal', async () => {
  const res = await httpsRequest(
    `${server.url}/api/v1/namespaces/default/pods`,
    { ca: server.admin.ca },
    { headers: { Authorization: 'Bearer nobody-token' } },
  );
  expect(res.status).toBe(403);
  const denied = (await events((e) => e.user?.username === 'nobody')).find((e) => e.user?.username === 'nobody');
  expect(denied).toMatchObject({
    level: 'Metadata',
    verb: 'list',
    responseStatus: {
      metadata: {},
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: expect.stringMatching(/^pods is forbidden: User "nobody" cannot list resource "pods"/),
    },
    annotations: { 'authorization.k8s.io/decision': 'forbid', 'authorization.k8s.io/reason': expect.any(String) },
  });
  expect(denied!.auditID).toBe(res.headers['audit-id']);
});

test('-v=3 logs one HTTP line per request, without credentials', async () => {
  await httpsRequest(
    `${server.url}/api/v1/namespaces/default/configmaps?limit=1`,
    { ca: server.admin.ca },
    { headers: { Authorization: 'Bearer nobody-token', 'User-Agent': 'probe/1.0' } },
  );
  const line = await eventually(
    () =>
      server
        .output()
        .split('\n')
        .find((l) => l.includes('userAgent="probe/1.0"')),
    { what: "the request's HTTP line" },
  );
  expect(line).toMatch(
    /^keelson: HTTP verb="GET" URI="\/api\/v1\/namespaces\/default\/configmaps\?limit=1" latency="[\d.]+(ms|µs|s)" userAgent="probe\/1.0" audit-ID="[0-9a-f-]{36}" srcIP="127.0.0.1" resp=403$/,
  );
  expect(server.output()).not.toContain('nobody-token');
});
