/**
 * Sets of field paths, stored as a tree: at each level the elements that are themselves in the
 * set (members) and the elements below which more paths are (children). The operations and
 * the FieldsV1 encoding follow upstream's structured-merge-diff: a member with children is
 * written as `".": {}` inside its own object, a member without children as `{}`, keys in
 * upstream's element order (docs/API.md, "Field managers and server-side apply").
 */
import { type Path, type PathElement, compareElements, parseElement, serializeElement } from './fieldpath';
import { isFrozen } from '../../util/frozen';

interface Child {
  readonly pe: PathElement;
  set: FieldSet;
}

export class FieldSet {
  /** Keyed by the element's serialized form, which identifies it. */
  readonly members = new Map<string, PathElement>();
  readonly children = new Map<string, Child>();
  /**
   * Set once the set may be shared: read from a FieldsV1 object, or an operand or a result of an
   * operation (which share children, see below). Changing it then throws: the field sets of the
   * watch cache's objects are read once and shared by every update.
   */
  private shared = false;

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  insert(path: Path): void {
    this.assertUnshared();
    if (path.length === 0) return;
    let node: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) node = node.descend(path[i]!);
    const last = path[path.length - 1]!;
    node.members.set(serializeElement(last), last);
  }

  /** The child set under `pe`, created when missing. */
  descend(pe: PathElement): FieldSet {
    this.assertUnshared();
    const key = serializeElement(pe);
    let child = this.children.get(key);
    if (!child) {
      child = { pe, set: new FieldSet() };
      this.children.set(key, child);
    }
    return child.set;
  }

  private assertUnshared(): void {
    if (this.shared) throw new Error('a field set was changed after it was shared');
  }

  /** `sets`, and this one, may be shared from now on: none changes any more. */
  private share(...sets: FieldSet[]): this {
    this.shared = true;
    for (const s of sets) s.shared = true;
    return this;
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    let node: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && node; i++) node = node.children.get(serializeElement(path[i]!))?.set;
    return node?.members.has(serializeElement(path[path.length - 1]!)) ?? false;
  }

  hasMember(pe: PathElement): boolean {
    return this.members.has(serializeElement(pe));
  }

  /** The paths below `pe` (relative to it); empty when none. */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(serializeElement(pe))?.set ?? new FieldSet();
  }

  empty(): boolean {
    if (this.members.size > 0) return false;
    for (const c of this.children.values()) if (!c.set.empty()) return false;
    return true;
  }

  size(): number {
    let n = this.members.size;
    for (const c of this.children.values()) n += c.set.size();
    return n;
  }

  /** Whether every path of this set is one of `other`'s. */
  subsetOf(other: FieldSet): boolean {
    if (this === other) return true;
    for (const k of this.members.keys()) if (!other.members.has(k)) return false;
    for (const [k, c] of this.children) {
      const theirs = other.children.get(k);
      if (theirs ? !c.set.subsetOf(theirs.set) : !c.set.empty()) return false;
    }
    return true;
  }

  /*
   * The operations below return a new set, or one of their operands where the result has the
   * same paths, and a new set shares the child sets it takes over unchanged: no set is changed
   * once made (`insert` and `descend` run only on sets being built), so sharing is safe. An
   * update that leaves a manager's paths as they were thus hands back the set read from its
   * FieldsV1, which writes that same object again (`toFieldsV1`).
   */

  union(other: FieldSet): FieldSet {
    this.share(other);
    if (other.subsetOf(this)) return this;
    if (this.subsetOf(other)) return other;
    const out = new FieldSet();
    for (const [k, pe] of this.members) out.members.set(k, pe);
    for (const [k, pe] of other.members) out.members.set(k, pe);
    for (const [k, c] of this.children) out.children.set(k, { pe: c.pe, set: c.set });
    for (const [k, c] of other.children) {
      const mine = out.children.get(k);
      out.children.set(k, { pe: c.pe, set: mine ? mine.set.union(c.set) : c.set });
    }
    return out.share();
  }

  intersection(other: FieldSet): FieldSet {
    this.share(other);
    const out = new FieldSet();
    for (const [k, pe] of this.members) if (other.members.has(k)) out.members.set(k, pe);
    for (const [k, c] of this.children) {
      const theirs = other.children.get(k);
      if (!theirs) continue;
      const inter = c.set.intersection(theirs.set);
      if (!inter.empty()) out.children.set(k, { pe: c.pe, set: inter });
    }
    return out.share();
  }

  /** Paths of this set that are not paths of `other` (children compared path by path). */
  difference(other: FieldSet): FieldSet {
    return this.without(other, false);
  }

  /** Like difference, but a member of `other` also removes every path below it. */
  recursiveDifference(other: FieldSet): FieldSet {
    return this.without(other, true);
  }

  private without(other: FieldSet, recursive: boolean): FieldSet {
    this.share(other);
    if (other.members.size === 0 && other.children.size === 0) return this;
    let same = true;
    const out = new FieldSet();
    for (const [k, pe] of this.members) {
      if (!other.members.has(k)) out.members.set(k, pe);
      else same = false;
    }
    for (const [k, c] of this.children) {
      if (recursive && other.members.has(k)) {
        same = false;
        continue;
      }
      const theirs = other.children.get(k);
      const diff = theirs ? c.set.without(theirs.set, recursive) : c.set;
      if (diff !== c.set) same = false;
      if (!diff.empty()) out.children.set(k, { pe: c.pe, set: diff });
      else if (!c.set.empty()) same = false;
    }
    return same ? this : out.share();
  }

  /** Every path, in upstream's order (members and children interleaved by element order). */
  iterate(fn: (path: Path) => void, prefix: PathElement[] = []): void {
    for (const { pe, isMember, child } of this.sortedEntries()) {
      if (isMember) fn([...prefix, pe]);
      if (child) child.iterate(fn, [...prefix, pe]);
    }
  }

  paths(): Path[] {
    const out: Path[] = [];
    this.iterate((p) => out.push(p));
    return out;
  }

  equals(other: FieldSet): boolean {
    return this.subsetOf(other) && other.subsetOf(this);
  }

  private sortedEntries(): { pe: PathElement; isMember: boolean; child?: FieldSet }[] {
    const entries = new Map<string, { pe: PathElement; isMember: boolean; child?: FieldSet }>();
    for (const [k, pe] of this.members) entries.set(k, { pe, isMember: true });
    for (const [k, c] of this.children) {
      if (c.set.empty()) continue;
      const e = entries.get(k);
      if (e) e.child = c.set;
      else entries.set(k, { pe: c.pe, isMember: false, child: c.set });
    }
    return [...entries.values()].sort((a, b) => compareElements(a.pe, b.pe));
  }

  /** The FieldsV1 object: keys in upstream's order, `"."` first inside a member that has children. */
  toFieldsV1(): Record<string, unknown> {
    return readFrom.get(this) ?? this.emit(false);
  }

  private emit(includeSelf: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const entries = this.sortedEntries();
    if (includeSelf && entries.length > 0) out['.'] = {};
    for (const { pe, isMember, child } of entries) {
      out[serializeElement(pe)] = child ? child.emit(isMember) : {};
    }
    return out;
  }

  /** Read a FieldsV1 object; element prefixes this version does not know are dropped, as upstream does. */
  static fromFieldsV1(fields: unknown): FieldSet {
    const set = new FieldSet();
    if (fields === null || fields === undefined) return set;
    if (typeof fields !== 'object' || Array.isArray(fields)) throw new TypeError('FieldsV1 must be an object');
    // A Frozen set (util/frozen.ts) cannot change: its reading is kept.
    const frozen = isFrozen(fields);
    if (frozen) {
      const known = readSets.get(fields);
      if (known) return known;
    }
    read(fields as Record<string, unknown>, set);
    set.share();
    if (frozen) {
      readSets.set(fields, set);
      readFrom.set(set, fields as Record<string, unknown>);
    }
    return set;
  }
}

