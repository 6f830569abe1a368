/**
 * Scenario 8: authorization CPU per request, in process, with RBAC's index holding 1,000
 * Roles, 1,000 RoleBindings (spread over 100 namespaces) and the default cluster policy, each
 * user named by a few bindings: an allowed request (a RoleBinding in the request's namespace),
 * a refused one (no binding grants it, so the nearest miss is worked out), and the same allowed
 * request through the whole server chain (system:masters rule, Node, RBAC). The reference is
 * a `system:masters` request, decided by the first rule. The index's memory is the heap
 * growth from building it.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createCore, type ApiObject, type RequestContext } from '../../../src/core';
import { authorizeAll, bootstrapPolicy, nodeAuthorizer, rbacAuthorizer, reconcilePolicy, type AuthorizationAttributes } from '../../../src/authz';
import { superuserAuthorizer } from '../../../src/gateway/steps/authorization';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import { systemClock } from '../../../src/clock';
import type { Context } from '../context';
import { micros } from '../report';
import { cpuPerCall } from './authentication';

/** A full collection, for the index's heap size (`--expose-gc` switched on from inside). */
function collect(): void {
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const NAMESPACES = 100;
const PER_NAMESPACE = 10;

function cpuPerSyncCall(fn: () => unknown, ms: number): number {
  for (let i = 0; i < 2000; i++) fn();
  const start = process.cpuUsage();
  const until = performance.now() + ms;
  let calls = 0;
  while (performance.now() < until) {
    for (let i = 0; i < 1000; i++) fn();
    calls += 1000;
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

export async function runAuthorization(ctx: Context): Promise<void> {
  const naming = createNaming('kubernetes');
  const RBAC = naming.groups.rbac;
  const dir = await ctx.tmpDir('authz');
  const core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0 });
  try {
    await core.ready();
    await reconcilePolicy(core, admin, bootstrapPolicy(naming), naming);
    const t = (resource: string, namespace?: string) => ({ group: RBAC, version: 'v1', resource, ...(namespace ? { namespace } : {}) });
    for (let n = 0; n < NAMESPACES; n++) {
      const ns = `team-${n}`;
      await core.create({ group: '', version: 'v1', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, {}, admin);
      for (let i = 0; i < PER_NAMESPACE; i++) {
        const role: ApiObject = {
          apiVersion: `${RBAC}/v1`,
          kind: 'Role',
          metadata: { name: `role-${i}`, namespace: ns },
          rules: [
            { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list'] },
            { apiGroups: ['apps'], resources: ['replicasets', 'replicasets/scale'], verbs: ['get', 'update', 'patch'] },
            { apiGroups: [''], resources: ['pods'], resourceNames: [`pod-${i}`], verbs: ['delete'] },
          ],
        };
        await core.create(t('roles', ns), role, {}, admin);
        const binding: ApiObject = {
          apiVersion: `${RBAC}/v1`,
          kind: 'RoleBinding',
          metadata: { name: `binding-${i}`, namespace: ns },
          roleRef: { apiGroup: RBAC, kind: 'Role', name: `role-${i}` },
          subjects: [
            { apiGroup: RBAC, kind: 'User', name: `user-${i}` },
            { apiGroup: RBAC, kind: 'Group', name: `group-${n % 10}` },
            { kind: 'ServiceAccount', name: `sa-${i}`, namespace: ns },
          ],
        };
        await core.create(t('rolebindings', ns), binding, {}, admin);
      }
    }
    collect();
    const before = process.memoryUsage().heapUsed;
    const rbac = rbacAuthorizer({ api: core, naming, ctx: admin, clock: systemClock });
    await rbac.synced();
    const node = nodeAuthorizer({ api: core, naming, ctx: admin, clock: systemClock, nodeRules: [], withSelectors: true });
    await node.synced();
    const user = { username: 'user-7', groups: ['group-3', 'system:authenticated'] };
    const base = { isResourceRequest: true, path: '', apiVersion: 'v1', subresource: '', name: '' } as const;
    const allowed: AuthorizationAttributes = { ...base, user, verb: 'get', namespace: 'team-53', apiGroup: 'apps', resource: 'replicasets', name: 'web' };
    const refused: AuthorizationAttributes = { ...base, user, verb: 'delete', namespace: 'team-53', apiGroup: 'apps', resource: 'replicasets', name: 'web' };
    const masters: AuthorizationAttributes = { ...allowed, user: admin.user };
    if (rbac.authorize(allowed).decision !== 'allow' || rbac.authorize(refused).decision !== 'noOpinion')
      throw new Error('the bench fixture does not decide as intended');
    collect();
    const indexBytes = process.memoryUsage().heapUsed - before;
    const chain = [superuserAuthorizer, node, rbac];
    const ms = ctx.options.quick ? 300 : 1500;
    const results: Array<[string, number]> = [
      ['system:masters (first rule)', await cpuPerCall(async () => authorizeAll(chain, masters), ms)],
      ['RBAC allow (RoleBinding in the namespace)', cpuPerSyncCall(() => rbac.authorize(allowed), ms)],
      ['RBAC refuse (with the nearest miss)', cpuPerSyncCall(() => rbac.authorize(refused), ms)],
      ['whole chain allow (masters rule, Node, RBAC)', await cpuPerCall(async () => authorizeAll(chain, allowed), ms)],
    ];
    rbac.stop();
    node.stop();
    const reference = results[0]![1];
    const note = `in process; index of ${NAMESPACES * PER_NAMESPACE} Roles, ${NAMESPACES * PER_NAMESPACE} RoleBindings and the default policy: ${(indexBytes / 2 ** 20).toFixed(1)} MiB of heap (with the Node authorizer's empty pod graph)`;
    for (const [name, us] of results) {
      ctx.rows.push({
        scenario: 8,
        name: `authorization: ${name}`,
        keelson: `${micros(us)} µs CPU per request`,
        reference: name === results[0]![0] ? '(reference)' : `${micros(reference)} µs`,
        ratio: name === results[0]![0] ? '1.00×' : `${(reference / us).toFixed(2)}×`,
        cpu: `${micros(us)}`,
        latency: '',
        note,
      });
    }
  } finally {
    await core.close();
  }
}
