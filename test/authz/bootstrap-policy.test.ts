/**
 * The default RBAC policy as data: upstream's counts, complete objects, the naming profile in
 * every vendor name, and a core that accepts all of it.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bootstrapPolicy, reconcilePolicy } from '../../src/authz';
import { createCore, type ApiObject, type RequestContext } from '../../src/core';
import { createStore } from '../../src/store';
import { createNaming, VENDORS } from '../../src/naming';

// Upstream's testdata (default feature gates): cluster-roles.yaml lists 31 roles,
// controller-roles.yaml 33 `system:controller:*` roles (one binding each in
// controller-role-bindings.yaml), cluster-role-bindings.yaml 12, namespace-roles.yaml 7,
// namespace-role-bindings.yaml 7.
const POLICY_CLUSTER_ROLES = 31;
const CONTROLLER_ROLES = 33;
const POLICY_CLUSTER_ROLE_BINDINGS = 12;
const ROLES = 7;
const ROLE_BINDINGS = 7;

const kube = createNaming('kubernetes');
const platform = createNaming('platform');
const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };

const byName = (objects: ApiObject[], name: string): ApiObject => {
  const found = objects.find((o) => o.metadata?.name === name);
  if (!found) throw new Error(`no ${name}`);
  return found;
};

/** Every string value and key in a JSON-shaped value. */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => strings(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      strings(v, out);
    }
  }
  return out;
}

