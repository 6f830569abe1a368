/**
 * RBAC end to end (kubernetes profile, kubectl 1.32): a RoleBinding grants what its Role says
 * in its namespace and nothing elsewhere; a ClusterRoleBinding grants cluster-wide; users
 * without bindings are refused with upstream's 403; `system:masters` is always allowed.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { KUBECTL } from './support/kubectl';
import { eventually, type EventuallyOptions } from '../support/eventually';

/** kubectl calls against a real server take a while: look less often, for longer. */
const POLL: EventuallyOptions = { timeoutMs: 15_000, intervalMs: 100 };

const run = promisify(execFile);
let dir: string;
let server: ServerProcess;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-authz-e2e-'));
  await writeFile(path.join(dir, 'tokens.csv'), 'alice-token,alice,uid-a\nbob-token,bob,uid-b,"watchers"\nnode-token,system:node:n1,uid-n,"system:nodes"\n');
  server = await startServerProcess(['--vendor', 'kubernetes', '--token-auth-file', path.join(dir, 'tokens.csv'), '--authorization-mode', 'Node,RBAC']);
});

afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function kubectl(credentials: string[], ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = ['--kubeconfig', '/dev/null', '--server', server.url, '--certificate-authority', path.join(server.dataDir, 'ca.crt'), ...credentials];
  try {
    const { stdout, stderr } = await run(KUBECTL, [...base, ...args], { timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const admin = () => ['--client-certificate', path.join(server.dataDir, 'admin.crt'), '--client-key', path.join(server.dataDir, 'admin.key')];
const alice = ['--token', 'alice-token'];
const bob = ['--token', 'bob-token'];

describe('RBAC', () => {
  it('a RoleBinding grants its Role in its namespace only', async () => {
    expect(await kubectl(admin(), 'create', 'namespace', 'team-a')).toMatchObject({ code: 0 });
    const denied = await kubectl(alice, 'get', 'pods', '-n', 'team-a');
    expect(denied.stderr).toContain('pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-a"');
    expect(await kubectl(admin(), 'create', 'role', 'pod-reader', '-n', 'team-a', '--verb=get,list,watch', '--resource=pods')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'rolebinding', 'alice-reads', '-n', 'team-a', '--role=pod-reader', '--user=alice')).toMatchObject({ code: 0 });
    await eventually(async () => (await kubectl(alice, 'get', 'pods', '-n', 'team-a')).code === 0, POLL);
    expect((await kubectl(alice, 'get', 'pods', '-n', 'default')).stderr).toContain(
      'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    expect((await kubectl(alice, 'delete', 'pod', 'x', '-n', 'team-a')).stderr).toContain(
      'pods "x" is forbidden: User "alice" cannot delete resource "pods" in API group "" in the namespace "team-a"',
    );
    // Impersonating alice gives alice's rights, no more.
    expect((await kubectl(admin(), '--as', 'alice', 'get', 'configmaps', '-n', 'team-a')).stderr).toContain('User "alice" cannot list resource "configmaps"');
  });

  it('kubectl auth can-i asks a SelfSubjectAccessReview, for oneself or (--as) another user', async () => {
    expect(await kubectl(alice, 'auth', 'can-i', 'list', 'pods', '-n', 'team-a')).toMatchObject({ code: 0, stdout: 'yes\n' });
    // kubectl prints the reason after "no": the nearest miss among alice's own bindings.
    expect(await kubectl(alice, 'auth', 'can-i', 'list', 'pods', '-n', 'default')).toMatchObject({
      code: 1,
      stdout: 'no - RBAC: RoleBinding "alice-reads/team-a" of Role "pod-reader" grants get, list, watch on pods in namespace "team-a" only\n',
    });
    expect(await kubectl(alice, 'auth', 'can-i', 'delete', 'pods', '-n', 'team-a')).toMatchObject({ code: 1 });
    expect(await kubectl(admin(), 'auth', 'can-i', 'get', 'pods', '-n', 'team-a', '--as', 'alice')).toMatchObject({ code: 0, stdout: 'yes\n' });
    expect(await kubectl(admin(), 'auth', 'can-i', '*', '*')).toMatchObject({ code: 0, stdout: 'yes\n' });
  });

  it("a 403 says why: the nearest miss among the caller's own bindings, never anyone else's", async () => {
    const del = await kubectl(alice, 'delete', 'pod', 'x', '-n', 'team-a');
    expect(del.stderr).toContain(
      'pods "x" is forbidden: User "alice" cannot delete resource "pods" in API group "" in the namespace "team-a": RBAC: RoleBinding "alice-reads/team-a" of Role "pod-reader" grants get, list, watch on pods, not delete',
    );
    // bob has no binding about secrets: the reason names nothing of anyone else's.
    const secrets = await kubectl(bob, 'get', 'secrets', '-n', 'team-a');
    expect(secrets.stderr).toContain(
      'secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "team-a": RBAC: no binding for this user or their groups grants list on secrets',
    );
    expect(secrets.stderr).not.toContain('alice');
    // The same text is the SubjectAccessReview's reason.
    const review = JSON.stringify({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: 'alice', resourceAttributes: { namespace: 'team-a', verb: 'delete', resource: 'pods' } },
    });
    await writeFile(path.join(dir, 'sar.json'), review);
    const sar = await kubectl(admin(), 'create', '--validate=false', '-f', path.join(dir, 'sar.json'), '-o', 'json');
    expect(JSON.parse(sar.stdout).status).toEqual({
      allowed: false,
      reason: 'RBAC: RoleBinding "alice-reads/team-a" of Role "pod-reader" grants get, list, watch on pods, not delete',
    });
  });

  it('kubectl auth can-i --list shows the rules held in a namespace (SelfSubjectRulesReview)', async () => {
    const list = await kubectl(alice, 'auth', 'can-i', '--list', '-n', 'team-a');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
    const elsewhere = await kubectl(alice, 'auth', 'can-i', '--list', '-n', 'default');
    expect(elsewhere.stdout).not.toMatch(/^pods\s/m);
    // Everyone authenticated holds the default discovery and self-review rules.
    expect(elsewhere.stdout).toMatch(/^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
    expect(elsewhere.stdout).toMatch(/^\s+\[\/api\/\*\]\s+\[\]\s+\[get\]$/m);
    // cluster-admin, through the default binding of system:masters.
    expect((await kubectl(admin(), 'auth', 'can-i', '--list', '-n', 'team-a')).stdout).toMatch(/^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
  });

  it('a ClusterRoleBinding to a group grants cluster-wide', async () => {
    expect((await kubectl(bob, 'get', 'namespaces')).code).not.toBe(0);
    expect(await kubectl(admin(), 'create', 'clusterrole', 'ns-reader', '--verb=get,list', '--resource=namespaces')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'clusterrolebinding', 'watchers-read-ns', '--clusterrole=ns-reader', '--group=watchers')).toMatchObject({
      code: 0,
    });
    await eventually(async () => (await kubectl(bob, 'get', 'namespaces', '-o', 'name')).stdout.includes('namespace/team-a'), POLL);
    expect((await kubectl(alice, 'get', 'namespaces')).code).not.toBe(0);
  });
});

describe('the default policy', () => {
  it("creates upstream's roles and bindings with the bootstrapping label and autoupdate annotation", async () => {
    const roles = JSON.parse((await kubectl(admin(), 'get', 'clusterroles', '-l', 'kubernetes.io/bootstrapping=rbac-defaults', '-o', 'json')).stdout)
      .items as Array<{ metadata: { name: string; annotations: Record<string, string> } }>;
    const names = roles.map((r) => r.metadata.name);
    for (const name of [
      'cluster-admin',
      'admin',
      'edit',
      'view',
      'system:basic-user',
      'system:discovery',
      'system:public-info-viewer',
      'system:node',
      'system:controller:replicaset-controller',
    ]) {
      expect(names).toContain(name);
    }
    expect(roles.every((r) => r.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'] === 'true')).toBe(true);
    const binding = JSON.parse((await kubectl(admin(), 'get', 'clusterrolebinding', 'cluster-admin', '-o', 'json')).stdout);
    expect(binding.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' }]);
    expect((await kubectl(admin(), 'get', 'rolebindings', '-n', 'kube-system', '-o', 'name')).stdout).toContain(
      'rolebinding.rbac.authorization.k8s.io/system::leader-locking-kube-controller-manager',
    );
  });

  it('aggregates admin, edit and view, including a ClusterRole labelled later', async () => {
    const rulesOf = async (name: string) => JSON.parse((await kubectl(admin(), 'get', 'clusterrole', name, '-o', 'json')).stdout).rules ?? [];
    await eventually(async () => (await rulesOf('view')).some((r: { resources?: string[] }) => r.resources?.includes('pods')), POLL);
    const widgets = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'widgets-view' },
      rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list'] }],
    };
    await writeFile(path.join(dir, 'widgets.json'), JSON.stringify(widgets));
    expect(await kubectl(admin(), 'create', '-f', path.join(dir, 'widgets.json'))).toMatchObject({ code: 0 });
    expect((await rulesOf('view')).some((r: { apiGroups?: string[] }) => r.apiGroups?.includes('example.com'))).toBe(false);
    expect(await kubectl(admin(), 'label', 'clusterrole', 'widgets-view', 'rbac.authorization.k8s.io/aggregate-to-view=true')).toMatchObject({ code: 0 });
    await eventually(async () => (await rulesOf('view')).some((r: { apiGroups?: string[] }) => r.apiGroups?.includes('example.com')), POLL);
    // edit aggregates view's pieces too (aggregate-to-edit roles carry the view label chain upstream uses).
    await eventually(async () => (await rulesOf('admin')).length > 0, POLL);
    // A user bound to view reads pods but may not delete them.
    expect(await kubectl(admin(), 'create', 'rolebinding', 'bob-views', '-n', 'team-a', '--clusterrole=view', '--user=bob')).toMatchObject({ code: 0 });
    await eventually(async () => (await kubectl(bob, 'auth', 'can-i', 'list', 'pods', '-n', 'team-a')).code === 0, POLL);
    expect((await kubectl(bob, 'auth', 'can-i', 'delete', 'pods', '-n', 'team-a')).code).toBe(1);
  });

  it('kubectl auth reconcile creates and widens roles and bindings from a file', async () => {
    const file = path.join(dir, 'reconcile.yaml');
    await writeFile(
      file,
      [
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: Role',
        'metadata: {name: cm-editor, namespace: team-a}',
        'rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, update]}]',
        '---',
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: RoleBinding',
        'metadata: {name: cm-editors, namespace: team-a}',
        'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cm-editor}',
        'subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]',
        '',
      ].join('\n'),
    );
    const first = await kubectl(admin(), 'auth', 'reconcile', '-f', file);
    expect(first).toMatchObject({ code: 0 });
    expect(first.stdout).toContain('role.rbac.authorization.k8s.io/cm-editor reconciled');
    await eventually(async () => (await kubectl(alice, 'auth', 'can-i', 'update', 'configmaps', '-n', 'team-a')).code === 0, POLL);
    // Narrow it by hand; reconcile adds back what is missing and keeps what was added.
    expect(
      await kubectl(
        admin(),
        'patch',
        'role',
        'cm-editor',
        '-n',
        'team-a',
        '--type=json',
        '-p',
        '[{"op":"replace","path":"/rules","value":[{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}]}]',
      ),
    ).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'auth', 'reconcile', '-f', file)).toMatchObject({ code: 0 });
    const rules = JSON.parse((await kubectl(admin(), 'get', 'role', 'cm-editor', '-n', 'team-a', '-o', 'json')).stdout).rules;
    expect(rules).toEqual(
      expect.arrayContaining([expect.objectContaining({ resources: ['secrets'] }), expect.objectContaining({ resources: ['configmaps'] })]),
    );
  });
});

describe('Node authorizer', () => {
  const kubelet = ['--token', 'node-token'];
  it('a kubelet reads what pods bound to it refer to, and nothing else', async () => {
    expect(await kubectl(admin(), 'create', 'secret', 'generic', 'mine', '-n', 'team-a', '--from-literal=a=b')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'secret', 'generic', 'theirs', '-n', 'team-a', '--from-literal=a=b')).toMatchObject({ code: 0 });
    const pod = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'on-n1', namespace: 'team-a' },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 's', secret: { secretName: 'mine' } }] },
    });
    await writeFile(path.join(dir, 'pod.json'), pod);
    expect(await kubectl(admin(), 'create', '-f', path.join(dir, 'pod.json'))).toMatchObject({ code: 0 });
    await eventually(async () => (await kubectl(kubelet, 'get', 'secret', 'mine', '-n', 'team-a')).code === 0, POLL);
    const theirs = await kubectl(kubelet, 'get', 'secret', 'theirs', '-n', 'team-a');
    expect(theirs.stderr).toContain(
      'secrets "theirs" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "team-a": Node: no relationship found between node \'n1\' and this object',
    );
    // Its pods by spec.nodeName, not everyone's.
    expect(await kubectl(kubelet, 'get', 'pods', '-A', '--field-selector', 'spec.nodeName=n1', '-o', 'name')).toMatchObject({ code: 0, stdout: 'pod/on-n1\n' });
    expect((await kubectl(kubelet, 'get', 'pods', '-A')).stderr).toContain('can only list/watch pods with spec.nodeName field selector');
    // Authorization comes before routing, so the answer is the same whether or not Nodes are served.
    expect((await kubectl(kubelet, 'get', '--raw', '/api/v1/nodes/n2')).stderr).toContain("node 'n1' cannot read 'n2', only its own Node object");
  });
});

