/**
 * Field selectors as upstream parses them (`fields.ParseSelector`): terms `a=b`, `a==b`, `a!=b`,
 * split on unescaped commas and ANDed; in values `\` escapes `\`, `,` and `=`. Which fields a
 * type can be selected on is its definition's business (`ResourceDefinition.selectableFields`,
 * checked in selection.ts); the parse errors and their messages are upstream's.
 */
import { SelectorParseError } from './label-selector';

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

export interface FieldSelector {
  requirements: FieldRequirement[];
  empty: boolean;
  /** A field absent from `fields` reads as '' (upstream's fields.Set). */
  matches(fields: Readonly<Record<string, string>>): boolean;
  toString(): string;
}

/** Split on commas not preceded by an escaping backslash. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === ',') {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

const OPERATORS = ['!=', '==', '='] as const;

/** The first operator found scanning left to right splits a term; no trimming, as upstream. */
function splitTerm(term: string): { lhs: string; op: (typeof OPERATORS)[number]; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of OPERATORS) {
      if (term.startsWith(op, i)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

function unescapeValue(value: string): string {
  if (!/[\\,=]/.test(value)) return value;
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\') {
      const next = value[i + 1];
      if (next === undefined) throw new SelectorParseError('invalid field selector: invalid escape sequence: \\');
      if (next !== '\\' && next !== ',' && next !== '=') {
        throw new SelectorParseError(`invalid field selector: invalid escape sequence: \\${next}`);
      }
      out += next;
      i++;
    } else if (c === ',' || c === '=') {
      throw new SelectorParseError(`invalid field selector: unescaped character in value: ${c}`);
    } else {
      out += c;
    }
  }
  return out;
}

function escapeValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

export function parseFieldSelector(text: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  // Upstream sorts the raw terms before parsing them.
  for (const term of splitTerms(text).sort()) {
    if (term === '') continue;
    const split = splitTerm(term);
    if (!split) throw new SelectorParseError(`invalid selector: '${text}'; can't understand '${term}'`);
    requirements.push({ field: split.lhs, operator: split.op === '!=' ? '!=' : '=', value: unescapeValue(split.rhs) });
  }
  return makeFieldSelector(requirements);
}

function fieldValue(fields: Readonly<Record<string, string>>, field: string): string {
  return Object.hasOwn(fields, field) ? fields[field]! : '';
}

export function makeFieldSelector(requirements: FieldRequirement[]): FieldSelector {
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (fields) => requirements.every((r) => (fieldValue(fields, r.field) === r.value) === (r.operator === '=')),
    toString: () => requirements.map((r) => `${r.field}${r.operator}${escapeValue(r.value)}`).join(','),
  };
}
