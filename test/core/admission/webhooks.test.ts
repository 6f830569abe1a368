/**
 * Admission webhooks through a real core (embedded store) calling a real HTTPS webhook on
 * loopback: what the webhook receives, allow, deny with message and code, JSON patches,
 * timeouts and failure policies, rules and selectors, match conditions, dry run against each
 * sideEffects value, reinvocation, warnings and audit annotations. Messages are upstream's.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCore, type ApiObject, type Core, type RequestContext } from '../../../src/core';
import { objectKey } from '../../../src/core/storage/keys';
import { encodeForStorage } from '../../../src/core/storage/object-codec';
import { createStore, type Store } from '../../../src/store';
import { ManualClock } from '../../../src/clock';
import { createNaming } from '../../../src/naming';
import { at, refusal } from './support';
import { allow, deny, startWebhook, type TestWebhook } from './webhook-server';
import { Registry } from 'prom-client';
import { admissionMetrics } from '../../../src/server/admission-metrics';
import { eventually } from '../../support/eventually';

const naming = createNaming('kubernetes');
const AR = 'admissionregistration.k8s.io';
const admin: RequestContext = { user: { username: 'admin', uid: 'u-1', groups: ['system:masters', 'system:authenticated'] } };
const configMap = (name: string, labels?: Record<string, string>, data: Record<string, string> = { k: 'v' }): ApiObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});
const CONFIGMAP_RULES = [{ operations: ['CREATE', 'UPDATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }];

let dir: string;
let store: Store;
let core: Core;
let hook: TestWebhook;
let ns = 0;
/** The server's admission metrics, fed by this file's core. */
const metrics = new Registry();

