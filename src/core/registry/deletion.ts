/**
 * The rules of a delete request (docs/API.md, "Object deletion"), as upstream's
 * generic store and `rest.BeforeDelete` apply them, kept apart from the storage calls:
 *
 * - preconditions (`uid`, `resourceVersion`) → 409;
 * - graceful deletion for types with a graceful strategy (pods: bound to a node and not
 *   finished → `deletionTimestamp` = now + grace, removed later; otherwise immediate);
 * - the garbage collector's finalizers from `propagationPolicy` / legacy `orphanDependents` /
 *   the type's default policy (`orphan` → dependents are orphaned, `foregroundDeletion` → the
 *   owner waits for its blocking dependents);
 * - an object with finalizers is only marked Terminating (`deletionTimestamp` set, grace 0).
 */
import type { ApiObject, DeleteOptions, ObjectMeta } from '../api';
import type { ResourceDefinition } from '../resources/definition';
import { rfc3339 } from '../../clock';
import { conflict } from '../../status';
import { type FieldError, fieldErrors } from '../validation/field-errors';

/** metav1.FinalizerOrphanDependents: the garbage collector orphans the dependents, then removes it. */
export const FINALIZER_ORPHAN = 'orphan';
/** metav1.FinalizerDeleteDependents: the garbage collector deletes the blocking dependents first. */
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

/** A type's default propagation (upstream's rest.GarbageCollectionPolicy). */
export type GarbageCollectionPolicy = 'DeleteDependents' | 'OrphanDependents' | 'Unsupported';

/**
 * Every type Keelson serves defaults to deleting dependents in the background (upstream:
 * apps/v1 types say DeleteDependents; types without a policy behave the same).
 */
export function defaultGarbageCollectionPolicy(_def: ResourceDefinition): GarbageCollectionPolicy {
  return 'DeleteDependents';
}

/** Upstream's shouldOrphanDependents: explicit options, then the object's finalizers, then the type. */
export function shouldOrphan(finalizers: readonly string[], options: DeleteOptions, policy: GarbageCollectionPolicy): boolean {
  if (policy === 'Unsupported') return false;
  if (options.orphanDependents !== undefined) return options.orphanDependents;
  if (options.propagationPolicy) return options.propagationPolicy === 'Orphan';
  for (const f of finalizers) {
    if (f === FINALIZER_ORPHAN) return true;
    if (f === FINALIZER_FOREGROUND) return false;
  }
  return policy === 'OrphanDependents';
}

/** Upstream's shouldDeleteDependents (foreground). */
export function shouldDeleteInForeground(finalizers: readonly string[], options: DeleteOptions, policy: GarbageCollectionPolicy): boolean {
  if (policy === 'Unsupported') return false;
  if (options.orphanDependents !== undefined) return false;
  if (options.propagationPolicy) return options.propagationPolicy === 'Foreground';
  for (const f of finalizers) {
    if (f === FINALIZER_FOREGROUND) return true;
    if (f === FINALIZER_ORPHAN) return false;
  }
  return false;
}

/**
 * The finalizers the garbage collector needs on the object being deleted (upstream's
 * deletionFinalizersForGarbageCollection): both GC finalizers removed, then the one the options
 * call for appended. `changed` compares as sets.
 */
export function gcFinalizers(meta: ObjectMeta, options: DeleteOptions, policy: GarbageCollectionPolicy): { changed: boolean; finalizers: string[] } {
  const current = meta.finalizers ?? [];
  const next = current.filter((f) => f !== FINALIZER_ORPHAN && f !== FINALIZER_FOREGROUND);
  if (shouldOrphan(current, options, policy)) next.push(FINALIZER_ORPHAN);
  if (shouldDeleteInForeground(current, options, policy)) next.push(FINALIZER_FOREGROUND);
  const a = new Set(current);
  const b = new Set(next);
  const changed = a.size !== b.size || [...a].some((f) => !b.has(f));
  return { changed, finalizers: changed ? next : [...current] };
}

/** Upstream's markAsDeleting: Terminating now (or keep an earlier time), grace 0, generation +1 the first time. */
export function markAsDeleting(meta: ObjectMeta, now: number): void {
  if (!meta.deletionTimestamp && (meta.generation ?? 0) > 0) meta.generation = meta.generation! + 1;
  if (!meta.deletionTimestamp || Date.parse(meta.deletionTimestamp) > now) meta.deletionTimestamp = rfc3339(now);
  meta.deletionGracePeriodSeconds = 0;
}

/**
 * A type's graceful strategy (upstream's CheckGracefulDelete): whether this object is deleted
 * gracefully, and with which grace period (it may rewrite `gracePeriodSeconds`).
 */
export type CheckGracefulDelete = (obj: ApiObject, options: DeleteOptions) => boolean;

/**
 * Pods: the requested grace period, else the pod's `terminationGracePeriodSeconds`; 0 when the
 * pod is not bound to a node or has finished. Always "graceful", so a pod is first marked with
 * its deletion time, then removed (at once when the period is 0).
 */
