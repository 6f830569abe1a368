/**
 * RBAC's privilege-escalation rules, as an admission plugin (validating phase) on roles,
 * cluster roles and their bindings, as upstream's RBAC storage enforces them: creating or
 * updating a Role or ClusterRole needs every permission in it already held at the same scope, or
 * the `escalate` verb on it; creating or updating a binding needs every permission of the role
 * it refers to held at the binding's scope, or the `bind` verb on that role. `system:masters`
 * may do anything. A refusal is upstream's 403 listing the permissions not held.
 */
import type { AdmissionAttributes, AdmissionPlugin } from '../core';
import type { Naming } from '../naming';
import { forbidden, notFound } from '../status';
import type { RbacAuthorizer } from './rbac';
import { type PolicyRule, compactRule, rulesOfObject, uncoveredRules } from './rules';
import type { AuthorizationAttributes, Decision } from './types';

const SUPERUSER_GROUP = 'system:masters';

export interface EscalationOptions {
  naming: Naming;
  /** The RBAC index (created once the core can serve it). */
  rbac: () => RbacAuthorizer | undefined;
  /** The server's authorizer chain, for the `escalate` and `bind` verbs. */
  authorize: (attributes: AuthorizationAttributes) => Promise<Decision>;
}

export function rbacEscalationPlugin(options: EscalationOptions): AdmissionPlugin {
  const group = options.naming.groups.rbac;
  const roleKinds: Record<string, 'roles' | 'clusterroles' | undefined> = { roles: 'roles', clusterroles: 'clusterroles' };
  const bindingKinds: Record<string, boolean> = { rolebindings: true, clusterrolebindings: true };

  async function allowedVerb(a: AdmissionAttributes, verb: string, resource: string, name: string, namespace: string): Promise<boolean> {
    const decision = await options.authorize({
      user: a.user,
      verb,
      isResourceRequest: true,
      path: '',
      namespace,
      apiGroup: group,
      apiVersion: 'v1',
      resource,
      subresource: '',
      name,
    });
    return decision.decision === 'allow';
  }

  function refuse(a: AdmissionAttributes, rules: readonly PolicyRule[], namespace: string): void {
    const held = options.rbac()?.policyRulesFor(a.user, namespace) ?? [];
    const missing = uncoveredRules(held, rules);
    if (missing.length === 0) return;
    const groups = a.user.groups.map((g) => JSON.stringify(g)).join(' ');
    throw forbidden(
      { group, resource: a.resource },
      a.name,
      `user ${JSON.stringify(a.user.username)} (groups=[${groups}]) is attempting to grant RBAC permissions not currently held:\n${missing.map(compactRule).join('\n')}`,
    );
  }

  async function check(a: AdmissionAttributes, object: NonNullable<AdmissionAttributes['object']>): Promise<void> {
    const namespace = a.namespace ?? '';
    const roleResource = roleKinds[a.resource];
    if (roleResource) {
      if (await allowedVerb(a, 'escalate', roleResource, a.name, namespace)) return;
      const rules = rulesOfObject(object);
      return refuse(a, rules, namespace);
    }
    // A binding (validate let nothing else through).
    const ref = (object.roleRef ?? {}) as { kind?: string; name?: string };
    const refResource = ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles';
    if (await allowedVerb(a, 'bind', refResource, ref.name ?? '', namespace)) return;
    const rules = options.rbac()?.roleRules(ref, namespace);
    // As upstream, a role that cannot be resolved cannot be bound without `bind`.
    if (!rules) throw notFound({ group, resource: refResource }, ref.name ?? '');
    refuse(a, rules, namespace);
  }

  return {
    name: 'RBACEscalation',
    // Synchronous for every write it has nothing to say about, so that the admission chain
    // stays synchronous for them (core/admission/types.ts).
    validate(a) {
      if (a.group !== group || a.subresource !== '' || (a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object) return;
      if (a.user.groups.includes(SUPERUSER_GROUP)) return;
      if (!roleKinds[a.resource] && !bindingKinds[a.resource]) return;
      return check(a, a.object);
    },
  };
}
