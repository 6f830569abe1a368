/**
 * RBAC, as upstream's authorizer evaluates it, from an in-memory index of Roles, ClusterRoles,
 * RoleBindings and ClusterRoleBindings kept current by watches through `CoreApi` (no store read
 * per request). A request is allowed when a ClusterRoleBinding — or, for a namespaced request, a
 * RoleBinding in its namespace — names the user (by name, group or service account) and its role
 * has a rule matching the verb, API group, resource (`resource/subresource`, a wildcard, or a
 * wildcard resource with the subresource), and
 * resource name; non-resource URLs (exact or `*`-suffixed) only through ClusterRoleBindings. A
 * binding whose role does not exist grants nothing until the role appears. RBAC never denies: it
 * allows or has no opinion.
 */
import type { ApiObject, CoreApi, RequestContext, ResourceTarget } from '../core/api';
import { Informer } from '../core/informer';
import type { Naming } from '../naming';
import type { Clock } from '../clock';
import type { AuthorizationAttributes, Authorizer, Decision } from './types';

import { type PolicyRule, rulesOfObject } from './rules';

export type { PolicyRule } from './rules';

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

interface Binding {
  namespace?: string;
  name: string;
  roleRef: { kind?: string; name?: string };
  subjects: Subject[];
}

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

function has(list: readonly string[] | undefined, value: string): boolean {
  return !!list && (list.includes('*') || list.includes(value));
}

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    if (subresource && (r === `*/${subresource}` || r === `${resource}/*`)) return true;
  }
  return false;
}

/** Upstream's RuleAllows. */
export function ruleAllows(a: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (!a.isResourceRequest) {
    return (rule.nonResourceURLs ?? []).some((u) => u === '*' || u === a.path || (u.endsWith('*') && a.path.startsWith(u.slice(0, -1))));
  }
  if (!has(rule.apiGroups, a.apiGroup)) return false;
  if (!resourceMatches(rule, a.resource, a.subresource)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(a.name);
}

/** Does `subject` (of a binding in `namespace`) name this user? */
export function appliesTo(subject: Subject, user: AuthorizationAttributes['user'], bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.username;
    case 'Group':
      return !!subject.name && user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const ns = subject.namespace || bindingNamespace;
      return !!ns && user.username === `${SERVICE_ACCOUNT_PREFIX}${ns}:${subject.name ?? ''}`;
    }
    default:
      return false;
  }
}

export interface RbacAuthorizer extends Authorizer {
  /** Resolves once every kind was listed. */
  synced(): Promise<void>;
  /** Every rule RBAC grants `user` at `namespace` ('' for the cluster scope: cluster bindings only). */
  rulesFor(user: AuthorizationAttributes['user'], namespace: string): PolicyRule[];
  /** The rules of a role a binding refers to, if it exists. */
  roleRules(ref: { kind?: string; name?: string }, namespace: string): PolicyRule[] | undefined;
  stop(): void;
}

export interface RbacOptions {
  api: CoreApi;
  naming: Naming;
  /** The identity the index reads with (the server's own). */
  ctx: RequestContext;
  clock: Clock;
}

/** The RBAC authorizer over `api`. */
export function rbacAuthorizer(options: RbacOptions): RbacAuthorizer {
  const { api, naming, ctx, clock } = options;
  const group = naming.groups.rbac;
  const t = (resource: string): ResourceTarget => ({ group, version: 'v1', resource });
  let clusterBindings: Binding[] = [];
  let bindingsByNamespace = new Map<string, Binding[]>();
  const rebuild = () => {
    const toBinding = (o: ApiObject): Binding => ({
      namespace: o.metadata?.namespace,
      name: o.metadata?.name ?? '',
      roleRef: (o.roleRef ?? {}) as Binding['roleRef'],
      subjects: Array.isArray(o.subjects) ? (o.subjects as Subject[]).filter((s) => s && typeof s === 'object') : [],
    });
    clusterBindings = [...informers.clusterrolebindings.objects.values()].map(toBinding);
    const byNs = new Map<string, Binding[]>();
    for (const o of informers.rolebindings.objects.values()) {
      const b = toBinding(o);
      const list = byNs.get(b.namespace ?? '') ?? [];
      list.push(b);
      byNs.set(b.namespace ?? '', list);
    }
    bindingsByNamespace = byNs;
  };
  const informers = {} as Record<'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings', Informer>;
  for (const resource of ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'] as const) {
    informers[resource] = new Informer(api, t(resource), ctx, () => {
      if (Object.keys(informers).length === 4) rebuild();
    }, clock);
  }
  const rulesOf = (ref: Binding['roleRef'], namespace: string | undefined): PolicyRule[] => {
    const obj = ref.kind === 'ClusterRole' ? informers.clusterroles.objects.get(`/${ref.name ?? ''}`) : ref.kind === 'Role' && namespace ? informers.roles.objects.get(`${namespace}/${ref.name ?? ''}`) : undefined;
    return rulesOfObject(obj);
  };
  const allowedBy = (a: AuthorizationAttributes, bindings: readonly Binding[], namespace: string): Binding | undefined =>
    bindings.find((b) => b.subjects.some((s) => appliesTo(s, a.user, namespace)) && rulesOf(b.roleRef, b.namespace).some((r) => ruleAllows(a, r)));

  const roleExists = (ref: Binding['roleRef'], namespace: string | undefined): boolean =>
    ref.kind === 'ClusterRole' ? informers.clusterroles.objects.has(`/${ref.name ?? ''}`) : !!namespace && informers.roles.objects.has(`${namespace}/${ref.name ?? ''}`);
  return {
    rulesFor(user, namespace) {
      const rules: PolicyRule[] = [];
      const from = (bindings: readonly Binding[], ns: string) => {
        for (const b of bindings) if (b.subjects.some((s) => appliesTo(s, user, ns))) rules.push(...rulesOf(b.roleRef, b.namespace));
      };
      from(clusterBindings, '');
      if (namespace) from(bindingsByNamespace.get(namespace) ?? [], namespace);
      return rules;
    },
    roleRules: (ref, namespace) => (roleExists(ref, namespace) ? rulesOf(ref, namespace) : undefined),
    synced: () => Promise.all(Object.values(informers).map((i) => i.synced)).then(() => rebuild()),
    stop: () => Object.values(informers).forEach((i) => i.stop()),
    authorize(a): Decision {
      const cluster = allowedBy(a, clusterBindings, '');
      if (cluster) return { decision: 'allow' };
      if (a.isResourceRequest && a.namespace) {
        if (allowedBy(a, bindingsByNamespace.get(a.namespace) ?? [], a.namespace)) return { decision: 'allow' };
      }
      return { decision: 'noOpinion' };
    },
  };
}
