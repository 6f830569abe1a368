/**
 * Go's view of decoded JSON values, for the parts of strategic merge patch whose results depend
 * on it: the dynamic type of a value (integers and floats differ), `%v` printing in error
 * messages, and sort.SliceStable's exact element order (its less functions are not strict
 * orders, so only the same algorithm gives the same result).
 */

import { isObject } from '../util/json-values';

/** The Go type of a decoded JSON value (numbers decoded with integers preserved). */
export function goType(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return '[]interface {}';
  if (isObject(value)) return 'map[string]interface {}';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  return typeof value === 'boolean' ? 'bool' : 'string';
}

/** Go's kind: map, slice or a scalar type. */
export function goKind(value: unknown): 'map' | 'slice' | 'scalar' {
  if (Array.isArray(value)) return 'slice';
  if (isObject(value)) return 'map';
  return 'scalar';
}

function goFloat(n: number): string {
  if (Number.isInteger(n)) return String(n);
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) {
    return n.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  }
  return String(n);
}

/** `fmt.Sprint` / `%v` of a decoded JSON value: `map[a:1 b:[x y]]`. */
export function goPrint(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goPrint).join(' ')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `map[${keys.map((k) => `${k}:${goPrint(value[k])}`).join(' ')}]`;
  }
  if (typeof value === 'number') return goFloat(value);
  return String(value);
}

/** Go's `==` on two decoded scalars: equal values of the same dynamic type. */
export function goEqual(a: unknown, b: unknown): boolean {
  return a === b && goType(a) === goType(b);
}

/** sort.SliceStable: insertion sort in blocks of 20, then symmerge, exactly as Go runs it. */
export function sliceStable<T>(data: T[], less: (a: T, b: T) => boolean): void {
  const n = data.length;
  const lessAt = (i: number, j: number) => less(data[i]!, data[j]!);
  const swap = (i: number, j: number) => {
    const t = data[i]!;
    data[i] = data[j]!;
    data[j] = t;
  };
  const insertion = (a: number, b: number) => {
    for (let i = a + 1; i < b; i++) for (let j = i; j > a && lessAt(j, j - 1); j--) swap(j, j - 1);
  };
  const rotate = (a: number, m: number, b: number) => {
    const swapRange = (x: number, y: number, len: number) => {
      for (let i = 0; i < len; i++) swap(x + i, y + i);
    };
    let i = m - a;
    let j = b - m;
    while (i !== j) {
      if (i > j) {
        swapRange(m - i, m, j);
        i -= j;
      } else {
        swapRange(m - i, m + j - i, i);
        j -= i;
      }
    }
    swapRange(m - i, m, i);
  };
  const symMerge = (a: number, m: number, b: number): void => {
    if (m - a === 1) {
      let i = m;
      let j = b;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (lessAt(h, a)) i = h + 1;
        else j = h;
      }
      for (let k = a; k < i - 1; k++) swap(k, k + 1);
      return;
    }
    if (b - m === 1) {
      let i = a;
      let j = m;
      while (i < j) {
        const h = (i + j) >>> 1;
        if (!lessAt(m, h)) i = h + 1;
        else j = h;
      }
      for (let k = m; k > i; k--) swap(k, k - 1);
      return;
    }
    const mid = (a + b) >>> 1;
    const nn = mid + m;
    let start: number;
    let r: number;
    if (m > mid) {
      start = nn - b;
      r = mid;
    } else {
      start = a;
      r = m;
    }
    const p = nn - 1;
    while (start < r) {
      const c = (start + r) >>> 1;
      if (!lessAt(p - c, c)) start = c + 1;
      else r = c;
    }
    const end = nn - start;
    if (start < m && m < end) rotate(start, m, end);
    if (a < start && start < mid) symMerge(a, start, mid);
    if (mid < end && end < b) symMerge(mid, end, b);
  };
  let blockSize = 20;
  let a = 0;
  let b = blockSize;
  while (b <= n) {
    insertion(a, b);
    a = b;
    b += blockSize;
  }
  insertion(a, n);
  while (blockSize < n) {
    a = 0;
    b = 2 * blockSize;
    while (b <= n) {
      symMerge(a, a + blockSize, b);
      a = b;
      b += 2 * blockSize;
    }
    const m = a + blockSize;
    if (m < n) symMerge(a, m, n);
    blockSize *= 2;
  }
}
