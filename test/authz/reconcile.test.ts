/**
 * Reconciling default roles and bindings (upstream's union mode) and the ClusterRole
 * aggregation controller, against a real core on the embedded store.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { reconcileBinding, reconcilePolicy, reconcileRole } from '../../src/authz/reconcile';
import { ClusterRoleAggregationController, aggregatedRules } from '../../src/controllers';
import { createCore, type ApiObject, type Core, type RequestContext } from '../../src/core';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { systemClock } from '../../src/clock';
import { eventually } from '../support/eventually';

const naming = createNaming('kubernetes');
const RBAC = 'rbac.authorization.k8s.io';
const AUTOUPDATE = 'rbac.authorization.kubernetes.io/autoupdate';
const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const t = (resource: string, name?: string, namespace?: string) => ({
  group: RBAC,
  version: 'v1',
  resource,
  ...(namespace ? { namespace } : {}),
  ...(name ? { name } : {}),
});

const role = (name: string, rules: unknown[], extra: Partial<ApiObject> = {}, namespace?: string): ApiObject => ({
  apiVersion: `${RBAC}/v1`,
  kind: namespace ? 'Role' : 'ClusterRole',
  metadata: { name, ...(namespace ? { namespace } : {}), labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' }, annotations: { [AUTOUPDATE]: 'true' } },
  rules,
  ...extra,
});
const binding = (name: string, roleName: string, subjects: unknown[], namespace?: string): ApiObject => ({
  apiVersion: `${RBAC}/v1`,
  kind: namespace ? 'RoleBinding' : 'ClusterRoleBinding',
  metadata: { name, ...(namespace ? { namespace } : {}), labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' }, annotations: { [AUTOUPDATE]: 'true' } },
  roleRef: { apiGroup: RBAC, kind: namespace ? 'Role' : 'ClusterRole', name: roleName },
  subjects,
});
const podReads = { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] };

describe('reconcileRole (pure)', () => {
  test('a missing role is created as expected', () => {
    const expected = role('r', [podReads]);
    expect(reconcileRole(expected, undefined, naming)).toEqual({ operation: 'create', protected: false, object: expected });
  });

  test('an equal role needs nothing; one with extra rules too', () => {
    expect(reconcileRole(role('r', [podReads]), role('r', [podReads]), naming).operation).toBe('none');
    const extra = role('r', [podReads, { apiGroups: ['apps'], resources: ['*'], verbs: ['*'] }]);
    expect(reconcileRole(role('r', [podReads]), extra, naming).operation).toBe('none');
  });

  test('a wider existing rule covers the expected ones', () => {
    const existing = role('r', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]);
    expect(reconcileRole(role('r', [podReads]), existing, naming).operation).toBe('none');
  });

  test('missing permissions are added one by one, existing rules kept, labels merged with existing values winning', () => {
    const existing = role('r', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]);
    existing.metadata!.labels = { team: 'a', 'kubernetes.io/bootstrapping': 'custom' };
    const r = reconcileRole(role('r', [podReads]), existing, naming);
    expect(r.operation).toBe('update');
    expect(r.object.rules).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
    ]);
    expect(r.object.metadata?.labels).toEqual({ team: 'a', 'kubernetes.io/bootstrapping': 'custom' });
    expect(r.object.metadata?.annotations).toEqual({ [AUTOUPDATE]: 'true' });
  });

  test('autoupdate "false" protects a role', () => {
    const existing = role('r', []);
    existing.metadata!.annotations = { [AUTOUPDATE]: 'false' };
    expect(reconcileRole(role('r', [podReads]), existing, naming)).toMatchObject({ operation: 'update', protected: true });
  });

  test('aggregation selectors are added; an unexpected aggregationRule is removed', () => {
    const sel = (v: string) => ({ matchLabels: { [`${RBAC}/aggregate-to-${v}`]: 'true' } });
    const expected = role('view', [], { aggregationRule: { clusterRoleSelectors: [sel('view')] } });
    const existing = role('view', [], { aggregationRule: { clusterRoleSelectors: [sel('other')] } });
    const r = reconcileRole(expected, existing, naming);
    expect(r.operation).toBe('update');
    expect(r.object.aggregationRule).toEqual({ clusterRoleSelectors: [sel('other'), sel('view')] });
    const plain = reconcileRole(role('p', [podReads]), role('p', [podReads], { aggregationRule: { clusterRoleSelectors: [sel('x')] } }), naming);
    expect(plain.operation).toBe('update');
    expect(plain.object.aggregationRule).toBeUndefined();
  });
});

describe('reconcileBinding (pure)', () => {
  const alice = { apiGroup: RBAC, kind: 'User', name: 'alice' };
  const group = { apiGroup: RBAC, kind: 'Group', name: 'system:authenticated' };
  test('missing subjects are added, extra ones kept', () => {
    const r = reconcileBinding(binding('b', 'r', [group]), binding('b', 'r', [alice]), naming);
    expect(r.operation).toBe('update');
    expect(r.object.subjects).toEqual([alice, group]);
    expect(reconcileBinding(binding('b', 'r', [group]), binding('b', 'r', [alice, group]), naming).operation).toBe('none');
  });

  test('a changed roleRef means delete and create', () => {
    const expected = binding('b', 'r', [group]);
    expect(reconcileBinding(expected, binding('b', 'other', [group]), naming)).toEqual({ operation: 'recreate', protected: false, object: expected });
  });
});

describe('against a real core', () => {
  let dir: string;
  let core: Core;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-reconcile-'));
    core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0 });
    await core.ready();
  });
  afterAll(async () => {
    await core.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('reconcilePolicy creates, then leaves alone, then repairs and respects autoupdate=false', async () => {
    const policy = {
      clusterRoles: [role('r1', [podReads]), role('r2', [podReads])],
      clusterRoleBindings: [binding('b1', 'r1', [{ apiGroup: RBAC, kind: 'Group', name: 'system:authenticated' }])],
      roles: [role('leader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }], {}, 'ns-made-by-reconcile')],
      roleBindings: [binding('leader', 'leader', [{ kind: 'ServiceAccount', name: 'x', namespace: 'ns-made-by-reconcile' }], 'ns-made-by-reconcile')],
    };
    expect(await reconcilePolicy(core, admin, policy, naming)).toEqual({ created: 5, updated: 0, recreated: 0, protected: 0 });
    expect(await reconcilePolicy(core, admin, policy, naming)).toEqual({ created: 0, updated: 0, recreated: 0, protected: 0 });

    // An administrator narrows r1, protects r2 and points b1 elsewhere; a restart repairs r1 and b1 only.
    const r1 = await core.get(t('clusterroles', 'r1'), {}, admin);
    await core.update(t('clusterroles', 'r1'), { ...r1, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }, {}, admin);
    const r2 = await core.get(t('clusterroles', 'r2'), {}, admin);
    await core.update(t('clusterroles', 'r2'), { ...r2, metadata: { ...r2.metadata, annotations: { [AUTOUPDATE]: 'false' } }, rules: [] }, {}, admin);
    await core.delete(t('clusterrolebindings', 'b1'), {}, admin);
    await core.create(t('clusterrolebindings'), binding('b1', 'r2', []), {}, admin);

    expect(await reconcilePolicy(core, admin, policy, naming)).toEqual({ created: 0, updated: 1, recreated: 1, protected: 1 });
    expect((await core.get(t('clusterroles', 'r1'), {}, admin)).rules).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
    ]);
    expect((await core.get(t('clusterroles', 'r2'), {}, admin)).rules).toEqual([]);
    expect((await core.get(t('clusterrolebindings', 'b1'), {}, admin)).roleRef).toMatchObject({ name: 'r1' });
  });

  test('the aggregation controller fills aggregated roles, including roles labelled later, and follows removals', async () => {
    const label = `${RBAC}/aggregate-to-reader`;
    await core.create(t('clusterroles'), role('reader', [], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label]: 'true' } }] } }), {}, admin);
    const piece = (name: string, rules: unknown[], labelled: boolean) => ({
      ...role(name, rules),
      metadata: { name, ...(labelled ? { labels: { [label]: 'true' } } : {}) },
    });
    await core.create(t('clusterroles'), piece('b-pods', [podReads], true), {}, admin);
    await core.create(t('clusterroles'), piece('a-cms', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }, podReads], true), {}, admin);
    const controller = new ClusterRoleAggregationController({ core, rbacGroup: RBAC, user: admin.user, clock: systemClock });
    try {
      await controller.synced();
      const rulesOf = async () => (await core.get(t('clusterroles', 'reader'), {}, admin)).rules;
      const rulesBecome = async (want: unknown) => {
        await eventually(async () => JSON.stringify(await rulesOf()) === JSON.stringify(want), { what: `the rules ${JSON.stringify(want)}` });
      };
      // Name order (a-cms before b-pods), each rule once.
      await rulesBecome([{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }, podReads]);

      // A role labelled later joins.
      await core.create(t('clusterroles'), piece('c-later', [], false), {}, admin);
      const later = await core.get(t('clusterroles', 'c-later'), {}, admin);
      await core.update(
        t('clusterroles', 'c-later'),
        {
          ...later,
          metadata: { ...later.metadata, labels: { [label]: 'true' } },
          rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['list'] }],
        },
        {},
        admin,
      );
      await rulesBecome([
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
        podReads,
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list'] },
      ]);

      // A deleted role leaves.
      await core.delete(t('clusterroles', 'a-cms'), {}, admin);
      await rulesBecome([podReads, { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list'] }]);
    } finally {
      controller.stop();
    }
  });

  test('roles that select each other settle: a rule only they still hold keeps its place instead of circling for ever', async () => {
    // Found by the fuzzer: several roles selecting every role, sharing a rule no other role holds
    // any more, reordered one another on every pass; in process each write stays in the
    // microtask queue, so the loop starved the server.
    const ghost = { nonResourceURLs: ['/ghost'], verbs: ['get'] };
    for (const name of ['all-a', 'all-m', 'all-z']) {
      await core.create(
        t('clusterroles'),
        role(name, name === 'all-m' ? [ghost, podReads] : [podReads, ghost], { aggregationRule: { clusterRoleSelectors: [{}] } }),
        {},
        admin,
      );
    }
    let writes = 0;
    const counting = new Proxy(core, {
      get: (target, key) =>
        key === 'update' ? (...args: unknown[]) => (writes++, (target.update as (...a: unknown[]) => unknown)(...args)) : Reflect.get(target, key),
    });
    const controller = new ClusterRoleAggregationController({ core: counting, rbacGroup: RBAC, user: admin.user, clock: systemClock });
    try {
      await controller.synced();
      // Sleeps are the point here: a loop would keep writing, so the writes must stop and stay stopped.
      await new Promise((r) => setTimeout(r, 300));
      const settled = writes;
      await new Promise((r) => setTimeout(r, 500)); // half a second with no write is what "settled" means
      expect(writes).toBe(settled);
      for (const name of ['all-a', 'all-m', 'all-z']) {
        expect((await core.get(t('clusterroles', name), {}, admin)).rules).toEqual(expect.arrayContaining([ghost, podReads]));
      }
    } finally {
      controller.stop();
      for (const name of ['all-a', 'all-m', 'all-z']) await core.delete(t('clusterroles', name), {}, admin);
    }
  });

  test('aggregatedRules: no aggregationRule is undefined; a role never aggregates itself', () => {
    expect(aggregatedRules(role('x', [podReads]), [])).toBeUndefined();
    const self = role('x', [podReads], { aggregationRule: { clusterRoleSelectors: [{}] } });
    expect(aggregatedRules(self, [self])).toEqual([]);
  });
});
