/**
 * Field errors with typed paths, formatted as upstream's `field.Error`:
 * `spec.selector: Required value`, `metadata.name: Invalid value: "Foo": <detail>`.
 * They become the `causes` of a 422 Invalid Status (see status.invalid).
 */
import type { FieldErrorLike } from '../../status';

export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'InternalError';

/** field.ErrorType's String (FieldValueTypeInvalid reads as Invalid value). */
export const FIELD_ERROR_TYPE_TEXT: Readonly<Record<FieldErrorType, string>> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
  InternalError: 'Internal error',
};

/** Which types print the offending value (upstream omits it for Required, Forbidden, TooLong, TooMany, Internal). */
const SHOWS_VALUE = new Set<FieldErrorType>([
  'FieldValueNotFound',
  'FieldValueDuplicate',
  'FieldValueInvalid',
  'FieldValueNotSupported',
  'FieldValueTypeInvalid',
]);

/**
 * A path into an object: `metadata.labels[app]`, `spec.template.spec.containers[0].name`.
 *
 * Validation makes one for every field it looks at and prints almost none (only those with
 * errors), so a path is a link to its parent and its text is built when first asked for.
 */
export class FieldPath {
  private text?: string;

  private constructor(
    private readonly parent: FieldPath | undefined,
    /** A field name, or an index or key (`bracketed`). */
    private readonly segment: string | number,
    private readonly bracketed: boolean,
  ) {}

  static root(name: string, ...more: string[]): FieldPath {
    let path = new FieldPath(undefined, name, false);
    for (const n of more) path = path.child(n);
    return path;
  }

  child(name: string, ...more: string[]): FieldPath {
    let path = new FieldPath(this, name, false);
    for (const n of more) path = path.child(n);
    return path;
  }

  index(i: number): FieldPath {
    return new FieldPath(this, i, true);
  }

  key(k: string): FieldPath {
    return new FieldPath(this, k, true);
  }

  toString(): string {
    if (this.text === undefined) {
      const above = this.parent?.toString() ?? '';
      this.text = this.bracketed ? `${above}[${this.segment}]` : above ? `${above}.${this.segment}` : String(this.segment);
    }
    return this.text;
  }
}

export interface FieldError extends FieldErrorLike {
  type: FieldErrorType;
  badValue?: unknown;
  detail?: string;
}

/** A bad value printed as it is, for Go renderings JSON has no form of (`[]byte{0x2d, …}`). */
export class GoLiteral {
  constructor(readonly text: string) {}
}

/** Go's %q-ish rendering of a bad value, close to what upstream prints for scalars. */
export function formatBadValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof GoLiteral) return value.text;
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

function make(type: FieldErrorType, path: FieldPath | string, badValue: unknown, detail: string | undefined, showValue = SHOWS_VALUE.has(type)): FieldError {
  const field = path.toString();
  let body = FIELD_ERROR_TYPE_TEXT[type];
  if (showValue) body += `: ${formatBadValue(badValue)}`;
  if (detail) body += `: ${detail}`;
  return {
    type,
    field,
    badValue,
    detail,
    causeReason: type,
    causeMessage: body,
    message: field ? `${field}: ${body}` : body,
  };
}

export const fieldErrors = {
  required: (path: FieldPath | string, detail?: string) => make('FieldValueRequired', path, '', detail),
  invalid: (path: FieldPath | string, value: unknown, detail?: string) => make('FieldValueInvalid', path, value, detail),
  notSupported: (path: FieldPath | string, value: unknown, supported: readonly string[]) =>
    make('FieldValueNotSupported', path, value, supported.length ? `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}` : undefined),
  duplicate: (path: FieldPath | string, value: unknown, detail?: string) => make('FieldValueDuplicate', path, value, detail),
  forbidden: (path: FieldPath | string, detail: string) => make('FieldValueForbidden', path, '', detail),
  tooLong: (path: FieldPath | string, maxBytes: number) => make('FieldValueTooLong', path, '', `may not be more than ${maxBytes} bytes`),
  tooMany: (path: FieldPath | string, actual: number, max: number) => make('FieldValueTooMany', path, '', `${actual}: must have at most ${max} items`),
  typeInvalid: (path: FieldPath | string, value: unknown, detail: string) => make('FieldValueTypeInvalid', path, value, detail),
  notFound: (path: FieldPath | string, value: unknown) => make('FieldValueNotFound', path, value, undefined),
  internal: (path: FieldPath | string, detail: string) => make('InternalError', path, '', detail),
  /** "field is immutable", upstream's ValidateImmutableField. */
  immutable: (path: FieldPath | string, value: unknown) => make('FieldValueInvalid', path, value, 'field is immutable'),
};