describe.each(VENDORS)('bootstrapPolicy (%s profile)', (vendor) => {
  const naming = createNaming(vendor);
  const policy = bootstrapPolicy(naming);
  const RBAC = naming.groups.rbac;
  const all = [...policy.clusterRoles, ...policy.clusterRoleBindings, ...policy.roles, ...policy.roleBindings];

  test("counts match upstream's testdata", () => {
    const controller = (o: ApiObject) => o.metadata!.name!.startsWith('system:controller:');
    expect(policy.clusterRoles.filter((o) => !controller(o))).toHaveLength(POLICY_CLUSTER_ROLES);
    expect(policy.clusterRoles.filter(controller)).toHaveLength(CONTROLLER_ROLES);
    expect(policy.clusterRoleBindings.filter((o) => !controller(o))).toHaveLength(POLICY_CLUSTER_ROLE_BINDINGS);
    expect(policy.clusterRoleBindings.filter(controller)).toHaveLength(CONTROLLER_ROLES);
    expect(policy.clusterRoles).toHaveLength(POLICY_CLUSTER_ROLES + CONTROLLER_ROLES);
    expect(policy.clusterRoleBindings).toHaveLength(POLICY_CLUSTER_ROLE_BINDINGS + CONTROLLER_ROLES);
    expect(policy.roles).toHaveLength(ROLES);
    expect(policy.roleBindings).toHaveLength(ROLE_BINDINGS);
  });

  test('names are unique per kind and namespace', () => {
    const keys = all.map((o) => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  test('every object is complete: apiVersion, kind, the bootstrapping label and the autoupdate annotation', () => {
    const kinds: Array<[ApiObject[], string, boolean]> = [
      [policy.clusterRoles, 'ClusterRole', false],
      [policy.clusterRoleBindings, 'ClusterRoleBinding', false],
      [policy.roles, 'Role', true],
      [policy.roleBindings, 'RoleBinding', true],
    ];
    for (const [objects, kind, namespaced] of kinds) {
      for (const o of objects) {
        expect(o.apiVersion).toBe(`${RBAC}/v1`);
        expect(o.kind).toBe(kind);
        expect(o.metadata?.labels?.[naming.labels.bootstrapping]).toBe('rbac-defaults');
        expect(o.metadata?.annotations).toEqual({ [naming.labels.rbacAutoupdate]: 'true' });
        expect(o.metadata?.namespace).toEqual(namespaced ? expect.any(String) : undefined);
      }
    }
    expect(new Set(policy.roles.map((o) => o.metadata!.namespace))).toEqual(new Set([naming.namespaces.system, naming.namespaces.public]));
  });

  test('cluster-admin grants every verb on every resource and URL', () => {
    expect(byName(policy.clusterRoles, 'cluster-admin').rules).toEqual([
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ]);
    expect(byName(policy.clusterRoleBindings, 'cluster-admin').subjects).toEqual([{ kind: 'Group', apiGroup: RBAC, name: 'system:masters' }]);
  });

  test('admin, edit and view aggregate by label and carry no rules of their own', () => {
    const label = (to: string) => `${RBAC}/aggregate-to-${to}`;
    const expectations: Array<[string, string, Record<string, string>]> = [
      ['admin', 'admin', {}],
      ['edit', 'edit', { [label('admin')]: 'true' }],
      ['view', 'view', { [label('edit')]: 'true' }],
    ];
    for (const [name, from, extra] of expectations) {
      const role = byName(policy.clusterRoles, name);
      expect(role.rules).toBeNull();
      expect(role.aggregationRule).toEqual({ clusterRoleSelectors: [{ matchLabels: { [label(from)]: 'true' } }] });
      expect(role.metadata?.labels).toEqual({ [naming.labels.bootstrapping]: 'rbac-defaults', ...extra });
    }
    for (const to of ['admin', 'edit', 'view']) {
      const role = byName(policy.clusterRoles, `system:aggregate-to-${to}`);
      expect(role.metadata?.labels?.[label(to)]).toBe('true');
      expect((role.rules as unknown[]).length).toBeGreaterThan(0);
      expect(role.aggregationRule).toBeUndefined();
    }
    // Only those carry an aggregationRule.
    expect(policy.clusterRoles.filter((o) => o.aggregationRule).map((o) => o.metadata!.name)).toEqual(['admin', 'edit', 'view']);
  });

  test('every binding refers to a role of the policy; subjects have upstream shapes', () => {
    const clusterRoleNames = new Set(policy.clusterRoles.map((o) => o.metadata!.name));
    for (const b of policy.clusterRoleBindings) {
      expect(b.roleRef).toEqual({ apiGroup: RBAC, kind: 'ClusterRole', name: expect.any(String) });
      expect(clusterRoleNames.has((b.roleRef as { name: string }).name)).toBe(true);
    }
    for (const b of policy.roleBindings) {
      expect(b.roleRef).toEqual({ apiGroup: RBAC, kind: 'Role', name: expect.any(String) });
      const name = (b.roleRef as { name: string }).name;
      expect(policy.roles.some((r) => r.metadata!.name === name && r.metadata!.namespace === b.metadata!.namespace)).toBe(true);
    }
    for (const b of [...policy.clusterRoleBindings, ...policy.roleBindings]) {
      for (const s of (b.subjects ?? []) as Array<Record<string, unknown>>) {
        if (s.kind === 'ServiceAccount') expect(s).toEqual({ kind: 'ServiceAccount', name: expect.any(String), namespace: naming.namespaces.system });
        else expect(s).toEqual({ kind: expect.stringMatching(/^(User|Group)$/), apiGroup: RBAC, name: expect.stringMatching(/^system:/) });
      }
    }
    // The system:node binding is kept with no subjects, as upstream's.
    expect(byName(policy.clusterRoleBindings, 'system:node').subjects).toBeUndefined();
    // Each controller's role is bound to its service account.
    expect(byName(policy.clusterRoleBindings, 'system:controller:job-controller').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'job-controller', namespace: naming.namespaces.system },
    ]);
  });

  test('every object is its own (a caller may mutate what it is given)', () => {
    const a = bootstrapPolicy(naming);
    (a.clusterRoles[0].metadata!.labels as Record<string, string>).x = 'y';
    const events = (o: ApiObject) => (o.rules as Array<{ resources?: string[] }>).find((r) => r.resources?.includes('events'))!;
    events(byName(a.clusterRoles, 'system:controller:job-controller')).resources!.push('mutated');
    expect(bootstrapPolicy(naming)).toEqual(policy);
    expect(events(byName(a.clusterRoles, 'system:controller:cronjob-controller')).resources).toEqual(['events']);
  });

  test('a core accepts the whole policy; a second reconcile changes nothing', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), `keelson-bootstrap-${vendor}-`));
    const core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0 });
    try {
      await core.ready();
      const total = all.length;
      expect(await reconcilePolicy(core, admin, policy, naming)).toEqual({ created: total, updated: 0, recreated: 0, protected: 0 });
      expect(await reconcilePolicy(core, admin, bootstrapPolicy(naming), naming)).toEqual({ created: 0, updated: 0, recreated: 0, protected: 0 });
      const stored = await core.get({ group: RBAC, version: 'v1', resource: 'clusterroles', name: 'system:aggregate-to-view' }, {}, admin);
      expect(stored.metadata?.labels?.[`${RBAC}/aggregate-to-view`]).toBe('true');
    } finally {
      await core.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('vendor names', () => {
  test("the kubernetes profile serves upstream's names", () => {
    const policy = bootstrapPolicy(kube);
    const view = byName(policy.clusterRoles, 'system:aggregate-to-view');
    expect(view.apiVersion).toBe('rbac.authorization.k8s.io/v1');
    expect(view.metadata?.labels).toEqual({ 'kubernetes.io/bootstrapping': 'rbac-defaults', 'rbac.authorization.k8s.io/aggregate-to-view': 'true' });
    expect(view.metadata?.annotations).toEqual({ 'rbac.authorization.kubernetes.io/autoupdate': 'true' });
    expect(byName(policy.clusterRoles, 'view').aggregationRule).toEqual({
      clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }],
    });
    expect(byName(policy.clusterRoles, 'system:certificates.k8s.io:kube-apiserver-client-approver').rules).toEqual([
      { verbs: ['approve'], apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['kubernetes.io/kube-apiserver-client'] },
    ]);
    expect(byName(policy.clusterRoles, 'system:node-proxier').rules).toContainEqual({
      verbs: ['create', 'patch', 'update'],
      apiGroups: ['', 'events.k8s.io'],
      resources: ['events'],
    });
    expect(byName(policy.clusterRoleBindings, 'system:kube-dns').subjects).toEqual([{ kind: 'ServiceAccount', name: 'kube-dns', namespace: 'kube-system' }]);
    expect(byName(policy.roles, 'system:controller:bootstrap-signer').metadata?.namespace).toBe('kube-public');
  });

  test('the platform profile spells no vendor word, except upstream names that begin with kube-', () => {
    const policy = bootstrapPolicy(platform);
    const json = JSON.stringify(policy);
    for (const word of ['k8s.io', 'kubernetes.io', 'kubernetes', 'kube-system', 'kube-public']) expect(json).not.toContain(word);

    // Every string that still says `kube`: user names, role names, service-account names and
    // resource names that upstream spells so and the profile does not rename.
    const kubeStrings = new Set(strings(policy).filter((s) => s.includes('kube')));
    expect([...kubeStrings].sort()).toEqual(
      [
        // users and the roles and bindings named after them
        'system:kube-controller-manager',
        'system:kube-scheduler',
        'system:kube-proxy',
        // roles named after components
        'system:kube-aggregator',
        'system:kube-dns',
        'system:kubelet-api-admin',
        'system::leader-locking-kube-controller-manager',
        'system::leader-locking-kube-scheduler',
        // certificate approver roles and signers (the signer and group domain are the profile's)
        'system:certificates.platform.io:kube-apiserver-client-approver',
        'system:certificates.platform.io:kube-apiserver-client-kubelet-approver',
        'system:certificates.platform.io:kubelet-serving-approver',
        'platform.io/kube-apiserver-client',
        'platform.io/kube-apiserver-client-kubelet',
        'platform.io/kubelet-serving',
        // service accounts
        'kube-dns',
        // resource names (leases and a config map)
        'kube-controller-manager',
        'kube-scheduler',
        'kube-apiserver-legacy-service-account-token-tracking',
      ].sort(),
    );
    expect(json).toContain('"rbac.authorization.platform.io/aggregate-to-view":"true"');
    expect(byName(policy.roles, 'system:controller:bootstrap-signer').metadata?.namespace).toBe('platform-public');
  });
});
