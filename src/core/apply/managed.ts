/**
 * managedFields entries as stored in objects, and the ownership they encode. A manager is
 * identified as upstream identifies it: the JSON of its entry without time, fieldsType and
 * fieldsV1 (and without apiVersion for appliers, so an applier keeps one entry whatever version
 * it applies). Entries are written sorted as upstream sorts them: `Apply` before `Update`, then
 * by time, manager, apiVersion and subresource.
 */
import type { ManagedFieldsEntry } from '../api';
import { goJsonString } from '../../codecs/go-strings';
import { compareGoStrings } from '../../codecs/go-strings';
import { FieldSet } from './set';
import type { ManagedFields } from './updater';

export interface Managed {
  readonly fields: ManagedFields;
  /** When each manager last changed something; undefined when unknown. */
  readonly times: Map<string, string | undefined>;
}

export function emptyManaged(): Managed {
  return { fields: new Map(), times: new Map() };
}

export class ManagedFieldsError extends Error {}

interface Identity {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  subresource?: string;
}

/** upstream's BuildManagerIdentifier: the entry's JSON (Go field order, omitempty) minus time and fields. */
export function managerIdentity(entry: Identity): string {
  const parts: string[] = [];
  if (entry.manager) parts.push(`"manager":${goJsonString(entry.manager)}`);
  if (entry.operation) parts.push(`"operation":${goJsonString(entry.operation)}`);
  if (entry.apiVersion && entry.operation !== 'Apply') parts.push(`"apiVersion":${goJsonString(entry.apiVersion)}`);
  if (entry.subresource) parts.push(`"subresource":${goJsonString(entry.subresource)}`);
  return `{${parts.join(',')}}`;
}

/** The entry fields an identity holds. */
export function identityFields(identity: string): Identity {
  try {
    const parsed = JSON.parse(identity) as Identity;
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}

/** Decode entries; throws ManagedFieldsError on an entry upstream would refuse. */
export function decodeManaged(entries: readonly ManagedFieldsEntry[] | undefined): Managed {
  const managed = emptyManaged();
  (entries ?? []).forEach((entry, i) => {
    if (entry === null || typeof entry !== 'object') throw new ManagedFieldsError(`managed fields entry ${i} is not an object`);
    if (entry.operation !== 'Apply' && entry.operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    if (!entry.apiVersion) throw new ManagedFieldsError('apiVersion must not be empty');
    if (entry.fieldsType === undefined || (entry.fieldsType as string) === '') throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (entry.fieldsType !== 'FieldsV1') throw new ManagedFieldsError(`invalid fieldsType "${String(entry.fieldsType)}" in managed fields entry ${i}`);
    const id = managerIdentity(entry);
    let set: FieldSet;
    try {
      set = FieldSet.fromFieldsV1(entry.fieldsV1 ?? {});
    } catch (err) {
      throw new ManagedFieldsError(`error decoding versioned set: ${(err as Error).message}`);
    }
    managed.fields.set(id, { set, apiVersion: entry.apiVersion, applied: entry.operation === 'Apply' });
    managed.times.set(id, entry.time);
  });
  return managed;
}

function seconds(time: string | undefined): number {
  if (!time) return 0;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/** Encode ownership into entries, in upstream's order; empty when nobody owns anything. */
export function encodeManaged(managed: Managed): ManagedFieldsEntry[] {
  const entries: ManagedFieldsEntry[] = [];
  for (const [id, vs] of managed.fields) {
    const who = identityFields(id);
    const entry: ManagedFieldsEntry = { manager: who.manager ?? '' };
    if (!entry.manager) delete entry.manager;
    entry.operation = vs.applied ? 'Apply' : ((who.operation as 'Update' | undefined) ?? 'Update');
    entry.apiVersion = vs.apiVersion;
    const time = managed.times.get(id);
    if (time) entry.time = time;
    entry.fieldsType = 'FieldsV1';
    entry.fieldsV1 = vs.set.toFieldsV1();
    if (who.subresource) entry.subresource = who.subresource;
    entries.push(entry);
  }
  return entries.sort((p, q) => {
    if (p.operation !== q.operation) return compareGoStrings(p.operation ?? '', q.operation ?? '');
    const ps = seconds(p.time);
    const qs = seconds(q.time);
    if (ps !== qs) return ps - qs;
    return (
      compareGoStrings(p.manager ?? '', q.manager ?? '') ||
      compareGoStrings(p.apiVersion ?? '', q.apiVersion ?? '') ||
      compareGoStrings(p.subresource ?? '', q.subresource ?? '')
    );
  });
}

/**
 * A list of one entry with nothing in it (`[{}]`) asks to reset managedFields (docs/API.md,
 * "Clearing managedFields"). An empty list does not: the stored entries are kept for it, so that
 * clients that drop the field never clear it.
 */
export function isResetRequest(entries: unknown): boolean {
  if (!Array.isArray(entries) || entries.length !== 1) return false;
  const e = entries[0] as Record<string, unknown> | null;
  if (e === null || typeof e !== 'object' || Array.isArray(e)) return false;
  return Object.values(e).every((v) => v === null || v === undefined || v === '');
}

/** Field paths upstream never records as owned (its stripMeta manager). */
export const STRIPPED_FIELDS: FieldSet = FieldSet.of(
  ...[['apiVersion'], ['kind'], ['metadata']].map((p) => p.map((name) => ({ kind: 'field' as const, name }))),
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((name) => [
    { kind: 'field' as const, name: 'metadata' },
    { kind: 'field' as const, name },
  ]),
);

/** upstream's DefaultMaxUpdateManagers: older update entries are merged into `ancient-changes`. */
const MAX_UPDATE_MANAGERS = 10;

/** Merge the oldest update entries into per-version `ancient-changes` buckets (upstream's capManagersManager). */
export function capUpdateManagers(managed: Managed): void {
  const updaters = [...managed.fields].filter(([, vs]) => !vs.applied).map(([id]) => id);
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  updaters.sort((a, b) => seconds(managed.times.get(a)) - seconds(managed.times.get(b)) || (a < b ? -1 : a > b ? 1 : 0));
  const firstByVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > MAX_UPDATE_MANAGERS; i++) {
    const id = updaters[i]!;
    const vs = managed.fields.get(id)!;
    const time = managed.times.get(id);
    const bucket = managerIdentity({ manager: 'ancient-changes', operation: 'Update', apiVersion: vs.apiVersion });
    const first = firstByVersion.get(vs.apiVersion);
    if (first === undefined) {
      firstByVersion.set(vs.apiVersion, id);
      continue;
    }
    if (!managed.fields.has(bucket)) {
      managed.fields.set(bucket, managed.fields.get(first)!);
      managed.fields.delete(first);
    }
    managed.fields.set(bucket, { ...vs, set: vs.set.union(managed.fields.get(bucket)!.set) });
    managed.fields.delete(id);
    length--;
    managed.times.set(bucket, time);
  }
}
