/**
 * A JSON decoder that notices what `JSON.parse` silently resolves: a key given twice in one
 * object. Upstream decodes request bodies with its JSON library's strict mode, which keeps the
 * last value (as `JSON.parse` does) and reports each duplicate by its path in Go's notation —
 * keys joined with `.`, array indexes as `[i]` (`spec.template.spec.containers[0].image`) —
 * for `fieldValidation` (docs/API.md, "Field validation").
 *
 * The decoder also remembers where each key first appeared, so that strict errors found later
 * against the schema (unknown fields) can be merged with the duplicates in document order, as
 * upstream's single-pass decoder reports them.
 *
 * Malformed input is left to `JSON.parse`, so syntax errors keep the wording clients already see.
 */
import { joinIndex, joinKey } from './go-strings';

export interface DuplicateKey {
  /** Go's field path of the repeated key, e.g. `metadata.labels.app`. */
  readonly path: string;
  /** Position in the document's sequence of keys (for ordering against other strict errors). */
  readonly seq: number;
}

export interface StrictJson {
  readonly value: unknown;
  /** Keys repeated within one object, in document order. */
  readonly duplicates: readonly DuplicateKey[];
  /**
   * Where each key path of `value` first appeared in the document (its `seq`), kept only when
   * there are duplicates to order against. Paths under a repeated key are those of the value
   * that was kept (the last).
   */
  readonly firstSeen: ReadonlyMap<string, number>;
}

class Malformed extends Error {}

/** Go's path notation: `a.b`, `a[0]`, `[0].b`. */
class Parser {
  private i = 0;
  private seq = 0;
  readonly duplicates: DuplicateKey[] = [];
  readonly firstSeen = new Map<string, number>();

  /** Remember where keys first appeared (only needed when there are duplicates to order against). */
  constructor(
    private readonly s: string,
    private readonly trackOrder: boolean,
  ) {}

  parseDocument(): unknown {
    const v = this.value('');
    this.space();
    if (this.i !== this.s.length) throw new Malformed();
    return v;
  }

  private space(): void {
    const s = this.s;
    for (;;) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else return;
    }
  }

  private value(path: string): unknown {
    this.space();
    const c = this.s.charCodeAt(this.i);
    if (c === 0x7b) return this.object(path);
    if (c === 0x5b) return this.array(path);
    if (c === 0x22) return this.string();
    if (c === 0x74) return this.literal('true', true);
    if (c === 0x66) return this.literal('false', false);
    if (c === 0x6e) return this.literal('null', null);
    return this.number();
  }

  private literal<T>(word: string, v: T): T {
    if (!this.s.startsWith(word, this.i)) throw new Malformed();
    this.i += word.length;
    return v;
  }

  private number(): number {
    const m = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    m.lastIndex = this.i;
    const match = m.exec(this.s);
    if (!match || match[0].length === 0) throw new Malformed();
    this.i += match[0].length;
    return Number(match[0]);
  }

  private string(): string {
    const s = this.s;
    const start = this.i + 1;
    let escaped = false;
    for (let j = start; j < s.length; j++) {
      const c = s.charCodeAt(j);
      if (c === 0x22) {
        this.i = j + 1;
        return escaped ? (JSON.parse(s.slice(start - 1, j + 1)) as string) : s.slice(start, j);
      }
      if (c === 0x5c) {
        escaped = true;
        j++;
      } else if (c < 0x20) {
        throw new Malformed();
      }
    }
    throw new Malformed();
  }

  private object(path: string): Record<string, unknown> {
    this.i++;
    const obj: Record<string, unknown> = {};
    this.space();
    if (this.s.charCodeAt(this.i) === 0x7d) {
      this.i++;
      return obj;
    }
    for (;;) {
      this.space();
      if (this.s.charCodeAt(this.i) !== 0x22) throw new Malformed();
      const key = this.string();
      const seq = this.seq++;
      // Paths are made only by the second, order-tracking pass (decodeStrictJson runs it when
      // the first found a repeated key); the first only needs to know that there was one.
      const keyPath = this.trackOrder ? joinKey(path, key) : '';
      if (Object.hasOwn(obj, key)) {
        this.duplicates.push({ path: keyPath, seq });
        if (this.trackOrder) this.forgetBelow(keyPath);
      } else if (this.trackOrder) {
        this.firstSeen.set(keyPath, seq);
      }
      this.space();
      if (this.s.charCodeAt(this.i) !== 0x3a) throw new Malformed();
      this.i++;
      const v = this.value(keyPath);
      // `__proto__` must become an own property, as JSON.parse makes it.
      if (key === '__proto__') Object.defineProperty(obj, key, { value: v, writable: true, enumerable: true, configurable: true });
      else obj[key] = v;
      this.space();
      const c = this.s.charCodeAt(this.i++);
      if (c === 0x7d) return obj;
      if (c !== 0x2c) throw new Malformed();
    }
  }

  /** A repeated key's earlier value is dropped: so are the positions of the paths inside it. */
  private forgetBelow(path: string): void {
    for (const p of this.firstSeen.keys()) {
      if (p.startsWith(`${path}.`) || p.startsWith(`${path}[`)) this.firstSeen.delete(p);
    }
  }

  private array(path: string): unknown[] {
    this.i++;
    const arr: unknown[] = [];
    this.space();
    if (this.s.charCodeAt(this.i) === 0x5d) {
      this.i++;
      return arr;
    }
    for (;;) {
      arr.push(this.value(this.trackOrder ? joinIndex(path, arr.length) : ''));
      this.space();
      const c = this.s.charCodeAt(this.i++);
      if (c === 0x5d) return arr;
      if (c !== 0x2c) throw new Malformed();
    }
  }
}

const NO_ORDER: ReadonlyMap<string, number> = new Map();

/** The keys of every object in a parsed JSON value (walked with a stack: its depth was checked). */
function keyCount(value: unknown): number {
  const stack: unknown[] = [value];
  let count = 0;
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else {
      for (const key in v) {
        count++;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return count;
}

/**
 * Decode JSON text, reporting duplicate keys. Throws `JSON.parse`'s SyntaxError on malformed
 * input (callers word it as they word any JSON error). `members`, the text's count of object
 * members from checkJsonNesting (codecs/limits.ts), lets a text with no repeated key be decoded
 * by JSON.parse alone.
 */
export function decodeStrictJson(input: string | Uint8Array, members?: number): StrictJson {
  const text = typeof input === 'string' ? input : Buffer.from(input).toString('utf8');
  if (members !== undefined) {
    // JSON.parse, then: as many keys in the value as members in the text means no key was given
    // twice. Only when one was does the parser below run, to say which.
    const value = JSON.parse(text) as unknown;
    if (keyCount(value) === members) return { value, duplicates: [], firstSeen: NO_ORDER };
  }
  let parser = new Parser(text, false);
  let value: unknown;
  try {
    value = parser.parseDocument();
    if (parser.duplicates.length > 0) {
      // Rare: parse again, remembering key positions to merge with the schema's findings.
      parser = new Parser(text, true);
      value = parser.parseDocument();
    }
  } catch {
    // Malformed (JSON.parse throws its own message) or too deep for this parser.
    return { value: JSON.parse(text) as unknown, duplicates: [], firstSeen: NO_ORDER };
  }
  if (parser.duplicates.length === 0) return { value, duplicates: [], firstSeen: NO_ORDER };
  return {
    value,
    duplicates: parser.duplicates,
    firstSeen: parser.firstSeen,
  };
}
