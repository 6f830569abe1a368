/**
 * The field manager: what every write does to managedFields (docs/API.md, "Field managers and
 * server-side apply", "Clearing managedFields").
 * Updates and non-apply patches move ownership of what they change to their manager with
 * operation `Update`; applies merge the configuration, record it as the applier's fields with
 * operation `Apply`, drop what the applier gave up, and fail on conflicts unless forced. The
 * layers are upstream's (apimachinery's managedfields/internal): reset by `[{}]`, no
 * tracking on objects that have none until the first apply (`before-first-apply`), manager
 * identities, timestamps only for managers that changed something, stripped metadata, at most
 * ten update entries, and kubectl's client-side-apply annotation kept in step.
 */
import type { ApiObject, ManagedFieldsEntry } from '../api';
import type { SchemaType } from '../../schema';
import { goShapeStruct } from './normalize';
import { jsonEqual } from '../../util/json-values';
import { STRIPPED_FIELDS, capUpdateManagers, decodeManaged, emptyManaged, encodeManaged, isResetRequest, managerIdentity, type Managed } from './managed';
import type { FieldSet } from './set';
import { rootAtom, isObject } from './typed';
import { ApplyConflicts, applyOwnership, updateOwnership, type EquivalentFieldNames, type UpdaterOptions } from './updater';
import { allowedByLastApplied, withLastApplied } from './last-applied';

export interface FieldManagerScope {
  /** The schema of the kind written. */
  readonly type: SchemaType;
  /** The request's group version (`apps/v1`). */
  readonly apiVersion: string;
  readonly kind: string;
  /** '' for the main resource, `status` or `scale`. */
  readonly subresource: string;
  /** Fields the strategy resets for this scope (never owned by the writer). */
  readonly ignore: FieldSet;
  /** The current time, RFC 3339, from the injected clock. */
  readonly now: string;
  /** kubectl's client-side apply annotation under the naming profile; undefined: not tracked. */
  readonly lastAppliedAnnotation?: string;
  /** Other apiVersions of the same objects and their differently named top-level fields (UpdaterOptions.equivalents). */
  readonly equivalents?: readonly EquivalentFieldNames[];
}

/** The self name under which an update is computed before it is credited to its manager. */
const CURRENT_OPERATION = 'current-operation';
const BEFORE_FIRST_APPLY = 'before-first-apply';

/** The empty object of each kind as upstream's field manager sees it (a create's "live" object), computed once. Shared by every server in the process, as the schema is. */
const zeroViews = new WeakMap<object, Map<string, string>>();

function zeroView(scope: FieldManagerScope): Record<string, unknown> {
  let byKind = zeroViews.get(scope.type);
  if (!byKind) zeroViews.set(scope.type, (byKind = new Map()));
  const key = `${scope.apiVersion}\n${scope.kind}`;
  let text = byKind.get(key);
  if (text === undefined) {
    text = JSON.stringify({ ...goShapeStruct({}, scope.type), apiVersion: scope.apiVersion, kind: scope.kind });
    byKind.set(key, text);
  }
  return JSON.parse(text) as Record<string, unknown>;
}

/** The object as upstream's field manager sees it (Go view, without managedFields). */
function view(obj: ApiObject | undefined, scope: FieldManagerScope): Record<string, unknown> {
  if (!obj) return zeroView(scope);
  const shaped = goShapeStruct(obj as Record<string, unknown>, scope.type);
  const meta = shaped.metadata;
  if (isObject(meta)) delete meta.managedFields;
  shaped.apiVersion = scope.apiVersion;
  shaped.kind = scope.kind;
  return shaped;
}

function options(scope: FieldManagerScope): UpdaterOptions {
  return { atom: rootAtom(scope.type), version: scope.apiVersion, ignore: scope.ignore, equivalents: scope.equivalents };
}

function strip(managed: Managed, id: string): void {
  const vs = managed.fields.get(id);
  if (!vs) return;
  const set = vs.set.difference(STRIPPED_FIELDS);
  if (set.empty()) managed.fields.delete(id);
  else managed.fields.set(id, { ...vs, set });
}

/**
 * `id` keeps the set it had `before` when its paths are the same now: that set writes the same
 * FieldsV1 object again (set.ts) instead of a new one encoded.
 */
function keepUnchangedSet(managed: Managed, before: Managed, id: string): void {
  const had = before.fields.get(id);
  const now = managed.fields.get(id);
  if (had && now && now.set !== had.set && now.apiVersion === had.apiVersion && now.set.equals(had.set)) managed.fields.set(id, { ...now, set: had.set });
}

/** Credit an update from `live` to `next` to `id` (upstream's managedFieldsUpdater over stripMeta and the merge). */
function creditUpdate(live: ApiObject | undefined, next: ApiObject, managed: Managed, id: string, scope: FieldManagerScope): Managed {
  const fields = updateOwnership(view(live, scope), view(next, scope), managed.fields, CURRENT_OPERATION, options(scope));
  const out: Managed = { fields, times: new Map(managed.times) };
  strip(out, CURRENT_OPERATION);
  const mine = out.fields.get(CURRENT_OPERATION);
  if (mine) {
    out.fields.delete(CURRENT_OPERATION);
    const previous = out.fields.get(id);
    out.fields.set(id, { ...mine, set: previous ? mine.set.union(previous.set) : mine.set });
    // A writer that changed only what it already owned owns the same paths.
    keepUnchangedSet(out, managed, id);
    out.times.set(id, scope.now);
  }
  capUpdateManagers(out);
  return out;
}

