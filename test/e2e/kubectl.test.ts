/**
 * Unmodified kubectl 1.32 (/usr/bin/kubectl) against the real server process: the flows of
 * issue 3 with `--vendor kubernetes` on both backends, and those kubectl's discovery allows
 * with `--vendor platform` (typed-client commands hard-code upstream's group names and media
 * types, so there `create -f` stands in for them).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { startServerOnBackend } from './support/backend';
import { kubectlFor } from './support/kubectl';
import { webReplicaSetYaml } from './support/manifests';

function roleBindingYaml(rbacGroup: string): string {
  return `apiVersion: ${rbacGroup}/v1
kind: RoleBinding
metadata:
  name: from-file
  namespace: demo
roleRef: {apiGroup: ${rbacGroup}, kind: Role, name: reader}
subjects:
- {kind: User, name: alice, apiGroup: ${rbacGroup}}
- {kind: ServiceAccount, name: robot, namespace: demo}
`;
}

const ADMISSION_YAML = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: demo}
webhooks:
- name: check.example.com
  clientConfig: {service: {namespace: default, name: svc}}
  sideEffects: None
  admissionReviewVersions: [v1]
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: demo-policy}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints: {resourceRules: [{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]}
  validations: [{expression: "object.spec.replicas <= int(params.data.max)"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: demo-binding}
spec:
  policyName: demo-policy
  validationActions: [Deny]
  paramRef: {name: limits, namespace: default, parameterNotFoundAction: Deny}
`;

describe.each([
  ['embedded', false],
  ['etcd', true],
])('kubectl 1.32 with --vendor kubernetes (%s store)', (_name, useEtcd) => {
  let server: ServerProcess;
  const kubectl = kubectlFor(() => server);

  beforeAll(async () => {
    server = await startServerOnBackend(useEtcd);
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('discovers the API', async () => {
    const versions = (await kubectl('api-versions')).trim().split('\n');
    expect(versions).toEqual(expect.arrayContaining(['v1', 'apps/v1', 'rbac.authorization.k8s.io/v1', 'events.k8s.io/v1']));
    const resources = await kubectl('api-resources', '-o', 'name');
    expect(resources.trim().split('\n')).toEqual(
      expect.arrayContaining([
        'namespaces',
        'pods',
        'secrets',
        'configmaps',
        'serviceaccounts',
        'replicasets.apps',
        'roles.rbac.authorization.k8s.io',
        'events.events.k8s.io',
      ]),
    );
  });

  it('creates, reads and deletes with the typed create commands and create -f', async () => {
    expect(await kubectl('create', 'namespace', 'demo')).toBe('namespace/demo created\n');
    expect(await kubectl('-n', 'demo', 'create', 'role', 'reader', '--verb=get,list', '--resource=pods')).toBe(
      'role.rbac.authorization.k8s.io/reader created\n',
    );
    expect(await kubectl('-n', 'demo', 'create', 'rolebinding', 'readers', '--role=reader', '--user=alice', '--group=devs')).toBe(
      'rolebinding.rbac.authorization.k8s.io/readers created\n',
    );
    expect(await kubectl('create', 'clusterrole', 'pod-reader', '--verb=get', '--resource=pods')).toBe(
      'clusterrole.rbac.authorization.k8s.io/pod-reader created\n',
    );
    expect(await kubectl('create', 'clusterrolebinding', 'pod-readers', '--clusterrole=pod-reader', '--group=devs')).toBe(
      'clusterrolebinding.rbac.authorization.k8s.io/pod-readers created\n',
    );

    const rsFile = path.join(server.dataDir, 'rs.yaml');
    const rbFile = path.join(server.dataDir, 'rb.yaml');
    await writeFile(rsFile, webReplicaSetYaml('demo', 2));
    await writeFile(rbFile, roleBindingYaml('rbac.authorization.k8s.io'));
    expect(await kubectl('create', '-f', rsFile, '--validate=false')).toBe('replicaset.apps/web created\n');
    expect(await kubectl('create', '-f', rbFile, '--validate=false')).toBe('rolebinding.rbac.authorization.k8s.io/from-file created\n');

    const rs = JSON.parse(await kubectl('-n', 'demo', 'get', 'replicaset', 'web', '-o', 'json'));
    expect(rs).toMatchObject({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web', namespace: 'demo', generation: 1 }, spec: { replicas: 2 } });
    expect(rs.spec).not.toHaveProperty('minReadySeconds');
    expect(await kubectl('-n', 'demo', 'get', 'rs', 'web', '-o', 'yaml')).toMatch(/^apiVersion: apps\/v1\nkind: ReplicaSet\n/);
    expect(await kubectl('-n', 'demo', 'get', 'rolebindings', '-o', 'name')).toBe(
      'rolebinding.rbac.authorization.k8s.io/from-file\nrolebinding.rbac.authorization.k8s.io/readers\n',
    );
    expect(await kubectl('-n', 'demo', 'get', 'rolebinding', 'readers', '-o', 'jsonpath={.roleRef.name} {.subjects[*].name}')).toBe('reader alice devs');
    const sa = JSON.parse(await kubectl('-n', 'demo', 'get', 'rolebinding', 'from-file', '-o', 'json')).subjects[1];
    expect(sa).toEqual({ kind: 'ServiceAccount', name: 'robot', namespace: 'demo' });

    expect(await kubectl('-n', 'demo', 'scale', 'rs', 'web', '--replicas=4')).toBe('replicaset.apps/web scaled\n');
    expect(await kubectl('-n', 'demo', 'get', 'rs', 'web', '-o', 'jsonpath={.spec.replicas} {.metadata.generation}')).toBe('4 2');

    expect(await kubectl('delete', '-f', rbFile)).toBe('rolebinding.rbac.authorization.k8s.io "from-file" deleted\n');
    expect(await kubectl('-n', 'demo', 'delete', 'rs', 'web')).toBe('replicaset.apps "web" deleted\n');
    expect(await kubectl('delete', 'clusterrolebinding', 'pod-readers')).toBe('clusterrolebinding.rbac.authorization.k8s.io "pod-readers" deleted\n');
    // The namespace controller deletes the content and then the namespace; kubectl waits for it.
    expect(await kubectl('delete', 'namespace', 'demo', '--timeout=20s')).toBe('namespace "demo" deleted\n');
    await expect(kubectl('get', 'namespace', 'demo')).rejects.toThrow(/namespaces "demo" not found/);
  });

  it('applies admission webhooks and policies, and prints them as upstream does', async () => {
    const file = path.join(server.dataDir, 'admission.yaml');
    await writeFile(file, ADMISSION_YAML);
    // With client-side validation: kubectl checks the manifests against the served OpenAPI.
    expect(await kubectl('apply', '-f', file)).toBe(
      'validatingwebhookconfiguration.admissionregistration.k8s.io/demo created\n' +
        'validatingadmissionpolicy.admissionregistration.k8s.io/demo-policy created\n' +
        'validatingadmissionpolicybinding.admissionregistration.k8s.io/demo-binding created\n',
    );
    const table = await kubectl('get', 'api-extensions', '--no-headers');
    expect(table).toMatch(/^validatingadmissionpolicy\.admissionregistration\.k8s\.io\/demo-policy\s+1\s+v1\/ConfigMap\s+\d+s$/m);
    expect(table).toMatch(/^validatingadmissionpolicybinding\.admissionregistration\.k8s\.io\/demo-binding\s+demo-policy\s+default\/limits\s+\d+s$/m);
    expect(table).toMatch(/^validatingwebhookconfiguration\.admissionregistration\.k8s\.io\/demo\s+1\s+\d+s$/m);
    expect(await kubectl('get', 'validatingwebhookconfiguration', 'demo', '-o', 'jsonpath={.webhooks[0].timeoutSeconds} {.webhooks[0].failurePolicy}')).toBe(
      '10 Fail',
    );
    await writeFile(file, ADMISSION_YAML.split('---')[0]!.replace('sideEffects: None', 'sideEffects: Some').replace('name: demo}', 'name: demo2}'));
    await expect(kubectl('create', '-f', file)).rejects.toThrow(
      'The ValidatingWebhookConfiguration "demo2" is invalid: webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
    );
    expect(await kubectl('delete', 'validatingadmissionpolicybinding', 'demo-binding')).toBe(
      'validatingadmissionpolicybinding.admissionregistration.k8s.io "demo-binding" deleted\n',
    );
  });

  it('reports server errors as upstream does', async () => {
    await expect(kubectl('-n', 'default', 'get', 'rs', 'missing')).rejects.toThrow('Error from server (NotFound): replicasets.apps "missing" not found');
    await kubectl('create', 'namespace', 'dup');
    await expect(kubectl('create', 'namespace', 'dup')).rejects.toThrow('Error from server (AlreadyExists): namespaces "dup" already exists');
  });
});

describe('kubectl 1.32 with --vendor platform', () => {
  let server: ServerProcess;
  const kubectl = kubectlFor(() => server);

  beforeAll(async () => {
    server = await startServerProcess(['--vendor', 'platform']);
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('discovers the platform groups and runs create -f, get and delete', async () => {
    const versions = (await kubectl('api-versions')).trim().split('\n');
    expect(versions).toEqual(expect.arrayContaining(['v1', 'apps/v1', 'rbac.authorization.platform.io/v1', 'events.platform.io/v1']));
    expect(JSON.parse(await kubectl('get', 'namespaces', '-o', 'json')).items.map((n: { metadata: { name: string } }) => n.metadata.name)).toEqual(
      expect.arrayContaining(['default', 'platform-system', 'platform-public', 'platform-node-lease']),
    );
    const nsFile = path.join(server.dataDir, 'ns.yaml');
    await writeFile(nsFile, 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n');
    expect(await kubectl('create', '-f', nsFile, '--validate=false')).toBe('namespace/demo created\n');
    const rbFile = path.join(server.dataDir, 'rb.yaml');
    await writeFile(rbFile, roleBindingYaml('rbac.authorization.platform.io'));
    expect(await kubectl('create', '-f', rbFile, '--validate=false')).toBe('rolebinding.rbac.authorization.platform.io/from-file created\n');
    expect(await kubectl('-n', 'demo', 'get', 'rolebindings.rbac.authorization.platform.io', '-o', 'jsonpath={.items[0].roleRef.apiGroup}')).toBe(
      'rbac.authorization.platform.io',
    );
    const rsFile = path.join(server.dataDir, 'rs.yaml');
    await writeFile(rsFile, webReplicaSetYaml('demo', 2));
    expect(await kubectl('create', '-f', rsFile, '--validate=false')).toBe('replicaset.apps/web created\n');
    expect(await kubectl('-n', 'demo', 'get', 'rs', '-o', 'name')).toBe('replicaset.apps/web\n');
    expect(await kubectl('delete', '-f', rbFile)).toBe('rolebinding.rbac.authorization.platform.io "from-file" deleted\n');
    expect(await kubectl('delete', 'namespace', 'demo', '--timeout=20s')).toBe('namespace "demo" deleted\n');
  });
});
