/**
 * The YAML fast path writes exactly what the general emitter writes, or declines: checked on
 * upstream's wire fixtures (when present), realistic objects, and generated values full of the
 * strings YAML 1.1 treats specially.
 */
import { fastYaml } from '../../src/codecs/yaml-fast';
import { encodeUpstreamYaml } from '../../src/codecs/yaml-order';
import { realisticReplicaSet } from './sample-objects';
import { fixturesPresent, wireFixtures } from './wire-fixtures';

function same(value: unknown): boolean {
  const fast = fastYaml(value);
  if (fast !== undefined) expect(fast).toBe(encodeUpstreamYaml(value));
  return fast !== undefined;
}

test('realistic objects take the fast path, byte for byte the same', () => {
  expect(same(realisticReplicaSet())).toBe(true);
  expect(same({})).toBe(true);
  expect(same({ a: {}, b: [], c: [{}], d: [{ x: 1, y: [1, 2] }], e: null, f: true, g: -3, h: 0.25 })).toBe(true);
});

(fixturesPresent ? test : test.skip)('every wire fixture: the same bytes, and upstream’s YAML where the fast path writes it', () => {
  let taken = 0;
  for (const f of wireFixtures()) {
    const value = JSON.parse(f.json.toString('utf8'));
    if (same(value)) taken++;
  }
  expect(taken).toBeGreaterThan(0);
});

test('generated values with YAML 1.1’s special strings: the same bytes or a decline', () => {
  const strings = ['', '.', '..', '~', 'y', 'yes', 'No', 'ON', 'null', 'NULL', 'true', '1', '-1', '0.5', '1.2.3', '007', '0x1F', '12:30', '3e4', '1_000', '2026-11-25', '2026-11-25T00:00:00Z',
    'a b', 'a: b', 'a #b', '#a', '-x', '- x', '? x', '[x]', '{x}', '*x', '&x', '!x', '%x', '@x', '`x', "'x'", '"x"', 'x:', 'x:y', 'http://x', 'a\nb', 'a\tb', ' x', 'x ', 'ü', '😀', '80Mi', 'nginx:1.25', 'f:spec', 'a/b', 'x,y', '|', '>', '=', '<<'];
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
  const gen = (depth: number): unknown => {
    const k = rand(depth > 2 ? 4 : 7);
    if (k === 0) return strings[rand(strings.length)];
    if (k === 1) return [1, -2, 0.5, 1e21, 1.5e-7, true, false, null][rand(8)];
    if (k === 2) return rand(100);
    if (k === 3) return strings[rand(strings.length)];
    if (k === 4) return Array.from({ length: rand(3) }, () => gen(depth + 1));
    const map: Record<string, unknown> = {};
    for (let i = rand(4); i > 0; i--) map[strings[rand(strings.length)]!] = gen(depth + 1);
    return map;
  };
  let taken = 0;
  for (let i = 0; i < 2000; i++) {
    const value: Record<string, unknown> = {};
    for (let j = rand(5) + 1; j > 0; j--) value[strings[rand(strings.length)]!] = gen(0);
    if (same(value)) taken++;
  }
  expect(taken).toBeGreaterThan(100);
});
