/**
 * Custom resources from outside (issue 52): a CustomResourceDefinition installed through the
 * library and through kubectl, its objects created, listed with their printer columns, scaled
 * and deleted with unmodified kubectl 1.32, and read, listed and watched through
 * @kubernetes/client-node's CustomObjectsApi, on the kubernetes naming profile.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { startServer, type RunningServer } from '../../src/library';
import { eventually } from '../support/eventually';
import { KUBECTL } from './support/kubectl';
import { cronTabCrd } from './support/crds';

const run = promisify(execFile);

let server: RunningServer;
let dir: string;

async function kubectl(...args: string[]): Promise<string> {
  try {
    return (await run(KUBECTL, ['--kubeconfig', server.kubeconfigPath, ...args], { timeout: 30_000 })).stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')} failed: ${e.stderr ?? e.message}`);
  }
}

async function kubectlFails(...args: string[]): Promise<string> {
  try {
    await run(KUBECTL, ['--kubeconfig', server.kubeconfigPath, ...args], { timeout: 30_000 });
  } catch (err) {
    return (err as { stderr?: string }).stderr ?? '';
  }
  throw new Error(`kubectl ${args.join(' ')} succeeded`);
}

function customObjects(): k8s.CustomObjectsApi {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(server.kubeconfig);
  return kc.makeApiClient(k8s.CustomObjectsApi);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-crd-'));
  await writeFile(path.join(dir, 'crontab.yaml'), JSON.stringify(cronTabCrd()));
  // The library installs the definitions from a directory and resolves once they are served.
  server = await startServer({ simulatedNodes: 0, crds: [dir], log: process.env.CRD_LOG ? (l) => console.log(l) : undefined });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('the definition is established with its accepted names, and discovery lists the resource', async () => {
  await kubectl('wait', '--for=condition=established', '--timeout=10s', 'crd/crontabs.stable.example.com');
  const crd = JSON.parse(await kubectl('get', 'crd', 'crontabs.stable.example.com', '-o', 'json'));
  expect(crd.status.acceptedNames).toMatchObject({ plural: 'crontabs', singular: 'crontab', kind: 'CronTab', listKind: 'CronTabList', shortNames: ['ct'] });
  expect(crd.status.storedVersions).toEqual(['v1']);
  expect(crd.status.conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`)).toEqual(
    expect.arrayContaining(['NamesAccepted=True', 'Established=True']),
  );
  const resources = await kubectl('api-resources', '--api-group=stable.example.com', '-o', 'name');
  expect(resources.trim()).toBe('crontabs.stable.example.com');
});

test("kubectl explain shows the schema's descriptions", async () => {
  const explained = await kubectl('explain', 'crontabs.spec');
  expect(explained).toContain('KIND:       CronTab');
  expect(explained).toContain('cronSpec');
  expect(explained).toContain('The schedule, in cron format.');
  expect(await kubectl('explain', 'crontabs')).toContain('A CronTab runs a command on a schedule.');
});

test('kubectl applies, gets with the printer columns, scales and deletes custom resources', async () => {
  const manifest = path.join(dir, 'my-crontab.yaml');
  await writeFile(
    manifest,
    'apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: my-new-cron-object\nspec:\n  cronSpec: "* * * * */5"\n  image: my-awesome-cron-image\n',
  );
  expect(await kubectl('apply', '-f', manifest)).toContain('crontab.stable.example.com/my-new-cron-object created');
  const table = await kubectl('get', 'crontabs');
  expect(table.split('\n')[0]).toMatch(/^NAME\s+SPEC\s+REPLICAS\s+AGE$/);
  expect(table).toMatch(/my-new-cron-object\s+\* \* \* \* \*\/5\s+1\s+\d+s/);
  // The schema's default filled spec.replicas; the short name works.
  expect(await kubectl('get', 'ct', 'my-new-cron-object', '-o', 'jsonpath={.spec.replicas}')).toBe('1');
  expect(await kubectl('scale', 'crontab', 'my-new-cron-object', '--replicas=3')).toContain('scaled');
  expect(await kubectl('get', 'crontab', 'my-new-cron-object', '-o', 'jsonpath={.spec.replicas} {.metadata.generation}')).toBe('3 2');
  // Applied again with a change: server-side merge of the last-applied configuration.
  await writeFile(
    manifest,
    'apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: my-new-cron-object\nspec:\n  cronSpec: "* * * * */10"\n  image: my-awesome-cron-image\n',
  );
  expect(await kubectl('apply', '-f', manifest)).toContain('configured');
  expect(await kubectl('get', 'crontab', 'my-new-cron-object', '-o', 'jsonpath={.spec.cronSpec}')).toBe('* * * * */10');
  expect(await kubectl('apply', '--server-side', '--force-conflicts', '-f', manifest)).toContain('serverside-applied');
  const managers = JSON.parse(await kubectl('get', 'crontab', 'my-new-cron-object', '-o', 'json', '--show-managed-fields')).metadata.managedFields.map(
    (m: { manager: string; operation: string }) => `${m.manager}/${m.operation}`,
  );
  expect(managers).toContain('kubectl/Apply');
  expect(await kubectl('delete', 'crontab', 'my-new-cron-object')).toContain('deleted');
  expect(await kubectlFails('get', 'crontab', 'my-new-cron-object')).toContain('NotFound');
});

