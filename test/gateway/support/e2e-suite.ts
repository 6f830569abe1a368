/**
 * The end-to-end checks shared by both backends: discovery, /version, health, and unmodified
 * kubectl 1.32 (`api-resources`, `api-versions`, a create/get/delete round trip) against the
 * real server process with `--vendor kubernetes`.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { httpsRequest } from './https-client';
import type { ServerProcess } from './server-process';

const run = promisify(execFile);

const AGGREGATED_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

export function e2eSuite(getServer: () => ServerProcess): void {
  const kubectl = async (...args: string[]) => (await run('kubectl', ['--kubeconfig', getServer().kubeconfig, ...args], { timeout: 30_000 })).stdout;
  const get = (p: string, headers: Record<string, string> = {}) => httpsRequest(`${getServer().url}${p}`, getServer().admin, { headers });

  it('serves /version as release 1.32', async () => {
    const res = await get('/version');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ major: '1', minor: '32', gitVersion: expect.stringMatching(/^v1\.32\.0\+keelson/) });
  });

  it('reports live and ready, verbosely on request', async () => {
    expect((await httpsRequest(`${getServer().url}/livez`, { ca: getServer().admin.ca })).body).toBe('ok');
    const ready = await get('/readyz?verbose');
    expect(ready.status).toBe(200);
    expect(ready.body).toContain('[+]etcd ok\n');
    expect(ready.body).toContain('[+]core-ready ok\n');
    expect(ready.body.endsWith('readyz check passed\n')).toBe(true);
    expect((await get('/readyz?exclude=etcd&verbose')).body).toContain('[+]etcd excluded: ok');
    expect((await get('/healthz/etcd')).body).toBe('ok');
  });

  it('serves aggregated and unaggregated discovery', async () => {
    const agg = await get('/apis', { accept: AGGREGATED_ACCEPT });
    expect(agg.headers['content-type']).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    const groups = JSON.parse(agg.body).items.map((g: { metadata: { name: string } }) => g.metadata.name);
    expect(groups).toEqual(expect.arrayContaining(['apps', 'rbac.authorization.k8s.io', 'events.k8s.io']));
    const core = JSON.parse((await get('/api', { accept: AGGREGATED_ACCEPT })).body);
    const resources = core.items[0].versions[0].resources.map((r: { resource: string }) => r.resource);
    expect(resources).toEqual(expect.arrayContaining(['namespaces', 'pods', 'secrets', 'configmaps', 'serviceaccounts']));
    expect(JSON.parse((await get('/api')).body)).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const apps = JSON.parse((await get('/apis/apps/v1')).body);
    expect(apps.resources.map((r: { name: string }) => r.name)).toEqual(['replicasets', 'replicasets/scale', 'replicasets/status']);
  });

  it('works with kubectl api-versions and api-resources', async () => {
    const versions = (await kubectl('api-versions')).trim().split('\n');
    expect(versions).toEqual(expect.arrayContaining(['v1', 'apps/v1', 'rbac.authorization.k8s.io/v1', 'events.k8s.io/v1']));
    const resources = await kubectl('api-resources', '--no-headers');
    expect(resources).toMatch(/^replicasets\s+rs\s+apps\/v1\s+true\s+ReplicaSet$/m);
    expect(resources).toMatch(/^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
    expect(resources).toMatch(/^clusterroles\s+rbac\.authorization\.k8s\.io\/v1\s+false\s+ClusterRole$/m);
  });

  it('lets kubectl list the bootstrapped namespaces and apply, get and delete an object', async () => {
    expect(await kubectl('get', 'namespaces', '-o', 'name')).toEqual(expect.stringContaining('namespace/kube-system'));
    const manifest = path.join(getServer().dataDir, 'e2e-namespace.json');
    await writeFile(manifest, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'e2e' } }));
    // Without --validate=false kubectl would fetch /openapi, which Keelson does not serve yet.
    expect(await kubectl('apply', '--validate=false', '-f', manifest)).toContain('namespace/e2e created');
    expect(await kubectl('get', 'namespace', 'e2e', '-o', 'jsonpath={.metadata.name}')).toBe('e2e');
    // --wait=false: the namespace stays Terminating until a namespace controller finalizes it.
    expect(await kubectl('delete', 'namespace', 'e2e', '--wait=false')).toContain('deleted');
  });

  it('serves kubectl typed clients, which speak protobuf (create configmap, get, delete)', async () => {
    expect(await kubectl('create', 'configmap', 'e2e-cm', '--from-literal=a=b')).toContain('configmap/e2e-cm created');
    expect(await kubectl('get', 'configmap', 'e2e-cm', '-o', 'jsonpath={.data.a}')).toBe('b');
    const yaml = await kubectl('get', 'configmap', 'e2e-cm', '-o', 'yaml');
    expect(yaml).toMatch(/^ {2}creationTimestamp: "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"$/m);
    expect(await kubectl('delete', 'configmap', 'e2e-cm')).toContain('configmap "e2e-cm" deleted');
  });
}
