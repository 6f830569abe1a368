/**
 * API Priority and Fairness as an operator meets it (docs/OPERATIONS.md, "Priority and
 * fairness"), with unmodified kubectl 1.32 against the real server process on a real etcd:
 * the default configuration listed with upstream's printer columns, the v1beta3 version served
 * again by `--runtime-config` with its deprecation warning, a tenant's own priority level and
 * FlowSchema applied with kubectl and then classifying the tenant's requests (the response
 * headers name those objects' UIDs, `/metrics` counts them under the tenant's level), invalid
 * configuration refused with upstream's messages, and the debug dump open to an admin only.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { httpsRequest } from '../gateway/support/https-client';
import { API_ONLY, type ServerProcess } from '../gateway/support/server-process';
import { startServerOnBackend } from './support/backend';
import { KUBECTL, kubectlFor } from './support/kubectl';

const run = promisify(execFile);
const GROUP = 'flowcontrol.apiserver.k8s.io';
const TENANT_TOKEN = 'tenant-token-0123456789';
const PLAIN_TOKEN = 'plain-token-0123456789';

let dir: string;
let server: ServerProcess;
let kubectl: (...args: string[]) => Promise<string>;

/** kubectl's stdout and stderr (where it prints the server's warnings). */
async function kubectlWithWarnings(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(KUBECTL, ['--kubeconfig', server.kubeconfig, ...args], { timeout: 30_000 });
}

/** A request as a token-file user, with the response headers. */
function asUser(token: string, urlPath: string) {
  return httpsRequest(`${server.url}${urlPath}`, { ca: server.admin.ca }, { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } });
}

/** The rows of a `kubectl get` table, split on runs of spaces. */
function rows(table: string): string[][] {
  return table
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}/));
}

/** The header of a debug dump (upstream's tab-aligned CSV). */
function columnsOf(dump: string): string[] {
  return dump.split('\n')[0].split(/,\s*/);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-flowcontrol-'));
  const tokens = path.join(dir, 'tokens.csv');
  await writeFile(tokens, `${TENANT_TOKEN},tenant-a-user,101,"tenant-a"\n${PLAIN_TOKEN},plain,102\n`);
  server = await startServerOnBackend('etcd', [
    '--vendor',
    'kubernetes',
    ...API_ONLY,
    '--runtime-config',
    `${GROUP}/v1beta3=true`,
    '--token-auth-file',
    tokens,
  ]);
  kubectl = kubectlFor(() => server);
  await kubectl('create', 'clusterrolebinding', 'tenant-a-view', '--clusterrole=view', '--group=tenant-a');
});

afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('kubectl get flowschemas,prioritylevelconfigurations lists the default configuration with upstream columns', async () => {
  const out = await kubectl('get', 'flowschemas,prioritylevelconfigurations');
  const [schemas, levels] = out.trim().split(/\n\s*\n/);
  const schemaRows = rows(schemas);
  expect(schemaRows[0]).toEqual(['NAME', 'PRIORITYLEVEL', 'MATCHINGPRECEDENCE', 'DISTINGUISHERMETHOD', 'AGE', 'MISSINGPL']);
  const byName = new Map(schemaRows.slice(1).map((r) => [r[0].replace(`flowschema.${GROUP}/`, ''), r]));
  expect([...byName.keys()].sort()).toEqual(
    [
      'catch-all',
      'endpoint-controller',
      'exempt',
      'global-default',
      'kube-controller-manager',
      'kube-scheduler',
      'kube-system-service-accounts',
      'probes',
      'service-accounts',
      'system-leader-election',
      'system-node-high',
      'system-nodes',
      'workload-leader-election',
    ].sort(),
  );
  // Rows in upstream's printFlowSchemaList order: matching precedence, then name.
  const order = schemaRows.slice(1).map((r) => [Number(r[2]), r[0]] as const);
  expect(order).toEqual([...order].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)));
  expect(order[0]![1]).toMatch(/exempt$/);
  expect(order.at(-1)![1]).toMatch(/catch-all$/);
  // Upstream's printFlowSchema: the level, precedence, distinguisher (`<none>` without one) and the Dangling condition.
  expect(byName.get('exempt')!.slice(1, 4)).toEqual(['exempt', '1', '<none>']);
  expect(byName.get('catch-all')!.slice(1, 4)).toEqual(['catch-all', '10000', 'ByUser']);
  expect(byName.get('kube-system-service-accounts')!.slice(1, 4)).toEqual(['workload-high', '900', 'ByNamespace']);
  expect(byName.get('global-default')!.slice(1, 4)).toEqual(['global-default', '9900', 'ByUser']);
  for (const row of byName.values()) expect(row[5]).toBe('False');

  const levelRows = rows(levels);
  expect(levelRows[0]).toEqual(['NAME', 'TYPE', 'NOMINALCONCURRENCYSHARES', 'QUEUES', 'HANDSIZE', 'QUEUELENGTHLIMIT', 'AGE']);
  const level = new Map(levelRows.slice(1).map((r) => [r[0].replace(`prioritylevelconfiguration.${GROUP}/`, ''), r.slice(1, 6)]));
  expect(Object.fromEntries(level)).toEqual({
    'catch-all': ['Limited', '5', '<none>', '<none>', '<none>'],
    exempt: ['Exempt', '<none>', '<none>', '<none>', '<none>'],
    'global-default': ['Limited', '20', '128', '6', '50'],
    'leader-election': ['Limited', '10', '16', '4', '50'],
    'node-high': ['Limited', '40', '64', '6', '50'],
    system: ['Limited', '30', '64', '6', '50'],
    'workload-high': ['Limited', '40', '128', '6', '50'],
    'workload-low': ['Limited', '100', '128', '6', '50'],
  });
});

