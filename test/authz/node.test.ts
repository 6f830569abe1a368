/**
 * The Node authorizer over a real core (embedded store): the graph follows pods bound to nodes
 * through a watch, and a kubelet reads only what its pods refer to. Expected decisions are
 * written from upstream's rules, not computed by the code.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { nodeAuthorizer, nodeIdentity, podReferences, type NodeAuthorizer } from '../../src/authz/node';
import type { AuthorizationAttributes } from '../../src/authz';
import { createCore, type ApiObject, type Core, type RequestContext } from '../../src/core';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { systemClock } from '../../src/clock';
import { eventually } from '../support/eventually';

const naming = createNaming('kubernetes');
const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const pods = (namespace: string, name?: string) => ({ group: '', version: 'v1', resource: 'pods', namespace, ...(name ? { name } : {}) });
const node = (name: string) => ({ username: `system:node:${name}`, groups: ['system:nodes', 'system:authenticated'] });

// A few of the system:node role's rules: what every node may do beyond the graph.
const nodeRules = [
  { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'update', 'patch'] },
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews', 'localsubjectaccessreviews'], verbs: ['create'] },
];

const pod = (name: string, nodeName: string | undefined, spec: Record<string, unknown> = {}): ApiObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'apps' },
  spec: { containers: [{ name: 'c', image: 'i' }], ...(nodeName ? { nodeName } : {}), ...spec },
});

let dir: string;
let core: Core;
let authz: NodeAuthorizer;

function attrs(
  user: ReturnType<typeof node> | { username: string; groups: string[] },
  verb: string,
  resource: string,
  name = '',
  namespace = 'apps',
  extra: Partial<AuthorizationAttributes> = {},
): AuthorizationAttributes {
  const [res, sub = ''] = resource.split('/');
  const group = res === 'leases' ? 'coordination.k8s.io' : res === 'tokenreviews' ? 'authentication.k8s.io' : '';
  return { user, verb, isResourceRequest: true, path: '', namespace, apiGroup: group, apiVersion: 'v1', resource: res!, subresource: sub, name, ...extra };
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-node-authz-'));
  core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0 });
  await core.ready();
  await core.create({ group: '', version: 'v1', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } }, {}, admin);
  await core.create(
    pods('apps'),
    pod('web', 'n1', {
      serviceAccountName: 'web-sa',
      imagePullSecrets: [{ name: 'pull' }],
      containers: [
        {
          name: 'c',
          image: 'i',
          env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } }],
          envFrom: [{ configMapRef: { name: 'env-cm' } }],
        },
      ],
      volumes: [
        { name: 'v1', secret: { secretName: 'vol-secret' } },
        { name: 'v2', projected: { sources: [{ configMap: { name: 'proj-cm' } }, { secret: { name: 'proj-secret' } }] } },
        { name: 'data', persistentVolumeClaim: { claimName: 'data-claim' } },
        { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } },
      ],
    }),
    {},
    admin,
  );
  await core.create(pods('apps'), pod('db', 'n2', { volumes: [{ name: 'v', secret: { secretName: 'db-secret' } }] }), {}, admin);
  await core.create(pods('apps'), pod('pending', undefined, { volumes: [{ name: 'v', secret: { secretName: 'pending-secret' } }] }), {}, admin);
  authz = nodeAuthorizer({ api: core, naming, ctx: admin, clock: systemClock, nodeRules, withSelectors: true });
  await authz.synced();
});

afterAll(async () => {
  authz.stop();
  await core.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('node identity', () => {
  test.each([
    [{ username: 'system:node:n1', groups: ['system:nodes'] }, 'n1'],
    [{ username: 'system:node:', groups: ['system:nodes'] }, ''],
    [{ username: 'system:node:n1', groups: ['other'] }, undefined],
    [{ username: 'n1', groups: ['system:nodes'] }, undefined],
  ])('%j → %j', (user, want) => expect(nodeIdentity(user)).toBe(want));
});

test('podReferences finds every kind of reference', () => {
  const refs = podReferences(
    pod('p', 'n', {
      serviceAccountName: 'sa',
      imagePullSecrets: [{ name: 's1' }],
      initContainers: [{ name: 'i', envFrom: [{ secretRef: { name: 's2' } }] }],
      containers: [{ name: 'c', env: [{ name: 'x', valueFrom: { configMapKeyRef: { name: 'c1', key: 'k' } } }] }],
      volumes: [
        { name: 'a', csi: { driver: 'd', nodePublishSecretRef: { name: 's3' } } },
        { name: 'b', configMap: { name: 'c2' } },
        { name: 'e', ephemeral: {} },
      ],
    }),
  );
  expect(refs).toEqual([
    ['serviceaccount', 'sa'],
    ['secret', 's1'],
    ['secret', 's2'],
    ['configmap', 'c1'],
    ['secret', 's3'],
    ['configmap', 'c2'],
    ['pvc', 'p-e'],
  ]);
});

describe('decisions', () => {
  const n1 = node('n1');
  const n2 = node('n2');
  // [user, verb, resource, name, namespace, allowed, reason (when not allowed)]
  const cases: Array<[ReturnType<typeof node>, string, string, string, string, boolean, string?]> = [
    [n1, 'get', 'secrets', 'vol-secret', 'apps', true],
    [n1, 'get', 'secrets', 'env-secret', 'apps', true],
    [n1, 'get', 'secrets', 'pull', 'apps', true],
    [n1, 'watch', 'secrets', 'proj-secret', 'apps', true],
    [n1, 'list', 'secrets', 'vol-secret', 'apps', true],
    [n1, 'get', 'secrets', 'db-secret', 'apps', false, "no relationship found between node 'n1' and this object"],
    [n2, 'get', 'secrets', 'db-secret', 'apps', true],
    [n1, 'get', 'secrets', 'pending-secret', 'apps', false, "no relationship found between node 'n1' and this object"],
    [n1, 'get', 'secrets', 'vol-secret', 'other', false, "no relationship found between node 'n1' and this object"],
    [n1, 'list', 'secrets', '', 'apps', false, 'No Object name found'],
    [n1, 'update', 'secrets', 'vol-secret', 'apps', false, 'can only read resources of this type'],
    [n1, 'get', 'configmaps', 'env-cm', 'apps', true],
    [n1, 'get', 'configmaps', 'proj-cm', 'apps', true],
    [n2, 'get', 'configmaps', 'env-cm', 'apps', false, "no relationship found between node 'n2' and this object"],
    [n1, 'get', 'persistentvolumeclaims', 'data-claim', 'apps', true],
    [n1, 'get', 'persistentvolumeclaims', 'web-scratch', 'apps', true],
    [n1, 'list', 'persistentvolumeclaims', 'data-claim', 'apps', false, 'can only get individual resources of this type'],
    [n1, 'patch', 'persistentvolumeclaims/status', 'data-claim', 'apps', true],
    [n1, 'create', 'serviceaccounts/token', 'web-sa', 'apps', true],
    [n2, 'create', 'serviceaccounts/token', 'web-sa', 'apps', false, "no relationship found between node 'n2' and this object"],
    [n1, 'get', 'serviceaccounts', 'web-sa', 'apps', false, 'can only create tokens for individual service accounts'],
    [n1, 'get', 'nodes', 'n1', '', true],
    [n1, 'get', 'nodes', 'n2', '', false, "node 'n1' cannot read 'n2', only its own Node object"],
    [n1, 'list', 'nodes', '', '', false, "node 'n1' cannot read all nodes, only its own Node object"],
    [n1, 'patch', 'nodes/status', 'n2', '', true],
    [n1, 'get', 'pods', 'web', 'apps', true],
    [n1, 'get', 'pods', 'db', 'apps', false, "no relationship found between node 'n1' and this object"],
    [n1, 'list', 'pods', '', '', false, 'can only list/watch pods with spec.nodeName field selector'],
    [n1, 'update', 'pods/status', 'db', 'apps', true],
    [n1, 'create', 'pods/eviction', 'web', 'apps', true],
    [n1, 'update', 'pods', 'web', 'apps', false, 'no opinion'],
    [n1, 'create', 'events', '', 'apps', true],
    [n1, 'create', 'tokenreviews', '', '', true],
    [n1, 'get', 'leases', 'n1', 'kube-node-lease', true],
    [n1, 'update', 'leases', 'n2', 'kube-node-lease', false, 'can only access node lease with the same name as the requesting node'],
    [n1, 'get', 'leases', 'n1', 'default', false, 'can only access leases in the "kube-node-lease" system namespace'],
    [n1, 'delete', 'configmaps', 'env-cm', 'apps', false, 'can only read resources of this type'],
  ];
  test.each(cases)('%j %s %s %s ns=%s → %s', (...row) => {
    // Rows without a reason are shorter: destructure inside, so Jest sees no `done` parameter.
    const [user, verb, resource, name, namespace, allowed, reason] = row;
    const d = authz.authorize(attrs(user, verb, resource, name, namespace));
    expect(d.decision).toBe(allowed ? 'allow' : 'noOpinion');
    if (!allowed) expect(d.reason || 'no opinion').toBe(reason);
  });

  test('pods are listed only by spec.nodeName, and only the own node', () => {
    const sel = (value: string) => ({ fieldSelector: [{ field: 'spec.nodeName', operator: '=' as const, value }] });
    expect(authz.authorize(attrs(n1, 'list', 'pods', '', '', sel('n1'))).decision).toBe('allow');
    expect(authz.authorize(attrs(n1, 'watch', 'pods', '', '', sel('n2'))).decision).toBe('noOpinion');
  });

  test('users that are not nodes get no opinion; a node user without a name is told so', () => {
    expect(authz.authorize(attrs({ username: 'alice', groups: [] }, 'get', 'secrets', 'vol-secret'))).toEqual({ decision: 'noOpinion', reason: '' });
    expect(authz.authorize(attrs({ username: 'system:node:', groups: ['system:nodes'] }, 'get', 'secrets', 'vol-secret'))).toEqual({
      decision: 'noOpinion',
      reason: 'unknown node for user "system:node:"',
    });
  });

  test('without AuthorizeNodeWithSelectors, nodes and pods follow the static rules', () => {
    const loose = nodeAuthorizer({ api: core, naming, ctx: admin, clock: systemClock, nodeRules, withSelectors: false });
    try {
      expect(loose.authorize(attrs(n1, 'list', 'pods', '', '')).decision).toBe('allow');
      expect(loose.authorize(attrs(n1, 'get', 'nodes', 'n2', '')).decision).toBe('allow');
    } finally {
      loose.stop();
    }
  });
});

test('the graph follows the watch: pods created on a node, then deleted', async () => {
  const n3 = node('n3');
  const can = () => authz.authorize(attrs(n3, 'get', 'secrets', 'late-secret')).decision === 'allow';
  // Created after the authorizer started: only the watch can tell it.
  await core.create(pods('apps'), pod('late', 'n3', { volumes: [{ name: 'v', secret: { secretName: 'late-secret' } }] }), {}, admin);
  await eventually(can, { what: 'the graph to link n3 to late-secret' });
  // A second pod using the same secret on the same node: deleting one keeps the link.
  await core.create(pods('apps'), pod('late-2', 'n3', { volumes: [{ name: 'v', secret: { secretName: 'late-secret' } }] }), {}, admin);
  await core.delete(pods('apps', 'late'), { gracePeriodSeconds: 0 }, admin);
  // A pod created after the deletion: once the graph has it, it has had the deletion too (one watch, in order).
  await core.create(pods('apps'), pod('marker', 'n3', { volumes: [{ name: 'v', secret: { secretName: 'marker-secret' } }] }), {}, admin);
  await eventually(() => authz.authorize(attrs(n3, 'get', 'secrets', 'marker-secret')).decision === 'allow', { what: 'the graph to hear of the marker pod' });
  expect(can()).toBe(true);
  await core.delete(pods('apps', 'late-2'), { gracePeriodSeconds: 0 }, admin);
  await eventually(() => !can(), { what: 'the graph to unlink late-secret' });
  await core.delete(pods('apps', 'marker'), { gracePeriodSeconds: 0 }, admin);
});
