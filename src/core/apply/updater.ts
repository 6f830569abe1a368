/**
 * Ownership bookkeeping of server-side apply (upstream's structured-merge-diff merge.Updater):
 * who owns which fields after an update or an apply, which applies conflict, and which fields
 * an applier's new configuration lets go of (docs/API.md, "Field managers and server-side apply").
 *
 * Managers recorded at another apiVersion of the same objects (`UpdaterOptions.equivalents`: the
 * core group's Event beside the events group's) are read in this version's field names for the
 * request and keep their own version's names and apiVersion after it, as upstream's field
 * manager converts them; managers of versions not served are dropped, as upstream drops them.
 */
import { type Path, fieldElement } from './fieldpath';
import { ensureNamedFieldsAreMembers, mergeValues, removeItems } from './merge';
import { FieldSet } from './set';
import type { Atom } from './typed';
import { type Comparison, type ValidationError, compareValues, fieldSetOf } from './walk';
import { jsonEqual } from '../../util/json-values';

export interface VersionedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  /** Recorded by an apply (operation `Apply`), not an update. */
  readonly applied: boolean;
}

/** Manager identity (upstream's JSON-encoded identifier) → the fields it owns. */
export type ManagedFields = Map<string, VersionedSet>;

export interface Conflict {
  readonly manager: string;
  readonly path: Path;
}

/** An apply that would change fields other managers own. */
export class ApplyConflicts extends Error {
  constructor(readonly conflicts: readonly Conflict[]) {
    super(`${conflicts.length} conflict(s)`);
  }
}

/** An applied configuration or merge the schema rejects. */
export class ApplyValidationError extends Error {
  constructor(readonly errors: readonly ValidationError[]) {
    super(errors.length === 1 ? formatError(errors[0]!) : ['errors:', ...errors.map((e) => `  ${formatError(e)}`)].join('\n'));
  }
}

function formatError(e: ValidationError): string {
  return e.path ? `${e.path}: ${e.message}` : e.message;
}

export interface UpdaterOptions {
  /** The schema of the whole object. */
  readonly atom: Atom;
  /** This request's apiVersion. */
  readonly version: string;
  /** Fields the strategy resets (upstream's reset fields): never owned by this request's manager. */
  readonly ignore: FieldSet;
  /**
   * Other apiVersions of the same objects, each with its top-level fields whose names differ
   * (that version's name → this version's).
   */
  readonly equivalents?: readonly EquivalentFieldNames[];
}

/** Another apiVersion of the same objects and its top-level fields named differently (there → here). */
export interface EquivalentFieldNames {
  readonly apiVersion: string;
  readonly fieldNames: Readonly<Record<string, string>>;
}

/** The field names of `apiVersion` when it is equivalent to the request's, else undefined. */
function namesOf(opts: UpdaterOptions, apiVersion: string): Readonly<Record<string, string>> | undefined {
  return apiVersion === opts.version ? undefined : opts.equivalents?.find((e) => e.apiVersion === apiVersion)?.fieldNames;
}

/** `set` with its top-level field names renamed by `names` (the rest as it is). */
export function renameTopFields(set: FieldSet, names: Readonly<Record<string, string>>): FieldSet {
  const out = new FieldSet();
  set.iterate((path) => {
    const first = path[0];
    const renamed = first?.kind === 'field' ? names[first.name] : undefined;
    out.insert(renamed === undefined ? path : [fieldElement(renamed), ...path.slice(1)]);
  });
  return out;
}

function inverse(names: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(names).map(([from, to]) => [to, from]));
}

function filter(set: FieldSet, ignore: FieldSet): FieldSet {
  return ignore.empty() ? set : set.recursiveDifference(ignore);
}

function filterComparison(c: Comparison, ignore: FieldSet): Comparison {
  return { added: filter(c.added, ignore), modified: filter(c.modified, ignore), removed: filter(c.removed, ignore) };
}

/** The managers this request can compare with: its version's, and equivalent versions' in its names. */
function reconcile(managers: ManagedFields, opts: UpdaterOptions): ManagedFields {
  const out: ManagedFields = new Map();
  for (const [m, vs] of managers) {
    if (vs.apiVersion === opts.version) out.set(m, vs);
    else {
      const names = namesOf(opts, vs.apiVersion);
      if (names) out.set(m, { ...vs, set: renameTopFields(vs.set, names) });
    }
  }
  return out;
}

/** Managers of equivalent versions back in their own version's names. */
function restore(managers: ManagedFields, opts: UpdaterOptions): ManagedFields {
  for (const [m, vs] of managers) {
    const names = namesOf(opts, vs.apiVersion);
    if (names) managers.set(m, { ...vs, set: renameTopFields(vs.set, inverse(names)) });
  }
  return managers;
}

