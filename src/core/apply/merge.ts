/**
 * Merging an applied configuration into a live object and removing fields from a value, as
 * upstream's structured-merge-diff does: granular maps and structs merge per key, map-lists
 * and sets per item (in the order upstream's merge produces), atomic values and leaves are
 * replaced by the configuration's value.
 */
import { type PathElement, elementString, fieldElement, serializeElement } from './fieldpath';
import { FieldSet } from './set';
import { type Atom, isObject, itemAtom, itemElement, memberAtom } from './typed';
import type { ValidationError } from './walk';

/** Merge `rhs` (the configuration) into `lhs` (the live value); undefined when neither has anything. */
export function mergeValues(lhs: unknown, rhs: unknown, atom: Atom, errors: ValidationError[] = []): unknown {
  return walkMerge(lhs, rhs, atom, [], errors);
}

function keepRhs(lhs: unknown, rhs: unknown): unknown {
  return rhs !== undefined ? rhs : lhs;
}

function walkMerge(lhs: unknown, rhs: unknown, atom: Atom, path: PathElement[], errors: ValidationError[]): unknown {
  if (lhs === undefined && rhs === undefined) return undefined;
  switch (atom.kind) {
    case 'scalar':
      return keepRhs(lhs, rhs);
    case 'list': {
      const l = Array.isArray(lhs) ? lhs : undefined;
      const r = Array.isArray(rhs) ? rhs : undefined;
      if ((lhs != null && !l) || (rhs != null && !r)) return keepRhs(lhs, rhs);
      if (atom.listType === 'atomic' || ((l ?? []).length === 0 && (r ?? []).length === 0)) return keepRhs(lhs, rhs);
      return mergeListItems(l ?? [], r ?? [], atom, path, errors);
    }
    case 'struct':
    case 'map': {
      const l = isObject(lhs) ? lhs : undefined;
      const r = isObject(rhs) ? rhs : undefined;
      if ((lhs != null && !l) || (rhs != null && !r)) return keepRhs(lhs, rhs);
      const empty = (l === undefined || Object.keys(l).length === 0) && (r === undefined || Object.keys(r).length === 0);
      if (atom.atomic || empty) return keepRhs(lhs, rhs);
      const out: Record<string, unknown> = {};
      const keys = new Set([...Object.keys(l ?? {}), ...Object.keys(r ?? {})]);
      for (const key of keys) {
        const childAtom = memberAtom(atom, key) ?? { kind: 'scalar' };
        const v = walkMerge(l?.[key], r?.[key], childAtom, [...path, fieldElement(key)], errors);
        if (v !== undefined) out[key] = v;
      }
      return Object.keys(out).length > 0 ? out : undefined;
    }
  }
}

interface Observed {
  readonly pes: PathElement[];
  readonly keys: string[];
  readonly byKey: Map<string, unknown>;
}

function observe(items: unknown[], atom: Atom & { kind: 'list' }, allowDuplicates: boolean, path: PathElement[], errors: ValidationError[]): Observed {
  const obs: Observed = { pes: [], keys: [], byKey: new Map() };
  items.forEach((item, i) => {
    let pe: PathElement;
    try {
      pe = itemElement(atom, item);
    } catch (err) {
      errors.push({ path: path.map(elementString).join(''), message: `element ${i}: ${(err as Error).message}` });
      return;
    }
    const key = serializeElement(pe);
    if (obs.byKey.has(key)) {
      if (!allowDuplicates) {
        errors.push({ path: path.map(elementString).join(''), message: `duplicate entries for key ${elementString(pe)}` });
        return;
      }
      // Duplicated live items are not merged with the configuration's item.
      obs.byKey.set(key, null);
    } else obs.byKey.set(key, item);
    obs.pes.push(pe);
    obs.keys.push(key);
  });
  return obs;
}

/**
 * Merge two map-lists or sets. Items keep the live order; the configuration's items take the
 * order the configuration gives among the items both sides share (upstream's visitListItems).
 */
