/**
 * `/metrics`, `/readyz` and overload protection on a real server process: a scrape parses with
 * a Prometheus text-format parser and holds upstream's families with upstream's labels, counts
 * what kubectl did, shows watches and storage health; only the monitoring role may read it; a
 * burst past --max-requests-inflight gets 429s with Retry-After while the server stays small.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { httpsRequest } from '../gateway/support/https-client';
import { kubectlFor } from './support/kubectl';
import { eventually } from '../support/eventually';

interface Sample {
  labels?: Record<string, string>;
  value?: string;
  count?: string;
}
interface Family {
  name: string;
  type: string;
  metrics: Sample[];
}
// The parser ships without types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const parsePrometheus = require('parse-prometheus-text-format') as (text: string) => Family[];

let server: ServerProcess;
let kubectl: (...args: string[]) => Promise<string>;

beforeAll(async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-metrics-'));
  const tokens = path.join(dir, 'tokens.csv');
  await writeFile(tokens, ['nobody-token,nobody,1', 'monitor-token,prometheus,2,system:monitoring', 'bob-token,bob,3'].join('\n'));
  server = await startServerProcess([
    '--vendor',
    'kubernetes',
    '--token-auth-file',
    tokens,
    '--max-requests-inflight',
    '3',
    '--max-mutating-requests-inflight',
    '2',
    // The in-flight counters this file's burst test is about (priority and fairness has its own tests).
    '--enable-priority-and-fairness=false',
    '--simulated-nodes',
    '0',
  ]);
  kubectl = kubectlFor(() => server);
  await kubectl('create', 'clusterrolebinding', 'bob-admin', '--clusterrole=cluster-admin', '--user=bob');
});

afterAll(async () => {
  await server?.stop();
});

async function scrape(): Promise<Map<string, Family>> {
  const families = parsePrometheus(await kubectl('get', '--raw', '/metrics'));
  return new Map(families.map((f) => [f.name, f]));
}

const find = (family: Family | undefined, labels: Record<string, string>) =>
  family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));

test('a scrape parses and holds upstream’s families, counting requests, watch events and stored objects', async () => {
  await kubectl('create', 'configmap', 'm1', '--from-literal=a=b');
  await kubectl('get', '--raw', '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1');
  const families = await scrape();
  for (const name of [
    'apiserver_request_total',
    'apiserver_request_duration_seconds',
    'apiserver_current_inflight_requests',
    'apiserver_longrunning_requests',
    'apiserver_request_terminations_total',
    'apiserver_watch_events_total',
    'apiserver_storage_objects',
    'apiserver_storage_size_bytes',
    'apiserver_watch_cache_capacity',
    'apiserver_requested_deprecated_apis',
    'apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds',
    'etcd_request_duration_seconds',
    'keelson_storage_revision',
    'keelson_watch_cache_lag_revisions',
    'process_cpu_seconds_total',
  ]) {
    expect(families.has(name)).toBe(true);
  }
  expect(families.get('apiserver_request_total')!.type).toBe('COUNTER');
  expect(families.get('apiserver_request_duration_seconds')!.type).toBe('HISTOGRAM');
  const created = find(families.get('apiserver_request_total'), {
    verb: 'POST',
    group: '',
    version: 'v1',
    resource: 'configmaps',
    scope: 'resource',
    component: 'apiserver',
    code: '201',
    dry_run: '',
  });
  expect(Number(created?.value)).toBeGreaterThanOrEqual(1);
  const watched = find(families.get('apiserver_request_total'), { verb: 'WATCH', resource: 'configmaps', scope: 'namespace', code: '200' });
  expect(Number(watched?.value)).toBeGreaterThanOrEqual(1);
  expect(Number(find(families.get('apiserver_watch_events_total'), { group: '', version: 'v1', kind: 'ConfigMap' })?.value)).toBeGreaterThanOrEqual(1);
  expect(Number(find(families.get('apiserver_storage_objects'), { resource: 'configmaps' })?.value)).toBeGreaterThanOrEqual(1);
  expect(Number(find(families.get('apiserver_storage_objects'), { resource: 'clusterroles.rbac.authorization.k8s.io' })?.value)).toBeGreaterThan(50);
  expect(Number(families.get('apiserver_storage_size_bytes')!.metrics[0]!.value)).toBeGreaterThan(0);
  expect(Number(families.get('keelson_storage_revision')!.metrics[0]!.value)).toBeGreaterThan(0);
  expect(Number(families.get('keelson_watch_cache_lag_revisions')!.metrics[0]!.value)).toBeGreaterThanOrEqual(0);
  // The parser folds a histogram's label sets together; the samples themselves are in the text.
  expect(await kubectl('get', '--raw', '/metrics')).toMatch(/^etcd_request_duration_seconds_count\{operation="create",type="configmaps"\} [1-9]/m);
  expect(await kubectl('get', '--raw', '/readyz?verbose')).toContain('[+]watch-cache-lag ok');
});

test("the admission chain's phases and plugins, accepted and rejected, in upstream's families", async () => {
  await kubectl('create', 'configmap', 'admitted', '--from-literal=a=b');
  // NamespaceLifecycle refuses a write into a namespace that does not exist.
  await expect(kubectl('create', 'configmap', 'nowhere', '-n', 'no-such-namespace')).rejects.toThrow(/not found/);
  const text = await kubectl('get', '--raw', '/metrics');
  expect(text).toMatch(/^apiserver_admission_step_admission_duration_seconds_count\{type="admit",operation="CREATE",rejected="false"\} [1-9]/m);
  expect(text).toMatch(/^apiserver_admission_step_admission_duration_seconds_count\{type="validate",operation="CREATE",rejected="false"\} [1-9]/m);
  expect(text).toMatch(/^apiserver_admission_step_admission_duration_seconds_bucket\{le="0.005",type="admit",operation="CREATE",rejected="false"\} [1-9]/m);
  expect(text).toMatch(
    /^apiserver_admission_controller_admission_duration_seconds_count\{name="NamespaceLifecycle",type="(admit|validate)",operation="CREATE",rejected="true"\} [1-9]/m,
  );
  expect(text).toMatch(
    /^apiserver_admission_controller_admission_duration_seconds_count\{name="ValidatingAdmissionPolicy",type="validate",operation="CREATE",rejected="false"\} [1-9]/m,
  );
  expect(text).toMatch(
    /^apiserver_admission_controller_admission_duration_seconds_count\{name="MutatingAdmissionWebhook",type="admit",operation="CREATE",rejected="false"\} [1-9]/m,
  );
});

test('/metrics is a non-resource URL for the monitoring role only', async () => {
  const url = `${server.url}/metrics`;
  const tls = { ca: server.admin.ca };
  const nobody = await httpsRequest(url, tls, { headers: { Authorization: 'Bearer nobody-token' } });
  expect(nobody.status).toBe(403);
  expect(JSON.parse(nobody.body)).toMatchObject({
    reason: 'Forbidden',
    message: expect.stringMatching(/^forbidden: User "nobody" cannot get path "\/metrics"/),
  });
  const monitor = await httpsRequest(url, tls, { headers: { Authorization: 'Bearer monitor-token' } });
  expect(monitor.status).toBe(200);
  expect(monitor.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
});

/** A POST whose body is still on its way: it holds a mutating slot until `finish`. */
function slowPost(url: string, tls: { ca: string }, token: string): { finish(): Promise<number> } {
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'slow-' } });
  const req = https.request(url, {
    method: 'POST',
    ca: tls.ca,
    agent: false,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': String(body.length) },
  });
  const status = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  req.write(body.slice(0, 5));
  return {
    finish: async () => {
      req.end(body.slice(5));
      return status;
    },
  };
}

