/**
 * The one table of what a type serves: its main resource and each subresource, with the verbs
 * each takes. The gateway's routing and discovery and the core's own check (which the gRPC
 * door relies on) all read it, so a verb cannot be served by one door and refused by another.
 */
import { ALL_VERBS, type GroupVersionKind, type ResourceDefinition, type Verb } from './definition';

export type { GroupVersionKind } from './definition';

/** A subresource of a type, as routing and discovery see it. */
export interface SubresourceInfo {
  name: string;
  /** In name order, as upstream's discovery lists them. */
  verbs: readonly Verb[];
  /** What the subresource returns when it is not the parent's kind (scale: autoscaling/v1 Scale). */
  responseKind?: GroupVersionKind;
}

/** The scale subresource answers with autoscaling/v1 Scale, upstream's only Scale version. */
export const SCALE_KIND: GroupVersionKind = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

/** `/status`, `/scale` and `/approval` take get, patch and update (upstream's status, scale and approval REST storage). */
const READ_WRITE: readonly Verb[] = ['get', 'patch', 'update'];
/** `/finalize` takes only update (upstream's namespace finalize REST). */
const UPDATE_ONLY: readonly Verb[] = ['update'];
/** Create-only subresources (serviceaccounts/token). */
const CREATE_ONLY: readonly Verb[] = ['create'];

/** The verbs a type serves on its main resource, in name order: its own list, or all of them. */
export function verbsOf(def: Pick<ResourceDefinition, 'verbs'>): readonly Verb[] {
  const own = def.verbs ?? ALL_VERBS;
  let sorted = sortedVerbs.get(own);
  if (!sorted) sortedVerbs.set(own, (sorted = Object.freeze([...own].sort())));
  return sorted;
}

/** verbsOf's answers by the list they sort: every request routes through them. Shared by every server in the process: a pure memo. */
const sortedVerbs = new WeakMap<readonly Verb[], readonly Verb[]>();

/** The subresources a type serves, in name order. */
export function subresourcesOf(def: ResourceDefinition): readonly SubresourceInfo[] {
  let subs = subresourcesByType.get(def);
  if (!subs) subresourcesByType.set(def, (subs = Object.freeze(listSubresources(def))));
  return subs;
}

/** Shared by every server in the process: a pure memo keyed by definitions, which never change. */
const subresourcesByType = new WeakMap<ResourceDefinition, readonly SubresourceInfo[]>();

function listSubresources(def: ResourceDefinition): SubresourceInfo[] {
  const subs: SubresourceInfo[] = [];
  if (def.finalize) subs.push({ name: 'finalize', verbs: UPDATE_ONLY });
  if (def.approval) subs.push({ name: 'approval', verbs: READ_WRITE });
  if (def.scale) subs.push({ name: 'scale', verbs: READ_WRITE, responseKind: SCALE_KIND });
  if (def.status) subs.push({ name: 'status', verbs: READ_WRITE });
  for (const sub of def.createSubresources ?? []) subs.push({ name: sub.name, verbs: CREATE_ONLY, responseKind: sub.kind });
  return subs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The verbs served at `subresource` ('' for the main resource), or undefined when the type has
 * no such subresource.
 */
export function verbsAt(def: ResourceDefinition, subresource: string): readonly Verb[] | undefined {
  if (subresource === '') return verbsOf(def);
  return subresourcesOf(def).find((s) => s.name === subresource)?.verbs;
}
