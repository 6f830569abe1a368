import { rbacEscalationPlugin } from '../../src/authz/escalation';
import type { AdmissionAttributes } from '../../src/core/admission';
import { createNaming } from '../../src/naming';
import { StatusError } from '../../src/status';

const naming = createNaming('kubernetes');
const rbacGroup = naming.groups.rbac;

function attributes(over: Partial<AdmissionAttributes>): AdmissionAttributes {
  return {
    operation: 'CREATE',
    group: rbacGroup,
    version: 'v1',
    kind: 'Role',
    resource: 'roles',
    subresource: '',
    namespace: 'team',
    name: 'reader',
    object: { apiVersion: `${rbacGroup}/v1`, kind: 'Role', metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
    dryRun: false,
    user: { username: 'alice', groups: ['system:authenticated'] },
    ...over,
  };
}

describe('RBAC escalation admission', () => {
  const asked: string[] = [];
  const plugin = rbacEscalationPlugin({
    naming,
    rbac: () => undefined,
    authorize: async (a) => {
      asked.push(`${a.verb} ${a.resource}/${a.name}`);
      return { decision: a.user.username === 'escalator' ? 'allow' : 'noOpinion', reason: '' };
    },
  });

  it('answers synchronously for writes it has nothing to say about, keeping the admission chain synchronous', () => {
    expect(plugin.validate!(attributes({ group: 'apps', resource: 'replicasets', kind: 'ReplicaSet' }))).toBeUndefined();
    expect(plugin.validate!(attributes({ user: { username: 'admin', groups: ['system:masters'] } }))).toBeUndefined();
    expect(plugin.validate!(attributes({ operation: 'DELETE' }))).toBeUndefined();
    expect(plugin.validate!(attributes({ resource: 'roles', subresource: 'status' }))).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it('asks for `escalate` on a role and refuses permissions not held with 403', async () => {
    await expect(plugin.validate!(attributes({ user: { username: 'escalator', groups: [] } }))).resolves.toBeUndefined();
    const refused = plugin.validate!(attributes({}));
    expect(refused).toBeInstanceOf(Promise);
    const err = await (refused as Promise<void>).catch((e: unknown) => e);
    expect(StatusError.is(err) && err.status.code).toBe(403);
    expect(StatusError.is(err) && err.status.message).toContain('is attempting to grant RBAC permissions not currently held');
    expect(asked).toEqual(['escalate roles/reader', 'escalate roles/reader']);
  });

  it('asks for `bind` on the role a binding refers to, and answers 404 for a role it cannot resolve', async () => {
    const binding = attributes({
      kind: 'RoleBinding',
      resource: 'rolebindings',
      name: 'b',
      object: { metadata: { name: 'b' }, roleRef: { kind: 'ClusterRole', name: 'view' } },
    });
    const err = await (plugin.validate!(binding) as Promise<void>).catch((e: unknown) => e);
    expect(StatusError.is(err) && err.status.code).toBe(404);
    expect(asked.at(-1)).toBe('bind clusterroles/view');
  });
});
