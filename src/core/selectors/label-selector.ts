/**
 * Label selectors in upstream's string syntax: `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x,y)`, `a` (exists), `!a` (does not exist), `a>1`, `a<1`, comma-separated and
 * ANDed. Parsing failures are 400 BadRequest at the door.
 */

export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

export interface LabelSelector {
  requirements: LabelRequirement[];
  /** True for the empty selector, which matches everything. */
  empty: boolean;
  matches(labels: Record<string, string> | undefined): boolean;
  toString(): string;
}

export class SelectorParseError extends Error {}

const KEY_CHARS = /[A-Za-z0-9_.\-/]/;
const VALUE_CHARS = /[A-Za-z0-9_.\-]/;

class Lexer {
  pos = 0;
  constructor(readonly text: string) {}

  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos]!)) this.pos++;
  }

  peek(): string {
    this.skipSpace();
    return this.text[this.pos] ?? '';
  }

  atEnd(): boolean {
    return this.peek() === '';
  }

  word(chars: RegExp): string {
    this.skipSpace();
    const start = this.pos;
    while (this.pos < this.text.length && chars.test(this.text[this.pos]!)) this.pos++;
    return this.text.slice(start, this.pos);
  }

  take(token: string): boolean {
    this.skipSpace();
    if (this.text.startsWith(token, this.pos)) {
      this.pos += token.length;
      return true;
    }
    return false;
  }
}

function requirementMatches(r: LabelRequirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key];
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return has && r.values.includes(value!);
    case '!=':
    case 'notin':
      return !has || !r.values.includes(value!);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(value!)) return false;
      const n = Number(value);
      const limit = Number(r.values[0]);
      return r.operator === 'gt' ? n > limit : n < limit;
    }
  }
}

function requirementString(r: LabelRequirement): string {
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.operator} (${r.values.join(',')})`;
    case 'gt':
      return `${r.key}>${r.values[0]}`;
    case 'lt':
      return `${r.key}<${r.values[0]}`;
    default:
      return `${r.key}${r.operator}${r.values[0]}`;
  }
}

export function makeLabelSelector(requirements: LabelRequirement[]): LabelSelector {
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (labels) => requirements.every((r) => requirementMatches(r, labels ?? {})),
    toString: () => requirements.map(requirementString).join(','),
  };
}

export const EVERYTHING: LabelSelector = makeLabelSelector([]);

function parseValues(lx: Lexer): string[] {
  if (!lx.take('(')) throw new SelectorParseError(`found '${lx.peek()}', expected: '('`);
  const values: string[] = [];
  for (;;) {
    values.push(lx.word(VALUE_CHARS));
    if (lx.take(')')) return values;
    if (!lx.take(',')) throw new SelectorParseError(`found '${lx.peek()}', expected: ',' or ')'`);
  }
}

/** Parse upstream's label selector syntax; throws SelectorParseError with a readable message. */
export function parseLabelSelector(text: string): LabelSelector {
  const lx = new Lexer(text);
  const requirements: LabelRequirement[] = [];
  if (lx.atEnd()) return EVERYTHING;
  for (;;) {
    let req: LabelRequirement;
    if (lx.take('!')) {
      const key = lx.word(KEY_CHARS);
      if (!key) throw new SelectorParseError(`found '${lx.peek()}', expected: identifier after '!'`);
      req = { key, operator: '!', values: [] };
    } else {
      const key = lx.word(KEY_CHARS);
      if (!key) throw new SelectorParseError(`found '${lx.peek() || 'EOS'}', expected: !, identifier, or 'end of string'`);
      const next = lx.peek();
      if (next === '' || next === ',') req = { key, operator: 'exists', values: [] };
      else if (lx.take('==')) req = { key, operator: '==', values: [lx.word(VALUE_CHARS)] };
      else if (lx.take('!=')) req = { key, operator: '!=', values: [lx.word(VALUE_CHARS)] };
      else if (lx.take('=')) req = { key, operator: '=', values: [lx.word(VALUE_CHARS)] };
      else if (lx.take('>')) req = { key, operator: 'gt', values: [lx.word(VALUE_CHARS)] };
      else if (lx.take('<')) req = { key, operator: 'lt', values: [lx.word(VALUE_CHARS)] };
      else if (lx.take('notin')) req = { key, operator: 'notin', values: parseValues(lx) };
      else if (lx.take('in')) req = { key, operator: 'in', values: parseValues(lx) };
      else throw new SelectorParseError(`found '${next}', expected: in, notin, =, ==, !=, gt, lt`);
      if ((req.operator === 'gt' || req.operator === 'lt') && !/^-?\d+$/.test(req.values[0] ?? '')) {
        throw new SelectorParseError(`for 'Gt', 'Lt' operators, the value must be an integer`);
      }
    }
    validateRequirement(req);
    requirements.push(req);
    if (lx.atEnd()) break;
    if (!lx.take(',')) throw new SelectorParseError(`found '${lx.peek()}', expected: ',' or 'end of string'`);
  }
  return makeLabelSelector(requirements);
}

const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function validateRequirement(r: LabelRequirement): void {
  const slash = r.key.indexOf('/');
  const [prefix, name] = slash >= 0 ? [r.key.slice(0, slash), r.key.slice(slash + 1)] : ['', r.key];
  if (!NAME_PART.test(name) || name.length > 63 || (slash >= 0 && (!DNS_SUBDOMAIN.test(prefix) || prefix.length > 253))) {
    throw new SelectorParseError(`invalid label key "${r.key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`);
  }
  for (const v of r.values) {
    if (v.length > 63 || (v !== '' && !NAME_PART.test(v))) {
      throw new SelectorParseError(`invalid label value: "${v}": at key: "${r.key}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`);
    }
  }
  if ((r.operator === 'in' || r.operator === 'notin') && r.values.length === 0) {
    throw new SelectorParseError(`for 'in', 'notin' operators, values set can't be empty`);
  }
}
