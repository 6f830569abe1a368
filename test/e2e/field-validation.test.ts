/**
 * fieldValidation end to end (docs/API.md, "Field validation"; issue 5 item 4): the real server
 * process over HTTPS on both backends — Strict answers 400 listing every unknown and repeated
 * field and stores nothing, Warn answers with one `Warning` header per field, Ignore is silent,
 * unknown fields are never stored — and unmodified kubectl with its default validation.
 */
import { execFile } from 'node:child_process';
import https from 'node:https';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { startServerOnBackend } from './support/backend';

const run = promisify(execFile);

interface Reply {
  status: number;
  body: string;
  warnings: string[];
}

function request(server: ServerProcess, method: string, url: string, body?: string, contentType = 'application/json'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(`${server.url}${url}`, { method, headers: body ? { 'content-type': contentType } : {}, ...server.admin, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const warnings: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() === 'warning') warnings.push(res.rawHeaders[i + 1]!);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), warnings });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const warning = (text: string) => `299 - ${JSON.stringify(text)}`;

function rsJson(name: string, extra = ''): string {
  return `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"${name}","labels":{"app":"web"},"unknownMeta":"x"},
  "spec":{"replicas":1,"replicas":2,"foo":"bar","selector":{"matchLabels":{"app":"web"}},
  "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx","bogus":1}]}}${extra}}}`;
}

const JSON_ERRORS = [
  'unknown field "metadata.unknownMeta"',
  'duplicate field "spec.replicas"',
  'unknown field "spec.foo"',
  'unknown field "spec.template.spec.containers[0].bogus"',
];

const RS_YAML = `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: yaml-rs
spec:
  replicas: 1
  replicas: 3
  foo: bar
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: c
        image: nginx
`;

