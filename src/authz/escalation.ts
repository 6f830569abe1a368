/**
 * RBAC's privilege-escalation rules, as an admission plugin (validating phase) on roles,
 * cluster roles and their bindings, as upstream's RBAC storage enforces them: creating or
 * updating a Role or ClusterRole needs every permission in it already held at the same scope, or
 * the `escalate` verb on it; creating or updating a binding needs every permission of the role
 * it refers to held at the binding's scope, or the `bind` verb on that role. `system:masters`
 * may do anything. A refusal is upstream's 403 listing the permissions not held.
 */
import type { AdmissionAttributes, AdmissionPlugin } from '../core/admission';
import type { Naming } from '../naming';
import { forbidden, notFound } from '../status';
import type { PolicyRule, RbacAuthorizer } from './rbac';
import type { AuthorizationAttributes, Decision } from './types';

const SUPERUSER_GROUP = 'system:masters';

function matches(owner: readonly string[] | undefined, value: string): boolean {
  return !!owner && (owner.includes('*') || owner.includes(value));
}

function ownerCoversResource(owner: readonly string[] | undefined, resource: string): boolean {
  if (!owner) return false;
  if (owner.includes('*') || owner.includes(resource)) return true;
  const slash = resource.indexOf('/');
  if (slash < 0) return false;
  return owner.includes(`${resource.slice(0, slash)}/*`) || owner.includes(`*${resource.slice(slash)}`);
}

/** One atomic permission (a verb on one group/resource/name, or on one URL) of a servant rule. */
interface Atom {
  verb: string;
  group?: string;
  resource?: string;
  name?: string;
  url?: string;
}

function atomsOf(rule: PolicyRule): Atom[] {
  const atoms: Atom[] = [];
  for (const verb of rule.verbs ?? []) {
    for (const url of rule.nonResourceURLs ?? []) atoms.push({ verb, url });
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        const names = rule.resourceNames?.length ? rule.resourceNames : [undefined];
        for (const name of names) atoms.push({ verb, group, resource, ...(name !== undefined ? { name } : {}) });
      }
    }
  }
  return atoms;
}

/** upstream's Covers, one atom at a time. */
function covers(owner: PolicyRule, atom: Atom): boolean {
  if (!matches(owner.verbs, atom.verb)) return false;
  if (atom.url !== undefined) {
    return (owner.nonResourceURLs ?? []).some((u) => u === '*' || u === atom.url || (u.endsWith('*') && atom.url!.startsWith(u.slice(0, -1))));
  }
  if (!matches(owner.apiGroups, atom.group!) || !ownerCoversResource(owner.resources, atom.resource!)) return false;
  const names = owner.resourceNames ?? [];
  return names.length === 0 || (atom.name !== undefined && names.includes(atom.name));
}

/** A rule as upstream's CompactString prints it. */
function compact(rule: PolicyRule): string {
  const parts: string[] = [];
  const list = (name: string, values: readonly string[] | undefined) => {
    if (values?.length) parts.push(`${name}:[${values.map((v) => JSON.stringify(v)).join(', ')}]`);
  };
  list('APIGroups', rule.apiGroups);
  list('Resources', rule.resources);
  list('ResourceNames', rule.resourceNames);
  list('NonResourceURLs', rule.nonResourceURLs);
  list('Verbs', rule.verbs);
  return `{${parts.join(', ')}}`;
}

function atomRule(atom: Atom): PolicyRule {
  if (atom.url !== undefined) return { nonResourceURLs: [atom.url], verbs: [atom.verb] };
  return { apiGroups: [atom.group!], resources: [atom.resource!], ...(atom.name !== undefined ? { resourceNames: [atom.name] } : {}), verbs: [atom.verb] };
}

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
    const decision = await options.authorize({ user: a.user, verb, isResourceRequest: true, path: '', namespace, apiGroup: group, apiVersion: 'v1', resource, subresource: '', name });
    return decision.decision === 'allow';
  }

  function refuse(a: AdmissionAttributes, rules: readonly PolicyRule[], namespace: string): void {
    const held = options.rbac()?.rulesFor(a.user, namespace) ?? [];
    const missing = rules.flatMap(atomsOf).filter((atom) => !held.some((owner) => covers(owner, atom)));
    if (missing.length === 0) return;
    const groups = a.user.groups.map((g) => JSON.stringify(g)).join(' ');
    throw forbidden(
      { group, resource: a.resource },
      a.name,
      `user ${JSON.stringify(a.user.username)} (groups=[${groups}]) is attempting to grant RBAC permissions not currently held:\n${missing.map((m) => compact(atomRule(m))).join('\n')}`,
    );
  }

  return {
    name: 'RBACEscalation',
    async validate(a) {
      if (a.group !== group || a.subresource !== '' || (a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object) return;
      if (a.user.groups.includes(SUPERUSER_GROUP)) return;
      const namespace = a.namespace ?? '';
      const roleResource = roleKinds[a.resource];
      if (roleResource) {
        if (await allowedVerb(a, 'escalate', roleResource, a.name, namespace)) return;
        const rules = Array.isArray(a.object.rules) ? (a.object.rules as PolicyRule[]).filter((r) => r && typeof r === 'object') : [];
        return refuse(a, rules, namespace);
      }
      if (!bindingKinds[a.resource]) return;
      const ref = (a.object.roleRef ?? {}) as { kind?: string; name?: string };
      const refResource = ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles';
      if (await allowedVerb(a, 'bind', refResource, ref.name ?? '', namespace)) return;
      const rules = options.rbac()?.roleRules(ref, namespace);
      // As upstream, a role that cannot be resolved cannot be bound without `bind`.
      if (!rules) throw notFound({ group, resource: refResource }, ref.name ?? '');
      refuse(a, rules, namespace);
    },
  };
}