/**
 * Move ownership for a write from `oldObj` to `newObj` by `workflow`: others lose what changed
 * (a conflict unless `force`) and what was removed.
 */
function update(oldObj: unknown, newObj: unknown, managers: ManagedFields, workflow: string, force: boolean, opts: UpdaterOptions): Comparison {
  const compare = filterComparison(compareValues(oldObj, newObj, opts.atom), opts.ignore);
  const changed = compare.modified.union(compare.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [manager, vs] of managers) {
    if (manager === workflow) continue;
    const overlap = vs.set.intersection(changed);
    if (!overlap.empty()) conflicts.set(manager, overlap);
  }
  if (!force && conflicts.size > 0) {
    const list: Conflict[] = [];
    for (const manager of [...conflicts.keys()].sort()) conflicts.get(manager)!.iterate((path) => list.push({ manager, path }));
    throw new ApplyConflicts(list);
  }
  for (const [manager, vs] of [...managers]) {
    if (manager === workflow) continue;
    let set = vs.set;
    const lost = conflicts.get(manager);
    if (lost) set = set.difference(lost);
    if (!compare.removed.empty()) set = set.difference(compare.removed);
    if (set.empty()) managers.delete(manager);
    else managers.set(manager, { ...vs, set });
  }
  return compare;
}

/** Ownership after a non-apply write: the writer gains what it changed or added (upstream's Updater.Update). */
export function updateOwnership(live: unknown, next: unknown, managers: ManagedFields, manager: string, opts: UpdaterOptions): ManagedFields {
  const out = reconcile(managers, opts);
  const compare = update(live, next, out, manager, true, opts);
  const previous = out.get(manager)?.set ?? new FieldSet();
  const set = filter(previous.difference(compare.removed).union(compare.modified).union(compare.added), opts.ignore);
  if (set.empty()) out.delete(manager);
  else out.set(manager, { set, apiVersion: opts.version, applied: false });
  return restore(out, opts);
}

export interface ApplyOutcome {
  /** The merged object, or undefined when the apply changes nothing. */
  readonly object: unknown;
  readonly managers: ManagedFields;
}

/**
 * An apply of `config` onto `live` by `manager` (upstream's Updater.Apply): merge, give up the
 * fields the manager no longer applies (removing those nobody else owns), then check the
 * change against other owners.
 */
export function applyOwnership(live: unknown, config: unknown, managers: ManagedFields, manager: string, force: boolean, opts: UpdaterOptions): ApplyOutcome {
  const out = reconcile(managers, opts);
  const errors: ValidationError[] = [];
  const configSet = fieldSetOf(config, opts.atom, errors);
  if (errors.length > 0) throw new ApplyValidationError(errors);
  const mergeErrors: ValidationError[] = [];
  let merged = mergeValues(live, config, opts.atom, mergeErrors);
  if (mergeErrors.length > 0) throw new ApplyValidationError(mergeErrors);
  const lastSet = out.get(manager);
  const applied = filter(configSet, opts.ignore);
  out.set(manager, { set: applied, apiVersion: opts.version, applied: true });
  // A manager that still applies every path it applied last time gives up none: nothing to prune.
  if (!lastSet?.set.subsetOf(applied)) merged = prune(merged, out, manager, lastSet, opts.atom);
  update(live, merged, out, manager, force, opts);
  return { object: jsonEqual(live, merged) ? undefined : merged, managers: restore(out, opts) };
}

/**
 * Remove what `manager` applied last time, no longer applies, and nobody else owns (upstream's
 * prune, addBackOwnedItems and addBackDanglingItems).
 */
function prune(merged: unknown, managers: ManagedFields, _manager: string, lastSet: VersionedSet | undefined, atom: Atom): unknown {
  if (!lastSet || lastSet.set.empty()) return merged;
  const named = (s: FieldSet) => ensureNamedFieldsAreMembers(s, atom);
  const pruned1 = removeItems(merged, named(lastSet.set), atom);
  let managed = new FieldSet();
  for (const vs of managers.values()) managed = managed.union(vs.set);
  const mergedSet = named(fieldSetOf(merged, atom));
  const pruned1Set = named(fieldSetOf(pruned1, atom));
  const pruned2 = removeItems(merged, mergedSet.difference(pruned1Set.union(named(managed))), atom);
  const pruned2Set = named(fieldSetOf(pruned2, atom));
  return removeItems(merged, mergedSet.difference(pruned2Set).intersection(named(lastSet.set)), atom);
}