/** A fresh namespace per test, so configurations of earlier tests (scoped by namespace label) stay out of the way. */
async function namespace(labels: Record<string, string> = {}, on: Core = core): Promise<string> {
  const name = `t${++ns}`;
  await on.create(at('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { test: name, ...labels } } }, {}, admin);
  return name;
}

async function inEffect(obj: ApiObject, on: Core = core): Promise<void> {
  expect(await on.state!().admissionFresh(Number(obj.metadata!.resourceVersion), 5000)).toBe(true);
}

type WebhookSpec = Record<string, unknown> & { name: string };

function webhookFor(p: string, spec: WebhookSpec, testNs: string): Record<string, unknown> {
  return {
    clientConfig: { url: hook.url(p), caBundle: hook.caBundle },
    rules: CONFIGMAP_RULES,
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    namespaceSelector: { matchLabels: { test: testNs } },
    ...spec,
  };
}

async function validating(name: string, testNs: string, webhooks: Array<[string, WebhookSpec]>, on: Core = core): Promise<ApiObject> {
  const { object } = await on.create(
    at('validatingwebhookconfigurations', undefined, undefined, AR),
    { apiVersion: `${AR}/v1`, kind: 'ValidatingWebhookConfiguration', metadata: { name }, webhooks: webhooks.map(([p, s]) => webhookFor(p, s, testNs)) },
    {},
    admin,
  );
  await inEffect(object, on);
  return object;
}

async function mutating(name: string, testNs: string, webhooks: Array<[string, WebhookSpec]>): Promise<ApiObject> {
  const { object } = await core.create(
    at('mutatingwebhookconfigurations', undefined, undefined, AR),
    { apiVersion: `${AR}/v1`, kind: 'MutatingWebhookConfiguration', metadata: { name }, webhooks: webhooks.map(([p, s]) => webhookFor(p, s, testNs)) },
    {},
    admin,
  );
  await inEffect(object);
  return object;
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-webhooks-'));
  store = createStore({ kind: 'embedded', dataDir: dir });
  core = createCore({ store, naming, compactionIntervalMs: 0, admissionMetrics: admissionMetrics(metrics) });
  await core.ready();
  hook = await startWebhook();
});

afterAll(async () => {
  await hook.close();
  await core.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('validating webhooks', () => {
  test("the webhook receives upstream's AdmissionReview v1 and the write goes through when it allows", async () => {
    const t = await namespace();
    await validating('allow-all', t, [['/allow', { name: 'allow.example.com' }]]);
    const { object } = await core.create(at('configmaps', t), configMap('cm'), { fieldManager: 'tester' }, admin);
    const [rec] = hook.on('/allow').filter((r) => r.review.request.namespace === t);
    expect(rec!.timeout).toBe('10s');
    expect(rec!.review.apiVersion).toBe('admission.k8s.io/v1');
    expect(rec!.review.kind).toBe('AdmissionReview');
    const req = rec!.review.request;
    expect(req.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(req).toMatchObject({
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
      requestResource: { group: '', version: 'v1', resource: 'configmaps' },
      name: 'cm',
      namespace: t,
      operation: 'CREATE',
      userInfo: { username: 'admin', uid: 'u-1', groups: ['system:masters', 'system:authenticated'] },
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'tester' },
    });
    expect(req.object).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'cm', namespace: t, uid: object.metadata!.uid }, data: { k: 'v' } });
    expect(req.subResource).toBeUndefined();

    await core.delete(at('configmaps', t, 'cm'), {}, admin);
    const del = hook.on('/allow').find((r) => r.review.request.namespace === t && r.review.request.operation === 'DELETE')!.review.request;
    expect(del.object).toBeNull();
    expect(del.oldObject).toMatchObject({ metadata: { name: 'cm', uid: object.metadata!.uid } });
    expect(del.options).toMatchObject({ kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' });
  });

  test('a refusal carries the webhook message and code, and nothing is stored', async () => {
    const t = await namespace();
    hook.handle('/deny-403', () => deny({ code: 403, message: 'no thanks', reason: 'Forbidden' }));
    hook.handle('/deny-bare', () => deny());
    hook.handle('/deny-reason', () => deny({ reason: 'NotToday' }));
    await validating('deny', t, [['/deny-403', { name: 'deny.example.com', objectSelector: { matchLabels: { kind: 'coded' } } }]]);
    await validating('deny-bare', t, [['/deny-bare', { name: 'bare.example.com', objectSelector: { matchLabels: { kind: 'bare' } } }]]);
    await validating('deny-reason', t, [['/deny-reason', { name: 'reason.example.com', objectSelector: { matchLabels: { kind: 'reason' } } }]]);

    const coded = await refusal(core.create(at('configmaps', t), configMap('a', { kind: 'coded' }), {}, admin));
    expect(coded.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      status: 'Failure',
      message: 'admission webhook "deny.example.com" denied the request: no thanks',
    });
    const bare = await refusal(core.create(at('configmaps', t), configMap('b', { kind: 'bare' }), {}, admin));
    expect(bare.status).toMatchObject({ code: 400, message: 'admission webhook "bare.example.com" denied the request without explanation' });
    const reason = await refusal(core.create(at('configmaps', t), configMap('c', { kind: 'reason' }), {}, admin));
    expect(reason.status).toMatchObject({ code: 400, reason: 'NotToday', message: 'admission webhook "reason.example.com" denied the request: NotToday' });
    const list = await core.list(at('configmaps', t), {}, admin);
    expect(list.items).toEqual([]);
  });

  test('warnings reach the client and audit annotations are keyed by the webhook name', async () => {
    const t = await namespace();
    hook.handle('/warn', () => ({ response: { allowed: true, warnings: ['deprecated field used'], auditAnnotations: { checked: 'yes' } } }));
    await validating('warn', t, [['/warn', { name: 'warn.example.com' }]]);
    const annotations: Record<string, string> = {};
    const ctx: RequestContext = { ...admin, warnings: [], annotate: (k, v) => void (annotations[k] = v) };
    await core.create(at('configmaps', t), configMap('w'), {}, ctx);
    expect(ctx.warnings).toEqual(['deprecated field used']);
    expect(annotations).toEqual({ 'warn.example.com/checked': 'yes' });
  });

  test('rules, the object selector and match conditions choose what is sent', async () => {
    const t = await namespace();
    await validating('choose', t, [
      ['/only-updates', { name: 'updates.example.com', rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] }],
      ['/only-secrets', { name: 'secrets.example.com', rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['*'], resources: ['secrets'] }] }],
      ['/labelled', { name: 'labelled.example.com', objectSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['a'] }] } }],
      ['/conditions', { name: 'conditions.example.com', matchConditions: [{ name: 'not-skipped', expression: "object.metadata.name != 'skip-me'" }] }],
    ]);
    const sent = (p: string) =>
      hook
        .on(p)
        .filter((r) => r.review.request.namespace === t)
        .map((r) => `${r.review.request.operation} ${r.review.request.name}`);
    await core.create(at('configmaps', t), configMap('one', { team: 'a' }), {}, admin);
    await core.create(at('configmaps', t), configMap('skip-me', { team: 'b' }), {}, admin);
    const one = await core.get(at('configmaps', t, 'one'), {}, admin);
    await core.update(at('configmaps', t, 'one'), { ...one, data: { k: 'changed' } }, {}, admin);
    expect(sent('/only-updates')).toEqual(['UPDATE one']);
    expect(sent('/only-secrets')).toEqual([]);
    expect(sent('/labelled')).toEqual(['CREATE one', 'UPDATE one']);
    expect(sent('/conditions')).toEqual(['CREATE one', 'UPDATE one']);
  });

  test('the namespace selector reads the namespace labels', async () => {
    const t = await namespace({ env: 'prod' });
    const u = await namespace({ env: 'dev' });
    await validating('by-namespace', t, [['/prod-only', { name: 'prod.example.com', namespaceSelector: { matchLabels: { env: 'prod' } } }]]);
    await core.create(at('configmaps', t), configMap('in-prod'), {}, admin);
    await core.create(at('configmaps', u), configMap('in-dev'), {}, admin);
    expect(hook.on('/prod-only').map((r) => r.review.request.name)).toEqual(['in-prod']);
  });

  test("a webhook that times out follows its failure policy: Fail is a 500 with the call error, Ignore goes on; the timeout runs on the core's clock", async () => {
    // A core of its own on a ManualClock: the timeout fires when the clock is moved, not after a real second.
    const clock = new ManualClock();
    const own = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-webhooks-clock-'));
    const timed = createCore({ store: createStore({ kind: 'embedded', dataDir: own }), naming, compactionIntervalMs: 0, clock });
    await timed.ready();
    try {
      const t = await namespace({}, timed);
      hook.handle('/slow', () => ({ delayMs: 60_000 }));
      await validating(
        'slow',
        t,
        [
          ['/slow', { name: 'slow-fail.example.com', timeoutSeconds: 1, failurePolicy: 'Fail', objectSelector: { matchLabels: { policy: 'fail' } } }],
          ['/slow', { name: 'slow-ignore.example.com', timeoutSeconds: 1, failurePolicy: 'Ignore', objectSelector: { matchLabels: { policy: 'ignore' } } }],
        ],
        timed,
      );
      const held = (name: string) => hook.on('/slow').filter((r) => r.review.request.namespace === t && r.review.request.name === name).length === 1;
      /** Start a create, wait until the webhook holds its call, then move the clock to just before and then to the timeout. */
      const timedOut = async <T>(name: string, write: () => Promise<T>): Promise<T> => {
        let settled = false;
        const pending = write().finally(() => (settled = true));
        pending.catch(() => undefined);
        await eventually(() => held(name), { what: `the webhook to hold ${name}`, intervalMs: 5 });
        clock.advance(999);
        // The pause is the point: a call that timed out a millisecond early would have settled within it.
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(settled).toBe(false);
        clock.advance(1);
        // Well before a real second: the timeout followed the clock.
        const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no timeout at the clock's second")), 500).unref());
        return Promise.race([pending, late]);
      };
      const err = await timedOut('f', () => refusal(timed.create(at('configmaps', t), configMap('f', { policy: 'fail' }), {}, admin)));
      expect(err.status).toMatchObject({
        code: 500,
        reason: 'InternalError',
        message: `Internal error occurred: failed calling webhook "slow-fail.example.com": failed to call webhook: Post "${hook.url('/slow')}?timeout=1s": context deadline exceeded`,
      });
      await expect(timed.get(at('configmaps', t, 'f'), {}, admin)).rejects.toMatchObject({ status: { code: 404 } });
      const annotations: Record<string, string> = {};
      await timedOut('i', () =>
        timed.create(at('configmaps', t), configMap('i', { policy: 'ignore' }), {}, { ...admin, annotate: (k, v) => void (annotations[k] = v) }),
      );
      expect(annotations).toEqual({ 'failed-open.validating.webhook.admission.k8s.io/round_0_index_0': 'slow-ignore.example.com' });
      expect((await timed.get(at('configmaps', t, 'i'), {}, admin)).metadata?.name).toBe('i');
      expect(hook.on('/slow').every((r) => r.timeout === '1s')).toBe(true);
    } finally {
      await timed.close();
      await fs.rm(own, { recursive: true, force: true });
    }
  });

  test('an unreachable webhook, an HTTP error and a malformed answer fail closed with the reason', async () => {
    const t = await namespace();
    hook.handle('/broken', () => ({ httpStatus: 500, body: 'kaput' }));
    hook.handle('/wrong-uid', () => ({ raw: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'nope', allowed: true } } }));
    await validating('failing', t, [
      ['/broken', { name: 'broken.example.com', objectSelector: { matchLabels: { w: 'broken' } } }],
      ['/wrong-uid', { name: 'uid.example.com', objectSelector: { matchLabels: { w: 'uid' } } }],
    ]);
    const broken = await refusal(core.create(at('configmaps', t), configMap('b', { w: 'broken' }), {}, admin));
    expect(broken.status.message).toBe(
      'Internal error occurred: failed calling webhook "broken.example.com": failed to call webhook: an error on the server ("kaput") has prevented the request from succeeding',
    );
    const uid = await refusal(core.create(at('configmaps', t), configMap('u', { w: 'uid' }), {}, admin));
    expect(uid.status.message).toMatch(
      /^Internal error occurred: failed calling webhook "uid.example.com": received invalid webhook response: expected response.uid="[0-9a-f-]{36}", got "nope"$/,
    );
  });

  test("each call is counted in upstream's webhook metrics: allowed, refused with its code, failed closed, failed open", async () => {
    const t = await namespace();
    hook.handle('/m-allow', () => allow());
    hook.handle('/m-deny', () => deny({ code: 403, message: 'no' }));
    hook.handle('/m-broken', () => ({ httpStatus: 502, body: 'bad gateway' }));
    await validating('metered', t, [
      ['/m-allow', { name: 'allow.metrics.example.com', objectSelector: { matchLabels: { m: 'allow' } } }],
      ['/m-deny', { name: 'deny.metrics.example.com', objectSelector: { matchLabels: { m: 'deny' } } }],
      ['/m-broken', { name: 'broken.metrics.example.com', objectSelector: { matchLabels: { m: 'broken' } } }],
      ['/m-broken', { name: 'open.metrics.example.com', failurePolicy: 'Ignore', objectSelector: { matchLabels: { m: 'open' } } }],
    ]);
    await core.create(at('configmaps', t), configMap('a', { m: 'allow' }), {}, admin);
    await refusal(core.create(at('configmaps', t), configMap('d', { m: 'deny' }), {}, admin));
    await refusal(core.create(at('configmaps', t), configMap('b', { m: 'broken' }), {}, admin));
    await core.create(at('configmaps', t), configMap('o', { m: 'open' }), {}, admin);
    const text = await metrics.metrics();
    const has = (line: string) => expect(text.split('\n')).toContain(line);
    has('apiserver_admission_webhook_request_total{name="allow.metrics.example.com",type="validating",operation="CREATE",code="200",rejected="false"} 1');
    has('apiserver_admission_webhook_request_total{name="deny.metrics.example.com",type="validating",operation="CREATE",code="403",rejected="true"} 1');
    has(
      'apiserver_admission_webhook_rejection_count{name="deny.metrics.example.com",type="validating",operation="CREATE",error_type="no_error",rejection_code="403"} 1',
    );
    has('apiserver_admission_webhook_request_total{name="broken.metrics.example.com",type="validating",operation="CREATE",code="502",rejected="true"} 1');
    has(
      'apiserver_admission_webhook_rejection_count{name="broken.metrics.example.com",type="validating",operation="CREATE",error_type="calling_webhook_error",rejection_code="502"} 1',
    );
    has('apiserver_admission_webhook_request_total{name="open.metrics.example.com",type="validating",operation="CREATE",code="200",rejected="false"} 1');
    has('apiserver_admission_webhook_fail_open_count{name="open.metrics.example.com",type="validating"} 1');
    has('apiserver_admission_webhook_admission_duration_seconds_count{name="deny.metrics.example.com",type="validating",operation="CREATE",rejected="true"} 1');
    expect(text).toMatch(
      /^apiserver_admission_controller_admission_duration_seconds_count\{name="ValidatingAdmissionWebhook",type="validate",operation="CREATE",rejected="true"\} [1-9]/m,
    );
  });

  test("a service reference to a missing Service fails the call with upstream's dial error, naming the Service's URL", async () => {
    const t = await namespace();
    await validating('by-service', t, [
      [
        '/unused',
        { name: 'svc.example.com', clientConfig: { service: { namespace: t, name: 'hook', path: '/validate', port: 443 }, caBundle: hook.caBundle } },
      ],
    ]);
    const err = await refusal(core.create(at('configmaps', t), configMap('s'), {}, admin));
    expect(err.status).toMatchObject({
      code: 500,
      message: `Internal error occurred: failed calling webhook "svc.example.com": failed to call webhook: Post "https://hook.${t}.svc:443/validate?timeout=10s": service "hook" not found`,
    });
  });

  test('dry run: None and NoneOnDryRun are called with dryRun true; Unknown and Some refuse the dry run', async () => {
    const t = await namespace();
    await validating('dry', t, [
      ['/dry-none', { name: 'none.example.com', sideEffects: 'None', objectSelector: { matchLabels: { s: 'none' } } }],
      ['/dry-nodr', { name: 'noneondryrun.example.com', sideEffects: 'NoneOnDryRun', objectSelector: { matchLabels: { s: 'nodr' } } }],
    ]);
    await core.create(at('configmaps', t), configMap('n', { s: 'none' }), { dryRun: ['All'] }, admin);
    await core.create(at('configmaps', t), configMap('o', { s: 'nodr' }), { dryRun: ['All'] }, admin);
    expect(hook.on('/dry-none').map((r) => r.review.request.dryRun)).toEqual([true]);
    expect(hook.on('/dry-nodr').map((r) => r.review.request.dryRun)).toEqual([true]);

    // v1 refuses Unknown and Some on create; a configuration an older release stored may still hold them.
    const legacy = {
      apiVersion: `${AR}/v1`,
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'legacy', uid: 'legacy-uid', creationTimestamp: '2020-01-01T00:00:00Z' },
      webhooks: [
        {
          ...webhookFor('/dry-unknown', { name: 'unknown.example.com', sideEffects: 'Unknown', objectSelector: { matchLabels: { s: 'unknown' } } }, t),
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          timeoutSeconds: 10,
        },
        {
          ...webhookFor('/dry-some', { name: 'some.example.com', sideEffects: 'Some', objectSelector: { matchLabels: { s: 'some' } } }, t),
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          timeoutSeconds: 10,
        },
      ],
    };
    const kv = await store.create(objectKey('validatingwebhookconfigurations', undefined, 'legacy'), encodeForStorage(legacy));
    expect(await core.state!().admissionFresh(kv.modRevision, 5000)).toBe(true);
    for (const [label, webhookName] of [
      ['unknown', 'unknown.example.com'],
      ['some', 'some.example.com'],
    ]) {
      const err = await refusal(core.create(at('configmaps', t), configMap(`dry-${label}`, { s: label! }), { dryRun: ['All'] }, admin));
      expect(err.status).toMatchObject({ code: 400, reason: 'BadRequest', message: `admission webhook "${webhookName}" does not support dry run` });
    }
    expect(hook.on('/dry-unknown')).toEqual([]);
    // The real request calls them.
    await core.create(at('configmaps', t), configMap('real', { s: 'some' }), {}, admin);
    expect(hook.on('/dry-some').map((r) => r.review.request.dryRun)).toEqual([false]);
  });
});

