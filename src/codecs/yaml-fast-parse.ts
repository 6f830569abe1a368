/**
 * A fast path for reading YAML bodies of the shape clients send for API objects: block maps and
 * sequences, one `key: value` or `- item` per line, plain, single- and double-quoted one-line
 * scalars, `{}` and `[]`. Plain scalars are resolved the way the general parser resolves them
 * (YAML 1.1: `yes` is true, `0x1F` a number, …) by asking it once per distinct text and
 * remembering the answer. Anything else — comments, anchors, tags, block scalars, flow
 * collections with content, scalars over several lines, tabs, several documents — answers
 * `undefined`, and the caller parses the whole body with the `yaml` library. A differential test
 * holds the two to the same values.
 */
import YAML from 'yaml';

type Resolve = (text: string) => unknown;

const TIMESTAMP_TAG = 'tag:yaml.org,2002:timestamp';

/** How request bodies are read (upstream: YAML 1.1, merge keys, timestamps stay strings). */
export const YAML_PARSE_OPTIONS = {
  version: '1.1',
  merge: true,
  customTags: (tags: YAML.Tags) => tags.filter((t) => typeof t === 'string' || t.tag !== TIMESTAMP_TAG),
} as const;

/** One plain scalar, as the library reads it with those options. */
const parsePlain: Resolve = (text) => YAML.parse(text, YAML_PARSE_OPTIONS) as unknown;

class Unsupported extends Error {}

interface Line {
  indent: number;
  text: string;
}

/** Plain scalars as the general parser read them (with YAML_PARSE_OPTIONS). Shared by every server in the process: a pure memo of strings. */
const resolvedPlain = new Map<string, { value: unknown }>();
const MAX_RESOLVED = 10_000;

/** The value the general parser gives a plain scalar, remembered. */
function plain(text: string): unknown {
  let hit = resolvedPlain.get(text);
  if (!hit) {
    hit = { value: parsePlain(text) };
    if (resolvedPlain.size >= MAX_RESOLVED) resolvedPlain.clear();
    resolvedPlain.set(text, hit);
  }
  return hit.value;
}

/** A one-line scalar: quoted, `{}`, `[]`, or plain (through `plain`). */
function scalar(raw: string, plain: Resolve): unknown {
  const text = raw.trim();
  if (text === '') return null;
  if (text === '{}') return {};
  if (text === '[]') return [];
  const first = text[0]!;
  if (first === '"') {
    if (!text.endsWith('"') || text.length < 2 || /\\[^"\\/bfnrtu]/.test(text)) throw new Unsupported();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new Unsupported();
    }
  }
  if (first === "'") {
    const inner = text.slice(1, -1);
    if (!text.endsWith("'") || text.length < 2 || /'(?!')/.test(inner.replace(/''/g, ''))) throw new Unsupported();
    return inner.replace(/''/g, "'");
  }
  // Indicators that start something other than a plain scalar, and a comment anywhere.
  if ('[]{}!&*|>%@`?-,'.includes(first) && !(first === '-' && text.length > 1 && text[1] !== ' ')) throw new Unsupported();
  if (text.includes(' #') || text.includes(': ') || text.endsWith(':')) throw new Unsupported();
  return plain(text);
}

/** Where a `key:` ends in a line: the first `: ` (or a final `:`) outside quotes, if the key is simple. */
function splitKey(text: string): { key: string; rest: string } | undefined {
  const m = /^([^\s'"#[\]{}!&*|>%@`?,:](?:[^:#]|:(?=[^ ]))*?|"[^"\\]*"|'[^']*'):(?: (.*)|)$/.exec(text);
  if (!m) return undefined;
  return { key: m[1]!, rest: m[2] ?? '' };
}

function keyOf(raw: string, plain: Resolve): string {
  // `<<` merges another map in under YAML 1.1: the general parser's business.
  if (raw.trim() === '<<') throw new Unsupported();
  const key = scalar(raw, plain);
  if (typeof key !== 'string') throw new Unsupported();
  return key;
}

class Parser {
  private i = 0;

  constructor(
    private readonly lines: Line[],
    private readonly plain: Resolve,
  ) {}

  parseDocument(): unknown {
    const value = this.block(0);
    if (this.i !== this.lines.length) throw new Unsupported();
    return value;
  }

  /** The node whose lines start at the current one, indented `indent`. */
  private block(indent: number): unknown {
    const line = this.lines[this.i];
    if (!line || line.indent !== indent) throw new Unsupported();
    return line.text.startsWith('- ') || line.text === '-' ? this.sequence(indent) : this.map(indent);
  }

  private map(indent: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    while (this.i < this.lines.length) {
      const line = this.lines[this.i]!;
      if (line.indent < indent) break;
      if (line.indent > indent || line.text.startsWith('- ')) throw new Unsupported();
      this.i++;
      this.entry(line.text, indent, out);
    }
    return out;
  }

  /** One `key: value` (or `key:` and its nested node) into `out`. */
  private entry(text: string, indent: number, out: Record<string, unknown>): void {
    const split = splitKey(text);
    if (!split) throw new Unsupported();
    const key = keyOf(split.key, this.plain);
    if (Object.hasOwn(out, key)) throw new Unsupported();
    if (split.rest.trim() !== '') {
      out[key] = scalar(split.rest, this.plain);
      return;
    }
    const next = this.lines[this.i];
    if (next && next.indent > indent) out[key] = this.block(next.indent);
    // A sequence may sit at its key's own indent (go-yaml's layout).
    else if (next && next.indent === indent && (next.text.startsWith('- ') || next.text === '-')) out[key] = this.sequence(indent);
    else out[key] = null;
  }

  private sequence(indent: number): unknown[] {
    const out: unknown[] = [];
    while (this.i < this.lines.length) {
      const line = this.lines[this.i]!;
      if (line.indent !== indent || !(line.text.startsWith('- ') || line.text === '-')) {
        if (line.indent > indent) throw new Unsupported();
        break;
      }
      this.i++;
      const rest = line.text === '-' ? '' : line.text.slice(2);
      if (rest.trim() === '') {
        const next = this.lines[this.i];
        out.push(next && next.indent > indent ? this.block(next.indent) : null);
      } else if (rest.startsWith('- ') || rest === '-') {
        throw new Unsupported();
      } else if (splitKey(rest)) {
        // `- key: value` starts a map whose other keys sit two columns in.
        const item: Record<string, unknown> = {};
        const inner = indent + 2;
        this.entry(rest, inner, item);
        while (this.i < this.lines.length) {
          const next = this.lines[this.i]!;
          if (next.indent !== inner || next.text.startsWith('- ')) {
            if (next.indent > inner) throw new Unsupported();
            break;
          }
          this.i++;
          this.entry(next.text, inner, item);
        }
        out.push(item);
      } else {
        out.push(scalar(rest, this.plain));
      }
    }
    return out;
  }
}

/** The value of a YAML body, or undefined when the general parser must read it. */
export function fastParseYaml(text: string): unknown {
  if (text.includes('\t') || text.includes('#') || text.includes('\r')) return undefined;
  const lines: Line[] = [];
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    if (raw === '---' || raw === '...') return undefined;
    const indent = raw.length - raw.trimStart().length;
    lines.push({ indent, text: raw.slice(indent).trimEnd() });
  }
  if (lines.length === 0) return undefined;
  try {
    return new Parser(lines, plain).parseDocument();
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
}
