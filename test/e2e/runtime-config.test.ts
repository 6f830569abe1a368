/**
 * `--runtime-config apps/v1=false` on a real server: the group vanishes from discovery (kubectl
 * api-resources, /apis, aggregated discovery) and OpenAPI, and its paths answer 404, while the
 * rest is served as before. A bad key stops the server at start.
 */
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { kubectlFor } from './support/kubectl';

let server: ServerProcess;
let kubectl: (...args: string[]) => Promise<string>;

beforeAll(async () => {
  server = await startServerProcess(['--vendor', 'kubernetes', '--runtime-config', 'apps/v1=false', '--simulated-nodes', '0']);
  kubectl = kubectlFor(() => server);
});

afterAll(async () => {
  await server?.stop();
});

test('a group version switched off is gone from discovery and OpenAPI, and its paths answer 404', async () => {
  const resources = await kubectl('api-resources', '-o', 'name');
  expect(resources).toContain('configmaps');
  expect(resources).not.toMatch(/replicasets/);
  const groups = JSON.parse(await kubectl('get', '--raw', '/apis'));
  expect(groups.groups.map((g: { name: string }) => g.name)).not.toContain('apps');
  const openapi = JSON.parse(await kubectl('get', '--raw', '/openapi/v3'));
  expect(Object.keys(openapi.paths)).not.toContain('apis/apps/v1');
  expect(Object.keys(openapi.paths)).toContain('api/v1');
  await expect(kubectl('get', '--raw', '/apis/apps/v1')).rejects.toThrow(/NotFound|not found/i);
  await expect(kubectl('get', '--raw', '/apis/apps/v1/namespaces/default/replicasets')).rejects.toThrow(/NotFound|not found/i);
  await expect(kubectl('get', 'replicasets')).rejects.toThrow(/the server doesn't have a resource type "replicasets"/);
  expect(await kubectl('get', 'configmaps', '-n', 'kube-system', '-o', 'name')).toBeDefined();
  expect(server.output()).toContain('replicaset controller: not started, replicasets are not served (--runtime-config)');
});

test('an unknown group version stops the server at start, naming the flag', async () => {
  await expect(startServerProcess(['--vendor', 'kubernetes', '--runtime-config', 'batch/v1=false'])).rejects.toThrow(
    /--runtime-config: unknown api groups batch\/v1/,
  );
});
