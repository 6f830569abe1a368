/**
 * JSON patch (RFC 6902, `application/json-patch+json`) with the semantics of the library
 * upstream applies it with (evanphx/json-patch v4): array indexes may count from the end, only
 * `test` and `replace` address the whole document (`""`), and a `test` of an absent or null
 * value passes when the expected value is null. Any failure while applying is upstream's
 * generic 422; a body that is not a list of operations is a 400 (as upstream's patch handler
 * answers).
 */
import { StatusError, badRequest, requestEntityTooLarge } from '../../status';
import { rejectedRequest } from './smp-errors';
import { deepCopy, isObject } from '../../util/json-values';

/** upstream's maxJSONPatchOperations. */
const MAX_OPERATIONS = 10000;
/**
 * upstream's JSONPatchMaxCopyBytes (its default, the 3 MiB request limit): `copy` operations may
 * grow the document by at most this much in total, so a small patch cannot copy a map into
 * itself until the server runs out of memory.
 */
export const MAX_COPY_BYTES = 3 * 1024 * 1024;

type Container = Record<string, unknown> | unknown[];

class PatchFailure extends Error {}

/** What one patch has used up so far. */
interface Budget {
  copied: number;
}

function decodeKey(part: string): string {
  return part.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The container holding the last element of `path`, and that element's key (upstream's findObject). */
function findObject(doc: Container, path: string): { con: Container; key: string } | undefined {
  const split = path.split('/');
  if (split.length < 2) return undefined;
  let cur: unknown = doc;
  for (const part of split.slice(1, -1)) {
    const next = get(cur as Container, decodeKey(part));
    if (next === undefined || next === null || typeof next !== 'object') return undefined;
    cur = next;
  }
  return { con: cur as Container, key: decodeKey(split[split.length - 1]!) };
}

function arrayIndex(arr: unknown[], key: string, size: number): number {
  if (!/^[+-]?\d+$/.test(key)) throw new PatchFailure(`value was not a proper array index: '${key}'`);
  let idx = Number(key);
  if (idx >= size || idx < -size) throw new PatchFailure(`Unable to access invalid index: ${idx}`);
  if (idx < 0) idx += size;
  void arr;
  return idx;
}

function get(con: Container, key: string): unknown {
  if (Array.isArray(con)) {
    if (!/^[+-]?\d+$/.test(key)) return undefined;
    const idx = Number(key);
    if (idx >= con.length || idx < -con.length) return undefined;
    return con[idx < 0 ? idx + con.length : idx];
  }
  return Object.hasOwn(con, key) ? con[key] : undefined;
}

function has(con: Container, key: string): boolean {
  if (Array.isArray(con)) return get(con, key) !== undefined;
  return Object.hasOwn(con, key);
}

function add(con: Container, key: string, value: unknown): void {
  if (!Array.isArray(con)) {
    con[key] = value;
    return;
  }
  if (key === '-') {
    con.push(value);
    return;
  }
  con.splice(arrayIndex(con, key, con.length + 1), 0, value);
}

