/**
 * The audit backends on real servers: kubectl's requests reach a real HTTPS receiver as
 * upstream's EventLists (batch mode), a blocking server answers only once its events are sent,
 * a blocking-strict server whose webhook is down, or whose log cannot be written, refuses
 * requests with upstream's 500; the log's default (blocking) mode serves them and counts the loss.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { API_ONLY, startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { httpsRequest } from '../gateway/support/https-client';
import { type AuditReceiver, startAuditReceiver } from '../server/support/audit-receiver';
import { kubectlFor } from './support/kubectl';
import { eventually } from '../support/eventually';

const POLICY = [
  'apiVersion: audit.k8s.io/v1',
  'kind: Policy',
  'rules:',
  '- level: None',
  '  nonResourceURLs: ["/metrics", "/readyz*", "/healthz*", "/livez*"]',
  '- level: RequestResponse',
  '  resources:',
  '  - group: ""',
  '    resources: [configmaps]',
  '- level: Metadata',
].join('\n');

let receiver: AuditReceiver;
let dir: string;
let policy: string;
let kubeconfig: string;
const servers: ServerProcess[] = [];

async function start(...flags: string[]): Promise<ServerProcess> {
  const server = await startServerProcess(['--vendor', 'kubernetes', ...API_ONLY, '--audit-policy-file', policy, ...flags]);
  servers.push(server);
  return server;
}

async function metric(server: ServerProcess, name: string): Promise<string[]> {
  const res = await httpsRequest(`${server.url}/metrics`, server.admin);
  return res.body.split('\n').filter((l) => l.startsWith(name));
}

beforeAll(async () => {
  receiver = await startAuditReceiver();
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-audit-webhook-e2e-'));
  policy = path.join(dir, 'policy.yaml');
  await writeFile(policy, POLICY);
  kubeconfig = await receiver.writeKubeconfig(dir);
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await receiver?.close();
});

test('batch mode: kubectl’s requests reach the webhook as EventLists, with the objects at RequestResponse', async () => {
  const server = await start('--audit-webhook-config-file', kubeconfig, '--audit-webhook-batch-max-wait=200ms');
  const kubectl = kubectlFor(() => server);
  await kubectl('create', 'configmap', 'hooked', '--from-literal=k=v');
  const isCreate = (e: Record<string, any>) =>
    e.verb === 'create' && e.objectRef?.name === undefined && e.objectRef?.resource === 'configmaps' && e.stage === 'ResponseComplete';
  await eventually(() => receiver.events().some(isCreate), { what: "the create's ResponseComplete event at the webhook" });
  const batch = receiver.batches.find((b) => b.body.items.some(isCreate))!;
  expect(batch.clientCn).toBe('keelson-gateway');
  expect(batch.body).toMatchObject({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {} });
  const create = batch.body.items.find(isCreate)!;
  expect(create).not.toHaveProperty('kind');
  expect(create).toMatchObject({
    level: 'RequestResponse',
    user: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
    userAgent: expect.stringMatching(/^kubectl\//),
    objectRef: { resource: 'configmaps', namespace: 'default', apiVersion: 'v1' },
    responseStatus: { metadata: {}, code: 201 },
    requestObject: { kind: 'ConfigMap', metadata: { name: 'hooked' }, data: { k: 'v' } },
    responseObject: { kind: 'ConfigMap', metadata: { name: 'hooked', namespace: 'default' } },
  });
  // Both stages of one request carry one audit ID.
  expect(
    receiver
      .events()
      .filter((e) => e.auditID === create.auditID)
      .map((e) => e.stage),
  ).toEqual(['RequestReceived', 'ResponseComplete']);
  expect(receiver.events().some((e) => e.requestURI?.startsWith('/metrics') || e.requestURI?.startsWith('/readyz'))).toBe(false);
  expect((await metric(server, 'apiserver_audit_event_total'))[0]).toMatch(/^apiserver_audit_event_total [1-9]\d*$/);
  expect(await metric(server, 'apiserver_audit_level_total{level="None"}')).toHaveLength(1);
  expect(await metric(server, 'apiserver_audit_level_total{level="RequestResponse"}')).toEqual([expect.stringMatching(/ [1-9]\d*$/)]);
});

test('blocking mode: the response comes once its events are sent', async () => {
  const server = await start('--audit-webhook-config-file', kubeconfig, '--audit-webhook-mode=blocking');
  for (const [url, code] of [
    [`${server.url}/api/v1/namespaces/default/configmaps/absent`, 404],
    [`${server.url}/api/v1/namespaces/default/configmaps`, 200],
  ] as const) {
    const res = await httpsRequest(url, server.admin);
    expect(res.status).toBe(code);
    // Both events were with the webhook before the answer left the server.
    const sent = receiver.events().filter((e) => e.auditID === res.headers['audit-id']);
    expect(sent.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
    expect(sent[1]).toMatchObject({ responseStatus: { code } });
  }
});

test('blocking-strict mode with the webhook down: requests fail with upstream’s 500 and are counted', async () => {
  const down = path.join(dir, 'down.kubeconfig');
  await writeFile(down, (await import('node:fs')).readFileSync(kubeconfig, 'utf8').replace(receiver.url, 'https://127.0.0.1:1/audit'));
  const server = await start('--audit-webhook-config-file', down, '--audit-webhook-mode=blocking-strict', '--audit-webhook-initial-backoff=5ms');
  const res = await httpsRequest(`${server.url}/api/v1/namespaces/default/configmaps?limit=5`, server.admin);
  expect(res.status).toBe(500);
  expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
  expect(res.body).toBe('Internal Server Error: "/api/v1/namespaces/default/configmaps?limit=5": failed to store audit event\n');
  expect(await metric(server, 'apiserver_audit_requests_rejected_total')).toEqual(['apiserver_audit_requests_rejected_total 1']);
  expect(await metric(server, 'apiserver_audit_error_total')).toEqual(['apiserver_audit_error_total{plugin="webhook"} 1']);
  expect(server.output()).toContain("Error in audit plugin 'webhook' affecting 1 audit events:");
  expect(server.output()).toMatch(/AUDIT: id="[0-9a-f-]{36}" stage="RequestReceived" ip="127.0.0.1" method="list" user="admin"/);
  // Nothing was created behind the refusal.
  const create = await httpsRequest(`${server.url}/api/v1/namespaces/default/configmaps`, server.admin, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'never' } }),
  });
  expect(create.status).toBe(500);
  await server.stop();
  const again = await startServerProcess(['--vendor', 'kubernetes', ...API_ONLY], { dataDir: server.dataDir });
  servers.push(again);
  expect((await httpsRequest(`${again.url}/api/v1/namespaces/default/configmaps/never`, again.admin)).status).toBe(404);
});

test('the log on a full disk: blocking-strict refuses requests, blocking (the default) serves them and counts the loss', async () => {
  const strict = await start('--audit-log-path', '/dev/full', '--audit-log-mode=blocking-strict');
  const refused = await httpsRequest(`${strict.url}/api/v1/namespaces`, strict.admin);
  expect(refused.status).toBe(500);
  expect(refused.body).toBe('Internal Server Error: "/api/v1/namespaces": failed to store audit event\n');
  expect(await metric(strict, 'apiserver_audit_error_total')).toEqual(['apiserver_audit_error_total{plugin="log"} 1']);

  const lenient = await start('--audit-log-path', '/dev/full', '--audit-log-format=legacy');
  const served = await httpsRequest(`${lenient.url}/api/v1/namespaces`, lenient.admin);
  expect(served.status).toBe(200);
  expect(await metric(lenient, 'apiserver_audit_requests_rejected_total')).toEqual(['apiserver_audit_requests_rejected_total 0']);
  expect(await metric(lenient, 'apiserver_audit_error_total')).toEqual(['apiserver_audit_error_total{plugin="log"} 2']);
  expect(lenient.output()).toContain("Error in audit plugin 'log' affecting 1 audit events: ENOSPC");
});
