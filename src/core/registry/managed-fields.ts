/**
 * The registry's view of field management: who the manager of a write is, which fields a
 * scope's strategy resets, and the managedFields of created objects. The ownership rules
 * themselves live in core/apply (server-side apply and its field manager), computed from the
 * schema's list/map/struct markers.
 */
import type { ApiObject, ManagedFieldsEntry } from '../api';
import { rfc3339 } from '../../clock';
import { type SchemaType, schemaRegistry } from '../../schema';
import { FieldSet, type FieldManagerScope, fieldElement, managedFieldsAfterUpdate } from '../apply';
import type { ResourceDefinition } from '../resources/definition';
import type { Naming } from '../../naming';
import { deepFreeze } from '../../util/frozen';
import { isPlainObject, jsonEqual } from '../../util/json-values';

export interface ManagerIdentity {
  manager: string;
  apiVersion: string;
  /** '' for the main resource, `status` or `scale` for subresources. */
  subresource: string;
}

/** upstream's FieldManagerMaxLength. */
const MAX_MANAGER_BYTES = 128;

/**
 * The manager of a write without `fieldManager`: the User-Agent up to its first `/`, without
 * unprintable characters, at most 128 bytes (upstream's prefixFromUserAgent); `unknown` when
 * nothing is left, as upstream names such managers.
 */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const text = userAgent ?? '';
  let manager = managersByUserAgent.get(text);
  if (manager === undefined) {
    // Clients send the same few User-Agents on every write.
    if (managersByUserAgent.size >= MAX_REMEMBERED_USER_AGENTS) managersByUserAgent.clear();
    managersByUserAgent.set(text, (manager = prefixOfUserAgent(text)));
  }
  return manager;
}

const MAX_REMEMBERED_USER_AGENTS = 256;
/** Shared by every server in the process: a pure memo of strings (the manager depends on the User-Agent alone). */
const managersByUserAgent = new Map<string, string>();

