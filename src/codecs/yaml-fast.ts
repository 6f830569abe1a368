/**
 * A fast path for upstream's YAML layout (yaml-order.ts) of the objects the API serves: block
 * maps in go-yaml's key order, sequences not indented under their key. The structure is written
 * here; a string that is not obviously plain is rendered by the general emitter (the `yaml`
 * library, whose quoting rules for YAML 1.1 are subtle) and that rendering is remembered. What
 * does not fit one line (block scalars), nested sequences and odd numbers answer `undefined`,
 * and the caller writes the whole document with the library. A differential test holds the two
 * to the same bytes.
 */
import { compareGoYamlKeys, encodeUpstreamYaml } from './yaml-order';

/** Renderings of strings by the general emitter; cleared when full (timestamps make many). Shared by every server in the process: a pure memo of strings. */
const rendered = new Map<string, string | null>();
const MAX_RENDERED = 10_000;

/** How the general emitter writes `s` as a value, or null when that takes more than one line. */
function renderedString(s: string): string | null {
  let text = rendered.get(s);
  if (text === undefined) {
    const yaml = encodeUpstreamYaml({ a: s });
    text = yaml.startsWith('a: ') && yaml.indexOf('\n') === yaml.length - 1 ? yaml.slice(3, -1) : null;
    if (rendered.size >= MAX_RENDERED) rendered.clear();
    rendered.set(s, text);
  }
  return text;
}

/** Words YAML 1.1 reads as booleans or null: they need quotes. */
const RESERVED = new Set([
  'y',
  'Y',
  'yes',
  'Yes',
  'YES',
  'n',
  'N',
  'no',
  'No',
  'NO',
  'true',
  'True',
  'TRUE',
  'false',
  'False',
  'FALSE',
  'on',
  'On',
  'ON',
  'off',
  'Off',
  'OFF',
  'null',
  'Null',
  'NULL',
]);
/** Starts with a letter or one of `_ /`, then no character YAML gives a meaning to; never ends with `:`. */
const PLAIN = /^[A-Za-z_/][A-Za-z0-9_./:@+-]*$/;

function plainString(s: string): boolean {
  return PLAIN.test(s) && !s.endsWith(':') && !s.includes(':/') && !RESERVED.has(s);
}

class Unsupported extends Error {}

function stringText(s: string): string {
  if (plainString(s)) return s;
  const text = renderedString(s);
  if (text === null) throw new Unsupported();
  return text;
}

function scalar(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return stringText(value);
    case 'number':
      if (Number.isSafeInteger(value) || (Number.isFinite(value) && /^-?\d+\.\d+$/.test(String(value)))) return String(value);
      throw new Unsupported();
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      if (value === null) return 'null';
      throw new Unsupported();
  }
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function sortedKeys(map: Record<string, unknown>): string[] {
  return Object.keys(map)
    .filter((k) => map[k] !== undefined)
    .sort(compareGoYamlKeys);
}

/**
 * A map's `key: value` lines at `indent`, its keys already sorted (each map's keys are sorted
 * once); the first line may continue a `- ` already written.
 */
function writeMap(map: Record<string, unknown>, keys: readonly string[], indent: string, out: string[], firstPrefix: string): void {
  keys.forEach((key, i) => writeEntry(`${i === 0 ? firstPrefix : indent}${stringText(key)}:`, map[key], indent, out));
}

function writeEntry(head: string, value: unknown, indent: string, out: string[]): void {
  if (isMap(value)) {
    const keys = sortedKeys(value);
    if (keys.length === 0) out.push(`${head} {}`);
    else {
      out.push(head);
      writeMap(value, keys, `${indent}  `, out, `${indent}  `);
    }
  } else if (Array.isArray(value)) {
    if (value.length === 0) out.push(`${head} []`);
    else {
      out.push(head);
      writeSeq(value, indent, out);
    }
  } else {
    out.push(`${head} ${scalar(value)}`);
  }
}

function writeSeq(seq: unknown[], indent: string, out: string[]): void {
  for (const item of seq) {
    if (isMap(item)) {
      const keys = sortedKeys(item);
      if (keys.length === 0) out.push(`${indent}- {}`);
      else writeMap(item, keys, `${indent}  `, out, `${indent}- `);
    } else if (Array.isArray(item) || item === undefined) {
      throw new Unsupported();
    } else {
      out.push(`${indent}- ${scalar(item)}`);
    }
  }
}

/** The YAML of a JSON-shaped map, or undefined when the general emitter must write it. */
export function fastYaml(value: unknown): string | undefined {
  if (!isMap(value)) return undefined;
  const out: string[] = [];
  try {
    const keys = sortedKeys(value);
    if (keys.length === 0) return '{}\n';
    writeMap(value, keys, '', out, '');
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  return `${out.join('\n')}\n`;
}
