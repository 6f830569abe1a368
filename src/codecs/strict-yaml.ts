/**
 * A YAML decoder that reports keys given twice in one mapping. Upstream converts YAML to JSON
 * with go-yaml v2, which keeps the last value; in strict mode it converts a second time and
 * lists every repeated key as `line N: key "name" already set in map` (go-yaml's wording, N the
 * 1-based line of the repeated entry's value, in the order go-yaml decodes: a mapping's values
 * before the mapping's own repeated keys). docs/API.md, "Field validation".
 *
 * Parsing follows the YAML codec: YAML 1.1, merge keys, timestamps left as strings.
 */
import { fastParseYaml } from './yaml-fast-parse';
import YAML, { type Node as YamlNode, isAlias, isMap, isScalar, isSeq, LineCounter } from 'yaml';

export interface DuplicateYamlKey {
  /** 1-based line, as go-yaml counts. */
  readonly line: number;
  /** The key as Go's `%#v` prints it: `"name"`, `1`, `true`. */
  readonly key: string;
}

export interface StrictYaml {
  readonly value: unknown;
  readonly duplicates: readonly DuplicateYamlKey[];
}

const TIMESTAMP_TAG = 'tag:yaml.org,2002:timestamp';

/** go-yaml's message for the duplicates, with the prefix upstream's YAML-to-JSON converter adds when `converting`. */
export function yamlDuplicateMessage(duplicates: readonly DuplicateYamlKey[], converting: boolean): string {
  const lines = duplicates.map((d) => `\n  line ${d.line}: key ${d.key} already set in map`).join('');
  return `${converting ? 'error converting YAML to JSON: ' : ''}yaml: unmarshal errors:${lines}`;
}

function goValue(key: unknown): string {
  if (typeof key === 'string') return JSON.stringify(key);
  if (key === null || key === undefined) return '<nil>';
  return String(key);
}

function keyOf(node: unknown): unknown {
  return isScalar(node) ? node.value : node;
}

function collect(node: unknown, lines: LineCounter, out: DuplicateYamlKey[]): void {
  if (isSeq(node)) {
    for (const item of node.items) collect(item, lines, out);
    return;
  }
  if (!isMap(node)) return;
  const seen = new Set<string>();
  for (const pair of node.items) {
    if (isAlias(pair.value)) continue;
    collect(pair.value, lines, out);
    const key = keyOf(pair.key);
    if (key === '<<') continue;
    const id = `${typeof key}:${String(key)}`;
    if (seen.has(id)) {
      const at = (pair.value as YamlNode | null)?.range?.[0] ?? (pair.key as YamlNode | null)?.range?.[0] ?? 0;
      out.push({ line: lines.linePos(at).line, key: goValue(key) });
    }
    seen.add(id);
  }
}

/** Decode one YAML document, reporting repeated keys. Throws the YAML library's parse error on malformed input. */
export function decodeStrictYaml(input: string | Uint8Array): StrictYaml {
  const text = typeof input === 'string' ? input : Buffer.from(input).toString('utf8');
  // The fast path declines whatever holds a repeated key, so what it reads has none.
  const fast = fastParseYaml(text);
  if (fast !== undefined) return { value: fast, duplicates: [] };
  const lineCounter = new LineCounter();
  const doc = YAML.parseDocument(text, {
    version: '1.1',
    merge: true,
    uniqueKeys: false,
    lineCounter,
    customTags: (tags) => tags.filter((t) => typeof t === 'string' || t.tag !== TIMESTAMP_TAG),
  });
  if (doc.errors.length > 0) throw doc.errors[0];
  const duplicates: DuplicateYamlKey[] = [];
  collect(doc.contents, lineCounter, duplicates);
  return { value: doc.toJS() as unknown, duplicates };
}
