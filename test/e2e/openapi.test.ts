/**
 * OpenAPI end to end (issue 5 item 7): unmodified kubectl 1.32 with its default validation
 * (`create -f`, `apply -f` twice with a change) against both naming profiles — kubectl reads
 * the v3 document to learn that the server validates fields, and with the platform profile it
 * falls back to the v2 protobuf document — and `kubectl explain` reading the v3 document.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { createNaming } from '../../src/naming';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { httpsRequest } from '../gateway/support/https-client';
import { webReplicaSetYaml } from './support/manifests';

const run = promisify(execFile);

function roleBindingYaml(rbacGroup: string, user: string): string {
  return `apiVersion: ${rbacGroup}/v1
kind: RoleBinding
metadata:
  name: readers
  namespace: default
roleRef: {apiGroup: ${rbacGroup}, kind: Role, name: reader}
subjects:
- {kind: User, name: ${user}, apiGroup: ${rbacGroup}}
`;
}

describe.each(['kubernetes', 'platform'] as const)('kubectl with default validation (--vendor %s)', (vendor) => {
  let server: ServerProcess;
  const naming = createNaming(vendor);
  const kubectl = async (...args: string[]) => {
    try {
      return (await run('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, ...args], { timeout: 30_000 })).stdout;
    } catch (err) {
      throw new Error(`kubectl ${args.join(' ')}: ${(err as { stderr?: string }).stderr}`);
    }
  };

  beforeAll(async () => {
    server = await startServerProcess(['--vendor', vendor]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('create -f and apply -f (twice, with a change) without --validate=false', async () => {
    const rs = path.join(server.dataDir, 'rs.yaml');
    const rb = path.join(server.dataDir, 'rb.yaml');
    await writeFile(rs, webReplicaSetYaml('default', 2));
    await writeFile(rb, roleBindingYaml(naming.groups.rbac, 'alice'));
    expect(await kubectl('create', '-f', rb)).toBe(`rolebinding.${naming.groups.rbac}/readers created\n`);
    expect(await kubectl('apply', '-f', rs)).toBe('replicaset.apps/web created\n');
    await writeFile(rs, webReplicaSetYaml('default', 3));
    expect(await kubectl('apply', '-f', rs)).toBe('replicaset.apps/web configured\n');
    expect(await kubectl('get', 'rs', 'web', '-o', 'jsonpath={.spec.replicas}')).toBe('3');
    await writeFile(rb, roleBindingYaml(naming.groups.rbac, 'bob'));
    expect(await kubectl('apply', '-f', rb)).toBe(`rolebinding.${naming.groups.rbac}/readers configured\n`);
    expect(await kubectl('get', 'rolebinding', 'readers', '-o', 'jsonpath={.subjects[*].name}')).toBe('bob');
  });

  it("serves /openapi/v2 as protobuf and /openapi/v3 with the profile's extension names", async () => {
    const v2 = await httpsRequest(`${server.url}/openapi/v2`, server.admin, {
      headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' },
    });
    expect(v2.status).toBe(200);
    expect(v2.headers['content-type']).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const index = JSON.parse((await httpsRequest(`${server.url}/openapi/v3`, server.admin)).body);
    const doc = JSON.parse((await httpsRequest(`${server.url}${index.paths['apis/apps/v1'].serverRelativeURL}`, server.admin)).body);
    const patch = doc.paths['/apis/apps/v1/namespaces/{namespace}/replicasets/{name}'].patch;
    expect(patch[naming.extension('group-version-kind')]).toEqual({ group: 'apps', kind: 'ReplicaSet', version: 'v1' });
  });
});

describe('kubectl explain (--vendor kubernetes)', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess(['--vendor', 'kubernetes']);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('explains replicasets.spec from the v3 document', async () => {
    const { stdout } = await run('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, 'explain', 'replicasets.spec'], { timeout: 30_000 });
    expect(stdout).toMatch(/^GROUP:\s+apps\nKIND:\s+ReplicaSet\nVERSION:\s+v1\n\nFIELD: spec <ReplicaSetSpec>\n/);
    expect(stdout).toMatch(/\n {2}minReadySeconds\t<integer>\n/);
    expect(stdout).toMatch(/\n {2}selector\t<LabelSelector> -required-\n/);
    expect(stdout).toMatch(/\n {2}template\t<PodTemplateSpec>\n/);
    const nested = await run('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, 'explain', 'replicaset.spec.template.spec.containers.ports'], {
      timeout: 30_000,
    });
    expect(nested.stdout).toMatch(/FIELD: ports <\[\]ContainerPort>/);
    expect(nested.stdout).toMatch(/containerPort\t<integer> -required-/);
  });
});
