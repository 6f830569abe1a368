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
import { type ApiObject, type CoreApi, type RequestContext, type ResourceTarget, Informer, type UserInfo } from '../core';
import type { Naming } from '../naming';
import type { Clock } from '../clock';
import type { AuthorizationAttributes, Authorizer, Decision, RulesResult } from './types';

import { type PolicyRule, listHas, ruleAbout, ruleAllows, rulesOfObject } from './rules';

export { ruleAllows } from './rules';

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

export interface RbacAuthorizer extends Authorizer {
  rulesFor(user: UserInfo, namespace: string): RulesResult;
  authorize(attributes: AuthorizationAttributes): Decision;
  /** Resolves once every kind was listed. */
  synced(): Promise<void>;
  /** Every rule RBAC grants `user` at `namespace` ('' for the cluster scope: cluster bindings only). */
  policyRulesFor(user: UserInfo, namespace: string): PolicyRule[];
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

/** The keys a binding subject is indexed under, and the keys a user is looked up by. */
function subjectKey(subject: Subject, bindingNamespace: string): string | undefined {
  switch (subject.kind) {
    case 'User':
      return subject.name ? `u:${subject.name}` : undefined;
    case 'Group':
      return subject.name ? `g:${subject.name}` : undefined;
    case 'ServiceAccount': {
      const ns = subject.namespace || bindingNamespace;
      return ns ? `u:${SERVICE_ACCOUNT_PREFIX}${ns}:${subject.name ?? ''}` : undefined;
    }
    default:
      return undefined;
  }
}

function userKeys(user: UserInfo): string[] {
  return [`u:${user.username}`, ...user.groups.map((g) => `g:${g}`)];
}

/** A binding and the subject through which it applies to a user. */
interface Applicable {
  binding: Binding;
  subject: Subject;
}

type SubjectIndex = Map<string, Applicable[]>;

function indexBySubject(bindings: Iterable<Binding>): SubjectIndex {
  const index: SubjectIndex = new Map();
  for (const binding of bindings) {
    for (const subject of binding.subjects) {
      const key = subjectKey(subject, binding.namespace ?? '');
      if (!key) continue;
      const list = index.get(key);
      if (list) list.push({ binding, subject });
      else index.set(key, [{ binding, subject }]);
    }
  }
  return index;
}

/** Each binding once (a user may match several of its subjects), in index order. */
function lookup(index: SubjectIndex | undefined, user: UserInfo): Applicable[] {
  if (!index) return [];
  const out: Applicable[] = [];
  const seen = new Set<Binding>();
  for (const key of userKeys(user)) {
    for (const entry of index.get(key) ?? []) {
      if (seen.has(entry.binding)) continue;
      seen.add(entry.binding);
      out.push(entry);
    }
  }
  return out;
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${JSON.stringify(`${s.name ?? ''}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name ?? '')}`;
}

/** Upstream's binding describer: `ClusterRoleBinding "x" of ClusterRole "y"` / `RoleBinding "x/ns" of Role "y"`. */
function describeBinding(b: Binding): string {
  const name = b.namespace ? `RoleBinding ${JSON.stringify(`${b.name}/${b.namespace}`)}` : `ClusterRoleBinding ${JSON.stringify(b.name)}`;
  return `${name} of ${b.roleRef.kind ?? ''} ${JSON.stringify(b.roleRef.name ?? '')}`;
}

function resourceText(a: AuthorizationAttributes): string {
  const r = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return a.apiGroup ? `${r}.${a.apiGroup}` : r;
}

/** The RBAC authorizer over `api`. */
export function rbacAuthorizer(options: RbacOptions): RbacAuthorizer {
  const { api, naming, ctx, clock } = options;
  const group = naming.groups.rbac;
  const t = (resource: string): ResourceTarget => ({ group, version: 'v1', resource });

  // The index, rebuilt lazily: the informers mark it stale, the next question rebuilds it.
  let stale = true;
  let clusterIndex: SubjectIndex = new Map();
  let namespaceIndex = new Map<string, SubjectIndex>();
  let roleRulesByKey = new Map<string, PolicyRule[]>();
  const toBinding = (o: ApiObject): Binding => ({
    namespace: o.metadata?.namespace,
    name: o.metadata?.name ?? '',
    roleRef: (o.roleRef ?? {}) as Binding['roleRef'],
    subjects: Array.isArray(o.subjects) ? (o.subjects as Subject[]).filter((s) => s && typeof s === 'object') : [],
  });
  const fresh = () => {
    if (!stale) return;
    stale = false;
    const rules = new Map<string, PolicyRule[]>();
    for (const o of informers.clusterroles.objects.values()) rules.set(`ClusterRole//${o.metadata?.name ?? ''}`, rulesOfObject(o));
    for (const o of informers.roles.objects.values()) rules.set(`Role/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`, rulesOfObject(o));
    roleRulesByKey = rules;
    clusterIndex = indexBySubject([...informers.clusterrolebindings.objects.values()].map(toBinding));
    const byNs = new Map<string, Binding[]>();
    for (const o of informers.rolebindings.objects.values()) {
      const b = toBinding(o);
      const list = byNs.get(b.namespace ?? '');
      if (list) list.push(b);
      else byNs.set(b.namespace ?? '', [b]);
    }
    namespaceIndex = new Map([...byNs].map(([ns, list]) => [ns, indexBySubject(list)]));
  };
  const informers = {} as Record<'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings', Informer>;
  for (const resource of ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'] as const) {
    informers[resource] = new Informer(api, t(resource), ctx, () => (stale = true), clock);
  }
  const refKey = (ref: Binding['roleRef'], namespace: string | undefined): string | undefined =>
    ref.kind === 'ClusterRole' ? `ClusterRole//${ref.name ?? ''}` : ref.kind === 'Role' && namespace ? `Role/${namespace}/${ref.name ?? ''}` : undefined;
  const rulesOf = (ref: Binding['roleRef'], namespace: string | undefined): PolicyRule[] | undefined => {
    const key = refKey(ref, namespace);
    return key === undefined ? undefined : roleRulesByKey.get(key);
  };
  /** Upstream's "not found" for a binding's missing role, as its listers word it. */
  const missingRole = (b: Binding) => `${(b.roleRef.kind ?? '').toLowerCase()}.${group} ${JSON.stringify(b.roleRef.name ?? '')} not found`;

  /** The bindings that apply to the user at a namespace ('' for cluster bindings only). */
  const applicable = (user: UserInfo, namespace: string): Applicable[] => {
    fresh();
    const out = lookup(clusterIndex, user);
    if (namespace) out.push(...lookup(namespaceIndex.get(namespace), user));
    return out;
  };

  /**
   * The closest a binding of this user came to allowing `a`, in words; undefined when none came
   * near. Bindings in scope (cluster, or the request's namespace) come first; only when none of
   * them is about the same thing are the user's RoleBindings elsewhere looked at. The text is
   * built for the winner only: a refusal must stay cheap.
   */
  const nearestMiss = (a: AuthorizationAttributes): string | undefined => {
    let best: { score: number; binding: Binding; about: PolicyRule[]; inScope: boolean } | undefined;
    const consider = (entries: Applicable[], inScope: boolean) => {
      for (const { binding } of entries) {
        const rules = rulesOf(binding.roleRef, binding.namespace);
        if (!rules) continue;
        // Rules about the same thing (resource or URL), whatever their verbs and names.
        const about = rules.filter((r) => ruleAbout(a, r));
        if (about.length === 0) continue;
        const verbOk = about.some((r) => listHas(r.verbs, a.verb));
        const score = inScope ? (verbOk ? 5 : 4) : verbOk ? 2 : 1;
        if (!best || score > best.score) best = { score, binding, about, inScope };
      }
    };
    fresh();
    consider(lookup(clusterIndex, a.user), true);
    if (a.isResourceRequest && a.namespace) consider(lookup(namespaceIndex.get(a.namespace), a.user), true);
    if (!best && a.isResourceRequest) {
      for (const [ns, index] of namespaceIndex) if (ns !== a.namespace) consider(lookup(index, a.user), false);
    }
    if (!best) return undefined;
    const { binding, about, inScope } = best;
    const thing = a.isResourceRequest ? resourceText(a) : JSON.stringify(a.path);
    const verbs = [...new Set(about.flatMap((r) => r.verbs ?? []))];
    if (!inScope) return `${describeBinding(binding)} grants ${verbs.join(', ')} on ${thing} in namespace ${JSON.stringify(binding.namespace ?? '')} only`;
    const verbOk = about.filter((r) => listHas(r.verbs, a.verb));
    if (verbOk.length === 0) return `${describeBinding(binding)} grants ${verbs.join(', ')} on ${thing}, not ${a.verb}`;
    const names = [...new Set(verbOk.flatMap((r) => r.resourceNames ?? []))];
    return `${describeBinding(binding)} grants ${a.verb} on ${thing} named ${names.map((n) => JSON.stringify(n)).join(', ')} only`;
  };

  return {
    policyRulesFor(user, namespace) {
      return applicable(user, namespace).flatMap(({ binding }) => rulesOf(binding.roleRef, binding.namespace) ?? []);
    },
    rulesFor(user, namespace): RulesResult {
      const result: RulesResult = { resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] };
      for (const { binding } of applicable(user, namespace)) {
        const rules = rulesOf(binding.roleRef, binding.namespace);
        if (!rules) {
          result.errors.push(missingRole(binding));
          continue;
        }
        for (const r of rules) {
          if (r.resources?.length) {
            result.resourceRules.push({ verbs: r.verbs ?? [], apiGroups: r.apiGroups ?? [], resources: r.resources, resourceNames: r.resourceNames ?? [] });
          }
          if (r.nonResourceURLs?.length) result.nonResourceRules.push({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs });
        }
      }
      return result;
    },
    roleRules: (ref, namespace) => {
      fresh();
      return rulesOf(ref, namespace);
    },
    synced: () => Promise.all(Object.values(informers).map((i) => i.synced)).then(() => fresh()),
    stop: () => Object.values(informers).forEach((i) => i.stop()),
    authorize(a): Decision {
      const errors: string[] = [];
      for (const { binding, subject } of applicable(a.user, a.isResourceRequest ? a.namespace : '')) {
        const rules = rulesOf(binding.roleRef, binding.namespace);
        if (!rules) {
          errors.push(missingRole(binding));
          continue;
        }
        if (rules.some((r) => ruleAllows(a, r))) {
          return { decision: 'allow', reason: `allowed by ${describeBinding(binding)} to ${describeSubject(subject, binding.namespace ?? '')}` };
        }
      }
      // Upstream's reason names the roles it could not find; ours adds the nearest miss.
      const parts = errors.length === 1 ? [errors[0]!] : errors.length > 1 ? [`[${errors.join(', ')}]`] : [];
      parts.push(
        nearestMiss(a) ?? `no binding for this user or their groups grants ${a.verb} on ${a.isResourceRequest ? resourceText(a) : JSON.stringify(a.path)}`,
      );
      return { decision: 'noOpinion', reason: parts.join('; ') };
    },
  };
}
