/**
 * The YAML fast path writes exactly what the general emitter writes, or declines: checked on
 * upstream's wire fixtures, realistic objects, and generated values full of the
 * strings YAML 1.1 treats specially.
 */
import { fastYaml } from '../../src/codecs/yaml-fast';
import { encodeUpstreamYaml } from '../../src/codecs/yaml-order';
import { realisticReplicaSet } from './sample-objects';
import { wireFixtures } from './wire-fixtures';
import { generatedValues } from './yaml-values';

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

test('every wire fixture: the same bytes, and upstream’s YAML where the fast path writes it', () => {
  let taken = 0;
  for (const f of wireFixtures()) {
    const value = JSON.parse(f.json.toString('utf8'));
    if (same(value)) taken++;
  }
  expect(taken).toBeGreaterThan(0);
});

test('generated values with YAML 1.1’s special strings: the same bytes or a decline', () => {
  const taken = generatedValues(7, 2000).filter((value) => same(value)).length;
  expect(taken).toBeGreaterThan(100);
});
