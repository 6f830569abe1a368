/**
 * Label selectors in upstream's string syntax (`labels.Parse`): `a=b`, `a==b`, `a!=b`,
 * `a in (x,y)`, `a notin (x,y)`, `a` (exists), `!a` (does not exist), `a>1`, `a<1`,
 * comma-separated and ANDed. The lexer, the grammar and every error message follow upstream, so
 * that a bad selector answers the same 400 text (docs/API.md, "Reads and resourceVersion").
 */
import { isQualifiedName, isValidLabelValue } from '../validation/names';

export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  /** Sorted and without duplicates, as upstream's string set. */
  values: string[];
}

export interface LabelSelector {
  requirements: LabelRequirement[];
  /** True for the empty selector, which matches everything. */
  empty: boolean;
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
  toString(): string;
}

/** A selector string upstream would reject; the message is upstream's. */
export class SelectorParseError extends Error {}

type Token = 'end' | ')' | ',' | '!' | '==' | '=' | '>' | 'id' | 'in' | '<' | '!=' | 'notin' | '(';

interface Scanned {
  tok: Token;
  lit: string;
}

const SYMBOL_TOKENS: ReadonlyMap<string, Token> = new Map<string, Token>([
  [')', ')'],
  [',', ','],
  ['!', '!'],
  ['==', '=='],
  ['=', '='],
  ['>', '>'],
  ['<', '<'],
  ['!=', '!='],
  ['(', '('],
]);
const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

const isSpecial = (c: string): boolean => '=!(),><'.includes(c);
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';

/** Upstream's lexer: identifiers run to the next space or special symbol; symbols are matched greedily. */
function scan(text: string): Scanned[] {
  const out: Scanned[] = [];
  let pos = 0;
  for (;;) {
    while (pos < text.length && isSpace(text[pos]!)) pos++;
    if (pos >= text.length) {
      out.push({ tok: 'end', lit: '' });
      return out;
    }
    const start = pos;
    if (isSpecial(text[pos]!)) {
      let best: Scanned | undefined;
      while (pos < text.length && isSpecial(text[pos]!)) {
        const tok = SYMBOL_TOKENS.get(text.slice(start, pos + 1));
        if (tok) best = { tok, lit: text.slice(start, pos + 1) };
        else if (best) break;
        pos++;
      }
      pos = start + best!.lit.length;
      out.push(best!);
    } else {
      while (pos < text.length && !isSpecial(text[pos]!) && !isSpace(text[pos]!)) pos++;
      const lit = text.slice(start, pos);
      out.push({ tok: lit === 'in' ? 'in' : lit === 'notin' ? 'notin' : 'id', lit });
    }
  }
}

class Parser {
  private position = 0;
  constructor(private readonly items: Scanned[]) {}

  /** In a values context the keywords `in`/`notin` are plain identifiers. */
  private look(values: boolean): Scanned {
    const item = this.items[this.position]!;
    return values && (item.tok === 'in' || item.tok === 'notin') ? { tok: 'id', lit: item.lit } : item;
  }