describe('RBAC privilege escalation', () => {
  it('refuses roles and bindings that grant more than the writer holds, unless escalate / bind allow it', async () => {
    expect(await kubectl(admin(), 'create', 'namespace', 'team-b')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'clusterrole', 'ns-lister', '--verb=list', '--resource=namespaces')).toMatchObject({ code: 0 });
    expect(
      await kubectl(
        admin(),
        'create',
        'role',
        'rbac-manager',
        '-n',
        'team-b',
        '--verb=create,get,list',
        '--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io',
      ),
    ).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'role', 'pod-viewer', '-n', 'team-b', '--verb=get,list', '--resource=pods')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'rolebinding', 'alice-manages', '-n', 'team-b', '--role=rbac-manager', '--user=alice')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'rolebinding', 'alice-views', '-n', 'team-b', '--role=pod-viewer', '--user=alice')).toMatchObject({ code: 0 });
    await eventually(async () => (await kubectl(alice, 'get', 'roles', '-n', 'team-b')).code === 0, POLL);

    // What she holds she may grant.
    expect(await kubectl(alice, 'create', 'role', 'readers', '-n', 'team-b', '--verb=get', '--resource=pods')).toMatchObject({ code: 0 });
    // More than she holds is refused, listing what she lacks.
    const escalate = await kubectl(alice, 'create', 'role', 'deleters', '-n', 'team-b', '--verb=get,delete', '--resource=pods');
    expect(escalate.code).not.toBe(0);
    expect(escalate.stderr).toContain(
      'roles.rbac.authorization.k8s.io "deleters" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
    );
    // Binding a role with rights she lacks is refused...
    const bind = await kubectl(alice, 'create', 'rolebinding', 'bob-ns', '-n', 'team-b', '--clusterrole=ns-lister', '--user=bob');
    expect(bind.stderr).toContain('is attempting to grant RBAC permissions not currently held');
    // A role that does not exist cannot be bound either.
    expect((await kubectl(alice, 'create', 'rolebinding', 'ghost', '-n', 'team-b', '--role=nonexistent', '--user=bob')).stderr).toContain(
      'roles.rbac.authorization.k8s.io "nonexistent" not found',
    );
    // ...until she may `bind` that role.
    expect(
      await kubectl(
        admin(),
        'create',
        'role',
        'binder',
        '-n',
        'team-b',
        '--verb=bind',
        '--resource=clusterroles.rbac.authorization.k8s.io',
        '--resource-name=ns-lister',
      ),
    ).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'rolebinding', 'alice-binds', '-n', 'team-b', '--role=binder', '--user=alice')).toMatchObject({ code: 0 });
    await eventually(
      async () => (await kubectl(alice, 'create', 'rolebinding', 'bob-ns', '-n', 'team-b', '--clusterrole=ns-lister', '--user=bob')).code === 0,
      POLL,
    );
  });
});