test('a burst past the in-flight limits gets 429 with Retry-After, system:masters is served, memory stays bounded', async () => {
  const tls = { ca: server.admin.ca };
  const collection = `${server.url}/api/v1/namespaces/default/configmaps`;
  // Two creates whose bodies have not arrived fill --max-mutating-requests-inflight=2.
  const held = [slowPost(collection, tls, 'bob-token'), slowPost(collection, tls, 'bob-token')];
  await eventually(async () => Number(find((await scrape()).get('apiserver_current_inflight_requests'), { request_kind: 'mutating' })?.value) === 2, {
    what: 'both creates in flight',
  });
  const rssBefore = Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${server.pid}/status`, 'utf8'))![1]);
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'burst-' } });
  const burst = await Promise.all(
    Array.from({ length: 200 }, () =>
      httpsRequest(collection, tls, { method: 'POST', headers: { Authorization: 'Bearer bob-token', 'Content-Type': 'application/json' }, body }),
    ),
  );
  expect(burst.map((r) => r.status)).toEqual(burst.map(() => 429));
  expect(burst[0]!.headers['retry-after']).toBe('1');
  expect(burst[0]!.body).toBe('Too many requests, please try again later.\n');
  // Reads have their own limit, and system:masters is never refused.
  expect((await httpsRequest(collection, tls, { headers: { Authorization: 'Bearer bob-token' } })).status).toBe(200);
  const admin = await httpsRequest(collection, server.admin, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  expect(admin.status).toBe(201);
  expect(await Promise.all(held.map((h) => h.finish()))).toEqual([201, 201]);
  expect(
    (await httpsRequest(collection, tls, { method: 'POST', headers: { Authorization: 'Bearer bob-token', 'Content-Type': 'application/json' }, body })).status,
  ).toBe(201);
  const rssAfter = Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${server.pid}/status`, 'utf8'))![1]);
  expect(rssAfter - rssBefore).toBeLessThan(100 * 1024);
  const terminated = find((await scrape()).get('apiserver_request_terminations_total'), { verb: 'POST', resource: 'configmaps', code: '429' });
  expect(Number(terminated?.value)).toBe(200);
});