describe('mutating webhooks', () => {
  test('a JSON patch changes what is stored; the audit event notes the mutation', async () => {
    const t = await namespace();
    hook.handle('/label', () =>
      allow([
        { op: 'add', path: '/metadata/labels', value: { patched: 'yes' } },
        { op: 'add', path: '/data/added', value: 'by-webhook' },
      ]),
    );
    const config = await mutating('label', t, [['/label', { name: 'label.example.com' }]]);
    const annotations: Record<string, string> = {};
    const { object } = await core.create(at('configmaps', t), configMap('m'), {}, { ...admin, annotate: (k, v) => void (annotations[k] = v) });
    expect(object.metadata!.labels).toEqual({ patched: 'yes' });
    expect(object.data).toEqual({ k: 'v', added: 'by-webhook' });
    expect((await core.get(at('configmaps', t, 'm'), {}, admin)).data).toEqual({ k: 'v', added: 'by-webhook' });
    expect(JSON.parse(annotations['mutation.webhook.admission.k8s.io/round_0_index_0']!)).toEqual({
      configuration: 'label',
      webhook: 'label.example.com',
      mutated: true,
    });
    await core.delete(at('mutatingwebhookconfigurations', undefined, config.metadata!.name, AR), {}, admin);
  });

  test('fields a patch adds that the type does not have are dropped; a value of the wrong type is a 500', async () => {
    const t = await namespace();
    hook.handle('/unknown-field', () => allow([{ op: 'add', path: '/bogus', value: 1 }]));
    hook.handle('/bad-type', () => allow([{ op: 'replace', path: '/data', value: 'not-a-map' }]));
    await mutating('shapes', t, [
      ['/unknown-field', { name: 'unknown-field.example.com', objectSelector: { matchLabels: { p: 'unknown' } } }],
      ['/bad-type', { name: 'bad-type.example.com', objectSelector: { matchLabels: { p: 'bad' } } }],
    ]);
    const { object } = await core.create(at('configmaps', t), configMap('u', { p: 'unknown' }), {}, admin);
    expect(object).not.toHaveProperty('bogus');
    const err = await refusal(core.create(at('configmaps', t), configMap('b', { p: 'bad' }), {}, admin));
    expect(err.status.code).toBe(500);
    await expect(core.get(at('configmaps', t, 'b'), {}, admin)).rejects.toMatchObject({ status: { code: 404 } });
  });

  test('reinvocation: an IfNeeded webhook is called again when a later one changed the object', async () => {
    const t = await namespace();
    hook.handle('/first', (r) => {
      const labels = r.review.request.object.metadata.labels ?? {};
      return allow(labels.first ? [] : [{ op: 'add', path: '/metadata/labels/first', value: 'yes' }]);
    });
    hook.handle('/second', () => allow([{ op: 'add', path: '/metadata/annotations', value: { second: 'yes' } }]));
    await mutating('a-first', t, [['/first', { name: 'first.example.com', reinvocationPolicy: 'IfNeeded' }]]);
    await mutating('b-second', t, [['/second', { name: 'second.example.com' }]]);
    const { object } = await core.create(at('configmaps', t), configMap('r', { base: 'x' }), {}, admin);
    expect(object.metadata!.labels).toEqual({ base: 'x', first: 'yes' });
    expect(object.metadata!.annotations).toEqual({ second: 'yes' });
    const calls = hook.on('/first').filter((r) => r.review.request.namespace === t);
    expect(calls).toHaveLength(2);
    // The second call sees what the later webhook did.
    expect(calls[1]!.review.request.object.metadata.annotations).toEqual({ second: 'yes' });
    expect(hook.on('/second').filter((r) => r.review.request.namespace === t)).toHaveLength(1);
  });

  test('mutating webhooks run before validating ones, which see the patched object', async () => {
    const t = await namespace();
    hook.handle('/stamp', () => allow([{ op: 'add', path: '/metadata/labels', value: { stamped: 'yes' } }]));
    hook.handle('/check-stamp', (r) => (r.review.request.object.metadata.labels?.stamped === 'yes' ? allow() : deny({ message: 'not stamped' })));
    await mutating('stamp', t, [['/stamp', { name: 'stamp.example.com' }]]);
    await validating('check-stamp', t, [['/check-stamp', { name: 'check.example.com' }]]);
    await core.create(at('configmaps', t), configMap('s'), {}, admin);
  });

  test('the admissionregistration types are never sent to webhooks, so a bad configuration can be removed', async () => {
    hook.handle('/deny-everything', () => deny({ message: 'no' }));
    const { object } = await core.create(
      at('validatingwebhookconfigurations', undefined, undefined, AR),
      {
        apiVersion: `${AR}/v1`,
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'deny-everything' },
        webhooks: [
          {
            name: 'all.example.com',
            clientConfig: { url: hook.url('/deny-everything'), caBundle: hook.caBundle },
            rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }],
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      },
      {},
      admin,
    );
    await inEffect(object);
    const t = await refusal(core.create(at('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'blocked' } }, {}, admin));
    expect(t.status.message).toBe('admission webhook "all.example.com" denied the request: no');
    await core.delete(at('validatingwebhookconfigurations', undefined, 'deny-everything', AR), {}, admin);
    expect(hook.on('/deny-everything').map((r) => r.review.request.resource.resource)).toEqual(['namespaces']);
  });
});

describe('matchPolicy with the Event served by two groups', () => {
  const EVENTS_GROUP_RULES = [{ operations: ['CREATE'], apiGroups: ['events.k8s.io'], apiVersions: ['v1'], resources: ['events'] }];
  const coreEvent = (name: string): ApiObject => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name },
    involvedObject: { kind: 'Pod', name: 'p' },
    reason: 'Pulled',
    message: 'original',
    source: { component: 'kubelet' },
    count: 1,
  });

  test('Equivalent sends a core group write to a webhook for the events group, converted, naming the version written; Exact does not', async () => {
    const t = await namespace();
    await validating('events-equivalent', t, [
      ['/events-equivalent', { name: 'equivalent.example.com', rules: EVENTS_GROUP_RULES }],
      ['/events-exact', { name: 'exact.example.com', rules: EVENTS_GROUP_RULES, matchPolicy: 'Exact' }],
    ]);
    const mine = (p: string) =>
      hook
        .on(p)
        .filter((r) => r.review.request.namespace === t)
        .map((r) => r.review.request);
    await core.create(at('events', t), { ...coreEvent('core.1'), involvedObject: { kind: 'Pod', name: 'p', namespace: t } }, {}, admin);
    expect(mine('/events-exact')).toEqual([]);
    const [req] = mine('/events-equivalent');
    expect(req).toMatchObject({
      kind: { group: 'events.k8s.io', version: 'v1', kind: 'Event' },
      resource: { group: 'events.k8s.io', version: 'v1', resource: 'events' },
      requestKind: { group: '', version: 'v1', kind: 'Event' },
      requestResource: { group: '', version: 'v1', resource: 'events' },
      name: 'core.1',
    });
    expect(req!.object).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      note: 'original',
      regarding: { kind: 'Pod', name: 'p' },
      deprecatedSource: { component: 'kubelet' },
      deprecatedCount: 1,
    });
    expect(req!.object).not.toHaveProperty('message');
    // A write through the events group itself: both are called, and the request is its own.
    await core.create(
      at('events', t, undefined, 'events.k8s.io'),
      {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'group.1' },
        eventTime: '2026-01-01T00:00:00.000000Z',
        reportingController: 'example.com/ctl',
        reportingInstance: 'i',
        action: 'A',
        reason: 'R',
        regarding: { kind: 'Pod', name: 'p', namespace: t },
        type: 'Normal',
      },
      {},
      admin,
    );
    expect(mine('/events-exact').map((r) => r.name)).toEqual(['group.1']);
    expect(mine('/events-equivalent').map((r) => [r.name, r.requestKind.group])).toEqual([
      ['core.1', ''],
      ['group.1', 'events.k8s.io'],
    ]);
  });

  test('a mutating webhook for the events group patches a core group write in its own version, converted back', async () => {
    const t = await namespace();
    hook.handle('/events-note', () => allow([{ op: 'replace', path: '/note', value: 'patched by the webhook' }]));
    await mutating('events-note', t, [['/events-note', { name: 'note.example.com', rules: EVENTS_GROUP_RULES }]]);
    const { object } = await core.create(at('events', t), { ...coreEvent('core.2'), involvedObject: { kind: 'Pod', name: 'p', namespace: t } }, {}, admin);
    expect(object).toMatchObject({ apiVersion: 'v1', message: 'patched by the webhook', involvedObject: { name: 'p' }, count: 1 });
    expect(await core.get(at('events', t, 'core.2', 'events.k8s.io'), {}, admin)).toMatchObject({ note: 'patched by the webhook' });
  });
});
