/**
 * API Priority and Fairness through real HTTPS (docs/OPERATIONS.md, "Priority and fairness"): a
 * library server with its concurrency lowered to 3 seats, a tenant jailed in its own priority
 * level (1 seat, Reject) by a FlowSchema, flooding with concurrent lists: only the flooding user
 * is refused (429, `Retry-After`, upstream's text), another user's requests all succeed, every
 * classified answer names its FlowSchema and priority level by UID, the metrics count the
 * refusals, and the debug dump is readable by those allowed its path only.
 */
import https from 'node:https';
import { startServer, type RunningServer, type UserCredentials } from '../../src/library';
import { eventually } from '../support/eventually';

const GROUP = 'flowcontrol.apiserver.k8s.io';
let server: RunningServer;
let flood: UserCredentials;
let calm: UserCredentials;
let nobody: UserCredentials;
let floodSchemaUid: string;
let jailUid: string;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Connections kept per user, so that a burst's requests reach the server together rather than behind their TLS handshakes. */
const agents = new Map<string, https.Agent>();

function request(who: { cert: string; key: string }, method: string, path: string, body?: unknown): Promise<Answer> {
  const url = new URL(path, server.url);
  let agent = agents.get(who.cert);
  if (!agent) {
    agent = new https.Agent({ keepAlive: true, maxSockets: 64, ca: server.ca, cert: who.cert, key: who.key });
    agents.set(who.cert, agent);
  }
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, agent, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

beforeAll(async () => {
  server = await startServer({ controllers: [], simulatedNodes: 0, priorityAndFairness: { maxRequestsInflight: 2, maxMutatingRequestsInflight: 1 } });
  const admin = server.adminCredentials;
  [flood, calm, nobody] = await Promise.all([server.newUser('flood', ['tenants']), server.newUser('calm'), server.newUser('nobody')]);
  const binding = await request(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: 'tenants-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'flood' },
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'calm' },
    ],
  });
  expect(binding.status).toBe(201);
  const jail = await request(admin, 'POST', `/apis/${GROUP}/v1/prioritylevelconfigurations`, {
    metadata: { name: 'flood-jail' },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } } },
  });
  expect(jail.status).toBe(201);
  jailUid = JSON.parse(jail.body).metadata.uid;
  const schema = await request(admin, 'POST', `/apis/${GROUP}/v1/flowschemas`, {
    metadata: { name: 'flood' },
    spec: {
      matchingPrecedence: 100,
      priorityLevelConfiguration: { name: 'flood-jail' },
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: 'flood' } }],
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
        },
      ],
    },
  });
  expect(schema.status).toBe(201);
  floodSchemaUid = JSON.parse(schema.body).metadata.uid;
  // The filter follows the objects through an informer: wait until it classifies by them.
  await eventually(
    async () => (await request(flood, 'GET', '/api/v1/namespaces/default/configmaps')).headers['x-kubernetes-pf-flowschema-uid'] === floodSchemaUid,
    {
      what: 'the flood FlowSchema to classify',
    },
  );
}, 60_000);

afterAll(async () => {
  for (const agent of agents.values()) agent.destroy();
  await server?.stop();
});

