/**
 * Reconciling the default RBAC policy, as upstream's `rbac/bootstrap-roles` post-start hook
 * does on every start: a missing role or binding is created; an existing one gains the labels,
 * annotations, rules, aggregation selectors and subjects it lacks (nothing is taken away, so
 * an administrator's additions survive); a binding whose roleRef changed is deleted and
 * recreated; an object annotated `<rbac group>/autoupdate: "false"` is left as it is.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ApiObject, CoreApi, RequestContext, ResourceTarget } from '../core';
import type { Naming } from '../naming';
import { StatusError } from '../status';
import { rulesOfObject, uncoveredRules } from './rules';

type Metadata = NonNullable<ApiObject['metadata']>;
type Selector = Record<string, unknown>;

export type ReconcileOperation = 'none' | 'create' | 'update' | 'recreate';

export interface Reconciled {
  operation: ReconcileOperation;
  /** The annotation says autoupdate "false": nothing is written whatever the difference. */
  protected: boolean;
  /** What is written (the expected object for create and recreate). */
  object: ApiObject;
}

/** Expected keys added to existing ones; an existing value wins. */
function mergeMap(expected: Record<string, string> | undefined, existing: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!expected && !existing) return undefined;
  return { ...(expected ?? {}), ...(existing ?? {}) };
}

function mergeMetadata(expected: ApiObject, existing: ApiObject): { metadata: Metadata; changed: boolean } {
  const metadata: Metadata = { ...existing.metadata };
  const labels = mergeMap(expected.metadata?.labels, existing.metadata?.labels);
  const annotations = mergeMap(expected.metadata?.annotations, existing.metadata?.annotations);
  if (labels) metadata.labels = labels;
  if (annotations) metadata.annotations = annotations;
  const changed =
    !isDeepStrictEqual(labels ?? {}, existing.metadata?.labels ?? {}) || !isDeepStrictEqual(annotations ?? {}, existing.metadata?.annotations ?? {});
  return { metadata, changed };
}

function isProtected(existing: ApiObject, naming: Naming): boolean {
  return existing.metadata?.annotations?.[naming.labels.rbacAutoupdate] === 'false';
}

function selectorsOf(obj: ApiObject): Selector[] | undefined {
  const rule = obj.aggregationRule as { clusterRoleSelectors?: unknown } | undefined | null;
  if (!rule || typeof rule !== 'object') return undefined;
  return Array.isArray(rule.clusterRoleSelectors) ? (rule.clusterRoleSelectors as Selector[]) : [];
}

/** Upstream's computeReconciledRole, in its union mode (extra permissions are kept). */
export function reconcileRole(expected: ApiObject, existing: ApiObject | undefined, naming: Naming): Reconciled {
  if (!existing) return { operation: 'create', protected: false, object: expected };
  const { metadata, changed } = mergeMetadata(expected, existing);
  const object: ApiObject = { ...existing, metadata };
  let update = changed;
  const missing = uncoveredRules(rulesOfObject(existing), rulesOfObject(expected));
  if (missing.length > 0) {
    object.rules = [...rulesOfObject(existing), ...missing];
    update = true;
  }
  const want = selectorsOf(expected);
  const have = selectorsOf(existing);
  if (!want && have) {
    delete object.aggregationRule;
    update = true;
  } else if (want) {
    const lacking = want.filter((s) => !(have ?? []).some((h) => isDeepStrictEqual(h, s)));
    if (lacking.length > 0) {
      object.aggregationRule = { clusterRoleSelectors: [...(have ?? []), ...lacking] };
      update = true;
    }
  }
  return { operation: update ? 'update' : 'none', protected: isProtected(existing, naming), object };
}

interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

const subjectsOf = (obj: ApiObject): Record<string, unknown>[] => (Array.isArray(obj.subjects) ? (obj.subjects as Record<string, unknown>[]) : []);

function sameSubject(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return (
    (a.kind ?? '') === (b.kind ?? '') &&
    (a.apiGroup ?? '') === (b.apiGroup ?? '') &&
    (a.name ?? '') === (b.name ?? '') &&
    (a.namespace ?? '') === (b.namespace ?? '')
  );
}

