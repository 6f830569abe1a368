/**
 * Walks over typed values, as upstream's structured-merge-diff does them: the field set of a
 * value (with the validation an applied configuration must pass) and the comparison of two
 * values into added, modified and removed fields. Absent values are `undefined`; JSON `null`
 * is a value. Lists and maps that are atomic, or empty on both sides, are compared as leaves.
 */
import { type PathElement, elementString, fieldElement, serializeElement } from './fieldpath';
import { FieldSet } from './set';
import { type Atom, ItemKeyError, isObject, itemAtom, itemElement, jsonEqual, memberAtom } from './typed';
import { goPrint, goType } from '../../codecs/go-values';

/** A validation error of an applied configuration: the path as upstream prints it, and the message. */
export interface ValidationError {
  readonly path: string;
  readonly message: string;
}

function pathText(path: readonly PathElement[]): string {
  return path.map(elementString).join('');
}

/** Go's `%v` of one of upstream's unstructured values (a pointer to the value). */
function goV(value: unknown): string {
  return `&{${goPrint(value)}}`;
}

/** Go's `%#v` of the same. */
function goSharpV(value: unknown): string {
  const sharp = (v: unknown): string => {
    if (v === null || v === undefined) return 'interface {}(nil)';
    if (typeof v === 'string') return JSON.stringify(v);
    if (Array.isArray(v)) return `[]interface {}{${v.map(sharp).join(', ')}}`;
    if (isObject(v))
      return `map[string]interface {}{${Object.keys(v)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${sharp(v[k])}`)
        .join(', ')}}`;
    return String(v);
  };
  return `&value.valueUnstructured{Value:${sharp(value)}}`;
}

/** upstream's validateScalar messages. */
function scalarError(atom: Atom & { kind: 'scalar' }, value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  switch (atom.scalar ?? 'any') {
    case 'numeric':
      return typeof value === 'number' ? undefined : `expected numeric (int or float), got ${goType(value)}`;
    case 'string':
      return typeof value === 'string' ? undefined : `expected string, got ${goSharpV(value)}`;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `expected boolean, got ${goV(value)}`;
    case 'untyped':
      return typeof value === 'object' ? `expected any scalar, got ${goV(value)}` : undefined;
    case 'any':
      return undefined;
  }
}

/**
 * The set of fields a value sets (upstream's ToFieldSet). With `errors`, also checks the value
 * against the schema and reports what upstream's typed conversion rejects: undeclared fields,
 * values of the wrong shape, list items without their keys and duplicate items.
 */
export function fieldSetOf(value: unknown, atom: Atom, errors?: ValidationError[]): FieldSet {
  const set = new FieldSet();
  walkSet(value, atom, [], new SetCursor(set), errors);
  return set;
}

/**
 * Where a walk is in the set it builds: the node holding the paths below the walk's path, made
 * when the first path below is added, and its parent's, where the path itself is added. An
 * insert is then one step, not a walk down from the root for every path.
 */
class SetCursor {
  private node: FieldSet | undefined;

  constructor(
    root: FieldSet | undefined,
    private readonly parent?: SetCursor,
    private readonly pe?: PathElement,
  ) {
    this.node = root;
  }

  /** Add the walk's path itself to the set (nothing at the root, as `insert([])`). */
  add(): void {
    if (this.parent) this.parent.below().members.set(serializeElement(this.pe!), this.pe!);
  }

  /** The node of the paths below this one. */
  below(): FieldSet {
    return (this.node ??= this.parent!.below().descend(this.pe!));
  }

  child(pe: PathElement): SetCursor {
    return new SetCursor(undefined, this, pe);
  }
}

/** `at` is the cursor of `path`; `path` is pushed and popped as the walk goes (error messages read it). */
function walkSet(value: unknown, atom: Atom, path: PathElement[], at: SetCursor, errors: ValidationError[] | undefined): void {
  const fail = (message: string, where: readonly PathElement[] = path) => errors?.push({ path: pathText(where), message });
  switch (atom.kind) {
    case 'scalar': {
      const err = errors ? scalarError(atom, value) : undefined;
      if (err) fail(err);
      at.add();
      return;
    }
    case 'list': {
      if (value !== null && !Array.isArray(value)) return void fail(`expected list, got ${goV(value)}`);
      if (atom.listType === 'atomic') return at.add();
      if (value === null) return;
      const items = value as unknown[];
      const pes: (PathElement | undefined)[] = items.map((item, i) => {
        try {
          return itemElement(atom, item);
        } catch (err) {
          if (err instanceof ItemKeyError) fail(`element ${i}: ${err.message}`);
          return undefined;
        }
      });
      const keys = pes.map((pe) => (pe ? serializeElement(pe) : undefined));
      const seen = new Set<string>();
      const duplicates = new Set<string>();
      for (let i = 0; i < pes.length; i++) {
        const pe = pes[i];
        const key = keys[i];
        if (!pe || key === undefined) continue;
        if (seen.has(key)) {
          if (!duplicates.has(key)) {
            at.child(pe).add();
            duplicates.add(key);
            fail(`duplicate entries for key ${elementString(pe)}`);
          }
        } else seen.add(key);
      }
      const item = itemAtom(atom);
      for (let i = 0; i < items.length; i++) {
        const pe = pes[i];
        if (!pe || duplicates.has(keys[i]!)) continue;
        const child = at.child(pe);
        path.push(pe);
        walkSet(items[i], item, path, child, errors);
        path.pop();
        child.add();
      }
      return;
    }
    case 'struct':
    case 'map': {
      if (value !== null && !isObject(value)) return void fail(`expected map, got ${goV(value)}`);
      if (atom.atomic) return at.add();
      if (value === null) return;
      const members = value as Record<string, unknown>;
      for (const key of Object.keys(members)) {
        const child = members[key];
        if (child === undefined) continue;
        const childAtom = memberAtom(atom, key);
        const pe = atom.kind === 'struct' && childAtom ? structFieldElement(key) : fieldElement(key);
        if (!childAtom) {
          // upstream stops looking at a map at its first undeclared field.
          fail('field not declared in schema', [...path, pe]);
          if (errors) break;
          continue;
        }
        const cursor = at.child(pe);
        path.push(pe);
        walkSet(child, childAtom, path, cursor, errors);
        path.pop();
        if (child === null || (isObject(child) && isEmptyObject(child)) || atom.kind === 'map') cursor.add();
      }
      return;
    }
  }
}

export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

/** Compare two values of one type (upstream's TypedValue.Compare); both may be absent at any depth. */
export function compareValues(lhs: unknown, rhs: unknown, atom: Atom): Comparison {
  const cmp: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  walkCompare(lhs, rhs, atom, [], cmp);
  return cmp;
}

/** Struct field names' path elements, made once (a set keeps the elements it is given; none changes them). Shared by every server in the process. */
const fieldElements = new Map<string, PathElement>();

function structFieldElement(name: string): PathElement {
  let pe = fieldElements.get(name);
  if (pe === undefined) fieldElements.set(name, (pe = fieldElement(name)));
  return pe;
}

/**
 * `path` is where the walk is, one array pushed and popped as it goes (sets copy what they
 * keep of a path when it is inserted).
 */
function walkCompare(lhs: unknown, rhs: unknown, atom: Atom, path: PathElement[], cmp: Comparison): void {
  // One value on both sides (absent, or a part a merge kept by reference) has no difference below it.
  if (lhs === rhs) return;
  let inLeaf = false;
  const leaf = () => {
    inLeaf = true;
    if (lhs === undefined) cmp.added.insert(path);
    else if (rhs === undefined) cmp.removed.insert(path);
    else if (!jsonEqual(lhs, rhs)) cmp.modified.insert(path);
  };
  switch (atom.kind) {
    case 'scalar':
      leaf();
      break;
    case 'list': {
      const l = Array.isArray(lhs) ? lhs : undefined;
      const r = Array.isArray(rhs) ? rhs : undefined;
      const badShape = (lhs != null && !l) || (rhs != null && !r);
      if (atom.listType === 'atomic' || badShape || ((l ?? []).length === 0 && (r ?? []).length === 0)) leaf();
      else compareListItems(l ?? [], r ?? [], atom, path, cmp);
      break;
    }
    case 'struct':
    case 'map': {
      const l = isObject(lhs) ? lhs : undefined;
      const r = isObject(rhs) ? rhs : undefined;
      const badShape = (lhs != null && !l) || (rhs != null && !r);
      if (atom.atomic || badShape || (isEmptyObject(l) && isEmptyObject(r))) leaf();
      else {
        // Every key of either side once: the left's, then the right's the left lacks.
        const struct = atom.kind === 'struct';
        const member = (key: string, lv: unknown, rv: unknown): void => {
          const childAtom = memberAtom(atom, key);
          // A declared field's element is shared; a map key's or an undeclared field's is made (they are any strings).
          path.push(struct && childAtom ? structFieldElement(key) : fieldElement(key));
          walkCompare(lv, rv, childAtom ?? SCALAR, path, cmp);
          path.pop();
        };
        if (l) for (const key in l) member(key, l[key], r?.[key]);
        if (r) for (const key in r) if (!l || !Object.hasOwn(l, key)) member(key, undefined, r[key]);
      }
      break;
    }
  }
  if (!inLeaf) {
    if (lhs === undefined) cmp.added.insert(path);
    else if (rhs === undefined) cmp.removed.insert(path);
  }
}

const SCALAR: Atom = { kind: 'scalar' };

function isEmptyObject(value: Record<string, unknown> | undefined): boolean {
  if (value === undefined) return true;
  for (const _ in value) return false;
  return true;
}

interface Indexed {
  readonly pe: PathElement;
  readonly values: unknown[];
}

/** Items by path element, in first-seen order; items whose element cannot be computed are skipped. */
function indexItems(items: readonly unknown[], atom: Atom & { kind: 'list' }, order: Map<string, Indexed>, all: string[]): Map<string, Indexed> {
  const out = new Map<string, Indexed>();
  for (const item of items) {
    let pe: PathElement;
    try {
      pe = itemElement(atom, item);
    } catch {
      continue;
    }
    const key = serializeElement(pe);
    const entry = out.get(key);
    if (entry) entry.values.push(item);
    else {
      out.set(key, { pe, values: [item] });
      if (!order.has(key)) {
        order.set(key, { pe, values: [] });
        all.push(key);
      }
    }
  }
  return out;
}

function compareListItems(lhs: unknown[], rhs: unknown[], atom: Atom & { kind: 'list' }, path: PathElement[], cmp: Comparison): void {
  const order = new Map<string, Indexed>();
  const all: string[] = [];
  const left = indexItems(lhs, atom, order, all);
  const right = indexItems(rhs, atom, order, all);
  const child = itemAtom(atom);
  for (const key of all) {
    const pe = order.get(key)!.pe;
    const l = left.get(key)?.values ?? [];
    const r = right.get(key)?.values ?? [];
    path.push(pe);
    if (l.length <= 1 && r.length <= 1) {
      walkCompare(l[0], r[0], child, path, cmp);
    } else if (l.length >= 2 && r.length >= 2) {
      if (!jsonEqual(l, r)) cmp.modified.insert(path);
    } else if (l.length >= 2) {
      if (r.length !== 0) walkCompare(undefined, r[0], child, path, cmp);
      cmp.removed.insert(path);
    } else {
      if (l.length !== 0) walkCompare(l[0], undefined, child, path, cmp);
      cmp.added.insert(path);
    }
    path.pop();
  }
}