function prefixOfUserAgent(userAgent: string): string {
  const prefix = userAgent.split('/')[0] ?? '';
  let out = '';
  let bytes = 0;
  for (const ch of prefix) {
    if (/[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u.test(ch) || (ch !== ' ' && /\p{Zs}/u.test(ch))) continue;
    const n = Buffer.byteLength(ch);
    if (bytes + n > MAX_MANAGER_BYTES) break;
    out += ch;
    bytes += n;
  }
  return out || 'unknown';
}

function path(...names: string[]) {
  return names.map(fieldElement);
}

/**
 * Fields a scope's strategy resets, which its writers never own (upstream's GetResetFields):
 * the main resource of a type with `/status` resets `status`; `/status` resets `spec`, and for
 * pods also the metadata the kubelet may not change there.
 */
export function resetFields(def: Pick<ResourceDefinition, 'group' | 'kind' | 'status'>, subresource: string): FieldSet {
  if (subresource === '') {
    const reset = def.status ? FieldSet.of(path('status')) : new FieldSet();
    // A CertificateSigningRequest's spec is set once, at create: later writes own none of it.
    if (def.kind === 'CertificateSigningRequest') reset.insert(path('spec'));
    return reset;
  }
  if (subresource === 'approval') {
    const reset = FieldSet.of(path('spec'));
    reset.insert(path('status', 'certificate'));
    return reset;
  }
  if (subresource === 'status') {
    const reset = FieldSet.of(path('spec'));
    // The signer writes the certificate; the conditions of approval are /approval's.
    if (def.kind === 'CertificateSigningRequest') reset.insert(path('status', 'conditions'));
    if (def.group === '' && def.kind === 'Pod') {
      reset.insert(path('metadata', 'deletionTimestamp'));
      reset.insert(path('metadata', 'ownerReferences'));
    }
    return reset;
  }
  return new FieldSet();
}

/**
 * The schema type of a served kind, by its apiVersion and kind under the naming profile (the
 * core group's Event and the events group's share version and kind, not their type).
 */
export function schemaTypeOf(apiVersion: string, kind: string, naming: Naming): SchemaType | undefined {
  return schemaRegistry(naming).kind(apiVersion, kind)?.type;
}

/** kubectl's client-side apply annotation under a naming profile. */
export function lastAppliedAnnotation(naming: Naming): string {
  return naming.key('last-applied-configuration', 'kubectl');
}

/** The field manager's scope for a write of `def`'s kind at `apiVersion`. */
export function fieldManagerScope(
  def: ResourceDefinition,
  apiVersion: string,
  subresource: string,
  now: number,
  naming: Naming,
): FieldManagerScope | undefined {
  const type = def.applyType?.() ?? schemaTypeOf(apiVersion, def.kind, naming);
  if (!type) return undefined;
  return {
    type,
    apiVersion,
    kind: def.kind,
    subresource,
    ignore: resetFields(def, subresource),
    now: rfc3339(now),
    lastAppliedAnnotation: lastAppliedAnnotation(naming),
    equivalents: def.equivalentVersions,
  };
}

/**
 * The managedFields of `next` after a non-apply write by `who` (operation `Update`); `prev` is
 * the stored object, undefined on create. Types without a schema keep no managedFields. A create
 * is answered from `created`, the core's memo of created objects' shapes, when it is given.
 */
export function updateManagedFields(
  prev: ApiObject | undefined,
  next: ApiObject,
  who: ManagerIdentity,
  now: number,
  naming: Naming,
  created?: CreatedManagedFields,
  /** The kind's schema where the registry does not hold it (a custom resource's). */
  given?: SchemaType,
): ManagedFieldsEntry[] {
  if (created && prev === undefined && next.metadata?.managedFields === undefined && who.subresource === '')
    return created.entries(next, who, now, naming, given);
  return computeManagedFields(prev, next, who, now, naming, given);
}

function computeManagedFields(
  prev: ApiObject | undefined,
  next: ApiObject,
  who: ManagerIdentity,
  now: number,
  naming: Naming,
  given?: SchemaType,
): ManagedFieldsEntry[] {
  const type = given ?? schemaTypeOf(who.apiVersion, next.kind ?? '', naming);
  if (!type) return [];
  const hasStatus = who.subresource === '' && type.property.has('status') && type.property.has('spec');
  const scope: FieldManagerScope = {
    type,
    apiVersion: who.apiVersion,
    kind: next.kind ?? '',
    subresource: who.subresource,
    ignore: resetFields({ group: '', kind: next.kind ?? '', status: hasStatus ? { prepareForUpdate() {} } : undefined }, who.subresource),
    now: rfc3339(now),
  };
  return managedFieldsAfterUpdate(prev, next, who.manager, scope);
}

/**
 * The managedFields of a created object, remembered per shape. On create the writer owns every
 * field of the object except the stripped metadata (name, uid, creationTimestamp, generation,
 * resourceVersion, …) and the reset ones, so objects that differ only in those values (one
 * template created many times, the pods of a ReplicaSet) get the same field set; the schema
 * walk that finds it costs about ten JSON round trips of the object. The key is the object's
 * JSON with those values replaced by their types; only `time` differs between the answers.
 *
 * The shape last asked for is compared first, by walking the object against it (`hasShape`):
 * creates of one template come in runs, and a match there neither encodes the object nor hashes
 * the text for the table.
 *
 * One per core, filled by its own writes: the entries depend on the profile's schema, which
 * the key does not name, and one server's runs of creates are nothing to another's.
 */
export class CreatedManagedFields {
  /** Entries by manager, apiVersion and shape, the least recently used first. */
  private readonly shapes = new Map<string, ManagedFieldsEntry[]>();
  /** The shape last found, decoded from its JSON (what `hasShape` compares with). */
  private last: { value: Record<string, unknown>; manager: string; apiVersion: string; entries: ManagedFieldsEntry[] } | undefined;

  /** The managedFields of `next`, created by `who` at `now`. */
  entries(next: ApiObject, who: ManagerIdentity, now: number, naming: Naming, given?: SchemaType): ManagedFieldsEntry[] {
    let entries: ManagedFieldsEntry[] | undefined;
    const last = this.last;
    if (last && last.manager === who.manager && last.apiVersion === who.apiVersion && hasShape(next, last.value)) {
      entries = last.entries;
    } else {
      const shape = shapeOf(next);
      if (shape.length > MAX_REMEMBERED_SHAPE_CHARS) return computeManagedFields(undefined, next, who, now, naming, given);
      const key = `${who.manager}\n${who.apiVersion}\n${shape}`;
      entries = this.shapes.get(key);
      if (entries) {
        // Least recently used goes first: move the hit to the end.
        this.shapes.delete(key);
      } else {
        entries = computeManagedFields(undefined, next, who, now, naming, given).map((e) => deepFreeze(e.time === undefined ? e : { ...e, time: '' }));
        if (this.shapes.size >= MAX_REMEMBERED_SHAPES) this.shapes.delete(this.shapes.keys().next().value!);
      }
      this.shapes.set(key, entries);
      this.last = { value: JSON.parse(shape) as Record<string, unknown>, manager: who.manager, apiVersion: who.apiVersion, entries };
    }
    const time = rfc3339(now);
    return entries.map((e) => (e.time === undefined ? { ...e } : { ...e, time }));
  }
}

/**
 * The object's JSON with the varying metadata's values replaced by their types. Copies made by
 * loops, not spreads: JSON.stringify writes spread copies the slow way (6.2 against 4.5 µs for
 * a ReplicaSet).
 */
function shapeOf(next: ApiObject): string {
  const meta = (next.metadata ?? {}) as Record<string, unknown>;
  const metadata: Record<string, unknown> = {};
  for (const field in meta) metadata[field] = meta[field];
  for (const field of VARYING_METADATA) metadata[field] = typeof meta[field];
  const top: Record<string, unknown> = {};
  for (const field in next) top[field] = field === 'metadata' ? metadata : (next as Record<string, unknown>)[field];
  if (!('metadata' in top)) top.metadata = metadata;
  return JSON.stringify(top);
}

/**
 * Whether `next` has the shape whose JSON decoded to `shape`: every value equal to what its JSON
 * would decode to there, key order aside (the field set does not depend on it), the varying
 * metadata by type only. Anything that is not plain JSON (a class instance, a value JSON cannot
 * hold as it is) is no match, and the shape is then found by encoding.
 */
function hasShape(next: ApiObject, shape: Record<string, unknown>): boolean {
  const meta = next.metadata as Record<string, unknown> | undefined;
  const shapeMeta = shape.metadata;
  if (!isPlainObject(next) || !isPlainObject(meta) || !isPlainObject(shapeMeta)) return false;
  for (const field of VARYING_METADATA) if (shapeMeta[field] !== typeof meta[field]) return false;
  return sameMembers(next, shape, METADATA) && sameMembers(meta, shapeMeta, VARYING);
}

/** `value` equals `decoded`, a value JSON.parse gave, as JSON (objects by their keys, in any order). */
function sameJson(value: unknown, decoded: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value === decoded;
    case 'number':
      return Number.isFinite(value) && value === decoded;
    case 'object': {
      if (value === null) return decoded === null;
      if (typeof decoded !== 'object' || decoded === null) return false;
      if (Array.isArray(value)) {
        if (!Array.isArray(decoded) || decoded.length !== value.length) return false;
        for (let i = 0; i < value.length; i++) if (!sameJson(value[i], decoded[i])) return false;
        return true;
      }
      return !Array.isArray(decoded) && isPlainObject(value) && sameMembers(value, decoded as Record<string, unknown>);
    }
    default:
      return false;
  }
}

