import type { ClusterRoleBinding, RoleBinding } from '../../../src/core/resources';
import { createNaming } from '../../../src/naming';
import { create, definition, stored, update } from './through-store';

const RBAC = createNaming('kubernetes').groups.rbac;
const roles = definition('roles');
const clusterRoles = definition('clusterroles');
const bindings = definition('rolebindings');
const clusterBindings = definition('clusterrolebindings');

const rb = (extra: Record<string, unknown> = {}) => ({
  metadata: { name: 'read-pods', namespace: 'default' },
  roleRef: { apiGroup: RBAC, kind: 'Role', name: 'pod-reader' },
  subjects: [{ kind: 'User', name: 'jane' }],
  ...extra,
});

describe('roles and cluster roles', () => {
  it('accepts resource rules and path-segment names', async () => {
    expect(
      (await create(roles, { metadata: { name: 'system:reader', namespace: 'default' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }))
        .messages,
    ).toEqual([]);
  });

  it('refuses names that are no path segment', async () => {
    expect((await create(roles, { metadata: { name: 'a/b', namespace: 'default' } })).messages).toEqual([
      'metadata.name: Invalid value: "a/b": may not contain \'/\'',
    ]);
    expect((await create(clusterRoles, { metadata: { name: '..' } })).messages).toEqual(['metadata.name: Invalid value: "..": may not be \'..\'']);
  });

  it('requires verbs, api groups and resources', async () => {
    expect((await create(roles, { metadata: { name: 'r', namespace: 'default' }, rules: [{}] })).messages).toEqual([
      'rules[0].verbs: Required value: verbs must contain at least one value',
      'rules[0].apiGroups: Required value: resource rules must supply at least one api group',
      'rules[0].resources: Required value: resource rules must supply at least one resource',
    ]);
  });

  it('keeps non-resource URLs out of Roles and apart from resources', async () => {
    expect(
      (await create(roles, { metadata: { name: 'r', namespace: 'default' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] })).messages,
    ).toEqual(['rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs']);
    expect((await create(clusterRoles, { metadata: { name: 'r' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/api/*'] }] })).messages).toEqual(
      [],
    );
    expect(
      (await create(clusterRoles, { metadata: { name: 'r' }, rules: [{ verbs: ['get'], resources: ['pods'], nonResourceURLs: ['/x'] }] })).messages,
    ).toEqual(['rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and non-resource URLs']);
  });

  it('validates aggregation rules', async () => {
    expect(
      (
        await create(clusterRoles, {
          metadata: { name: 'agg' },
          aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate-to-view': 'true' } }] },
        })
      ).messages,
    ).toEqual([]);
    expect((await create(clusterRoles, { metadata: { name: 'agg' }, aggregationRule: {} })).messages).toEqual([
      'aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil',
    ]);
    expect(
      (
        await create(clusterRoles, {
          metadata: { name: 'agg' },
          aggregationRule: { clusterRoleSelectors: [{ matchExpressions: [{ key: 'a', operator: 'Bad' }] }] },
        })
      ).messages,
    ).toEqual([
      'aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator: Invalid value: "Bad": not a valid selector operator',
      'aggregationRule.clusterRoleSelectors[0]: Invalid value: "null": invalid label selector.',
    ]);
  });
});

describe('role bindings', () => {
  it('defaults subject and roleRef api groups', async () => {
    const { object, messages } = await create<RoleBinding>(bindings, {
      ...rb({ roleRef: { kind: 'ClusterRole', name: 'view' } }),
      subjects: [
        { kind: 'User', name: 'jane' },
        { kind: 'Group', name: 'devs' },
        { kind: 'ServiceAccount', name: 'builder', namespace: 'ci' },
      ],
    });
    expect(messages).toEqual([]);
    expect(object.roleRef.apiGroup).toBe(RBAC);
    expect(object.subjects!.map((s) => s.apiGroup)).toEqual([RBAC, RBAC, undefined]);
  });

  it('requires a valid roleRef', async () => {
    expect((await create(bindings, rb({ roleRef: { apiGroup: 'example.com', kind: 'Thing', name: '' } }))).messages).toEqual([
      `roleRef.apiGroup: Unsupported value: "example.com": supported values: "${RBAC}"`,
      'roleRef.kind: Unsupported value: "Thing": supported values: "Role", "ClusterRole"',
      'roleRef.name: Required value',
    ]);
    expect((await create(bindings, rb({ roleRef: { apiGroup: RBAC, kind: 'Role', name: 'a%b' } }))).messages).toEqual([
      'roleRef.name: Invalid value: "a%b": may not contain \'%\'',
    ]);
  });

  it('checks subjects as upstream ValidateRoleBindingSubject', async () => {
    const { messages } = await create(
      bindings,
      rb({
        subjects: [
          { kind: 'Robot', name: 'r2' },
          { kind: 'User', name: '' },
          { kind: 'ServiceAccount', name: 'Bad_Name', apiGroup: RBAC },
          { kind: 'Group', name: 'g', apiGroup: 'example.com' },
        ],
      }),
    );
    expect(messages[0]).toBe('subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"');
    expect(messages[1]).toBe('subjects[1].name: Required value');
    expect(messages[2]).toMatch(/^subjects\[2\].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
    expect(messages.slice(3)).toEqual([
      `subjects[2].apiGroup: Unsupported value: "${RBAC}": supported values: ""`,
      `subjects[3].apiGroup: Unsupported value: "example.com": supported values: "${RBAC}"`,
    ]);
  });

  it('allows service accounts without namespace in a RoleBinding', async () => {
    expect((await create(bindings, rb({ subjects: [{ kind: 'ServiceAccount', name: 'default' }] }))).messages).toEqual([]);
  });

  it('refuses any change of roleRef with the upstream message', async () => {
    const old = await stored<RoleBinding>(bindings, rb());
    const next = { ...old, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'admin' } };
    expect((await update(bindings, next, old)).messages).toEqual([
      `roleRef: Invalid value: rbac.RoleRef{APIGroup:"${RBAC}", Kind:"ClusterRole", Name:"admin"}: cannot change roleRef`,
    ]);
    expect((await update(bindings, { ...old, subjects: [{ kind: 'Group', name: 'ops' }] }, old)).messages).toEqual([]);
  });
});

describe('cluster role bindings', () => {
  const crb = (extra: Record<string, unknown> = {}) => ({
    metadata: { name: 'admins' },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'Group', name: 'system:masters' }],
    ...extra,
  });

  it('accepts a ClusterRole reference only', async () => {
    expect((await create(clusterBindings, crb())).messages).toEqual([]);
    expect((await create(clusterBindings, crb({ roleRef: { apiGroup: RBAC, kind: 'Role', name: 'x' } }))).messages).toEqual([
      'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
    ]);
  });

  it('requires a namespace on service-account subjects', async () => {
    expect((await create(clusterBindings, crb({ subjects: [{ kind: 'ServiceAccount', name: 'default' }] }))).messages).toEqual([
      'subjects[0].namespace: Required value',
    ]);
  });

  it('keeps roleRef immutable', async () => {
    const old = await stored<ClusterRoleBinding>(clusterBindings, crb());
    expect((await update(clusterBindings, { ...old, roleRef: { ...old.roleRef, name: 'view' } }, old)).messages).toEqual([
      `roleRef: Invalid value: rbac.RoleRef{APIGroup:"${RBAC}", Kind:"ClusterRole", Name:"view"}: cannot change roleRef`,
    ]);
  });

  it('defaults an omitted roleRef apiGroup before comparing', async () => {
    const old = await stored<ClusterRoleBinding>(clusterBindings, crb());
    expect((await update(clusterBindings, { ...old, roleRef: { kind: 'ClusterRole', name: 'cluster-admin' } }, old)).messages).toEqual([]);
  });
});
