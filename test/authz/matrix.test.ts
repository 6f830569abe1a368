/**
 * The authorization matrix: every combination of user, verb, resource (with subresources),
 * name and namespace — over 2,000 cases per mode — against a fixed set of roles and bindings,
 * for the modes AlwaysAllow, AlwaysDeny, RBAC, ABAC and Node, each behind the `system:masters` rule
 * as the server chains them.
 *
 * The expected decisions do not come from the code under test. For each user, what they hold
 * is written out by hand below (`HELD`), read off the bindings with the spec's rules: a
 * RoleBinding grants only in its namespace, even when it binds a ClusterRole; a
 * ClusterRoleBinding grants everywhere and at the cluster scope; resourceNames restrict to
 * those names (so never a list); a subresource must be named; a binding to a role that does not
 * exist grants nothing. `expected()` only looks a case up in that table.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  abacAuthorizer,
  authorizeAll,
  bootstrapPolicy,
  loadAbacPolicy,
  nodeAuthorizer,
  rbacAuthorizer,
  type AuthorizationAttributes,
  type Authorizer,
  type NodeAuthorizer,
  type RbacAuthorizer,
} from '../../src/authz';
import { rulesOfObject } from '../../src/authz/rules';
import { superuserAuthorizer } from '../../src/gateway/steps/authorization';
import { createCore, type ApiObject, type Core, type RequestContext } from '../../src/core';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { systemClock } from '../../src/clock';

const naming = createNaming('kubernetes');
const RBAC = 'rbac.authorization.k8s.io';
const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };

// ---- the fixture ----------------------------------------------------------------------------

const clusterRoles: Array<[string, unknown[]]> = [
  ['pod-reader', [{ apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list', 'watch'] }]],
  ['apps-admin', [{ apiGroups: ['apps'], resources: ['*'], verbs: ['*'] }]],
  ['health', [{ nonResourceURLs: ['/healthz', '/metrics/*'], verbs: ['get'] }]],
];
const roles: Array<[string, string, unknown[]]> = [
  ['team-a', 'cm-settings', [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'], verbs: ['get', 'update'] }]],
  ['team-b', 'cm-all', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }]],
];
const user = (name: string) => ({ apiGroup: RBAC, kind: 'User', name });
const group = (name: string) => ({ apiGroup: RBAC, kind: 'Group', name });
const clusterBindings: Array<[string, string, unknown[]]> = [
  ['readers', 'pod-reader', [group('readers')]],
  ['dangling', 'no-such-role', [user('dave')]],
  ['ops-health', 'health', [user('ops')]],
];
const roleBindings: Array<[string, string, 'Role' | 'ClusterRole', string, unknown[]]> = [
  ['team-a', 'alice-apps', 'ClusterRole', 'apps-admin', [user('alice')]],
  ['team-a', 'alice-cm', 'Role', 'cm-settings', [user('alice')]],
  ['team-b', 'devs-cm', 'Role', 'cm-all', [group('devs')]],
  ['team-a', 'bot-pods', 'ClusterRole', 'pod-reader', [{ kind: 'ServiceAccount', name: 'bot', namespace: 'team-a' }]],
  ['team-b', 'carol-ghost', 'Role', 'no-such-role', [user('carol')]],
  // A ClusterRole with non-resource URLs bound in a namespace grants no URL.
  ['team-a', 'alice-health', 'ClusterRole', 'health', [user('alice')]],
];

const USERS: Record<string, string[]> = {
  alice: [],
  bob: ['readers'],
  carol: ['devs'],
  eve: ['readers', 'devs'],
  dave: [],
  'system:serviceaccount:team-a:bot': ['system:serviceaccounts'],
  'system:serviceaccount:team-b:bot': ['system:serviceaccounts'],
  ops: [],
  admin: ['system:masters'],
  'system:node:n1': ['system:nodes', 'system:authenticated'],
};

// ---- what each user holds under RBAC, read off the fixture by hand ---------------------------

interface Held {
  verbs: string[] | '*';
  group: string;
  /** `resource` or `resource/subresource`; '*' any within the group. */
  resources: string[] | '*';
  names?: string[];
  /** Namespaces it applies in; '*' also covers the cluster scope. */
  namespaces: string[] | '*';
}
const READ = ['get', 'list', 'watch'];
const HELD: Record<string, Held[]> = {
  alice: [
    { verbs: '*', group: 'apps', resources: '*', namespaces: ['team-a'] },
    { verbs: ['get', 'update'], group: '', resources: ['configmaps'], names: ['settings'], namespaces: ['team-a'] },
  ],
  bob: [{ verbs: READ, group: '', resources: ['pods', 'pods/log'], namespaces: '*' }],
  carol: [{ verbs: '*', group: '', resources: ['configmaps'], namespaces: ['team-b'] }],
  eve: [
    { verbs: READ, group: '', resources: ['pods', 'pods/log'], namespaces: '*' },
    { verbs: '*', group: '', resources: ['configmaps'], namespaces: ['team-b'] },
  ],
  dave: [],
  'system:serviceaccount:team-a:bot': [{ verbs: READ, group: '', resources: ['pods', 'pods/log'], namespaces: ['team-a'] }],
  'system:serviceaccount:team-b:bot': [],
  ops: [],
  admin: [{ verbs: '*', group: '*', resources: '*', namespaces: '*' }],
};
const URLS_HELD: Record<string, Array<[string, string]>> = {
  ops: [
    ['get', '/healthz'],
    ['get', '/metrics/*'],
  ],
  admin: [['*', '*']],
};