/** Upstream's computeReconciledRoleBinding, in its union mode (extra subjects are kept). */
export function reconcileBinding(expected: ApiObject, existing: ApiObject | undefined, naming: Naming): Reconciled {
  if (!existing) return { operation: 'create', protected: false, object: expected };
  const ref = (o: ApiObject) => (o.roleRef ?? {}) as RoleRef;
  const refChanged = ['apiGroup', 'kind', 'name'].some((k) => (ref(expected)[k as keyof RoleRef] ?? '') !== (ref(existing)[k as keyof RoleRef] ?? ''));
  if (refChanged) return { operation: 'recreate', protected: isProtected(existing, naming), object: expected };
  const { metadata, changed } = mergeMetadata(expected, existing);
  const object: ApiObject = { ...existing, metadata };
  const missing = subjectsOf(expected).filter((s) => !subjectsOf(existing).some((e) => sameSubject(e, s)));
  if (missing.length > 0) object.subjects = [...subjectsOf(existing), ...missing];
  return { operation: changed || missing.length > 0 ? 'update' : 'none', protected: isProtected(existing, naming), object };
}

export interface BootstrapPolicyObjects {
  clusterRoles: ApiObject[];
  clusterRoleBindings: ApiObject[];
  roles: ApiObject[];
  roleBindings: ApiObject[];
}

export interface ReconcileSummary {
  created: number;
  updated: number;
  recreated: number;
  protected: number;
}

/** Reconcile every object of `policy` through `api` (as the server's own identity). */
export async function reconcilePolicy(api: CoreApi, ctx: RequestContext, policy: BootstrapPolicyObjects, naming: Naming): Promise<ReconcileSummary> {
  const summary: ReconcileSummary = { created: 0, updated: 0, recreated: 0, protected: 0 };
  const group = naming.groups.rbac;
  const ensured = new Set<string>();
  const ensureNamespace = async (namespace: string) => {
    if (ensured.has(namespace)) return;
    try {
      await api.create({ group: '', version: 'v1', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, {}, ctx);
    } catch (err) {
      if (!StatusError.is(err, 'AlreadyExists')) throw err;
    }
    ensured.add(namespace);
  };
  const one = async (resource: string, expected: ApiObject, compute: typeof reconcileRole) => {
    const namespace = expected.metadata?.namespace;
    const target: ResourceTarget = { group, version: 'v1', resource, ...(namespace ? { namespace } : {}) };
    const named = { ...target, name: expected.metadata!.name! };
    // A conflict means someone else wrote it meanwhile: compute again from what is there now.
    for (let attempt = 0; ; attempt++) {
      let existing: ApiObject | undefined;
      try {
        existing = await api.get(named, {}, ctx);
      } catch (err) {
        if (!StatusError.is(err, 'NotFound')) throw err;
      }
      const r = compute(expected, existing, naming);
      if (r.operation === 'none') return;
      if (r.protected) {
        summary.protected++;
        return;
      }
      try {
        switch (r.operation) {
          case 'create':
            if (namespace) await ensureNamespace(namespace);
            await api.create(target, r.object, {}, ctx);
            summary.created++;
            return;
          case 'update':
            await api.update(named, r.object, {}, ctx);
            summary.updated++;
            return;
          case 'recreate':
            await api.delete(named, { preconditions: { uid: existing!.metadata!.uid! } }, ctx);
            await api.create(target, r.object, {}, ctx);
            summary.recreated++;
            return;
        }
      } catch (err) {
        const retry = StatusError.is(err, 'Conflict') || StatusError.is(err, 'AlreadyExists') || StatusError.is(err, 'NotFound');
        if (!retry || attempt >= 5) throw err;
      }
    }
  };
  for (const o of policy.clusterRoles) await one('clusterroles', o, reconcileRole);
  for (const o of policy.clusterRoleBindings) await one('clusterrolebindings', o, reconcileBinding);
  for (const o of policy.roles) await one('roles', o, reconcileRole);
  for (const o of policy.roleBindings) await one('rolebindings', o, reconcileBinding);
  return summary;
}
