import { mkdtemp, readdir, readFile, rm, writeFile, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type AuditEvent, auditStep, evaluatePolicy, parseAuditPolicy } from '../../../src/gateway/audit';
import { defaultCodecs } from '../../../src/gateway/codecs';
import { compose } from '../../../src/gateway/pipeline';
import { requestInfoStep } from '../../../src/gateway/steps/request-info';
import type { Exchange, Handler, RequestInfo } from '../../../src/gateway/types';
import { createNaming } from '../../../src/naming';
import { ManualClock } from '../../../src/clock';
import { gunzipSync } from 'node:zlib';
import { badRequest } from '../../../src/status';
import { backupName, openAuditLog } from '../../../src/server/audit-log';
import { fakeExchange } from '../support/http';
import { ServerMetrics } from '../../../src/metrics';

const naming = createNaming('kubernetes');
const alice = { username: 'alice', groups: ['dev', 'system:authenticated'] };

function infoOf(url: string, method = 'GET'): RequestInfo {
  const { exchange } = fakeExchange({ url, method });
  let seen: Exchange | undefined;
  void requestInfoStep(async (e) => void (seen = e))(exchange);
  return seen!.info!;
}

test('the request-info step tells the write turns of every request but lists and watches (they make way for it)', () => {
  const seen: string[] = [];
  for (const [url, method] of [
    ['/api/v1/namespaces/a/configmaps/x', 'GET'],
    ['/api/v1/namespaces/a/configmaps', 'GET'],
    ['/api/v1/namespaces/a/configmaps?watch=true', 'GET'],
    ['/api/v1/namespaces/a/configmaps', 'POST'],
    ['/healthz', 'GET'],
  ] as const) {
    const { exchange } = fakeExchange({ url, method });
    const turns = { shortRequestArrived: () => seen.push(`${method} ${url}`) };
    Object.assign(exchange, { writeTurns: turns });
    void requestInfoStep(async () => undefined)(exchange);
  }
  expect(seen).toEqual(['GET /api/v1/namespaces/a/configmaps/x', 'POST /api/v1/namespaces/a/configmaps', 'GET /healthz']);
});

const POLICY = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: [system:kube-proxy]
- level: RequestResponse
  resources:
  - group: ""
    resources: [configmaps, "pods/*"]
- level: Request
  verbs: [create]
  namespaces: [prod]
- level: Metadata
  nonResourceURLs: ["/healthz*"]
  omitStages: [ResponseComplete]
- level: Metadata
  userGroups: [dev]
