/**
 * Issue 4 end to end, against the real server process (`--vendor kubernetes`) on both backends:
 * `kubectl get rs -w` shows a change made by another client, `kubectl get --chunk-size=2` lists
 * all 25 objects, and the HTTP watch / list rules as a client on the wire sees them (JSON
 * lines, chunk tokens, 400 for bad selectors, 504 with Retry-After for a future version).
 */
import { execFile, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ServerProcess } from '../gateway/support/server-process';
import { httpsRequest, httpsStream } from '../gateway/support/https-client';
import { startServerOnBackend } from './support/backend';
import { KUBECTL, kubectlFor } from './support/kubectl';
import { webReplicaSetYaml } from './support/manifests';
import { waitForOutput } from '../support/child-output';

const run = promisify(execFile);

describe.each([
  ['embedded', false],
  ['etcd', true],
])('watch and chunked lists over HTTPS (%s store)', (_name, useEtcd) => {
  let server: ServerProcess;
  const kubectl = kubectlFor(() => server);
  const api = (p: string, init?: Parameters<typeof httpsRequest>[2]) => httpsRequest(`${server.url}${p}`, server.admin, init);
  const post = (p: string, body: object) => api(p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    server = await startServerOnBackend(useEtcd);
    await kubectl('create', 'namespace', 'watching');
    await kubectl('create', 'namespace', 'chunks');
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('kubectl get rs -w shows a change made by another client', async () => {
    const watcher = spawn(KUBECTL, ['--kubeconfig', server.kubeconfig, '-n', 'watching', 'get', 'rs', '-w', '--output-watch-events', '-v=6'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    watcher.stdout.on('data', (c: Buffer) => (out += c.toString()));
    watcher.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const waitFor = (re: RegExp) => waitForOutput(watcher, () => out, re, 20_000);
    try {
      // With -v=6 kubectl logs its requests: the list, then the watch from the list's version.
      await waitFor(/replicasets\?resourceVersion=\d+&watch=true 200 OK/);
      const file = path.join(server.dataDir, 'rs-watch.yaml');
      await writeFile(file, webReplicaSetYaml('watching', 1));
      await kubectl('create', '-f', file, '--validate=false');
      await waitFor(/ADDED\s+web\s/);
      await kubectl('-n', 'watching', 'scale', 'rs', 'web', '--replicas=3');
      await waitFor(/MODIFIED\s+web\s/);
      await kubectl('-n', 'watching', 'delete', 'rs', 'web');
      await waitFor(/DELETED\s+web/);
    } finally {
      watcher.kill('SIGTERM');
    }
  });

  it('kubectl get --chunk-size=2 lists all 25 objects, chunk by chunk at one version', async () => {
    for (let i = 0; i < 25; i++) {
      const res = await post('/api/v1/namespaces/chunks/configmaps', {
        metadata: { name: `cm-${String(i).padStart(2, '0')}`, labels: { parity: i % 2 ? 'odd' : 'even' } },
      });
      expect(res.status).toBe(201);
    }
    const names = (await kubectl('-n', 'chunks', 'get', 'configmaps', '--chunk-size=2', '-o', 'name')).trim().split('\n');
    expect(names.filter((n) => n.startsWith('configmap/cm-'))).toHaveLength(25);
    const verbose = await run(KUBECTL, ['--kubeconfig', server.kubeconfig, '-n', 'chunks', 'get', 'configmaps', '--chunk-size=2', '-v=6'], { timeout: 30_000 });
    expect(verbose.stderr).toMatch(/limit=2/);
    expect(verbose.stderr).toMatch(/continue=/);

    const first = await api('/api/v1/namespaces/chunks/configmaps?limit=2');
    const page = JSON.parse(first.body) as { metadata: { resourceVersion: string; continue: string; remainingItemCount: number } };
    expect(page.metadata.remainingItemCount).toBe(23);
    await post('/api/v1/namespaces/chunks/configmaps', { metadata: { name: 'late' } });
    const second = JSON.parse((await api(`/api/v1/namespaces/chunks/configmaps?limit=30&continue=${encodeURIComponent(page.metadata.continue)}`)).body);
    expect(second.metadata.resourceVersion).toBe(page.metadata.resourceVersion);
    expect(second.items.map((i: { metadata: { name: string } }) => i.metadata.name)).not.toContain('late');
    const filtered = JSON.parse((await api('/api/v1/namespaces/chunks/configmaps?limit=2&labelSelector=parity%3Dodd')).body);
    expect(filtered.metadata.continue).toBeTruthy();
    expect(filtered.metadata.remainingItemCount).toBeUndefined();
  });

  it('streams a watch as JSON lines, from the state or from a version', async () => {
    const created = JSON.parse((await post('/api/v1/namespaces/chunks/configmaps', { metadata: { name: 'w0' } })).body);
    const rv = created.metadata.resourceVersion as string;
    const stream = httpsStream(`${server.url}/api/v1/namespaces/chunks/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`, server.admin);
    await stream.opened;
    expect(stream.status).toBe(200);
    await post('/api/v1/namespaces/chunks/configmaps', { metadata: { name: 'w1' } });
    await api('/api/v1/namespaces/chunks/configmaps/w0', { method: 'DELETE' });
    await stream.waitForLines(2, 10_000);
    const events = stream.lines.map((l) => JSON.parse(l) as { type: string; object: { kind: string; metadata: { name: string } } });
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED w1', 'DELETED w0']);
    expect(events[0]!.object.kind).toBe('ConfigMap');
    stream.close();

    const list = httpsStream(
      `${server.url}/api/v1/namespaces/chunks/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=parity%3Dodd`,
      server.admin,
    );
    await list.waitForLines(13, 10_000);
    const initial = list.lines.map((l) => JSON.parse(l) as { type: string; object: { metadata: { annotations?: Record<string, string> } } });
    expect(initial.slice(0, 12).every((e) => e.type === 'ADDED')).toBe(true);
    expect(initial[12]).toMatchObject({ type: 'BOOKMARK', object: { metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } } });
    list.close();
  });

  it('answers bad selectors with 400 and a future version with 504 and Retry-After', async () => {
    const bad = await api('/api/v1/namespaces/chunks/configmaps?labelSelector=a%20in%20(');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).message).toBe("unable to parse requirement: found '', expected: ',', ')' or identifier");
    const badField = await api('/api/v1/namespaces/chunks/configmaps?fieldSelector=data.x%3D1');
    expect(badField.status).toBe(400);
    const future = await api('/api/v1/namespaces/chunks/configmaps?resourceVersion=999999999&resourceVersionMatch=NotOlderThan');
    expect(future.status).toBe(504);
    expect(future.headers['retry-after']).toBe('1');
    expect(JSON.parse(future.body)).toMatchObject({
      reason: 'Timeout',
      message: expect.stringMatching(/^Too large resource version: 999999999, current: \d+$/),
    });
  });
});