export const podGracefulDelete: CheckGracefulDelete = (obj, options) => {
  const spec = (obj.spec ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
  const phase = ((obj.status ?? {}) as { phase?: string }).phase;
  let period = options.gracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 0;
  if (!spec.nodeName) period = 0;
  if (phase === 'Failed' || phase === 'Succeeded') period = 0;
  options.gracePeriodSeconds = period;
  return true;
};

/** The graceful strategy of a type, if it has one (today: core/v1 pods). */
export function gracefulStrategyOf(def: ResourceDefinition): CheckGracefulDelete | undefined {
  return def.group === '' && def.resource === 'pods' ? podGracefulDelete : undefined;
}

export interface BeforeDelete {
  /** Mark the object with a deletion time in the future (or now) instead of deleting it now. */
  graceful: boolean;
  /** Already being deleted gracefully and not shortened: nothing to do. */
  pending: boolean;
}

/** A delete's uid and resourceVersion preconditions against the stored object: 409 worded by the kind, as upstream words them. */
export function checkDeletePreconditions(def: Pick<ResourceDefinition, 'group' | 'kind'>, obj: ApiObject, pre: DeleteOptions['preconditions']): void {
  const meta = obj.metadata ?? {};
  const name = meta.name ?? '';
  const byKind = { group: def.group, resource: def.kind };
  if (pre?.uid !== undefined && pre.uid !== meta.uid) {
    throw conflict(
      byKind,
      name,
      `the UID in the precondition (${pre.uid}) does not match the UID in record (${meta.uid ?? ''}). The object might have been deleted and then recreated`,
    );
  }
  if (pre?.resourceVersion !== undefined && pre.resourceVersion !== meta.resourceVersion) {
    throw conflict(
      byKind,
      name,
      `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${meta.resourceVersion ?? ''}). The object might have been modified`,
    );
  }
}

/**
 * Upstream's rest.BeforeDelete on a copy of the stored object: preconditions (409 worded by the
 * kind, as upstream words them), then the graceful decision, updating `obj` and
 * `options.gracePeriodSeconds` in place.
 */
export function beforeDelete(def: ResourceDefinition, obj: ApiObject, options: DeleteOptions, now: number): BeforeDelete {
  const meta = (obj.metadata ??= {});
  checkDeletePreconditions(def, obj, options.preconditions);
  // Negative values mean one second on the delete path.
  if (options.gracePeriodSeconds !== undefined && options.gracePeriodSeconds < 0) options.gracePeriodSeconds = 1;
  if (meta.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds < 0) meta.deletionGracePeriodSeconds = 1;

  const check = gracefulStrategyOf(def);
  if (!check) return { graceful: false, pending: false };
  if (meta.deletionTimestamp) {
    // Already being deleted: a grace period may only be shortened.
    const current = meta.deletionGracePeriodSeconds;
    if (current === undefined || current === 0) return { graceful: false, pending: false };
    if (options.gracePeriodSeconds === undefined) {
      options.gracePeriodSeconds = current;
      return { graceful: false, pending: true };
    }
    const period = options.gracePeriodSeconds;
    if (period >= current) return { graceful: false, pending: true };
    meta.deletionTimestamp = rfc3339(Date.parse(meta.deletionTimestamp) - current * 1000 + period * 1000);
    meta.deletionGracePeriodSeconds = period;
    return { graceful: true, pending: false };
  }
  if (!check(obj, options)) return { graceful: false, pending: false };
  const period = options.gracePeriodSeconds ?? 0;
  meta.deletionTimestamp = rfc3339(now + period * 1000);
  meta.deletionGracePeriodSeconds = period;
  if ((meta.generation ?? 0) > 0) meta.generation = meta.generation! + 1;
  return { graceful: true, pending: false };
}

/**
 * Upstream's ValidateIgnoreStoreReadError (checked only while the gate is on; without it the
 * option is dropped): the unsafe delete takes no other option.
 */
export function validateUnsafeDeleteOptions(options: DeleteOptions): FieldError[] {
  if (options.ignoreStoreReadErrorWithClusterBreakingPotential !== true) return [];
  const field = 'ignoreStoreReadErrorWithClusterBreakingPotential';
  const errs: FieldError[] = [];
  if ((options.dryRun ?? []).length > 0) errs.push(fieldErrors.invalid(field, true, 'cannot be set together with .dryRun'));
  if (options.propagationPolicy !== undefined) errs.push(fieldErrors.invalid(field, true, 'cannot be set together with .propagationPolicy'));
  if (options.orphanDependents !== undefined) errs.push(fieldErrors.invalid(field, true, 'cannot be set together with .orphanDependents'));
  if (options.gracePeriodSeconds !== undefined) errs.push(fieldErrors.invalid(field, true, 'cannot be set together with .gracePeriodSeconds'));
  if (options.preconditions !== undefined) errs.push(fieldErrors.invalid(field, true, 'cannot be set together with .preconditions'));
  return errs;
}
