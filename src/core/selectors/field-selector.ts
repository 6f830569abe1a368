/**
 * Field selectors: `a=b`, `a==b`, `a!=b`, comma-separated and ANDed, with `\` escaping `,`,
 * `=`, `!` and `\` in values. Which fields are selectable is each type's business
 * (`ResourceDefinition.selectableFields`); `metadata.name` and `metadata.namespace` always are.
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
  matches(fields: Record<string, string>): boolean;
  toString(): string;
}

function splitUnescaped(text: string, sep: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      current += c + text[i + 1];
      i++;
    } else if (c === sep) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}

function unescape(value: string): string {
  return value.replace(/\\(.)/g, '$1');
}

export function parseFieldSelector(text: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  if (text.trim() !== '') {
    for (const part of splitUnescaped(text, ',')) {
      const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/s.exec(part.trim());
      if (!m) throw new SelectorParseError(`invalid selector: '${text}'; can't understand '${part}'`);
      requirements.push({ field: m[1]!.trim(), operator: m[2] === '!=' ? '!=' : '=', value: unescape(m[3]!) });
    }
  }
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (fields) =>
      requirements.every((r) => (r.operator === '=' ? fields[r.field] === r.value : fields[r.field] !== r.value)),
    toString: () => requirements.map((r) => `${r.field}${r.operator}${r.value}`).join(','),
  };
}
