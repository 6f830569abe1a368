/**
 * YAML in upstream's byte layout. Upstream turns its JSON into YAML with go-yaml v2
 * (JSONToYAML of its yaml helper module), which sorts map keys in its own "natural" order — letters
 * compare by code point, runs of digits by numeric value (`a9` before `a10`), non-letters before
 * letters — does not indent sequences under their key and does not wrap long lines.
 */
import YAML from 'yaml';

function isLetter(c: string): boolean {
  return /\p{L}/u.test(c);
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

const ASCII_LETTERS = /^[A-Za-z]*$/;

/** go-yaml v2's ordering of string map keys: the "natural" order above, as its key sorter has it. */
export function compareGoYamlKeys(a: string, b: string): number {
  if (a === b) return 0;
  // Letters only (most keys): code point order, a prefix first — what the walk below gives them.
  if (ASCII_LETTERS.test(a) && ASCII_LETTERS.test(b)) return a < b ? -1 : 1;
  const ar = Array.from(a);
  const br = Array.from(b);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    const x = ar[i]!;
    const y = br[i]!;
    if (x === y) continue;
    const xl = isLetter(x);
    const yl = isLetter(y);
    if (xl && yl) return x.codePointAt(0)! < y.codePointAt(0)! ? -1 : 1;
    if (xl || yl) return yl ? -1 : 1;
    // Both non-letters: compare the digit runs starting here as numbers.
    let an = 0;
    let bn = 0;
    if (x === '0' || y === '0') {
      for (let j = i - 1; j >= 0 && isDigit(ar[j]); j--) {
        if (ar[j] !== '0') {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    let ai = i;
    let bi = i;
    for (; ai < ar.length && isDigit(ar[ai]); ai++) an = an * 10 + Number(ar[ai]);
    for (; bi < br.length && isDigit(br[bi]); bi++) bn = bn * 10 + Number(br[bi]);
    if (an !== bn) return an < bn ? -1 : 1;
    if (ai !== bi) return ai < bi ? -1 : 1;
    return x.codePointAt(0)! < y.codePointAt(0)! ? -1 : 1;
  }
  return ar.length - br.length;
}

const STRINGIFY_OPTIONS = {
  version: '1.1',
  sortMapEntries: (x: { key: unknown }, y: { key: unknown }) => compareGoYamlKeys(String(keyOf(x.key)), String(keyOf(y.key))),
  indentSeq: false,
  lineWidth: 0,
} as const;

function keyOf(key: unknown): unknown {
  return YAML.isScalar(key) ? key.value : key;
}

/** Upstream's YAML text of a JSON-shaped value. */
export function encodeUpstreamYaml(value: unknown): string {
  return YAML.stringify(value, STRINGIFY_OPTIONS);
}