function decodeOrEmpty(entries: ManagedFieldsEntry[] | undefined): Managed {
  try {
    return decodeManaged(entries);
  } catch {
    return emptyManaged();
  }
}

/**
 * The managedFields of `next` after a create (`live` undefined), update or non-apply patch by
 * `manager`. Entries the request sets itself are honoured (upstream lets a write replace them),
 * except on subresources; `[{}]` resets them first, and the writer then owns what it changed.
 * Never fails: an object whose ownership cannot be computed loses its managedFields, as upstream's
 * UpdateNoErrors does.
 */
export function managedFieldsAfterUpdate(live: ApiObject | undefined, next: ApiObject, manager: string, scope: FieldManagerScope): ManagedFieldsEntry[] {
  try {
    const requested = next.metadata?.managedFields;
    const reset = !scope.subresource && isResetRequest(requested);
    let managed: Managed;
    if (reset) managed = emptyManaged();
    else {
      const stored = live?.metadata?.managedFields;
      // A body that sends back the stored entries (a client's read, modify, write) is read as
      // those entries, whose field sets were read once already (set.ts).
      if (scope.subresource) managed = emptyManaged();
      else managed = decodeOrEmpty(requested !== stored && stored !== undefined && jsonEqual(requested, stored) ? stored : requested);
      if (managed.fields.size === 0) managed = decodeOrEmpty(stored);
    }
    // Objects without managedFields are not tracked by updates until their first apply
    // (upstream's skipNonAppliedManager); creates and explicit resets are.
    if (managed.fields.size === 0 && live?.metadata?.uid && !reset) return [];
    const id = managerIdentity({ manager: manager || 'unknown', operation: 'Update', apiVersion: scope.apiVersion, subresource: scope.subresource });
    const liveWithoutFields = live ? { ...live, metadata: { ...live.metadata, managedFields: undefined } } : undefined;
    return encodeManaged(creditUpdate(liveWithoutFields, next, managed, id, scope));
  } catch {
    return [];
  }
}

export interface ApplyResult {
  /** The merged object (Go view) with its new managedFields. */
  readonly object: ApiObject;
  /** False when the apply left the object as it was (managedFields may still change). */
  readonly changed: boolean;
}

function applyOnce(live: ApiObject | undefined, config: ApiObject, managed: Managed, manager: string, force: boolean, scope: FieldManagerScope): ApplyResult {
  let current = managed;
  const liveView = view(live, scope);
  if (current.fields.size === 0 && live) {
    // Fields set before the first apply belong to `before-first-apply` (upstream's skipNonAppliedManager).
    const id = managerIdentity({ manager: BEFORE_FIRST_APPLY, operation: 'Update', apiVersion: scope.apiVersion, subresource: scope.subresource });
    current = creditUpdate(undefined, live, current, id, scope);
  }
  const id = managerIdentity({ manager, operation: 'Apply', subresource: scope.subresource });
  const outcome = applyOwnership(liveView, config, current.fields, id, force, options(scope));
  const out: Managed = { fields: outcome.managers, times: new Map(current.times) };
  strip(out, id);
  // An apply of the same paths as before.
  keepUnchangedSet(out, current, id);
  const changed = outcome.object !== undefined;
  if (changed) out.times.set(id, scope.now);
  const object = (changed ? outcome.object : liveView) as ApiObject;
  const entries = encodeManaged(out);
  object.metadata = { ...(object.metadata ?? {}) };
  if (entries.length > 0) object.metadata.managedFields = entries;
  else delete object.metadata.managedFields;
  return { object, changed };
}

/**
 * Server-side apply of `config` by `manager` onto `live` (undefined: the object is created).
 * Throws ApplyConflicts (unless `force`), ApplyValidationError for a configuration the schema
 * rejects, ManagedFieldsError when the stored entries cannot be read.
 */
export function applyConfiguration(live: ApiObject | undefined, config: ApiObject, manager: string, force: boolean, scope: FieldManagerScope): ApplyResult {
  const managed = decodeManaged(live?.metadata?.managedFields);
  let result: ApplyResult;
  try {
    result = applyOnce(live, config, managed, manager, force, scope);
  } catch (err) {
    // kubectl's own applies may take over fields its client-side apply set (upstream's lastAppliedManager).
    if (!(err instanceof ApplyConflicts) || manager !== 'kubectl' || !live) throw err;
    const allowed = allowedByLastApplied(live, scope);
    if (!allowed) throw err;
    const rest = err.conflicts.filter((c) => !allowed.has(c.path));
    if (rest.length > 0) throw new ApplyConflicts(rest);
    result = applyOnce(live, config, managed, manager, true, scope);
  }
  const key = scope.lastAppliedAnnotation;
  if (manager === 'kubectl' && key && live?.metadata?.annotations?.[key]) {
    result = { ...result, object: withLastApplied(result.object, config, key) };
  }
  return result;
}