// ---- under ABAC, from the policy file below (subresources are not told apart by ABAC) -------

const POLICY = [
  '# alice: everything in apps, in team-a',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "alice", "namespace": "team-a", "apiGroup": "apps", "resource": "*"}}',
  '# the readers group: read-only pods everywhere',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "readers", "readonly": true, "namespace": "*", "apiGroup": "", "resource": "pods"}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "devs", "namespace": "team-b", "apiGroup": "", "resource": "configmaps"}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "ops", "readonly": true, "nonResourcePath": "/metrics/*"}}',
].join('\n');
const ABAC_HELD: Record<string, Held[]> = {
  alice: [{ verbs: '*', group: 'apps', resources: '*', namespaces: ['team-a'] }],
  bob: [{ verbs: READ, group: '', resources: ['pods', 'pods/log', 'pods/exec'], namespaces: '*' }],
  carol: [{ verbs: '*', group: '', resources: ['configmaps'], namespaces: ['team-b'] }],
  eve: [
    { verbs: READ, group: '', resources: ['pods', 'pods/log', 'pods/exec'], namespaces: '*' },
    { verbs: '*', group: '', resources: ['configmaps'], namespaces: ['team-b'] },
  ],
  admin: [{ verbs: '*', group: '*', resources: '*', namespaces: '*' }],
};
const ABAC_URLS_HELD: Record<string, Array<[string, string]>> = { ops: [['get', '/metrics/*']], admin: [['*', '*']] };

// ---- under Node: a kubelet on n1, where the pod team-a/settings runs, referring to the
// ConfigMap and the Secret named settings (the graph subdivides pods, configmaps, secrets;
// the static system:node rules grant nothing about replicasets, and no URL) -----------------

const NODE_HELD: Held[] = [
  { verbs: READ, group: '', resources: ['configmaps', 'secrets'], names: ['settings'], namespaces: ['team-a'] },
  // A bound pod, read by name; mirror pods may be created and deleted anywhere (NodeRestriction's business).
  { verbs: READ, group: '', resources: ['pods'], names: ['settings'], namespaces: ['team-a'] },
  { verbs: ['create', 'delete'], group: '', resources: ['pods'], namespaces: '*' },
];

// ---- the cases ----------------------------------------------------------------------------

const VERBS = ['get', 'list', 'watch', 'create', 'update', 'delete'];
const RESOURCES: Array<[string, string]> = [
  ['', 'pods'],
  ['', 'pods/log'],
  ['', 'pods/exec'],
  ['', 'configmaps'],
  ['', 'secrets'],
  ['apps', 'replicasets'],
  ['apps', 'replicasets/scale'],
];
const NAMESPACES = ['team-a', 'team-b', ''];
const NAMES = ['', 'settings'];
const PATHS = ['/healthz', '/metrics/slis', '/metrics', '/api'];

function holds(held: readonly Held[], verb: string, apiGroup: string, resource: string, name: string, namespace: string): boolean {
  return held.some(
    (h) =>
      (h.verbs === '*' || h.verbs.includes(verb)) &&
      (h.group === '*' || h.group === apiGroup) &&
      (h.resources === '*' || h.resources.includes(resource)) &&
      (!h.names || h.names.includes(name)) &&
      (h.namespaces === '*' || h.namespaces.includes(namespace)),
  );
}
const urlHeld = (held: ReadonlyArray<[string, string]>, verb: string, p: string) =>
  held.some(([v, u]) => (v === '*' || v === verb) && (u === '*' || u === p || (u.endsWith('*') && p.startsWith(u.slice(0, -1)))));

interface Case {
  attributes: AuthorizationAttributes;
  label: string;
}
const cases: Case[] = [];
for (const [username, groups] of Object.entries(USERS)) {
  for (const verb of VERBS) {
    for (const [apiGroup, resourcePath] of RESOURCES) {
      const [resource, subresource = ''] = resourcePath.split('/');
      for (const namespace of NAMESPACES) {
        for (const name of NAMES) {
          cases.push({
            attributes: {
              user: { username, groups },
              verb,
              isResourceRequest: true,
              path: '',
              namespace,
              apiGroup,
              apiVersion: 'v1',
              resource: resource!,
              subresource,
              name,
            },
            label: `${username} ${verb} ${apiGroup || 'core'}/${resourcePath} name=${name || '-'} ns=${namespace || '(cluster)'}`,
          });
        }
      }
    }
  }
  for (const verb of ['get', 'post']) {
    for (const p of PATHS) {
      cases.push({
        attributes: {
          user: { username, groups },
          verb,
          isResourceRequest: false,
          path: p,
          namespace: '',
          apiGroup: '',
          apiVersion: '',
          resource: '',
          subresource: '',
          name: '',
        },
        label: `${username} ${verb} ${p}`,
      });
    }
  }
}