test('unknown fields are pruned with a warning, Strict refuses them, a strategic merge patch is 415', async () => {
  const api = customObjects();
  const body = { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'pruned' }, spec: { cronSpec: 'x', bogus: true } };
  const created = (await api.createNamespacedCustomObject({ group: 'stable.example.com', version: 'v1', namespace: 'default', plural: 'crontabs', body })) as {
    spec: Record<string, unknown>;
  };
  expect(created.spec).toEqual({ cronSpec: 'x', replicas: 1 });
  const res = await fetchAsAdmin('/apis/stable.example.com/v1/namespaces/default/crontabs/pruned', {
    method: 'PATCH',
    headers: { 'content-type': 'application/strategic-merge-patch+json' },
    body: '{"spec":{"image":"a"}}',
  });
  expect(res.status).toBe(415);
  const strictCreate = await fetchAsAdmin('/apis/stable.example.com/v1/namespaces/default/crontabs?fieldValidation=Strict', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, metadata: { name: 'strict' } }),
  });
  expect(strictCreate.status).toBe(400);
  expect((await strictCreate.json()).message).toContain('unknown field "spec.bogus"');
});

test('client-node CustomObjectsApi creates, lists and watches custom resources', async () => {
  const api = customObjects();
  const group = 'stable.example.com';
  const kc = new k8s.KubeConfig();
  kc.loadFromString(server.kubeconfig);
  const seen: string[] = [];
  const watch = await new k8s.Watch(kc).watch(
    `/apis/${group}/v1/namespaces/default/crontabs`,
    {},
    (type, obj: { metadata: { name: string } }) => seen.push(`${type} ${obj.metadata.name}`),
    () => undefined,
  );
  for (const name of ['a', 'b']) {
    await api.createNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: 'default',
      plural: 'crontabs',
      body: { apiVersion: `${group}/v1`, kind: 'CronTab', metadata: { name }, spec: { cronSpec: name } },
    });
  }
  const list = (await api.listNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'crontabs' })) as {
    kind: string;
    items: { kind: string; metadata: { name: string } }[];
  };
  expect(list.kind).toBe('CronTabList');
  expect(list.items.map((i) => i.metadata.name)).toEqual(expect.arrayContaining(['a', 'b']));
  expect(list.items.every((i) => i.kind === 'CronTab')).toBe(true);
  await eventually(() => seen.includes('ADDED a') && seen.includes('ADDED b'), { what: 'watch events for a and b' });
  watch.abort();
});

