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

const run = promisify(execFile);
let dir: string;
let server: ServerProcess;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-authz-e2e-'));
  await writeFile(path.join(dir, 'tokens.csv'), 'alice-token,alice,uid-a\nbob-token,bob,uid-b,"watchers"\n');
  server = await startServerProcess(['--vendor', 'kubernetes', '--token-auth-file', path.join(dir, 'tokens.csv')]);
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

/** Retry while RBAC's index catches up with a binding just written (it follows watches). */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

describe('RBAC', () => {
  it('a RoleBinding grants its Role in its namespace only', async () => {
    expect(await kubectl(admin(), 'create', 'namespace', 'team-a')).toMatchObject({ code: 0 });
    const denied = await kubectl(alice, 'get', 'pods', '-n', 'team-a');
    expect(denied.stderr).toContain('pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-a"');
    expect(await kubectl(admin(), 'create', 'role', 'pod-reader', '-n', 'team-a', '--verb=get,list,watch', '--resource=pods')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'rolebinding', 'alice-reads', '-n', 'team-a', '--role=pod-reader', '--user=alice')).toMatchObject({ code: 0 });
    expect(await eventually(async () => (await kubectl(alice, 'get', 'pods', '-n', 'team-a')).code === 0)).toBe(true);
    expect((await kubectl(alice, 'get', 'pods', '-n', 'default')).stderr).toContain('pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"');
    expect((await kubectl(alice, 'delete', 'pod', 'x', '-n', 'team-a')).stderr).toContain('pods "x" is forbidden: User "alice" cannot delete resource "pods" in API group "" in the namespace "team-a"');
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

  it('a 403 says why: the nearest miss among the caller\'s own bindings, never anyone else\'s', async () => {
    const del = await kubectl(alice, 'delete', 'pod', 'x', '-n', 'team-a');
    expect(del.stderr).toContain(
      'pods "x" is forbidden: User "alice" cannot delete resource "pods" in API group "" in the namespace "team-a": RBAC: RoleBinding "alice-reads/team-a" of Role "pod-reader" grants get, list, watch on pods, not delete',
    );
    // bob has no binding about secrets: the reason names nothing of anyone else's.
    const secrets = await kubectl(bob, 'get', 'secrets', '-n', 'team-a');
    expect(secrets.stderr).toContain('secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "team-a": RBAC: no binding for this user or their groups grants list on secrets');
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
  });

  it('a ClusterRoleBinding to a group grants cluster-wide', async () => {
    expect((await kubectl(bob, 'get', 'namespaces')).code).not.toBe(0);
    expect(await kubectl(admin(), 'create', 'clusterrole', 'ns-reader', '--verb=get,list', '--resource=namespaces')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'clusterrolebinding', 'watchers-read-ns', '--clusterrole=ns-reader', '--group=watchers')).toMatchObject({ code: 0 });
    expect(await eventually(async () => (await kubectl(bob, 'get', 'namespaces', '-o', 'name')).stdout.includes('namespace/team-a'))).toBe(true);
    expect((await kubectl(alice, 'get', 'namespaces')).code).not.toBe(0);
  });
});

describe('RBAC privilege escalation', () => {
  it('refuses roles and bindings that grant more than the writer holds, unless escalate / bind allow it', async () => {
    expect(await kubectl(admin(), 'create', 'namespace', 'team-b')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'clusterrole', 'ns-lister', '--verb=list', '--resource=namespaces')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'role', 'rbac-manager', '-n', 'team-b', '--verb=create,get,list', '--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'role', 'pod-viewer', '-n', 'team-b', '--verb=get,list', '--resource=pods')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'rolebinding', 'alice-manages', '-n', 'team-b', '--role=rbac-manager', '--user=alice')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'rolebinding', 'alice-views', '-n', 'team-b', '--role=pod-viewer', '--user=alice')).toMatchObject({ code: 0 });
    expect(await eventually(async () => (await kubectl(alice, 'get', 'roles', '-n', 'team-b')).code === 0)).toBe(true);

    // What she holds she may grant.
    expect(await kubectl(alice, 'create', 'role', 'readers', '-n', 'team-b', '--verb=get', '--resource=pods')).toMatchObject({ code: 0 });
    // More than she holds is refused, listing what she lacks.
    const escalate = await kubectl(alice, 'create', 'role', 'deleters', '-n', 'team-b', '--verb=get,delete', '--resource=pods');
    expect(escalate.code).not.toBe(0);
    expect(escalate.stderr).toContain('roles.rbac.authorization.k8s.io "deleters" is forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}');
    // Binding a role with rights she lacks is refused...
    const bind = await kubectl(alice, 'create', 'rolebinding', 'bob-ns', '-n', 'team-b', '--clusterrole=ns-lister', '--user=bob');
    expect(bind.stderr).toContain('is attempting to grant RBAC permissions not currently held');
    // A role that does not exist cannot be bound either.
    expect((await kubectl(alice, 'create', 'rolebinding', 'ghost', '-n', 'team-b', '--role=nonexistent', '--user=bob')).stderr).toContain('roles.rbac.authorization.k8s.io "nonexistent" not found');
    // ...until she may `bind` that role.
    expect(await kubectl(admin(), 'create', 'role', 'binder', '-n', 'team-b', '--verb=bind', '--resource=clusterroles.rbac.authorization.k8s.io', '--resource-name=ns-lister')).toMatchObject({ code: 0 });
    expect(await kubectl(admin(), 'create', 'rolebinding', 'alice-binds', '-n', 'team-b', '--role=binder', '--user=alice')).toMatchObject({ code: 0 });
    expect(await eventually(async () => (await kubectl(alice, 'create', 'rolebinding', 'bob-ns', '-n', 'team-b', '--clusterrole=ns-lister', '--user=bob')).code === 0)).toBe(true);
  });
});