function expected(mode: string, a: AuthorizationAttributes): boolean {
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const superuser = a.user.groups.includes('system:masters');
  switch (mode) {
    case 'AlwaysAllow':
      return true;
    case 'AlwaysDeny':
      return superuser;
    case 'RBAC':
      return a.isResourceRequest
        ? holds(HELD[a.user.username] ?? [], a.verb, a.apiGroup, resource, a.name, a.namespace)
        : urlHeld(URLS_HELD[a.user.username] ?? [], a.verb, a.path);
    case 'Node':
      if (superuser) return true;
      if (a.user.username !== 'system:node:n1' || !a.isResourceRequest) return false;
      return holds(NODE_HELD, a.verb, a.apiGroup, resource, a.name, a.namespace);
    case 'ABAC':
      return a.isResourceRequest
        ? holds(ABAC_HELD[a.user.username] ?? [], a.verb, a.apiGroup, resource, a.name, a.namespace)
        : urlHeld(ABAC_URLS_HELD[a.user.username] ?? [], a.verb, a.path);
  }
  throw new Error(mode);
}

// ---- the run ------------------------------------------------------------------------------

let dir: string;
let core: Core;
let rbac: RbacAuthorizer;
let node: NodeAuthorizer;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-authz-matrix-'));
  core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0 });
  await core.ready();
  const t = (resource: string, namespace?: string) => ({ group: RBAC, version: 'v1', resource, ...(namespace ? { namespace } : {}) });
  const obj = (kind: string, name: string, namespace: string | undefined, body: Record<string, unknown>): ApiObject => ({
    apiVersion: `${RBAC}/v1`,
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}) },
    ...body,
  });
  for (const ns of ['team-a', 'team-b'])
    await core.create({ group: '', version: 'v1', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, {}, admin);
  for (const [name, rules] of clusterRoles) await core.create(t('clusterroles'), obj('ClusterRole', name, undefined, { rules }), {}, admin);
  for (const [ns, name, rules] of roles) await core.create(t('roles', ns), obj('Role', name, ns, { rules }), {}, admin);
  for (const [name, role, subjects] of clusterBindings) {
    await core.create(
      t('clusterrolebindings'),
      obj('ClusterRoleBinding', name, undefined, { roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: role }, subjects }),
      {},
      admin,
    );
  }
  for (const [ns, name, kind, role, subjects] of roleBindings) {
    await core.create(t('rolebindings', ns), obj('RoleBinding', name, ns, { roleRef: { apiGroup: RBAC, kind, name: role }, subjects }), {}, admin);
  }
  rbac = rbacAuthorizer({ api: core, naming, ctx: admin, clock: systemClock });
  await rbac.synced();
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'settings', namespace: 'team-a' },
    spec: {
      nodeName: 'n1',
      containers: [{ name: 'c', image: 'i', envFrom: [{ configMapRef: { name: 'settings' } }] }],
      volumes: [{ name: 's', secret: { secretName: 'settings' } }],
    },
  };
  await core.create({ group: '', version: 'v1', resource: 'pods', namespace: 'team-a' }, pod, {}, admin);
  const nodeRules = rulesOfObject(bootstrapPolicy(naming).clusterRoles.find((r) => r.metadata?.name === 'system:node'));
  node = nodeAuthorizer({ api: core, naming, ctx: admin, clock: systemClock, nodeRules, withSelectors: true });
  await node.synced();
});

afterAll(async () => {
  rbac.stop();
  node.stop();
  await core.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const MODES: Record<string, () => Authorizer> = {
  AlwaysAllow: () => ({ authorize: () => ({ decision: 'allow' }) }),
  AlwaysDeny: () => ({ authorize: () => ({ decision: 'deny', reason: 'Everything is forbidden.' }) }),
  RBAC: () => rbac,
  Node: () => node,
  ABAC: () => abacAuthorizer(loadAbacPolicy(POLICY, 'policy.jsonl', naming)),
};

test('the matrix has over 1,000 cases per mode', () => {
  expect(cases.length).toBeGreaterThan(2000);
});

describe.each(Object.keys(MODES))('mode %s', (mode) => {
  test(`every case decides as the table says`, async () => {
    const chain = [superuserAuthorizer, MODES[mode]!()];
    const wrong: string[] = [];
    let allowed = 0;
    for (const c of cases) {
      const d = await authorizeAll(chain, c.attributes);
      const want = expected(mode, c.attributes);
      if (want) allowed++;
      if ((d.decision === 'allow') !== want) wrong.push(`${c.label}: expected ${want ? 'allow' : 'refuse'}, got ${d.decision}`);
    }
    expect(wrong).toEqual([]);
    // The table is not degenerate: both answers occur (but for the all-or-nothing modes).
    if (mode === 'RBAC' || mode === 'ABAC') expect(allowed).toBeGreaterThan(100);
    // Node: admin's 260 cases, and 21 for the kubelet (6 configmap/secret reads, 3 pod reads, 12 mirror-pod writes).
    if (mode === 'Node') expect(allowed).toBe(260 + 21);
  });
});