test('with --runtime-config the v1beta3 version is served again and kubectl shows its deprecation warning', async () => {
  const { stdout, stderr } = await kubectlWithWarnings('get', `flowschemas.v1beta3.${GROUP}`, 'exempt', 'catch-all');
  expect(rows(stdout).map((r) => r.slice(0, 4))).toEqual([
    ['NAME', 'PRIORITYLEVEL', 'MATCHINGPRECEDENCE', 'DISTINGUISHERMETHOD'],
    ['exempt', 'exempt', '1', '<none>'],
    ['catch-all', 'catch-all', '10000', 'ByUser'],
  ]);
  expect(stderr).toContain(`Warning: ${GROUP}/v1beta3 FlowSchema is deprecated in v1.29+, unavailable in v1.32+; use ${GROUP}/v1 FlowSchema`);
  const levels = await kubectlWithWarnings(
    'get',
    `prioritylevelconfigurations.v1beta3.${GROUP}`,
    'workload-low',
    '-o',
    'jsonpath={.apiVersion} {.spec.limited.nominalConcurrencyShares}',
  );
  expect(levels.stdout).toBe(`${GROUP}/v1beta3 100`);
  expect(levels.stderr).toContain(`${GROUP}/v1beta3 PriorityLevelConfiguration is deprecated in v1.29+, unavailable in v1.32+`);
});

const TENANT_MANIFEST = `apiVersion: ${GROUP}/v1
kind: PriorityLevelConfiguration
metadata:
  name: tenant-a
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 10
    lendablePercent: 20
    borrowingLimitPercent: 50
    limitResponse:
      type: Queue
      queuing:
        queues: 16
        handSize: 4
        queueLengthLimit: 20
---
apiVersion: ${GROUP}/v1
kind: FlowSchema
metadata:
  name: tenant-a
spec:
  priorityLevelConfiguration:
    name: tenant-a
  matchingPrecedence: 1000
  distinguisherMethod:
    type: ByUser
  rules:
  - subjects:
    - kind: Group
      group:
        name: tenant-a
    resourceRules:
    - verbs: ["*"]
      apiGroups: ["*"]
      resources: ["*"]
      namespaces: ["*"]
      clusterScope: true
    nonResourceRules:
    - verbs: ["*"]
      nonResourceURLs: ["*"]
`;