test('a flooding user is refused 429 with Retry-After and upstream’s text; another user is served throughout', async () => {
  const burst = () => Promise.all(Array.from({ length: 50 }, () => request(flood, 'GET', '/api/v1/configmaps')));
  // The first burst opens the flooding user's connections; the second arrives at once on them.
  const opening = await burst();
  const floods = burst();
  const calms = Array.from({ length: 5 }, () => request(calm, 'GET', '/api/v1/namespaces/default/configmaps'));
  const [floodAnswers, calmAnswers] = await Promise.all([floods, Promise.all(calms)]);
  expect(calmAnswers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
  for (const a of calmAnswers) {
    expect(a.headers['x-kubernetes-pf-flowschema-uid']).toBeTruthy();
    expect(a.headers['x-kubernetes-pf-flowschema-uid']).not.toBe(floodSchemaUid);
    expect(a.headers['x-kubernetes-pf-prioritylevel-uid']).toBeTruthy();
  }
  const refused = floodAnswers.filter((a) => a.status !== 200);
  expect(refused.length).toBeGreaterThan(0);
  expect(refused.length).toBeLessThan(50);
  for (const a of refused) {
    expect(a.status).toBe(429);
    expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(a.body).toBe('Too many requests, please try again later.\n');
  }
  for (const a of floodAnswers) {
    expect(a.headers['x-kubernetes-pf-flowschema-uid']).toBe(floodSchemaUid);
    expect(a.headers['x-kubernetes-pf-prioritylevel-uid']).toBe(jailUid);
  }
  const metrics = await request(server.adminCredentials, 'GET', '/metrics');
  const counted = /^apiserver_flowcontrol_rejected_requests_total\{priority_level="flood-jail",flow_schema="flood",reason="concurrency-limit"\} (\d+)$/m.exec(
    metrics.body,
  );
  expect(Number(counted?.[1])).toBe(refused.length + opening.filter((a) => a.status === 429).length);
  expect(metrics.body).not.toMatch(/^apiserver_flowcontrol_rejected_requests_total\{priority_level="global-default"/m);
  expect(metrics.body).toMatch(/^apiserver_flowcontrol_nominal_limit_seats\{priority_level="flood-jail"\} 1$/m);
  expect(metrics.body).toMatch(/^apiserver_flowcontrol_dispatched_requests_total\{priority_level="flood-jail",flow_schema="flood"\} \d+$/m);
  expect(metrics.body).toMatch(/^apiserver_flowcontrol_current_executing_requests\{/m);
  expect(metrics.body).toMatch(/^apiserver_flowcontrol_request_wait_duration_seconds_bucket\{/m);
}, 60_000);

test('the debug dump lists the levels for a caller allowed its path, 403 for one who is not', async () => {
  const dump = await request(server.adminCredentials, 'GET', '/debug/api_priority_and_fairness/dump_priority_levels');
  expect(dump.status).toBe(200);
  const rows = dump.body.trimEnd().split('\n');
  expect(rows[0]).toMatch(/^PriorityLevelName,\s+ActiveQueues,\s+IsIdle,\s+IsQuiescing,\s+WaitingRequests,\s+ExecutingRequests,/);
  const names = rows.slice(1).map((r) => r.split(',')[0]);
  expect(names).toEqual(expect.arrayContaining(['catch-all', 'exempt', 'flood-jail', 'global-default', 'workload-low']));
  const jailRow = rows.find((r) => r.startsWith('flood-jail,'))!.split(/,\s*/);
  expect(Number(jailRow[7])).toBeGreaterThan(0);
  const denied = await request(nobody, 'GET', '/debug/api_priority_and_fairness/dump_priority_levels');
  expect(denied.status).toBe(403);
  // Classified before authorization, as upstream's chain runs them: the 403 carries the headers.
  expect(denied.headers['x-kubernetes-pf-flowschema-uid']).toBeTruthy();
  expect(denied.headers['x-kubernetes-pf-prioritylevel-uid']).toBeTruthy();
  const forbidden = await request(nobody, 'GET', '/api/v1/namespaces/default/secrets');
  expect(forbidden.status).toBe(403);
  expect(JSON.parse(forbidden.body)).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
  expect(forbidden.headers['x-kubernetes-pf-flowschema-uid']).toBeTruthy();
  expect(forbidden.headers['x-kubernetes-pf-prioritylevel-uid']).toBeTruthy();
});

test('with --enable-priority-and-fairness=false nothing is classified: no headers, the in-flight counters instead', async () => {
  const plain = await startServer({ controllers: [], simulatedNodes: 0, priorityAndFairness: { enabled: false } });
  try {
    const answer = await new Promise<Answer>((resolve, reject) => {
      const req = https.request(
        new URL('/api/v1/namespaces/default/configmaps', plain.url),
        { ca: plain.ca, ...plain.adminCredentials, agent: false },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '' }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['x-kubernetes-pf-flowschema-uid']).toBeUndefined();
    expect(answer.headers['x-kubernetes-pf-prioritylevel-uid']).toBeUndefined();
    const dump = await new Promise<number>((resolve, reject) => {
      const req = https.request(
        new URL('/debug/api_priority_and_fairness/dump_priority_levels', plain.url),
        { ca: plain.ca, ...plain.adminCredentials, agent: false },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(dump).toBe(404);
  } finally {
    await plain.stop();
  }
}, 60_000);
