/**
 * RBAC decisions over a fixed set of roles and bindings, held in a real core on the embedded
 * store and indexed through watches. The expected decisions are written from RBAC's rules (a
 * binding names the user, its role has a matching rule), not generated from the code.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { rbacAuthorizer, type AuthorizationAttributes, type RbacAuthorizer } from '../../src/authz';
import { createCore, type ApiObject, type Core, type RequestContext } from '../../src/core';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { systemClock } from '../../src/clock';
import { eventually } from '../support/eventually';

const naming = createNaming('kubernetes');
const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const RBAC = 'rbac.authorization.k8s.io';
const t = (resource: string, namespace?: string) => ({ group: RBAC, version: 'v1', resource, ...(namespace ? { namespace } : {}) });

let dir: string;
let core: Core;
let rbac: RbacAuthorizer;

const obj = (kind: string, name: string, namespace: string | undefined, body: Record<string, unknown>): ApiObject => ({
  apiVersion: `${RBAC}/v1`,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
  ...body,
});

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-rbac-'));
  core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0 });
  await core.ready();
  for (const ns of ['team-a', 'team-b'])
    await core.create({ group: '', version: 'v1', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, {}, admin);
  const create = (resource: string, o: ApiObject) => core.create(t(resource, o.metadata?.namespace), o, {}, admin);
  await create(
    'clusterroles',
    obj('ClusterRole', 'pod-reader', undefined, { rules: [{ apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list', 'watch'] }] }),
  );
  await create('clusterroles', obj('ClusterRole', 'health', undefined, { rules: [{ nonResourceURLs: ['/healthz', '/metrics/*'], verbs: ['get'] }] }));
  await create('clusterroles', obj('ClusterRole', 'everything-apps', undefined, { rules: [{ apiGroups: ['apps'], resources: ['*'], verbs: ['*'] }] }));
  await create(
    'roles',
    obj('Role', 'cm-one', 'team-a', { rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['settings'], verbs: ['get', 'update'] }] }),
  );
  await create(
    'roles',
    obj('Role', 'scaler', 'team-a', {
      rules: [
        { apiGroups: ['apps'], resources: ['replicasets/scale'], verbs: ['patch'] },
        { apiGroups: [''], resources: ['*/status'], verbs: ['get'] },
      ],
    }),
  );
  // Cluster-wide: group `readers` reads pods everywhere; user ops reads health URLs.
  await create(
    'clusterrolebindings',
    obj('ClusterRoleBinding', 'readers', undefined, {
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'pod-reader' },
      subjects: [{ apiGroup: RBAC, kind: 'Group', name: 'readers' }],
    }),
  );
  await create(
    'clusterrolebindings',
    obj('ClusterRoleBinding', 'health', undefined, {
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'health' },
      subjects: [{ apiGroup: RBAC, kind: 'User', name: 'ops' }],
    }),
  );
  // team-a: alice gets apps (a ClusterRole bound in one namespace), the settings ConfigMap, and scale; a service account reads pods.
  await create(
    'rolebindings',
    obj('RoleBinding', 'alice-apps', 'team-a', {
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'everything-apps' },
      subjects: [{ apiGroup: RBAC, kind: 'User', name: 'alice' }],
    }),
  );
  await create(
    'rolebindings',
    obj('RoleBinding', 'alice-cm', 'team-a', {
      roleRef: { apiGroup: RBAC, kind: 'Role', name: 'cm-one' },
      subjects: [{ apiGroup: RBAC, kind: 'User', name: 'alice' }],
    }),
  );
  await create(
    'rolebindings',
    obj('RoleBinding', 'alice-scale', 'team-a', {
      roleRef: { apiGroup: RBAC, kind: 'Role', name: 'scaler' },
      subjects: [{ apiGroup: RBAC, kind: 'User', name: 'alice' }],
    }),
  );
  await create(
    'rolebindings',
    obj('RoleBinding', 'bot', 'team-a', {
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'pod-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'bot' }],
    }),
  );
  // A binding to a role that does not exist (yet) grants nothing.
  await create(
    'rolebindings',
    obj('RoleBinding', 'dangling', 'team-b', {
      roleRef: { apiGroup: RBAC, kind: 'Role', name: 'later' },
      subjects: [{ apiGroup: RBAC, kind: 'User', name: 'bob' }],
    }),
  );
  rbac = rbacAuthorizer({ api: core, naming, ctx: admin, clock: systemClock });
  await rbac.synced();
});

afterAll(async () => {
  rbac.stop();
  await core.close();
  await fs.rm(dir, { recursive: true, force: true });
});

type Case = [
  user: string,
  groups: string[],
  verb: string,
  group: string,
  resource: string,
  subresource: string,
  name: string,
  namespace: string,
  allowed: boolean,
];