`;

describe('audit policy', () => {
  const policy = parseAuditPolicy(POLICY, naming);

  it('takes the first matching rule: users, groups, verbs, resources with subresources, namespaces, non-resource URLs', () => {
    const level = (user: typeof alice, url: string, method = 'GET') => evaluatePolicy(policy, user, infoOf(url, method)).level;
    expect(level({ username: 'system:kube-proxy', groups: ['dev'] }, '/api/v1/configmaps')).toBe('None');
    expect(level(alice, '/api/v1/namespaces/a/configmaps/x')).toBe('RequestResponse');
    expect(level(alice, '/api/v1/namespaces/a/pods/x/status')).toBe('RequestResponse');
    expect(level(alice, '/api/v1/namespaces/a/pods/x')).toBe('Metadata');
    expect(level({ username: 'bob', groups: [] }, '/api/v1/namespaces/prod/secrets', 'POST')).toBe('Request');
    expect(level({ username: 'bob', groups: [] }, '/api/v1/namespaces/dev/secrets', 'POST')).toBe('None');
    expect(level({ username: 'bob', groups: [] }, '/healthz/etcd')).toBe('Metadata');
    const health = evaluatePolicy(policy, alice, infoOf('/healthz'));
    expect([...health.omitStages].sort()).toEqual(['RequestReceived', 'ResponseComplete']);
  });

  it('refuses a policy with mistakes, naming the field', () => {
    expect(() => parseAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n', naming)).toThrow(
      'rules: Required value: at least one rule is required',
    );
    expect(() => parseAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n', naming)).toThrow(
      /rules\[0\]\.level: Unsupported value: "Loud"/,
    );
    expect(() => parseAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  omitStages: [Later]\n', naming)).toThrow(
      /rules\[0\]\.omitStages\[0\]: Unsupported value: "Later"/,
    );
    expect(() =>
      parseAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: ["/a"]\n  resources: [{group: ""}]\n', naming),
    ).toThrow(/cannot apply to both/);
    expect(() => parseAuditPolicy('apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n', naming)).toThrow(
      /want apiVersion audit.k8s.io\/v1, kind Policy/,
    );
    expect(() => parseAuditPolicy('apiVersion: audit.platform.io/v1\nkind: Policy\nrules:\n- level: None\n', createNaming('platform'))).not.toThrow();
  });
});

describe('audit step', () => {
  function run(policyText: string, handler: Handler, init: Parameters<typeof fakeExchange>[0], user = alice) {
    const events: AuditEvent[] = [];
    const clock = new ManualClock(Date.parse('2026-11-25T10:00:00Z'));
    const step = auditStep({ policy: parseAuditPolicy(policyText, naming), sink: (e) => void events.push(e), naming, clock, codecs: defaultCodecs });
    const { exchange, response } = fakeExchange(init);
    exchange.id = 'id-1';
    const done = compose([requestInfoStep, (next) => async (e) => next(Object.assign(e, { user })), step], handler)(exchange);
    return { events, response, done };
  }
  const rr = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n';

  it('records the request and response objects at RequestResponse, with upstream’s fields and stages', async () => {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', managedFields: [{ manager: 'm' }] } });
    const { events, done } = run(
      `${rr}  omitManagedFields: true\n`,
      async (e) => {
        const b = await e.request.readBody(1 << 20);
        e.annotate?.('example.com/note', 'x');
        e.response.setHeader('Content-Type', 'application/json');
        e.response.writeHead(201);
        e.response.end(b);
      },
      {
        method: 'POST',
        url: '/api/v1/namespaces/default/configmaps?dryRun=All',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'kubectl/v1.32' },
      },
    );
    await done;
    expect(events.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
    expect(events[1]).toEqual({
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: 'RequestResponse',
      auditID: 'id-1',
      stage: 'ResponseComplete',
      requestURI: '/api/v1/namespaces/default/configmaps?dryRun=All',
      verb: 'create',
      user: alice,
      userAgent: 'kubectl/v1.32',
      objectRef: { resource: 'configmaps', namespace: 'default', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 201 },
      requestObject: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } },
      responseObject: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } },
      requestReceivedTimestamp: '2026-11-25T10:00:00.000000Z',
      stageTimestamp: '2026-11-25T10:00:00.000000Z',
      annotations: { 'example.com/note': 'x' },
    });
  });

  it('at Metadata keeps no bodies; a refused request records its Status; a watch gets ResponseStarted', async () => {
    const meta = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n';
    const failed = run(
      meta,
      async () => {
        throw badRequest('nope');
      },
      { method: 'POST', url: '/api/v1/namespaces/default/configmaps', body: '{}' },
    );
    await expect(failed.done).rejects.toThrow('nope');
    expect(failed.events[1]).toMatchObject({
      stage: 'ResponseComplete',
      responseStatus: { metadata: {}, status: 'Failure', message: 'nope', reason: 'BadRequest', code: 400 },
    });
    expect(failed.events[1]).not.toHaveProperty('requestObject');

    const watch = run(
      meta,
      async (e) => {
        e.response.writeHead(200);
        e.response.flushHeaders();
        e.response.write('{"type":"ADDED"}\n');
        e.response.end();
      },
      { url: '/api/v1/pods?watch=true' },
    );
    await watch.done;
    expect(watch.events.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    expect(watch.events[1]!.responseStatus).toEqual({ metadata: {}, code: 200 });
  });

  it('a request no rule selects is not audited', async () => {
    const { events, done } = run('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  users: [someone]\n', async (e) => e.response.end(), {
      url: '/api/v1/pods',
    });
    await done;
    expect(events).toEqual([]);
  });

  describe('with a blocking backend', () => {
    function runWith(sink: (e: AuditEvent) => boolean | Promise<boolean>, handler: Handler) {
      const metrics = new ServerMetrics();
      const policy = parseAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n', naming);
      const step = auditStep({ policy, sink, naming, clock: new ManualClock(), codecs: defaultCodecs, metrics, blocking: true });
      const { exchange, response } = fakeExchange({ method: 'POST', url: '/api/v1/namespaces/default/configmaps?fieldManager=a&dryRun=All', body: '{}' });
      const done = compose([requestInfoStep, (next) => async (e) => next(Object.assign(e, { user: alice })), step], handler)(exchange);
      return { response, done, metrics };
    }
    const counter = async (metrics: ServerMetrics, name: string) =>
      (await metrics.text()).body
        .split('\n')
        .filter((l) => l.startsWith(name))
        .join('\n');

    it('blocking-strict: a first event that could not be recorded fails the request with upstream’s 500, and nothing more is audited', async () => {
      const seen: string[] = [];
      let handled = false;
      const { response, done, metrics } = runWith(
        async (e) => (seen.push(e.stage), false),
        async () => void (handled = true),
      );
      await done;
      expect(handled).toBe(false);
      expect(seen).toEqual(['RequestReceived']);
      expect(response.status).toBe(500);
      expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(response.text).toBe('Internal Server Error: "/api/v1/namespaces/default/configmaps?fieldManager=a&amp;dryRun=All": failed to store audit event\n');
      expect(await counter(metrics, 'apiserver_audit_requests_rejected_total')).toBe('apiserver_audit_requests_rejected_total 1');
      expect(await counter(metrics, 'apiserver_audit_event_total')).toBe('apiserver_audit_event_total 1');
      expect(await counter(metrics, 'apiserver_audit_level_total')).toBe('apiserver_audit_level_total{level="Metadata"} 1');
    });

    it('blocking: the request waits for each event to be recorded, its answer held until the last one is', async () => {
      const order: string[] = [];
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let answered = () => false;
      const { done, response } = runWith(
        async (e) => {
          order.push(`sink ${e.stage}${answered() ? ' (answered)' : ''}`);
          if (e.stage === 'RequestReceived') await held;
          order.push(`recorded ${e.stage}`);
          return true;
        },
        async (e) => {
          order.push('handler');
          e.response.writeHead(201);
          e.response.end('{}');
        },
      );
      answered = () => response.ended;
      // The pause is the point: while the sink holds RequestReceived, nothing after it may run.
      await new Promise((r) => setTimeout(r, 10));
      expect(order).toEqual(['sink RequestReceived']);
      release();
      await done;
      expect(order).toEqual(['sink RequestReceived', 'recorded RequestReceived', 'handler', 'sink ResponseComplete', 'recorded ResponseComplete']);
      expect(response.ended).toBe(true);
      expect(response.status).toBe(201);
      expect(response.text).toBe('{}');
    });
  });
});

describe('audit log file', () => {
  it('appends JSON lines, rotates past maxsize into <name>-<UTC time>.<ext>, keeps maxbackup files and drops ones past maxage', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-audit-'));
    const file = path.join(dir, 'audit.log');
    const clock = new ManualClock(Date.parse('2026-11-25T10:00:00Z'));
    expect(backupName(file, clock.now())).toBe(path.join(dir, 'audit-2026-11-25T10-00-00.000.log'));
    // An old backup from long ago goes at the first rotation.
    const ancient = path.join(dir, 'audit-2020-01-01T00-00-00.000.log');
    await writeFile(ancient, 'old\n');
    await utimes(ancient, new Date('2020-01-01'), new Date('2020-01-01'));
    const log = openAuditLog({ path: file, maxSizeMb: 1, maxBackups: 2, maxAgeDays: 30, clock });
    const event = { kind: 'Event', note: 'x'.repeat(100 * 1024) } as unknown as AuditEvent;
    for (let i = 0; i < 40; i++) {
      expect(log.process([event])).toBe(true);
      clock.advance(1000);
    }
    await log.close();
    const names = (await readdir(dir)).sort();
    expect(names).toHaveLength(3);
    expect(names).toContain('audit.log');
    expect(names).not.toContain(path.basename(ancient));
    for (const name of names) {
      const lines = (await readFile(path.join(dir, name), 'utf8')).trim().split('\n');
      expect(lines.every((l) => JSON.parse(l).kind === 'Event')).toBe(true);
      expect(lines.length).toBeLessThanOrEqual(10);
    }
    await rm(dir, { recursive: true, force: true });
  });

  it('writes the legacy format, and gzips rotated files with compress (kept and pruned like the others)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-audit-'));
    const file = path.join(dir, 'audit.log');
    const clock = new ManualClock(Date.parse('2026-11-25T10:00:00Z'));
    const log = openAuditLog({ path: file, maxSizeMb: 1, maxBackups: 2, maxAgeDays: 0, compress: true, format: 'legacy', clock });
    const event: AuditEvent = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: 'Metadata',
      auditID: 'a1',
      stage: 'ResponseComplete',
      requestURI: `/api/v1/namespaces/default/configmaps?label=${'x'.repeat(100 * 1024)}`,
      verb: 'list',
      user: { username: 'alice', groups: ['dev'] },
      sourceIPs: ['10.0.0.1'],
      objectRef: { resource: 'configmaps', namespace: 'default', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 200 },
      requestReceivedTimestamp: '2026-11-25T10:00:00.000000Z',
      stageTimestamp: '2026-11-25T10:00:00.000000Z',
    };
    for (let i = 0; i < 40; i++) {
      log.process([event]);
      clock.advance(1000);
    }
    await log.close();
    const names = (await readdir(dir)).sort();
    expect(names).toHaveLength(3);
    expect(names.filter((n) => n.endsWith('.log.gz'))).toHaveLength(2);
    const rotated = gunzipSync(await readFile(path.join(dir, names.find((n) => n.endsWith('.gz'))!))).toString('utf8');
    const lines = rotated.trim().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    expect(lines[0]).toMatch(
      /^2026-11-25T10:00:00Z AUDIT: id="a1" stage="ResponseComplete" ip="10.0.0.1" method="list" user="alice" groups="\\"dev\\"" as="<self>" asgroups="<lookup>" user-agent="" namespace="default" uri="\/api\/v1\/namespaces\/default\/configmaps\?label=x+" response="200"$/,
    );
    await rm(dir, { recursive: true, force: true });
  });

  it('a write that fails is reported with the events it lost, and answers false', async () => {
    const failures: string[] = [];
    const log = openAuditLog({
      path: '/dev/full',
      maxSizeMb: 0,
      maxBackups: 0,
      maxAgeDays: 0,
      clock: new ManualClock(),
      onError: (plugin, err, events) => failures.push(`${plugin}: ${err.message} (${events.length})`),
    });
    expect(log.process([{ kind: 'Event' } as unknown as AuditEvent])).toBe(false);
    await log.close();
    expect(failures).toEqual([expect.stringMatching(/^log: ENOSPC.*\(1\)$/)]);
  });
});
