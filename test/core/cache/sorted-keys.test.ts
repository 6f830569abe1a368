/**
 * The cache's chunked key order against a plain sorted array: random inserts and removes,
 * ranges from any key, and ranks, across many chunk splits and merges.
 */
import { SortedKeys } from '../../../src/core/cache/sorted-keys';
import { compareKeys } from '../../../src/core/cache/cached-object';
import { seededRandom } from '../../../src/util/seeded-random';
import { compareGoStrings, goStringsFastOrder } from '../../../src/codecs/go-strings';

const before = (key: string) => (k: string) => compareKeys(k, key) < 0;

function lowerBound(keys: string[], key: string): number {
  let i = 0;
  while (i < keys.length && compareKeys(keys[i]!, key) < 0) i++;
  return i;
}

/** Random inserts (70%) and removes on `keys` and a plain list; `check` gets the list, sorted, every `every` steps. */
function churn(keys: SortedKeys, name: () => string, random: () => number, steps: number, every: number, check: (model: string[]) => void): string[] {
  let model: string[] = [];
  for (let step = 0; step < steps; step++) {
    const key = name();
    if (random() < 0.7) {
      keys.insert(key);
      if (!model.includes(key)) model.push(key);
    } else {
      keys.remove(key);
      model = model.filter((k) => k !== key);
    }
    if (step % every === every - 1) check(model.sort(compareKeys));
  }
  return model;
}

test('matches a sorted array under random inserts and removes', () => {
  const random = seededRandom(7);
  const keys = new SortedKeys(compareKeys);
  const name = () => `/registry/things/ns${Math.floor(random() * 5)}/n${Math.floor(random() * 4000)}${random() < 0.01 ? '\u{1F600}' : ''}`;
  churn(keys, name, random, 20_000, 1000, (model) => {
    expect(keys.size).toBe(model.length);
    expect([...keys.from(() => false)]).toEqual(model);
    const probe = name();
    const at = lowerBound(model, probe);
    expect([...keys.from(before(probe))]).toEqual(model.slice(at));
    expect(keys.rank(before(probe))).toBe(at);
    const prefix = '/registry/things/ns2/';
    expect(keys.rank((k) => compareKeys(k, prefix) < 0 || k.startsWith(prefix))).toBe(
      model.filter((k) => compareKeys(k, prefix) < 0 || k.startsWith(prefix)).length,
    );
  });
});

test('reset takes a sorted list; an empty set ranges over nothing', () => {
  const keys = new SortedKeys(compareKeys);
  expect([...keys.from(() => false)]).toEqual([]);
  expect(keys.rank(() => true)).toBe(0);
  const sorted = Array.from({ length: 5000 }, (_, i) => `/k/${String(i).padStart(5, '0')}`);
  keys.reset(sorted);
  expect(keys.size).toBe(5000);
  expect([...keys.from(before('/k/04998'))]).toEqual(['/k/04998', '/k/04999']);
  keys.remove('/k/04998');
  keys.insert('/k/04998a');
  expect([...keys.from(before('/k/04998'))]).toEqual(['/k/04998a', '/k/04999']);
});

test("with JavaScript's order as the fast one, keys stay in Go's order where the two disagree", () => {
  // U+E000..U+FFFF sort before a surrogate pair in UTF-16 but after it in UTF-8 (Go's order).
  expect('\uff01' < '\u{1F600}').toBe(false);
  expect(compareGoStrings('\uff01', '\u{1F600}')).toBeLessThan(0);
  const random = seededRandom(11);
  const keys = new SortedKeys(compareKeys, goStringsFastOrder);
  const tails = ['', '', '', '', '\u{1F600}', '\uff01', '\ue000', 'é'];
  const name = () => `/registry/things/ns/n${Math.floor(random() * 300)}${tails[Math.floor(random() * tails.length)]}`;
  const model = churn(keys, name, random, 6000, 100, (sorted) => expect([...keys.from(() => false)]).toEqual(sorted));
  keys.reset([...model].sort(compareGoStrings));
  for (const k of ['/registry/things/ns/n1\uff01', '/registry/things/ns/n1\u{1F600}', '/registry/things/ns/n1']) {
    keys.insert(k);
    if (!model.includes(k)) model.push(k);
  }
  expect([...keys.from(() => false)]).toEqual(model.sort(compareGoStrings));
});