  private take(values: boolean): Scanned {
    const item = this.look(values);
    this.position++;
    return item;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.look(true);
      if (tok === 'id' || tok === '!') {
        try {
          requirements.push(this.requirement());
        } catch (err) {
          if (err instanceof SelectorParseError) throw new SelectorParseError(`unable to parse requirement: ${err.message}`);
          throw err;
        }
        const next = this.take(true);
        if (next.tok === 'end') return requirements;
        if (next.tok === ',') {
          const after = this.look(true);
          if (after.tok !== 'id' && after.tok !== '!') throw new SelectorParseError(`found '${after.lit}', expected: identifier after ','`);
        } else {
          throw new SelectorParseError(`found '${next.lit}', expected: ',' or 'end of string'`);
        }
      } else if (tok === 'end') {
        return requirements;
      } else {
        throw new SelectorParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private requirement(): LabelRequirement {
    let negated = false;
    let { tok, lit } = this.take(true);
    if (tok === '!') {
      negated = true;
      ({ tok, lit } = this.take(true));
    }
    if (tok !== 'id') throw new SelectorParseError(`found '${lit}', expected: identifier`);
    const keyErrors = isQualifiedName(lit);
    // Upstream validates the key against a nil field path, which prints as `<nil>`.
    if (keyErrors.length) throw new SelectorParseError(`<nil>: Invalid value: ${JSON.stringify(lit)}: ${keyErrors.join('; ')}`);
    const key = lit;
    const next = this.look(true).tok;
    if (negated) return newRequirement(key, '!', []);
    if (next === 'end' || next === ',') return newRequirement(key, 'exists', []);
    const op = this.operator();
    const values = op === 'in' || op === 'notin' ? this.setValues() : this.exactValue();
    return newRequirement(key, op, [...values].sort());
  }

  private operator(): LabelOperator {
    const { tok, lit } = this.take(false);
    switch (tok) {
      case 'in':
      case 'notin':
      case '=':
      case '==':
      case '!=':
        return tok;
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      default:
        throw new SelectorParseError(`found '${lit}', expected: ${BINARY_OPERATORS}`);
    }
  }

  private setValues(): Set<string> {
    const open = this.take(true);
    if (open.tok !== '(') throw new SelectorParseError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.look(true);
    if (tok === 'id' || tok === ',') {
      const values = this.identifierList();
      if (this.take(true).tok !== ')') throw new SelectorParseError(`found '${lit}', expected: ')'`);
      return values;
    }
    if (tok === ')') {
      this.take(true);
      return new Set(['']);
    }
    throw new SelectorParseError(`found '${lit}', expected: ',', ')' or identifier`);
  }

  private identifierList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const { tok, lit } = this.take(true);
      if (tok === 'id') {
        values.add(lit);
        const after = this.look(true);
        if (after.tok === ',') continue;
        if (after.tok === ')') return values;
        throw new SelectorParseError(`found '${after.lit}', expected: ',' or ')'`);
      } else if (tok === ',') {
        if (values.size === 0) values.add('');
        const after = this.look(true).tok;
        if (after === ')') {
          values.add('');
          return values;
        }
        if (after === ',') values.add('');
      } else {
        throw new SelectorParseError(`found '${lit}', expected: ',', or identifier`);
      }
    }
  }

  private exactValue(): Set<string> {
    const ahead = this.look(true).tok;
    if (ahead === 'end' || ahead === ',') return new Set(['']);
    const { tok, lit } = this.take(true);
    if (tok === 'id') return new Set([lit]);
    throw new SelectorParseError(`found '${lit}', expected: identifier`);
  }
}

const INTEGER = /^[+-]?\d+$/;

/** Upstream's NewRequirement checks, errors aggregated as `[a, b]` when there are several. */
function newRequirement(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const errors: string[] = [];
  if (operator === 'gt' || operator === 'lt') {
    values.forEach((v, i) => {
      if (!INTEGER.test(v)) errors.push(`values[${i}]: Invalid value: ${JSON.stringify(v)}: for 'Gt', 'Lt' operators, the value must be an integer`);
    });
  }
  values.forEach((v, i) => {
    const problems = isValidLabelValue(v);
    if (problems.length) errors.push(`values[${i}][${key}]: Invalid value: ${JSON.stringify(v)}: ${problems.join('; ')}`);
  });
  if (errors.length === 1) throw new SelectorParseError(errors[0]);
  if (errors.length > 1) throw new SelectorParseError(`[${errors.join(', ')}]`);
  return { key, operator, values };
}

function requirementMatches(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = has ? labels[r.key]! : '';
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return has && r.values.includes(value);
    case '!=':
    case 'notin':
      return !has || !r.values.includes(value);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || !INTEGER.test(value)) return false;
      const n = BigInt(value);
      const limit = BigInt(r.values[0]!);
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

/** Parse upstream's label selector syntax; throws SelectorParseError carrying upstream's message. */
export function parseLabelSelector(text: string): LabelSelector {
  const requirements = new Parser(scan(text)).parse();
  if (requirements.length === 0) return EVERYTHING;
  // Upstream sorts requirements by key for a deterministic string form.
  return makeLabelSelector([...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
}
