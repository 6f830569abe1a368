/**
 * The YAML reading fast path gives exactly the general parser's value, or declines: checked on
 * upstream's wire fixtures, hand-written manifests, and the YAML of generated values in both
 * upstream's layout and the library's default (indented sequences).
 */
import YAML from 'yaml';
import { fastParseYaml } from '../../src/codecs/yaml-fast-parse';
import { encodeUpstreamYaml } from '../../src/codecs/yaml-order';
import { yamlCodec } from '../../src/gateway/codecs/yaml';
import { decodeStrictYaml } from '../../src/codecs/strict-yaml';
import { realisticReplicaSet } from './sample-objects';
import { wireFixtures } from './wire-fixtures';
import { generatedValues } from './yaml-values';

function general(text: string): unknown {
  try {
    return yamlCodec.decode(Buffer.from(`${text}\n# keep the general parser\n`));
  } catch (err) {
    return { error: (err as Error).message };
  }
}

function same(text: string): boolean {
  const fast = fastParseYaml(text);
  if (fast !== undefined) {
    expect(fast).toEqual(general(text));
    // The strict decoder (create and update bodies) agrees, and reports no repeated key.
    expect(decodeStrictYaml(`${text}\n# keep the general parser\n`)).toEqual({ value: fast, duplicates: [] });
  }
  return fast !== undefined;
}

test('manifests as people write them take the fast path and read the same', () => {
  const manifest = [
    'apiVersion: apps/v1',
    'kind: ReplicaSet',
    'metadata:',
    '  name: web',
    '  labels:',
    '    app: web',
    "    tier: 'front end'",
    '    enabled: yes',
    '    port: "8080"',
    'spec:',
    '  replicas: 3',
    '  selector:',
    '    matchLabels:',
    '      app: web',
    '  template:',
    '    metadata:',
    '      labels: {}',
    '    spec:',
    '      containers:',
    '        - name: c',
    '          image: nginx:1.25',
    '          args:',
    '          - --port=80',
    '          - -v',
    '          env: []',
    '      nodeSelector:',
    '        kubernetes.io/os: linux',
    '      tolerations:',
    '      -',
    '        key: x',
    '      empty:',
  ].join('\n');
  expect(same(manifest)).toBe(true);
  expect(same(encodeUpstreamYaml(realisticReplicaSet()))).toBe(true);
});

test('what the fast path leaves to the general parser', () => {
  for (const text of [
    'a: 1 # comment',
    'a: &x 1\nb: *x',
    'a: !!str 1',
    'a: |\n  text',
    'a: [1, 2]',
    'a: {b: 1}',
    '---\na: 1',
    'a: 1\n  b',
    'a:\tb',
    'x',
    '- a\n  b: 1',
    'a: b: c',
    '<<: {}',
    'a: 1\na: 2',
  ]) {
    expect(fastParseYaml(text)).toBeUndefined();
  }
});

test('upstream’s YAML fixtures read the same', () => {
  let taken = 0;
  for (const f of wireFixtures()) if (same(f.yaml.toString('utf8'))) taken++;
  expect(taken).toBeGreaterThan(0);
});

test('the YAML of generated values, in either layout, reads the same or is declined', () => {
  const taken = generatedValues(11, 2000).filter((value, i) => same(i % 2 ? encodeUpstreamYaml(value) : YAML.stringify(value))).length;
  expect(taken).toBeGreaterThan(100);
});