function remove(con: Container, key: string): void {
  if (!Array.isArray(con)) {
    if (!Object.hasOwn(con, key)) throw new PatchFailure(`Unable to remove nonexistent key: ${key}`);
    delete con[key];
    return;
  }
  con.splice(arrayIndex(con, key, con.length), 1);
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

function stringField(op: Record<string, unknown>, name: string): string | undefined {
  const v = op[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new PatchFailure(`${name} must be a string`);
  return v;
}

function applyOne(doc: Container, op: Record<string, unknown> | null, budget: Budget): Container {
  const kind = op && typeof op.op === 'string' ? op.op : 'unknown';
  const o = op ?? {};
  const path = () => {
    const p = stringField(o, 'path');
    if (p === undefined) throw new PatchFailure('operation missing path field');
    return p;
  };
  const value = () => (Object.hasOwn(o, 'value') ? o.value : undefined);
  switch (kind) {
    case 'add': {
      const at = findObject(doc, path());
      if (!at) throw new PatchFailure('add operation does not apply: doc is missing path');
      add(at.con, at.key, deepCopy(value() ?? null));
      return doc;
    }
    case 'remove': {
      const at = findObject(doc, path());
      if (!at) throw new PatchFailure('remove operation does not apply: doc is missing path');
      remove(at.con, at.key);
      return doc;
    }
    case 'replace': {
      const p = path();
      if (p === '') {
        const v = value();
        if (typeof v !== 'object' || v === null) throw new PatchFailure('replace operation value must be object or array');
        return deepCopy(v) as Container;
      }
      const at = findObject(doc, p);
      if (!at || !has(at.con, at.key)) throw new PatchFailure('replace operation does not apply: doc is missing key');
      if (Array.isArray(at.con)) at.con[arrayIndex(at.con, at.key, at.con.length)] = deepCopy(value() ?? null);
      else at.con[at.key] = deepCopy(value() ?? null);
      return doc;
    }
    case 'move':
    case 'copy': {
      const from = stringField(o, 'from');
      if (from === undefined) throw new PatchFailure(`${kind} operation missing from field`);
      const src = findObject(doc, from);
      if (!src || !has(src.con, src.key)) throw new PatchFailure(`${kind} operation does not apply: doc is missing from path`);
      const v = get(src.con, src.key);
      if (kind === 'copy') {
        // Counted as upstream counts it: the JSON size of each copied value.
        budget.copied += Buffer.byteLength(JSON.stringify(v) ?? 'null');
        if (budget.copied > MAX_COPY_BYTES) {
          throw new PatchFailure(
            `Unable to complete the copy, the accumulated size increase of copy is ${budget.copied}, exceeding the limit ${MAX_COPY_BYTES}`,
          );
        }
      }
      if (kind === 'move') remove(src.con, src.key);
      const at = findObject(doc, path());
      if (!at) throw new PatchFailure(`${kind} operation does not apply: doc is missing destination path`);
      add(at.con, at.key, kind === 'copy' ? deepCopy(v) : v);
      return doc;
    }
    case 'test': {
      const p = path();
      const expected = value();
      if (p === '') {
        if (!jsonEqual(doc, expected)) throw new PatchFailure(`testing value ${p} failed`);
        return doc;
      }
      const at = findObject(doc, p);
      if (!at) throw new PatchFailure(`test operation does not apply: is missing path: ${p}`);
      const actual = get(at.con, at.key);
      if (actual === undefined || actual === null) {
        if (expected === undefined || expected === null) return doc;
        throw new PatchFailure(`testing value ${p} failed`);
      }
      if (expected === undefined || !jsonEqual(actual, expected)) throw new PatchFailure(`testing value ${p} failed`);
      return doc;
    }
    default:
      throw new PatchFailure(`Unexpected kind: ${kind}`);
  }
}

/** Go's message for a JSON value that does not decode into `into`. */
function cannotUnmarshal(value: unknown, into: string): string {
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value === 'object' ? 'object' : typeof value;
  return `json: cannot unmarshal ${kind} into Go value of type ${into}`;
}

/** Check the operations decode (a list of objects) before anything is applied. */
export function decodeJsonPatch(body: unknown): Array<Record<string, unknown> | null> {
  if (!Array.isArray(body)) throw badRequest(cannotUnmarshal(body, 'jsonpatch.Patch'));
  for (const op of body) {
    if (op !== null && !isObject(op)) throw badRequest(cannotUnmarshal(op, 'jsonpatch.Operation'));
  }
  if (body.length > MAX_OPERATIONS) {
    throw requestEntityTooLarge(`The allowed maximum operations in a JSON patch is ${MAX_OPERATIONS}, got ${body.length}`);
  }
  return body as Array<Record<string, unknown> | null>;
}

/** Apply decoded operations to a copy of `doc`; a failing operation is upstream's generic 422. */
export function applyJsonPatch(doc: unknown, ops: ReadonlyArray<Record<string, unknown> | null>): unknown {
  let out = deepCopy(doc) as Container;
  const budget: Budget = { copied: 0 };
  try {
    for (const op of ops) out = applyOne(out, op, budget);
  } catch (err) {
    if (err instanceof PatchFailure || err instanceof TypeError) throw rejectedRequest();
    throw err instanceof StatusError ? err : rejectedRequest();
  }
  return out;
}