async function fetchAsAdmin(urlPath: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  const https = await import('node:https');
  const url = new URL(urlPath, server.url);
  return new Promise<{ status: number; json: () => Promise<any> }>((resolve, reject) => {
    const req = https.request(
      url,
      { method: init.method ?? 'GET', headers: init.headers, ca: server.ca, cert: server.adminCredentials.cert, key: server.adminCredentials.key },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: async () => JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

test('representations: YAML, JSON with sorted keys, protobuf alone 406 and JSON when also accepted, a Table from the printer columns', async () => {
  const api = customObjects();
  await api.createNamespacedCustomObject({
    group: 'stable.example.com',
    version: 'v1',
    namespace: 'default',
    plural: 'crontabs',
    body: {
      apiVersion: 'stable.example.com/v1',
      kind: 'CronTab',
      metadata: { name: 'shown', labels: { z: '1', a: '2' } },
      spec: { image: 'i', cronSpec: 'c' },
    },
  });
  const at = '/apis/stable.example.com/v1/namespaces/default/crontabs/shown';
  const json = await fetchAsAdmin(at, { headers: { accept: 'application/json' } });
  const text = JSON.stringify(await json.json());
  // Upstream writes custom resources as unstructured objects: keys sorted at every level.
  expect(text.indexOf('"apiVersion"')).toBeLessThan(text.indexOf('"kind"'));
  expect(text.indexOf('"a":"2"')).toBeLessThan(text.indexOf('"z":"1"'));
  expect(text.indexOf('"cronSpec"')).toBeLessThan(text.indexOf('"image"'));
  const yaml = await fetchText(at, { accept: 'application/yaml' });
  expect(yaml.status).toBe(200);
  expect(yaml.body).toContain('kind: CronTab');
  expect(yaml.body).toContain('cronSpec: c');
  expect((await fetchText(at, { accept: 'application/vnd.kubernetes.protobuf' })).status).toBe(406);
  const fallback = await fetchText(at, { accept: 'application/vnd.kubernetes.protobuf, application/json' });
  expect(fallback.status).toBe(200);
  expect(fallback.type).toContain('application/json');
  const table = await fetchAsAdmin('/apis/stable.example.com/v1/namespaces/default/crontabs', {
    headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
  });
  const body = await table.json();
  expect(body.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(['Name', 'Spec', 'Replicas', 'Age']);
  expect(body.rows.find((r: { cells: unknown[] }) => r.cells[0] === 'shown').cells.slice(0, 3)).toEqual(['shown', 'c', 1]);
});

async function fetchText(urlPath: string, headers: Record<string, string>): Promise<{ status: number; body: string; type: string }> {
  const https = await import('node:https');
  const url = new URL(urlPath, server.url);
  return new Promise((resolve, reject) => {
    const req = https.request(url, { headers, ca: server.ca, cert: server.adminCredentials.cert, key: server.adminCredentials.key }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), type: String(res.headers['content-type']) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('RBAC by group and plural, and a ValidatingAdmissionPolicy, apply to custom resources', async () => {
  const bob = await server.newUser('bob', ['crontab-readers']);
  const asBob = (...args: string[]) =>
    run(KUBECTL, ['--kubeconfig', path.join(dir, 'bob.kubeconfig'), ...args], { timeout: 30_000 }).then(
      (r) => ({ ok: true, out: r.stdout }),
      (e: { stderr?: string }) => ({ ok: false, out: e.stderr ?? '' }),
    );
  await writeFile(path.join(dir, 'bob.kubeconfig'), bob.kubeconfig);
  expect((await asBob('get', 'crontabs')).out).toContain('is forbidden: User "bob" cannot list resource "crontabs" in API group "stable.example.com"');
  await kubectl('create', 'role', 'crontab-reader', '--verb=get,list', '--resource=crontabs.stable.example.com');
  await kubectl('create', 'rolebinding', 'crontab-readers', '--role=crontab-reader', '--group=crontab-readers');
  await eventually(async () => (await asBob('get', 'crontabs')).ok, { what: 'bob allowed to list crontabs' });
  expect((await asBob('delete', 'crontab', 'shown')).out).toContain('cannot delete resource "crontabs"');

  const policy = path.join(dir, 'policy.yaml');
  await writeFile(
    policy,
    [
      'apiVersion: admissionregistration.k8s.io/v1',
      'kind: ValidatingAdmissionPolicy',
      'metadata: {name: crontab-replicas}',
      'spec:',
      '  failurePolicy: Fail',
      '  matchConstraints:',
      '    resourceRules: [{apiGroups: [stable.example.com], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [crontabs]}]',
      '  validations: [{expression: "object.spec.replicas <= 5", message: "at most 5 replicas"}]',
      '---',
      'apiVersion: admissionregistration.k8s.io/v1',
      'kind: ValidatingAdmissionPolicyBinding',
      'metadata: {name: crontab-replicas}',
      'spec: {policyName: crontab-replicas, validationActions: [Deny]}',
      '',
    ].join('\n'),
  );
  await kubectl('apply', '-f', policy);
  const big = path.join(dir, 'big.yaml');
  await writeFile(big, 'apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: big}\nspec: {replicas: 6}\n');
  await eventually(async () => (await kubectlFails('create', '-f', big)).includes('at most 5 replicas'), { what: 'the policy to deny' });
});

test('a definition of 3 MiB is refused before anything is decoded', async () => {
  const huge = cronTabCrd({ plural: 'hugethings', kind: 'HugeThing' });
  (huge.spec.versions[0]!.schema.openAPIV3Schema as { description: string }).description = 'x'.repeat(3 * 1024 * 1024);
  const res = await fetchAsAdmin('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(huge),
  });
  expect(res.status).toBe(413);
  expect(await kubectlFails('get', 'crd', 'hugethings.stable.example.com')).toContain('NotFound');
});

test('a second definition asking for a name in use is not accepted; deleting a definition removes its objects and its path', async () => {
  const second = path.join(dir, 'second.json');
  await writeFile(second, JSON.stringify(cronTabCrd({ plural: 'crontabs2', kind: 'CronTab2', shortNames: ['ct'] })));
  await kubectl('create', '-f', second);
  await eventually(
    async () => {
      const crd = JSON.parse(await kubectl('get', 'crd', 'crontabs2.stable.example.com', '-o', 'json'));
      const names = crd.status?.conditions?.find((c: { type: string }) => c.type === 'NamesAccepted');
      return names?.status === 'False' && names.reason === 'ShortNamesConflict' && names.message === '"ct" is already in use';
    },
    { what: 'ShortNamesConflict' },
  );
  const api = customObjects();
  await api.createNamespacedCustomObject({
    group: 'stable.example.com',
    version: 'v1',
    namespace: 'default',
    plural: 'crontabs',
    body: { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'doomed' }, spec: {} },
  });
  await kubectl('delete', 'crd', 'crontabs.stable.example.com', '--timeout=20s');
  await eventually(async () => (await kubectlFails('get', 'crd', 'crontabs.stable.example.com')).includes('NotFound'), { what: 'the definition gone' });
  const res = await fetchAsAdmin('/apis/stable.example.com/v1/namespaces/default/crontabs/doomed');
  expect(res.status).toBe(404);
});
