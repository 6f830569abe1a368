/**
 * dryRun=All end to end (docs/API.md, "Dry run"; issue 5 item 5): every verb runs all its
 * stages but storage and answers as the real request would — generated name, uid and
 * creationTimestamp on create, validation and conflicts as usual — and nothing is persisted;
 * bad values are refused. Both backends, over HTTPS, and kubectl's `--dry-run=server`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { API_ONLY, startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { httpsRequest } from '../gateway/support/https-client';
import { startServerOnBackend } from './support/backend';

const run = promisify(execFile);

const cm = (name: string, data: Record<string, string> = { a: '1' }) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

describe.each([
  ['embedded', false],
  ['etcd', true],
])('dryRun=All (%s store)', (_name, useEtcd) => {
  let server: ServerProcess;
  const base = '/api/v1/namespaces/default/configmaps';
  const call = (method: string, url: string, body?: string, contentType = 'application/json') =>
    // Node sends a DELETE body unframed unless its length is given.
    httpsRequest(`${server.url}${url}`, server.admin, {
      method,
      body,
      headers: body ? { 'content-type': contentType, 'content-length': String(Buffer.byteLength(body)) } : {},
    });
  const names = async () => (JSON.parse((await call('GET', base)).body).items as { metadata: { name: string } }[]).map((i) => i.metadata.name).sort();

  beforeAll(async () => {
    server = await startServerOnBackend(useEtcd);
    expect((await call('POST', base, cm('kept'))).status).toBe(201);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('POST with generateName returns the would-be object with its generated fields; nothing is stored', async () => {
    const r = await call(
      'POST',
      `${base}?dryRun=All`,
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' }, data: { a: '1' } }),
    );
    expect(r.status).toBe(201);
    const obj = JSON.parse(r.body);
    expect(obj.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(obj.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(obj.metadata.creationTimestamp).toBeDefined();
    expect(obj.metadata.resourceVersion).toBeUndefined();
    expect(await names()).toEqual(['kept']);
  });

  it('POST still validates and still refuses a taken name', async () => {
    expect((await call('POST', `${base}?dryRun=All`, cm('Bad_Name'))).status).toBe(422);
    const taken = await call('POST', `${base}?dryRun=All`, cm('kept'));
    expect(taken.status).toBe(409);
    expect(JSON.parse(taken.body).reason).toBe('AlreadyExists');
  });

  it('PUT and PATCH answer with the changed object and change nothing', async () => {
    const current = JSON.parse((await call('GET', `${base}/kept`)).body);
    const put = await call('PUT', `${base}/kept?dryRun=All`, JSON.stringify({ ...current, data: { a: 'put' } }));
    expect(put.status).toBe(200);
    expect(JSON.parse(put.body).data).toEqual({ a: 'put' });
    const patch = await call('PATCH', `${base}/kept?dryRun=All`, '{"data":{"b":"2"}}', 'application/merge-patch+json');
    expect(patch.status).toBe(200);
    expect(JSON.parse(patch.body).data).toEqual({ a: '1', b: '2' });
    const after = JSON.parse((await call('GET', `${base}/kept`)).body);
    expect(after.data).toEqual({ a: '1' });
    expect(after.metadata.resourceVersion).toBe(current.metadata.resourceVersion);
  });

  it('DELETE and deletecollection answer as the real request and delete nothing', async () => {
    const del = await call('DELETE', `${base}/kept?dryRun=All`);
    expect(del.status).toBe(200);
    expect(JSON.parse(del.body)).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'kept', kind: 'configmaps' } });
    const body = JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] });
    const coll = await call('DELETE', base, body);
    expect(coll.status).toBe(200);
    expect(JSON.parse(coll.body)).toMatchObject({ kind: 'ConfigMapList', items: [{ metadata: { name: 'kept' } }] });
    expect(await names()).toEqual(['kept']);
  });

  it('an unknown dryRun value is refused before anything runs', async () => {
    const r = await call('POST', `${base}?dryRun=Some`, cm('never'));
    expect(r.status).toBe(422);
    expect(JSON.parse(r.body).message).toBe('CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All"');
    expect((await call('DELETE', `${base}/kept?dryRun=Some`)).status).toBe(422);
    expect(await names()).toEqual(['kept']);
  });
});

describe('kubectl --dry-run=server', () => {
  let server: ServerProcess;
  const kubectl = async (...args: string[]) => (await run('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, ...args], { timeout: 30_000 })).stdout;

  beforeAll(async () => {
    server = await startServerProcess(['--vendor', 'kubernetes', ...API_ONLY]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('create, label and delete report success and leave no trace', async () => {
    expect(await kubectl('create', 'configmap', 'dry', '--from-literal=a=1', '--dry-run=server')).toBe('configmap/dry created (server dry run)\n');
    await expect(kubectl('get', 'configmap', 'dry')).rejects.toMatchObject({ stderr: expect.stringContaining('NotFound') });
    await kubectl('create', 'configmap', 'real', '--from-literal=a=1');
    expect(await kubectl('label', 'configmap', 'real', 'x=y', '--dry-run=server')).toBe('configmap/real labeled (server dry run)\n');
    expect(await kubectl('delete', 'configmap', 'real', '--dry-run=server')).toBe('configmap "real" deleted (server dry run)\n');
    expect(await kubectl('get', 'configmap', 'real', '-o', 'jsonpath={.metadata.labels}')).toBe('');
  });
});
