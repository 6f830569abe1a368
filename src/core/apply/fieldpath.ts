/**
 * Field paths of server-side apply: a path is a list of elements, each a struct or map field
 * (`f:`), an item of a map-list named by its keys (`k:`), an item of a set (`v:`) or a list
 * position (`i:`). The orderings, the FieldsV1 spellings and the human-readable form used in
 * conflict messages are upstream's (structured-merge-diff's fieldpath package), since
 * managedFields and conflict messages must read byte-for-byte as upstream writes them.
 */
import { goJsonString } from '../../codecs/go-strings';
import { compareGoStrings } from '../../codecs/go-strings';
import { isObject } from '../../util/json-values';

export interface KeyField {
  readonly name: string;
  readonly value: unknown;
}

export type PathElement =
  | { readonly kind: 'field'; readonly name: string }
  /** Key fields sorted by name, as upstream sorts them. */
  | { readonly kind: 'key'; readonly fields: readonly KeyField[] }
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'index'; readonly index: number };

export type Path = readonly PathElement[];

export function fieldElement(name: string): PathElement {
  return { kind: 'field', name };
}

/**
 * upstream's total order of values: numbers, strings, booleans, lists, maps, null, each
 * compared within their kind.
 */
export function compareValues(a: unknown, b: unknown): number {
  const rank = (v: unknown): number => {
    if (typeof v === 'number') return 0;
    if (typeof v === 'string') return 1;
    if (typeof v === 'boolean') return 2;
    if (Array.isArray(v)) return 3;
    if (isObject(v)) return 4;
    return 5;
  };
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 0:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 1:
      return compareGoStrings(a as string, b as string);
    case 2:
      return a === b ? 0 : a ? 1 : -1;
    case 3: {
      const x = a as unknown[];
      const y = b as unknown[];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
      return x.length - y.length;
    }
    case 4: {
      const x = a as Record<string, unknown>;
      const y = b as Record<string, unknown>;
      const xk = Object.keys(x).sort(compareGoStrings);
      const yk = Object.keys(y).sort(compareGoStrings);
      for (let i = 0; i < Math.min(xk.length, yk.length); i++) {
        const c = compareGoStrings(xk[i]!, yk[i]!) || compareValues(x[xk[i]!], y[yk[i]!]);
        if (c !== 0) return c;
      }
      return xk.length - yk.length;
    }
    default:
      return 0;
  }
}

const KIND_RANK = { field: 0, key: 1, value: 2, index: 3 } as const;

/** upstream's PathElement order: fields, then keys, then values, then indexes. */
export function compareElements(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return KIND_RANK[a.kind] - KIND_RANK[b.kind];
  switch (a.kind) {
    case 'field':
      return compareGoStrings(a.name, (b as typeof a).name);
    case 'key': {
      const x = a.fields;
      const y = (b as typeof a).fields;
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareGoStrings(x[i]!.name, y[i]!.name) || compareValues(x[i]!.value, y[i]!.value);
        if (c !== 0) return c;
      }
      return x.length - y.length;
    }
    case 'value':
      return compareValues(a.value, (b as typeof a).value);
    case 'index':
      return a.index - (b as typeof a).index;
  }
}

/** JSON as Go's encoder writes it (HTML-safe strings, map keys sorted). */
export function goJson(value: unknown): string {
  if (typeof value === 'string') return goJsonString(value);
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort(compareGoStrings)
      .map((k) => `${goJsonString(k)}:${goJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The FieldsV1 key of an element: `f:name`, `k:{"name":"x"}`, `v:"x"`, `i:3`. */
export function serializeElement(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `f:${pe.name}`;
    case 'key':
      return `k:{${pe.fields.map((f) => `${goJsonString(f.name)}:${goJson(f.value)}`).join(',')}}`;
    case 'value':
      return `v:${goJson(pe.value)}`;
    case 'index':
      return `i:${pe.index}`;
  }
}

export class FieldPathError extends Error {}

/** Parse a FieldsV1 key; undefined for a prefix this version does not know (upstream ignores those). */
export function parseElement(key: string): PathElement | undefined {
  const colon = key.indexOf(':');
  if (colon < 0) throw new FieldPathError(`unable to parse path element: ${key}`);
  const body = key.slice(colon + 1);
  switch (key.slice(0, colon)) {
    case 'f':
      return { kind: 'field', name: body };
    case 'k': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        throw new FieldPathError(`unable to parse key: ${body}`);
      }
      if (!isObject(parsed)) throw new FieldPathError(`key must be an object: ${body}`);
      const fields = Object.keys(parsed)
        .sort(compareGoStrings)
        .map((name) => ({ name, value: parsed[name] }));
      return { kind: 'key', fields };
    }
    case 'v':
      try {
        return { kind: 'value', value: JSON.parse(body) };
      } catch {
        throw new FieldPathError(`unable to parse value: ${body}`);
      }
    case 'i': {
      const index = Number(body);
      if (!Number.isInteger(index)) throw new FieldPathError(`unable to parse index: ${body}`);
      return { kind: 'index', index };
    }
    default:
      return undefined;
  }
}

/** A value as upstream's value.ToString prints it inside a path: strings Go-quoted, lists bracketed. */
function printValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(printValue).join(',')}]`;
  if (isObject(value))
    return Object.keys(value)
      .map((k) => `${k}=${printValue(value[k])}`)
      .join('');
  return String(value);
}

/** The element as upstream prints it in a path: `.name`, `[name="x"]`, `[="x"]`, `[3]`. */
export function elementString(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `.${pe.name}`;
    case 'key':
      return `[${pe.fields.map((f) => `${f.name}=${printValue(f.value)}`).join(',')}]`;
    case 'value':
      return `[=${printValue(pe.value)}]`;
    case 'index':
      return `[${pe.index}]`;
  }
}

export function pathString(path: Path): string {
  return path.map(elementString).join('');
}