describe.each([
  ['embedded', false],
  ['etcd', true],
])('fieldValidation over HTTPS (%s store)', (_name, useEtcd) => {
  let server: ServerProcess;
  const base = '/apis/apps/v1/namespaces/default/replicasets';

  beforeAll(async () => {
    server = await startServerOnBackend(useEtcd);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('POST Strict: 400 listing every field in document order; nothing stored', async () => {
    const r = await request(server, 'POST', `${base}?fieldValidation=Strict`, rsJson('strict'));
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toMatchObject({
      kind: 'Status',
      reason: 'BadRequest',
      code: 400,
      message: `ReplicaSet in version "v1" cannot be handled as a ReplicaSet: strict decoding error: ${JSON_ERRORS.join(', ')}`,
    });
    expect((await request(server, 'GET', `${base}/strict`)).status).toBe(404);
  });

  it('POST Warn (the default): one Warning header per field; the stored object has none of the unknown fields', async () => {
    const r = await request(server, 'POST', base, rsJson('warn'));
    expect(r.status).toBe(201);
    expect(r.warnings).toEqual(JSON_ERRORS.map(warning));
    const stored = JSON.parse((await request(server, 'GET', `${base}/warn`)).body);
    expect(stored.metadata.unknownMeta).toBeUndefined();
    expect(stored.spec.foo).toBeUndefined();
    expect(stored.spec.replicas).toBe(2);
    expect(stored.spec.template.spec.containers[0].bogus).toBeUndefined();
  });

  it('POST Ignore: no warnings, unknown fields still dropped', async () => {
    const r = await request(server, 'POST', `${base}?fieldValidation=Ignore`, rsJson('ignore'));
    expect(r.status).toBe(201);
    expect(r.warnings).toEqual([]);
    expect(JSON.parse(r.body).spec.foo).toBeUndefined();
  });

  it('YAML bodies: repeated keys reported by line, then unknown fields', async () => {
    const strict = await request(server, 'POST', `${base}?fieldValidation=Strict`, RS_YAML, 'application/yaml');
    expect(strict.status).toBe(400);
    expect(JSON.parse(strict.body).message).toBe(
      'ReplicaSet in version "v1" cannot be handled as a ReplicaSet: strict decoding error: yaml: unmarshal errors:\n  line 7: key "replicas" already set in map, unknown field "spec.foo"',
    );
    const warn = await request(server, 'POST', base, RS_YAML, 'application/yaml');
    expect(warn.status).toBe(201);
    expect(warn.warnings).toEqual([warning('line 7: key "replicas" already set in map'), warning('unknown field "spec.foo"')]);
  });

  it('PUT: Strict refuses, Warn stores without the unknown fields', async () => {
    const current = JSON.parse((await request(server, 'GET', `${base}/warn`)).body);
    const body = JSON.stringify({ ...current, spec: { ...current.spec, extra: true } });
    const strict = await request(server, 'PUT', `${base}/warn?fieldValidation=Strict`, body);
    expect(strict.status).toBe(400);
    expect(JSON.parse(strict.body).message).toBe(
      'ReplicaSet in version "v1" cannot be handled as a ReplicaSet: strict decoding error: unknown field "spec.extra"',
    );
    const warn = await request(server, 'PUT', `${base}/warn?fieldValidation=Warn`, body);
    expect(warn.status).toBe(200);
    expect(warn.warnings).toEqual([warning('unknown field "spec.extra"')]);
    expect(JSON.parse(warn.body).spec.extra).toBeUndefined();
  });

  it("PATCH: the patch's repeated keys, then the unknown fields of the result; Strict is the spec's 400 naming them, and nothing changes", async () => {
    const patch = '{"spec":{"minReadySeconds":1,"minReadySeconds":2,"zzz":1}}';
    const before = JSON.parse((await request(server, 'GET', `${base}/warn`)).body);
    const strict = await request(server, 'PATCH', `${base}/warn?fieldValidation=Strict`, patch, 'application/merge-patch+json');
    expect(strict.status).toBe(400);
    expect(JSON.parse(strict.body)).toMatchObject({
      reason: 'BadRequest',
      code: 400,
      message: 'strict decoding error: duplicate field "spec.minReadySeconds", unknown field "spec.zzz"',
    });
    for (const [type, body] of [
      ['application/json-patch+json', '[{"op":"add","path":"/spec/zzz","value":1}]'],
      ['application/strategic-merge-patch+json', '{"spec":{"zzz":1}}'],
    ]) {
      const other = await request(server, 'PATCH', `${base}/warn?fieldValidation=Strict`, body!, type);
      expect([type, other.status, JSON.parse(other.body).message]).toEqual([type, 400, 'strict decoding error: unknown field "spec.zzz"']);
    }
    expect(JSON.parse((await request(server, 'GET', `${base}/warn`)).body).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    const warn = await request(server, 'PATCH', `${base}/warn`, patch, 'application/merge-patch+json');
    expect(warn.status).toBe(200);
    expect(warn.warnings).toEqual([warning('duplicate field "spec.minReadySeconds"'), warning('unknown field "spec.zzz"')]);
    expect(JSON.parse(warn.body).spec).toMatchObject({ minReadySeconds: 2 });
    expect(JSON.parse(warn.body).spec.zzz).toBeUndefined();
  });

  it("PATCH of /scale: Strict is the same 400 naming the Scale's unknown field and stores nothing; Warn scales and warns", async () => {
    const before = JSON.parse((await request(server, 'GET', `${base}/warn`)).body);
    const patch = '{"spec":{"replicas":3,"foo":1}}';
    const strict = await request(server, 'PATCH', `${base}/warn/scale?fieldValidation=Strict`, patch, 'application/merge-patch+json');
    expect([strict.status, JSON.parse(strict.body)]).toEqual([
      400,
      expect.objectContaining({ kind: 'Status', reason: 'BadRequest', message: 'strict decoding error: unknown field "spec.foo"' }),
    ]);
    expect(JSON.parse((await request(server, 'GET', `${base}/warn`)).body).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    const warn = await request(server, 'PATCH', `${base}/warn/scale`, patch, 'application/merge-patch+json');
    expect([warn.status, warn.warnings, JSON.parse(warn.body).spec]).toEqual([200, [warning('unknown field "spec.foo"')], { replicas: 3 }]);
  });

  it('a value of the wrong type is a 400 whatever the directive', async () => {
    const r = await request(server, 'POST', `${base}?fieldValidation=Ignore`, rsJson('typed').replace('"replicas":2', '"replicas":"two"'));
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).message).toBe(
      'ReplicaSet in version "v1" cannot be handled as a ReplicaSet: json: cannot unmarshal string into Go struct field ReplicaSetSpec.spec.replicas of type int32',
    );
  });
});

describe('fieldValidation through kubectl 1.32 (default validation, no --validate=false)', () => {
  let server: ServerProcess;
  const kubectl = async (...args: string[]) => run('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, ...args], { timeout: 30_000 });

  beforeAll(async () => {
    server = await startServerProcess(['--vendor', 'kubernetes']);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("create -f with an unknown field fails with the server's strict error; --validate=warn warns and creates", async () => {
    const file = path.join(server.dataDir, 'bad.yaml');
    await writeFile(file, RS_YAML.replace('  replicas: 1\n', '').replace('yaml-rs', 'kubectl-rs'));
    await expect(kubectl('create', '-f', file)).rejects.toMatchObject({
      stderr: expect.stringContaining(
        'Error from server (BadRequest): error when creating "' +
          file +
          '": ReplicaSet in version "v1" cannot be handled as a ReplicaSet: strict decoding error: unknown field "spec.foo"',
      ),
    });
    await expect(kubectl('-n', 'default', 'get', 'rs', 'kubectl-rs')).rejects.toMatchObject({ stderr: expect.stringContaining('NotFound') });
    const warned = await kubectl('create', '-f', file, '--validate=warn');
    expect(warned.stdout).toBe('replicaset.apps/kubectl-rs created\n');
    expect(warned.stderr).toContain('Warning: unknown field "spec.foo"');
  });

  it("patch --type=merge adding spec.foo: kubectl patch has no --validate, so the server's default Warn reports it and nothing of it is stored", async () => {
    const file = path.join(server.dataDir, 'patched.yaml');
    await writeFile(file, RS_YAML.replace('  replicas: 1\n', '').replace('  foo: bar\n', '').replace('yaml-rs', 'patched-rs'));
    await kubectl('create', '-f', file);
    const patched = await kubectl('-n', 'default', 'patch', 'rs', 'patched-rs', '--type=merge', '-p', '{"spec":{"foo":1}}');
    expect(patched.stderr).toContain('Warning: unknown field "spec.foo"');
    const scaled = await kubectl('-n', 'default', 'patch', 'rs', 'patched-rs', '--subresource=scale', '--type=merge', '-p', '{"spec":{"replicas":2,"foo":1}}');
    expect(scaled.stderr).toContain('Warning: unknown field "spec.foo"');
    const stored = JSON.parse((await kubectl('-n', 'default', 'get', 'rs', 'patched-rs', '-o', 'json')).stdout);
    expect([stored.spec.foo, stored.spec.replicas]).toEqual([undefined, 2]);
  });
});