const resourceCases: Case[] = [
  // group readers: pods and pods/log everywhere, read verbs only
  ['carol', ['readers'], 'get', '', 'pods', '', 'p', 'team-a', true],
  ['carol', ['readers'], 'list', '', 'pods', '', '', '', true],
  ['carol', ['readers'], 'get', '', 'pods', 'log', 'p', 'team-b', true],
  ['carol', ['readers'], 'get', '', 'pods', 'exec', 'p', 'team-b', false],
  ['carol', ['readers'], 'delete', '', 'pods', '', 'p', 'team-a', false],
  ['carol', ['readers'], 'get', 'apps', 'pods', '', 'p', 'team-a', false],
  ['carol', ['writers'], 'get', '', 'pods', '', 'p', 'team-a', false],
  // alice: everything in apps, only in team-a
  ['alice', [], 'create', 'apps', 'replicasets', '', '', 'team-a', true],
  ['alice', [], 'delete', 'apps', 'replicasets', '', 'web', 'team-a', true],
  ['alice', [], 'create', 'apps', 'replicasets', '', '', 'team-b', false],
  ['alice', [], 'list', 'apps', 'replicasets', '', '', '', false],
  ['alice', [], 'get', 'apps', 'replicasets', 'status', 'web', 'team-a', true],
  // alice: the one ConfigMap by name
  ['alice', [], 'get', '', 'configmaps', '', 'settings', 'team-a', true],
  ['alice', [], 'update', '', 'configmaps', '', 'settings', 'team-a', true],
  ['alice', [], 'get', '', 'configmaps', '', 'other', 'team-a', false],
  ['alice', [], 'list', '', 'configmaps', '', '', 'team-a', false],
  ['alice', [], 'delete', '', 'configmaps', '', 'settings', 'team-a', false],
  // alice: */status in the core group, by subresource
  ['alice', [], 'get', '', 'pods', 'status', 'p', 'team-a', true],
  ['alice', [], 'get', '', 'pods', '', 'p', 'team-a', false],
  // the service account of the binding's namespace
  ['system:serviceaccount:team-a:bot', ['system:serviceaccounts'], 'list', '', 'pods', '', '', 'team-a', true],
  ['system:serviceaccount:team-b:bot', ['system:serviceaccounts'], 'list', '', 'pods', '', '', 'team-a', false],
  ['system:serviceaccount:team-a:bot', ['system:serviceaccounts'], 'list', '', 'pods', '', '', 'team-b', false],
  // a dangling roleRef grants nothing
  ['bob', [], 'get', '', 'pods', '', 'p', 'team-b', false],
];

const nonResourceCases: Array<[user: string, verb: string, path: string, allowed: boolean]> = [
  ['ops', 'get', '/healthz', true],
  ['ops', 'get', '/metrics/slis', true],
  ['ops', 'get', '/metrics', false],
  ['ops', 'post', '/healthz', false],
  ['alice', 'get', '/healthz', false],
];

describe('RBAC decisions', () => {
  it.each(resourceCases)('%s %j: %s %s/%s/%s name=%s ns=%s → %s', (user, groups, verb, group, resource, subresource, name, namespace, allowed) => {
    const a: AuthorizationAttributes = {
      user: { username: user, groups },
      verb,
      isResourceRequest: true,
      path: '',
      namespace,
      apiGroup: group,
      apiVersion: 'v1',
      resource,
      subresource,
      name,
    };
    expect(rbac.authorize(a).decision).toBe(allowed ? 'allow' : 'noOpinion');
  });

  it.each(nonResourceCases)('%s %s %s → %s', (user, verb, path, allowed) => {
    const a: AuthorizationAttributes = {
      user: { username: user, groups: [] },
      verb,
      isResourceRequest: false,
      path,
      namespace: '',
      apiGroup: '',
      apiVersion: '',
      resource: '',
      subresource: '',
      name: '',
    };
    expect(rbac.authorize(a).decision).toBe(allowed ? 'allow' : 'noOpinion');
  });

  it('follows changes through its watches: a role that appears later starts granting', async () => {
    const a: AuthorizationAttributes = {
      user: { username: 'bob', groups: [] },
      verb: 'get',
      isResourceRequest: true,
      path: '',
      namespace: 'team-b',
      apiGroup: '',
      apiVersion: 'v1',
      resource: 'pods',
      subresource: '',
      name: 'p',
    };
    await core.create(t('roles', 'team-b'), obj('Role', 'later', 'team-b', { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }), {}, admin);
    await eventually(() => rbac.authorize(a).decision === 'allow', { what: 'the role to grant' });
    await core.delete({ ...t('rolebindings', 'team-b'), name: 'dangling' }, {}, admin);
    await eventually(() => rbac.authorize(a).decision === 'noOpinion', { what: 'the binding to stop granting' });
  });
});