test("a tenant's own priority level, applied with kubectl, classifies its requests: headers, metrics and the dump name it", async () => {
  const file = path.join(dir, 'tenant-a.yaml');
  await writeFile(file, TENANT_MANIFEST);
  const applied = await kubectl('apply', '-f', file);
  expect(applied).toContain(`prioritylevelconfiguration.${GROUP}/tenant-a created`);
  expect(applied).toContain(`flowschema.${GROUP}/tenant-a created`);
  const levelUid = (await kubectl('get', 'prioritylevelconfiguration', 'tenant-a', '-o', 'jsonpath={.metadata.uid}')).trim();
  const schemaUid = (await kubectl('get', 'flowschema', 'tenant-a', '-o', 'jsonpath={.metadata.uid}')).trim();
  expect(levelUid).toMatch(/^[0-9a-f-]{36}$/);
  // The configuration controller sets Dangling=False once it sees the level exists.
  const table = rows(await kubectl('get', 'flowschema', 'tenant-a', 'global-default'));
  expect(table[1].slice(0, 4)).toEqual(['tenant-a', 'tenant-a', '1000', 'ByUser']);

  // The filter picks the new objects up from its watch: the tenant's next requests are classified by them.
  let answer = await asUser(TENANT_TOKEN, '/api/v1/namespaces/default/configmaps');
  for (let i = 0; i < 50 && answer.headers['x-kubernetes-pf-flowschema-uid'] !== schemaUid; i++) {
    await new Promise((r) => setTimeout(r, 100));
    answer = await asUser(TENANT_TOKEN, '/api/v1/namespaces/default/configmaps');
  }
  expect(answer.status).toBe(200);
  expect(answer.headers['x-kubernetes-pf-flowschema-uid']).toBe(schemaUid);
  expect(answer.headers['x-kubernetes-pf-prioritylevel-uid']).toBe(levelUid);
  // Another user is still classified by the defaults.
  const plain = await asUser(PLAIN_TOKEN, '/version');
  expect(plain.status).toBe(200);
  const globalDefaultUid = (await kubectl('get', 'flowschema', 'global-default', '-o', 'jsonpath={.metadata.uid}')).trim();
  expect(plain.headers['x-kubernetes-pf-flowschema-uid']).toBe(globalDefaultUid);

  // upstream's metrics, labelled by the tenant's schema and level.
  const metrics = await kubectl('get', '--raw', '/metrics');
  const sample = (name: string, labels: Record<string, string>): number | undefined => {
    for (const line of metrics.split('\n')) {
      const m = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
      if (!m || m[1] !== name) continue;
      const have = Object.fromEntries([...m[2].matchAll(/([a-z_]+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
      if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
    }
    return undefined;
  };
  const tenant = { flow_schema: 'tenant-a', priority_level: 'tenant-a' };
  expect(sample('apiserver_flowcontrol_dispatched_requests_total', tenant)).toBeGreaterThanOrEqual(1);
  expect(sample('apiserver_flowcontrol_request_wait_duration_seconds_count', { ...tenant, execute: 'true' })).toBeGreaterThanOrEqual(1);
  expect(sample('apiserver_flowcontrol_request_execution_seconds_count', { ...tenant, type: 'regular' })).toBeGreaterThanOrEqual(1);
  expect(sample('apiserver_flowcontrol_nominal_limit_seats', { priority_level: 'tenant-a' })).toBeGreaterThanOrEqual(1);
  expect(sample('apiserver_flowcontrol_rejected_requests_total', tenant) ?? 0).toBe(0);

  // The admin reads the dump, which lists the tenant's level with upstream's columns.
  const dump = await kubectl('get', '--raw', '/debug/api_priority_and_fairness/dump_priority_levels');
  expect(columnsOf(dump).slice(0, 6)).toEqual(['PriorityLevelName', 'ActiveQueues', 'IsIdle', 'IsQuiescing', 'WaitingRequests', 'ExecutingRequests']);
  expect(dump).toMatch(/^tenant-a,/m);
});

test('configuration upstream refuses is refused with its messages', async () => {
  const file = path.join(dir, 'bad.yaml');
  await writeFile(
    file,
    `apiVersion: ${GROUP}/v1
kind: PriorityLevelConfiguration
metadata:
  name: bad-level
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 5
    lendablePercent: 101
    limitResponse:
      type: Reject
`,
  );
  await expect(kubectl('apply', '-f', file)).rejects.toThrow(
    /The PriorityLevelConfiguration "bad-level" is invalid: spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive/,
  );
  await writeFile(
    file,
    `apiVersion: ${GROUP}/v1
kind: FlowSchema
metadata:
  name: bad-schema
spec:
  priorityLevelConfiguration:
    name: tenant-a
  matchingPrecedence: 10001
`,
  );
  await expect(kubectl('apply', '-f', file)).rejects.toThrow(
    /The FlowSchema "bad-schema" is invalid: spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000/,
  );
  // The mandatory objects' specs are fixed (of the exempt level's, all but spec.exempt).
  await expect(
    kubectl('patch', 'prioritylevelconfiguration', 'catch-all', '--type=merge', '-p', '{"spec":{"limited":{"nominalConcurrencyShares":50}}}'),
  ).rejects.toThrow(/spec of 'catch-all' must equal the fixed value/);
  await expect(kubectl('patch', 'flowschema', 'exempt', '--type=merge', '-p', '{"spec":{"matchingPrecedence":5}}')).rejects.toThrow(
    /spec of 'exempt' must equal the fixed value/,
  );
});

test('the debug dump is for those allowed its path: 403 for a plain user', async () => {
  const refused = await asUser(PLAIN_TOKEN, '/debug/api_priority_and_fairness/dump_priority_levels');
  expect(refused.status).toBe(403);
  const status = JSON.parse(refused.body);
  expect(status).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403 });
  expect(status.message).toMatch(/^forbidden: User "plain" cannot get path "\/debug\/api_priority_and_fairness\/dump_priority_levels"/);
  expect((await asUser(PLAIN_TOKEN, '/debug/api_priority_and_fairness/dump_queues')).status).toBe(403);
  // The admin reads the other dumps too.
  const queues = await kubectl('get', '--raw', '/debug/api_priority_and_fairness/dump_queues');
  expect(columnsOf(queues).slice(0, 4)).toEqual(['PriorityLevelName', 'Index', 'PendingRequests', 'ExecutingRequests']);
  expect(queues).toMatch(/^tenant-a,\s+15,/m);
  const requests = await kubectl('get', '--raw', '/debug/api_priority_and_fairness/dump_requests');
  expect(columnsOf(requests).slice(0, 4)).toEqual(['PriorityLevelName', 'FlowSchemaName', 'QueueIndex', 'RequestIndexInQueue']);
});
