/**
 * Every served resource's CRUD over real HTTPS against the real server process, on both
 * backends, and the bad inputs of issue 3: each answers a clear Status and stores nothing.
 */
import { httpsRequest, type HttpsResult } from '../gateway/support/https-client';
import type { ServerProcess } from '../gateway/support/server-process';
import { startServerOnBackend } from './support/backend';
import { API_ONLY } from '../gateway/support/server-process';

const RBAC = 'rbac.authorization.k8s.io';
const ADMISSION = 'admissionregistration.k8s.io';
const WEBHOOK = { name: 'check.example.com', clientConfig: { url: 'https://hook.example.com/check' }, sideEffects: 'None', admissionReviewVersions: ['v1'] };
const RESOURCE_RULES = [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }];

interface Sample {
  path: string;
  kind: string;
  apiVersion: string;
  namespaced: boolean;
  body(name: string): Record<string, unknown>;
}

const samples: Record<string, Sample> = {
  namespaces: { path: '/api/v1/namespaces', kind: 'Namespace', apiVersion: 'v1', namespaced: false, body: () => ({}) },
  pods: {
    path: '/api/v1/namespaces/default/pods',
    kind: 'Pod',
    apiVersion: 'v1',
    namespaced: true,
    body: () => ({ spec: { containers: [{ name: 'c', image: 'nginx' }] } }),
  },
  secrets: { path: '/api/v1/namespaces/default/secrets', kind: 'Secret', apiVersion: 'v1', namespaced: true, body: () => ({ data: { a: 'Yg==' } }) },
  configmaps: { path: '/api/v1/namespaces/default/configmaps', kind: 'ConfigMap', apiVersion: 'v1', namespaced: true, body: () => ({ data: { a: 'b' } }) },
  serviceaccounts: { path: '/api/v1/namespaces/default/serviceaccounts', kind: 'ServiceAccount', apiVersion: 'v1', namespaced: true, body: () => ({}) },
  replicasets: {
    path: '/apis/apps/v1/namespaces/default/replicasets',
    kind: 'ReplicaSet',
    apiVersion: 'apps/v1',
    namespaced: true,
    body: (name) => ({
      spec: {
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    }),
  },
  roles: {
    path: `/apis/${RBAC}/v1/namespaces/default/roles`,
    kind: 'Role',
    apiVersion: `${RBAC}/v1`,
    namespaced: true,
    body: () => ({ rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }),
  },
  rolebindings: {
    path: `/apis/${RBAC}/v1/namespaces/default/rolebindings`,
    kind: 'RoleBinding',
    apiVersion: `${RBAC}/v1`,
    namespaced: true,
    body: () => ({ roleRef: { apiGroup: RBAC, kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: RBAC }] }),
  },
  clusterroles: {
    path: `/apis/${RBAC}/v1/clusterroles`,
    kind: 'ClusterRole',
    apiVersion: `${RBAC}/v1`,
    namespaced: false,
    body: () => ({ rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }] }),
  },
  clusterrolebindings: {
    path: `/apis/${RBAC}/v1/clusterrolebindings`,
    kind: 'ClusterRoleBinding',
    apiVersion: `${RBAC}/v1`,
    namespaced: false,
    body: () => ({ roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', name: 'devs', apiGroup: RBAC }] }),
  },
  events: {
    path: '/apis/events.k8s.io/v1/namespaces/default/events',
    kind: 'Event',
    apiVersion: 'events.k8s.io/v1',
    namespaced: true,
    body: () => ({
      eventTime: '2026-11-22T10:00:00.000000Z',
      reportingController: 'example.com/ctl',
      reportingInstance: 'ctl-1',
      action: 'Scale',
      reason: 'Scaled',
      type: 'Normal',
      regarding: { kind: 'ReplicaSet', name: 'web', namespace: 'default', apiVersion: 'apps/v1' },
    }),
  },
  mutatingwebhookconfigurations: {
    path: `/apis/${ADMISSION}/v1/mutatingwebhookconfigurations`,
    kind: 'MutatingWebhookConfiguration',
    apiVersion: `${ADMISSION}/v1`,
    namespaced: false,
    body: () => ({ webhooks: [WEBHOOK] }),
  },
  validatingwebhookconfigurations: {
    path: `/apis/${ADMISSION}/v1/validatingwebhookconfigurations`,
    kind: 'ValidatingWebhookConfiguration',
    apiVersion: `${ADMISSION}/v1`,
    namespaced: false,
    body: () => ({ webhooks: [WEBHOOK] }),
  },
  validatingadmissionpolicies: {
    path: `/apis/${ADMISSION}/v1/validatingadmissionpolicies`,
    kind: 'ValidatingAdmissionPolicy',
    apiVersion: `${ADMISSION}/v1`,
    namespaced: false,
    body: () => ({ spec: { matchConstraints: { resourceRules: RESOURCE_RULES }, validations: [{ expression: 'object.spec.replicas <= 5' }] } }),
  },
  validatingadmissionpolicybindings: {
    path: `/apis/${ADMISSION}/v1/validatingadmissionpolicybindings`,
    kind: 'ValidatingAdmissionPolicyBinding',
    apiVersion: `${ADMISSION}/v1`,
    namespaced: false,
    body: () => ({ spec: { policyName: 'replicas-limit', validationActions: ['Deny'] } }),
  },
};

type Backend = 'embedded' | 'etcd';

describe.each<Backend>(['embedded', 'etcd'])('resources over HTTPS (%s store)', (backend) => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServerOnBackend(backend, ['--vendor', 'kubernetes', ...API_ONLY]);
  });

  afterAll(async () => {
    await server?.stop();
  });

  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpsResult> =>
    httpsRequest(`${server.url}${path}`, server.admin, {
      method,
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  const json = (r: HttpsResult) => JSON.parse(r.body) as Record<string, any>;

  function expectStatus(r: HttpsResult, code: number, reason: string, message?: string | RegExp): Record<string, any> {
    const s = json(r);
    expect({ http: r.status, kind: s.kind, apiVersion: s.apiVersion, status: s.status, code: s.code, reason: s.reason }).toEqual({
      http: code,
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code,
      reason,
    });
    if (typeof message === 'string') expect(s.message).toBe(message);
    else if (message) expect(s.message).toMatch(message);
    return s;
  }

  async function names(path: string): Promise<string[]> {
    const r = await call('GET', path);
    expect(r.status).toBe(200);
    return (json(r).items as { metadata: { name: string } }[]).map((i) => i.metadata.name);
  }

  it.each(Object.keys(samples))('creates, reads, lists, updates, patches and deletes %s', async (resource) => {
    const s = samples[resource]!;
    const name = `crud-${resource}`;
    const created = await call('POST', s.path, { apiVersion: s.apiVersion, kind: s.kind, metadata: { name }, ...s.body(name) });
    expect(created.status).toBe(201);
    const obj = json(created);
    expect(obj).toMatchObject({ apiVersion: s.apiVersion, kind: s.kind, metadata: { name } });
    expect(obj.metadata.uid).toBeTruthy();

    const got = await call('GET', `${s.path}/${name}`);
    expect(got.status).toBe(200);
    expect(json(got).metadata.resourceVersion).toBe(obj.metadata.resourceVersion);
    expect(await names(s.path)).toContain(name);

    const updated = await call('PUT', `${s.path}/${name}`, { ...json(got), metadata: { ...json(got).metadata, labels: { touched: 'yes' } } });
    expect(updated.status).toBe(200);
    expect(json(updated).metadata.labels).toMatchObject({ touched: 'yes' });
    expect(Number(json(updated).metadata.resourceVersion)).toBeGreaterThan(Number(obj.metadata.resourceVersion));

    const patched = await call('PATCH', `${s.path}/${name}`, { metadata: { annotations: { note: 'hi' } } }, { 'Content-Type': 'application/merge-patch+json' });
    expect(patched.status).toBe(200);
    expect(json(patched).metadata.annotations).toEqual({ note: 'hi' });

    const deleted = await call('DELETE', `${s.path}/${name}`);
    expect([200, 202]).toContain(deleted.status);
    if (resource === 'namespaces') return; // Terminating until the namespace controller finalizes it.
    expectStatus(await call('GET', `${s.path}/${name}`), 404, 'NotFound');
  });

  it('answers each bad input with a clear Status and stores nothing', async () => {
    const cm = samples.configmaps!;
    const rs = samples.replicasets!;
    const before = await names(cm.path);

    expectStatus(await call('POST', cm.path, '{"metadata": {"name": "x"'), 400, 'BadRequest');
    expectStatus(await call('POST', cm.path, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }), 400, 'BadRequest', /must be of type ConfigMap/);
    expectStatus(
      await call('POST', cm.path, { apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'x' } }),
      400,
      'BadRequest',
      'the API version in the data (apps/v1) does not match the expected API version (v1)',
    );
    expectStatus(await call('POST', cm.path, { apiVersion: 'v1', kind: { a: 1 }, metadata: { name: 'x' } }), 400, 'BadRequest');
    expectStatus(
      await call('POST', cm.path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'kube-system' } }),
      400,
      'BadRequest',
      'the namespace of the provided object does not match the namespace sent on the request',
    );
    expectStatus(
      await call('POST', cm.path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Not_Valid' } }),
      422,
      'Invalid',
      /^ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid"/,
    );
    expectStatus(await call('POST', cm.path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }), 422, 'Invalid', /name or generateName is required/);
    expect(await names(cm.path)).toEqual(before);

    const rsInvalid = expectStatus(
      await call('POST', rs.path, {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'bad' },
        spec: { template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
      }),
      422,
      'Invalid',
      /^ReplicaSet.apps "bad" is invalid: /,
    );
    expect(rsInvalid.details).toMatchObject({ name: 'bad', group: 'apps', kind: 'ReplicaSet' });
    expect(rsInvalid.details.causes.some((c: { field: string }) => c.field === 'spec.selector')).toBe(true);
    expectStatus(await call('GET', `${rs.path}/bad`), 404, 'NotFound', 'replicasets.apps "bad" not found');

    const rb = samples.rolebindings!;
    expectStatus(await call('POST', rb.path, { apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: { name: 'noref' } }), 422, 'Invalid', /roleRef/);
    const good = json(await call('POST', rb.path, { apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: { name: 'keep' }, ...rb.body('keep') }));
    const changed = expectStatus(
      await call('PUT', `${rb.path}/keep`, { ...good, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'other' } }),
      422,
      'Invalid',
      /^RoleBinding.rbac.authorization.k8s.io "keep" is invalid: roleRef: Invalid value: .*cannot change roleRef/,
    );
    expect(changed.details.kind).toBe('RoleBinding');
    expectStatus(
      await call('PUT', `${rb.path}/other`, { ...good }),
      400,
      'BadRequest',
      'the name of the object (keep) does not match the name on the URL (other)',
    );
    expectStatus(
      await call('POST', rb.path, { apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: { name: 'keep' }, ...rb.body('keep') }),
      409,
      'AlreadyExists',
      'rolebindings.rbac.authorization.k8s.io "keep" already exists',
    );
    await call('PUT', `${rb.path}/keep`, { ...good, subjects: [] });
    expectStatus(
      await call('PUT', `${rb.path}/keep`, good),
      409,
      'Conflict',
      'Operation cannot be fulfilled on rolebindings.rbac.authorization.k8s.io "keep": the object has been modified; please apply your changes to the latest version and try again',
    );
    expect(json(await call('GET', `${rb.path}/keep`)).roleRef).toEqual(good.roleRef);

    const vwc = samples.validatingwebhookconfigurations!;
    const badHook = expectStatus(
      await call('POST', vwc.path, {
        apiVersion: `${ADMISSION}/v1`,
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'bad-hook' },
        webhooks: [{ ...WEBHOOK, sideEffects: 'Some' }],
      }),
      422,
      'Invalid',
      `ValidatingWebhookConfiguration.${ADMISSION} "bad-hook" is invalid: webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`,
    );
    expect(badHook.details).toMatchObject({
      name: 'bad-hook',
      group: ADMISSION,
      kind: 'ValidatingWebhookConfiguration',
      causes: [{ reason: 'FieldValueNotSupported', field: 'webhooks[0].sideEffects' }],
    });
    expectStatus(await call('GET', `${vwc.path}/bad-hook`), 404, 'NotFound', `validatingwebhookconfigurations.${ADMISSION} "bad-hook" not found`);

    expectStatus(await call('POST', '/api/v1/namespaces/nowhere/configmaps', { metadata: { name: 'x' } }), 404, 'NotFound', 'namespaces "nowhere" not found');
    expectStatus(await call('GET', cm.path, undefined, { Accept: 'text/html' }), 406, 'NotAcceptable');
    expectStatus(await call('POST', cm.path, 'name: x', { 'Content-Type': 'text/plain' }), 415, 'UnsupportedMediaType');
    expectStatus(await call('PATCH', `${rb.path}/keep`, '{}', { 'Content-Type': 'application/json' }), 415, 'UnsupportedMediaType');
    expectStatus(await call('POST', `${cm.path}/named`, { metadata: { name: 'named' } }), 405, 'MethodNotAllowed');
    expectStatus(await call('GET', '/api/v1/namespaces/default/widgets'), 404, 'NotFound');
    expectStatus(await call('GET', `${cm.path}?limit=abc`), 400, 'BadRequest');
    expectStatus(await call('GET', `${cm.path}?labelSelector=a%20in%20(`), 400, 'BadRequest');
    expect(await names(cm.path)).toEqual(before);
  });

  it('accepts YAML bodies and answers in YAML', async () => {
    const r = await call('POST', samples.configmaps!.path, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n', {
      'Content-Type': 'application/yaml',
      Accept: 'application/yaml',
    });
    expect(r.status).toBe(201);
    expect(r.headers['content-type']).toMatch(/^application\/yaml/);
    expect(r.body).toMatch(/^apiVersion: v1\n/m);
    expect(r.body).toMatch(/name: from-yaml/);
  });

  it('keeps a finalized object Terminating until its finalizer is removed', async () => {
    const cm = samples.configmaps!;
    await call('POST', cm.path, { metadata: { name: 'held', finalizers: ['example.com/hold'] } });
    const del = await call('DELETE', `${cm.path}/held`);
    expect(del.status).toBe(200);
    expect(json(del).metadata.deletionTimestamp).toBeTruthy();
    expect(json(await call('GET', `${cm.path}/held`)).metadata.deletionTimestamp).toBeTruthy();
    await call('PATCH', `${cm.path}/held`, { metadata: { finalizers: null } }, { 'Content-Type': 'application/merge-patch+json' });
    expectStatus(await call('GET', `${cm.path}/held`), 404, 'NotFound');
  });
});