/**
 * The watch cache's field sets are frozen and shared by every object written alike
 * (cached-object.ts), and every update reads its object's: each is read once. Sets are never
 * changed once made (every operation returns a new one), so one read serves every update.
 * Shared by every server in the process, for the same reason.
 */
const readSets = new WeakMap<object, FieldSet>();
/**
 * The frozen FieldsV1 a set was read from, which is also what it writes (the server stores
 * field sets only as it writes them): a manager an update leaves alone keeps its entry's object.
 * Shared by every server in the process: keyed by sets, which never change.
 */
const readFrom = new WeakMap<FieldSet, Record<string, unknown>>();

/** Fill `into` from a FieldsV1 object; returns whether the object marks its owner as a member. */
function read(obj: Record<string, unknown>, into: FieldSet): boolean {
  let self = false;
  let any = false;
  for (const [key, value] of Object.entries(obj)) {
    if (key === '.') {
      self = true;
      continue;
    }
    const pe = parseElement(key);
    if (!pe) continue;
    any = true;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new TypeError(`FieldsV1 value of ${key} must be an object`);
    const child = new FieldSet();
    const childIsMember = read(value as Record<string, unknown>, child);
    if (childIsMember) into.members.set(serializeElement(pe), pe);
    if (!child.empty()) into.children.set(serializeElement(pe), { pe, set: child });
  }
  return self || !any;
}