/**
 * The members of `value` equal those of `decoded` as JSON (undefined ones are not written), the
 * members `skip` names aside on both sides.
 */
function sameMembers(value: Record<string, unknown>, decoded: Record<string, unknown>, skip?: ReadonlySet<string>): boolean {
  let count = 0;
  for (const key in value) {
    if (skip?.has(key)) continue;
    const v = value[key];
    if (v === undefined) continue;
    count++;
    if (!Object.hasOwn(decoded, key) || !sameJson(v, decoded[key])) return false;
  }
  for (const key in decoded) if (!skip?.has(key)) count--;
  return count === 0;
}

/** Metadata whose values never reach a create's field set (upstream strips them from every set). */
const VARYING_METADATA = ['name', 'namespace', 'uid', 'creationTimestamp', 'generation', 'resourceVersion', 'selfLink'] as const;
const VARYING: ReadonlySet<string> = new Set(VARYING_METADATA);
/** What `hasShape` compares on its own at the top of an object. */
const METADATA: ReadonlySet<string> = new Set(['metadata']);
const MAX_REMEMBERED_SHAPES = 256;
const MAX_REMEMBERED_SHAPE_CHARS = 16 * 1024;

/** The members of two objects are equal as JSON (key order aside), the member `skip` names aside. */
function sameJsonBut(a: Record<string, unknown>, b: Record<string, unknown>, skip: string): boolean {
  let count = 0;
  for (const key in a) {
    if (key === skip || a[key] === undefined) continue;
    count++;
    if (!jsonEqual(a[key], b[key])) return false;
  }
  for (const key in b) if (key !== skip && b[key] !== undefined) count--;
  return count === 0;
}

/** Two lists of managedFields entries are the same but for their times. */
function sameButTimes(mine: readonly ManagedFieldsEntry[], stored: readonly ManagedFieldsEntry[]): boolean {
  for (let i = 0; i < mine.length; i++) {
    const a = mine[i]!;
    const b = stored[i]!;
    if (a !== b && !sameJsonBut(a as Record<string, unknown>, b as Record<string, unknown>, 'time')) return false;
  }
  return true;
}

/** Two objects are the same but for their managedFields. */
function sameButManagedFields(next: ApiObject, current: ApiObject): boolean {
  const a = next as Record<string, unknown>;
  const b = current as Record<string, unknown>;
  if (!sameJsonBut(a, b, 'metadata')) return false;
  return sameJsonBut((next.metadata ?? {}) as Record<string, unknown>, (current.metadata ?? {}) as Record<string, unknown>, 'managedFields');
}

/**
 * An update that changes nothing but managedFields timestamps keeps the stored ones, so that
 * it is no change at all (upstream's IgnoreManagedFieldsTimestampsTransformer).
 */
export function keepManagedFieldsTimes(next: ApiObject, current: ApiObject): void {
  const mine = next.metadata?.managedFields;
  const stored = current.metadata?.managedFields;
  if (!mine || !stored || mine.length === 0 || mine.length !== stored.length) return;
  if (mine.every((e, i) => e.time === stored[i]!.time)) return;
  if (!sameButTimes(mine, stored) || !sameButManagedFields(next, current)) return;
  next.metadata!.managedFields = stored;
}