function mergeListItems(lhs: unknown[], rhs: unknown[], atom: Atom & { kind: 'list' }, path: PathElement[], errors: ValidationError[]): unknown {
  const right = observe(rhs, atom, false, path, errors);
  const left = observe(lhs, atom, true, path, errors);
  const child = itemAtom(atom);
  const out: unknown[] = [];
  const mergeItem = (pe: PathElement, l: unknown, r: unknown) => {
    const v = walkMerge(l, r, child, [...path, pe], errors);
    if (v !== undefined) out.push(v);
  };
  const shared = right.keys.filter((k) => left.byKey.has(k));
  let nextShared = shared.shift();
  const mergedRight = new Set<string>();
  let li = 0;
  let ri = 0;
  while (li < left.keys.length || ri < right.keys.length) {
    if (li < left.keys.length && ri < right.keys.length) {
      const key = left.keys[li]!;
      if (key === right.keys[ri]) {
        mergedRight.add(key);
        mergeItem(left.pes[li]!, left.byKey.get(key), right.byKey.get(key));
        li++;
        ri++;
        nextShared = shared.shift();
        continue;
      }
      if (right.byKey.has(key) && nextShared !== undefined && nextShared !== key) {
        li++;
        continue;
      }
    }
    if (li < left.keys.length) {
      const key = left.keys[li]!;
      if (!right.byKey.has(key)) {
        // Take the live item itself: a duplicated key keeps each of its items.
        mergeItem(left.pes[li]!, lhs[li], undefined);
        li++;
        continue;
      } else if (mergedRight.has(key)) {
        li++;
      }
    }
    if (ri < right.keys.length) {
      const key = right.keys[ri]!;
      mergedRight.add(key);
      mergeItem(right.pes[ri]!, left.byKey.get(key), right.byKey.get(key));
      ri++;
      if (nextShared !== undefined && nextShared === key) nextShared = shared.shift();
    }
  }
  return out.length > 0 ? out : undefined;
}

/**
 * `value` without the paths of `toRemove` (upstream's RemoveItems): a removed struct field or
 * map entry disappears, a removed list item is dropped, and a map or list left with nothing
 * becomes `null`.
 */
export function removeItems(value: unknown, toRemove: FieldSet, atom: Atom): unknown {
  const out = walkRemove(value, toRemove, atom);
  return out === undefined ? null : out;
}

function walkRemove(value: unknown, toRemove: FieldSet, atom: Atom): unknown {
  switch (atom.kind) {
    case 'scalar':
      return value;
    case 'list': {
      if (!Array.isArray(value) || value.length === 0 || atom.listType === 'atomic') return undefined;
      const items: unknown[] = [];
      for (const item of value) {
        let pe: PathElement | undefined;
        try {
          pe = itemElement(atom, item);
        } catch {
          pe = undefined;
        }
        if (pe && toRemove.hasMember(pe)) continue;
        const subset = pe ? toRemove.withPrefix(pe) : new FieldSet();
        items.push(subset.empty() ? item : (walkRemove(item, subset, itemAtom(atom)) ?? null));
      }
      return items.length > 0 ? items : undefined;
    }
    case 'struct':
    case 'map': {
      if (!isObject(value) || Object.keys(value).length === 0 || atom.atomic) return undefined;
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value)) {
        const pe = fieldElement(key);
        if (toRemove.hasMember(pe)) continue;
        const subset = toRemove.withPrefix(pe);
        out[key] = subset.empty() ? v : (walkRemove(v, subset, memberAtom(atom, key) ?? { kind: 'scalar' }) ?? null);
      }
      return Object.keys(out).length > 0 ? out : undefined;
    }
  }
}

/**
 * The set with every struct field that has paths below it also a member (upstream's
 * EnsureNamedFieldsAreMembers): removing such a set removes those fields whole.
 */
export function ensureNamedFieldsAreMembers(set: FieldSet, atom: Atom | undefined): FieldSet {
  const out = new FieldSet();
  for (const [k, pe] of set.members) out.members.set(k, pe);
  for (const [k, c] of set.children) {
    let childAtom: Atom | undefined;
    if (c.pe.kind === 'field' && atom && (atom.kind === 'struct' || atom.kind === 'map')) {
      childAtom = memberAtom(atom, c.pe.name);
      if (atom.kind === 'struct' && childAtom) out.members.set(k, c.pe);
    } else if (c.pe.kind === 'key' && atom?.kind === 'list') {
      childAtom = itemAtom(atom);
    }
    out.children.set(k, { pe: c.pe, set: ensureNamedFieldsAreMembers(c.set, childAtom) });
  }
  return out;
}
