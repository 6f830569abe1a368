/** Generated JSON-shaped values full of the strings YAML 1.1 treats specially, for the YAML fast paths' differential tests. */

export const SPECIAL_STRINGS = [
  '',
  '.',
  '..',
  '~',
  'y',
  'yes',
  'No',
  'ON',
  'null',
  'NULL',
  'true',
  '1',
  '-1',
  '0.5',
  '1.2.3',
  '007',
  '0x1F',
  '12:30',
  '3e4',
  '1_000',
  '2026-11-25',
  '2026-11-25T00:00:00Z',
  'a b',
  'a: b',
  'a #b',
  '#a',
  '-x',
  '- x',
  '? x',
  '[x]',
  '{x}',
  '*x',
  '&x',
  '!x',
  '%x',
  '@x',
  '`x',
  "'x'",
  '"x"',
  'x:',
  'x:y',
  'http://x',
  'a\nb',
  'a\tb',
  ' x',
  'x ',
  'a\\b',
  'ü',
  '😀',
  '80Mi',
  'nginx:1.25',
  'f:spec',
  'a/b',
  'x,y',
  '|',
  '>',
  '=',
  '<<',
];

/** `count` maps from a seeded generator: the same values on every run. */
export function generatedValues(seed: number, count: number): Array<Record<string, unknown>> {
  let state = seed;
  const rand = (n: number) => ((state = (state * 1103515245 + 12345) & 0x7fffffff), state % n);
  const pick = () => SPECIAL_STRINGS[rand(SPECIAL_STRINGS.length)]!;
  const gen = (depth: number): unknown => {
    const k = rand(depth > 2 ? 4 : 7);
    if (k === 0 || k === 3) return pick();
    if (k === 1) return [1, -2, 0.5, 1e21, 1.5e-7, true, false, null][rand(8)];
    if (k === 2) return rand(100);
    if (k === 4) return Array.from({ length: rand(3) }, () => gen(depth + 1));
    const map: Record<string, unknown> = {};
    for (let i = rand(4); i > 0; i--) map[pick()] = gen(depth + 1);
    return map;
  };
  return Array.from({ length: count }, () => {
    const value: Record<string, unknown> = {};
    for (let j = rand(5) + 1; j > 0; j--) value[pick()] = gen(0);
    return value;
  });
}
