/**
 * A custom resource's value checked against its schema as upstream checks it: kube-openapi's
 * validate.SchemaValidator (the version Kubernetes 1.32 pins) over the schema apiextensions
 * builds (ConvertJSONSchemaProps with StripUnsupportedFormatsPostProcess), its errors turned
 * into field errors by apiextensions' kubeOpenAPIResultToFieldErrors; and the embedded
 * resources' apiVersion, kind and metadata (apiextensions' objectmeta.Validate).
 *
 * kube-openapi's behaviour is kept where it surprises, because clients see its messages:
 *
 * - every validator runs, in its order (type, allOf/anyOf/oneOf/not, string, format, number,
 *   slice, enum, object), so a value of the wrong type can also fail its enum;
 * - paths are kube-openapi's own text (`spec.items[0].name`, an additionalProperties key as
 *   `spec.labels.key`, a root property's required error as `.spec`), and only the field error's
 *   path drops the leading dot; errors of the anyOf/oneOf/allOf/not junctors are reported at
 *   the caller's path (`<nil>` for a custom resource) with the path quoted in the message;
 * - bounds and multipleOf compare an integer with the bound truncated to an integer (a maximum
 *   of 10.5 says `less than or equal to 10`), and a multipleOf below 1 fails every integer;
 * - an anyOf or oneOf that fails reports the errors of the branch that got furthest (the most
 *   checks passed, kube-openapi's MatchCount), which is counted here as upstream counts it;
 * - errors with the same message are reported once (Result.AddErrors).
 *
 * The walk recurses as deep as schema and value go together; both are bounded by the decode
 * limits (src/codecs/limits.ts), and the schema is refused past them (node.ts).
 */
import { FIELD_ERROR_TYPE_TEXT, type FieldPath, type FieldError, type FieldErrorType } from '../field-errors';
import { type SchemaNode, enumMatches, nodeRegex } from './node';
import { type GoKind, canonicalKey, goBadValue, goFloat, goInt64, goJson, goKind, goQuote, formatInt64, isInt64, isJsonInteger } from './go-values';
import { jsonEqual } from '../../../util/json-values';
import { validateObjectMeta } from '../metadata';
import { isDns1035Label } from '../names';
import type { ObjectMeta } from '../../api';
import { decodeObjectMeta } from './object-meta';
import { goPrint } from '../unknown-fields-go';

/** kube-openapi's error codes that apiextensions maps to particular field errors. */
type Code = 'invalidType' | 'required' | 'tooLong' | 'enum' | 'maxItems' | 'tooManyProperties' | 'other';

/** One kube-openapi error: a `*errors.Validation` (named, with a code) or a composite message. */
interface OpenApiError {
  readonly validation: boolean;
  readonly code: Code;
  /** The Validation's Name: the kube-openapi path. */
  readonly name: string;
  /** The Validation's Value, `undefined` for Go's nil. */
  readonly value: unknown;
  /** The Validation's Valid (a maximum) for the codes that print it. */
  readonly valid?: number;
  /** An enum's values (the Validation's Values). */
  readonly enumValues?: readonly unknown[];
  /** An enum error's path: with the values, what its message would say. */
  readonly enumPath?: string;
  readonly message: string;
}

const IN = 'body';

function verr(code: Code, name: string, value: unknown, message: string, valid?: number): OpenApiError {
  return { validation: true, code, name, value, message, ...(valid !== undefined ? { valid } : {}) };
}

function composite(message: string): OpenApiError {
  return { validation: false, code: 'other', name: '', value: undefined, message };
}

/** errors.InvalidType with a string value (the JSON type, format name or data): typeFailWithData. */
function invalidType(path: string, typeName: string, value: string): OpenApiError {
  return verr('invalidType', path, value, `${path} in ${IN} must be of type ${typeName}: ${goQuote(value)}`);
}

/** The JSON type schemaInfoForType gives a value of `reflect` kind `kind`. */
function jsonType(kind: GoKind): string {
  switch (kind) {
    case 'bool':
      return 'boolean';
    case 'string':
      return 'string';
    case 'int':
      return 'integer';
    case 'float':
      return 'number';
    case 'slice':
      return 'array';
    default:
      return 'object';
  }
}

/**
 * The validators push their errors into one list (a Result's errors, in order) and return
 * kube-openapi's MatchCount for what they checked; only the junctors' branches, whose results
 * are kept or dropped whole, get lists of their own.
 */
type Errors = OpenApiError[];

/**
 * SchemaValidator.Validate of `data` at `path`, returning its MatchCount. A ratcheting
 * validator (`corr`, CRDValidationRatcheting) drops the errors it found when the value equals
 * the old value it correlates with (MergeAsWarnings keeps the count).
 */
function validateNode(node: SchemaNode, data: unknown, path: string, errs: Errors, corr?: Correlation): number {
  if (!corr) return validateValue(node, data, path, errs, undefined);
  const before = errs.length;
  const count = validateValue(node, data, path, errs, corr);
  if (errs.length > before && corr.deepEqual()) errs.length = before;
  return count;
}

/**
 * SchemaValidator.Validate proper: the validators that apply to the value's kind, each adding
 * its MatchCount and one, and one more at the end; a null gets the type and enum validators
 * only, and their counts alone.
 */
function validateValue(node: SchemaNode, data: unknown, path: string, errs: Errors, corr: Correlation | undefined): number {
  if (data === null || data === undefined) {
    // typeValidator.Validate(nil) runs whether or not it applies: no type, or nullable, passes.
    let count = 0;
    if (node.types && !node.types.includes('null') && !node.nullable) errs.push(invalidType(path, node.typeText, 'null'));
    else count = 1;
    if (node.enum) errs.push(enumFail(node, path, null));
    return count;
  }
  const kind = goKind(data);
  let count = 0;
  if (node.types || node.format !== '') count += typeValidator(node, data, kind, path, errs) + 1;
  count += (node.junctors ? schemaPropsValidator(node, data, path, errs) : 1) + 1;
  if (kind === 'string') {
    if (node.stringChecks) stringValidator(node, data as string, path, errs);
    count++;
    if (node.formatCheck) {
      if (!node.formatCheck(data as string))
        errs.push(verr('invalidType', path, data, `${path} in ${IN} must be of type ${node.format}: ${goQuote(data as string)}`));
      count++;
    }
  } else if (kind === 'int' || kind === 'float') {
    if (node.numberChecks) numberValidator(node, data as number, kind === 'int', path, errs);
    count += 2;
  } else if (kind === 'slice') {
    count += sliceValidator(node, data as unknown[], path, errs, corr) + 1;
  }
  if (node.enum && !enumMatches(node.enum, data)) errs.push(enumFail(node, path, data));
  count++;
  if (kind === 'map') count += objectValidator(node, data as Record<string, unknown>, path, errs, corr) + 1;
  return count + 1;
}

/** typeValidator.Validate: 1 when it passes, 0 when it fails (its error Result counts nothing). */
function typeValidator(node: SchemaNode, data: unknown, kind: GoKind, path: string, errs: Errors): number {
  const types = node.types ?? NO_TYPES;
  const schType = jsonType(kind);
  // The common case first: the value is of the (only) type and no format is in play.
  if (node.format === '' && types.includes(schType)) return 1;
  const format = kind === 'int' ? 'int64' : kind === 'float' ? 'float64' : '';
  const isFloatInt = schType === 'number' && isJsonInteger(data as number) && types.includes('integer');
  const isIntFloat = schType === 'integer' && types.includes('number');
  if (kind !== 'string' && kind !== 'slice' && node.format !== '' && !(types.includes(schType) || format === node.format || isFloatInt || isIntFloat)) {
    errs.push(invalidType(path, node.format, format));
    return 0;
  }
  // A string or list with a format and no numeric type is left to the format validator.
  if (!(types.includes('number') || types.includes('integer')) && node.format !== '' && (kind === 'string' || kind === 'slice')) return 1;
  if (!(types.includes(schType) || isFloatInt || isIntFloat)) {
    errs.push(invalidType(path, node.typeText, schType));
    return 0;
  }
  return 1;
}

const NO_TYPES: readonly string[] = [];

/** One junctor branch: its own errors and count (a Result), kept or dropped whole. */
function branch(node: SchemaNode, data: unknown, path: string): { errs: Errors; count: number } {
  const errs: Errors = [];
  // The junctors' validators are plain SchemaValidators (their options are dropped): no ratcheting inside.
  const count = validateNode(node, data, path, errs);
  return { errs, count };
}

/** schemaPropsValidator.Validate: anyOf, oneOf, allOf, not (the junctors validate at the same path). */
function schemaPropsValidator(node: SchemaNode, data: unknown, path: string, errs: Errors): number {
  let count = 0;
  const keep = (r: { errs: Errors; count: number }) => {
    for (const e of r.errs) errs.push(e);
    count += r.count;
  };
  if (node.anyOf && node.anyOf.length > 0) {
    let best: { errs: Errors; count: number } | undefined;
    let firstSuccess: { errs: Errors; count: number } | undefined;
    for (const sub of node.anyOf) {
      const r = branch(sub, data, path);
      if (r.errs.length === 0) {
        best = undefined;
        firstSuccess = r;
        break;
      }
      if (!best || r.count > best.count) best = r;
    }
    if (!firstSuccess) errs.push(composite(`${goQuote(path)} must validate at least one schema (anyOf)`));
    if (best) keep(best);
    else if (firstSuccess) keep(firstSuccess);
  }
  if (node.oneOf && node.oneOf.length > 0) {
    let best: { errs: Errors; count: number } | undefined;
    let firstSuccess: { errs: Errors; count: number } | undefined;
    let validated = 0;
    for (const sub of node.oneOf) {
      const r = branch(sub, data, path);
      if (r.errs.length === 0) {
        validated++;
        best = undefined;
        firstSuccess ??= r;
        continue;
      }
      if (validated === 0 && (!best || r.count > best.count)) best = r;
    }
    if (validated !== 1) {
      const more = validated === 0 ? 'Found none valid' : `Found ${validated} valid alternatives`;
      errs.push(composite(`${goQuote(path)} must validate one and only one schema (oneOf). ${more}`));
      if (best) keep(best);
    } else if (firstSuccess) {
      keep(firstSuccess);
    }
  }
  if (node.allOf && node.allOf.length > 0) {
    let validated = 0;
    for (const sub of node.allOf) {
      const r = branch(sub, data, path);
      if (r.errs.length === 0) validated++;
      keep(r);
    }
    if (validated !== node.allOf.length) {
      errs.push(composite(`${goQuote(path)} must validate all the schemas (allOf)${validated === 0 ? '. None validated' : ''}`));
    }
  }
  if (node.not && branch(node.not, data, path).errs.length === 0) errs.push(composite(`${goQuote(path)} must not validate the schema (not)`));
  return count + 1;
}

/** utf8.RuneCountInString: code points (a lone surrogate is one U+FFFD). */
function runeCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** stringValidator: maxLength, minLength, pattern; the first failure only. */
function stringValidator(node: SchemaNode, data: string, path: string, errs: Errors): void {
  const s = node.schema;
  const hasMax = typeof s.maxLength === 'number';
  const hasMin = typeof s.minLength === 'number';
  if (hasMax || hasMin) {
    // A string no longer in UTF-16 units than the maximum has no more runes.
    const runes = hasMin || data.length > s.maxLength! ? runeCount(data) : data.length;
    if (hasMax && runes > s.maxLength!) {
      errs.push(verr('tooLong', path, data, `${path} in ${IN} should be at most ${s.maxLength} chars long`, s.maxLength));
      return;
    }
    if (hasMin && runes < s.minLength!) {
      errs.push(verr('other', path, data, `${path} in ${IN} should be at least ${s.minLength} chars long`));
      return;
    }
  }
  if (typeof s.pattern === 'string' && s.pattern !== '') {
    const re = nodeRegex(node);
    if (typeof re === 'string') {
      errs.push(verr('other', path, data, `${path} in ${IN} should match '${s.pattern}, but pattern is invalid: ${re}'`));
    } else if (!re.test(data)) {
      errs.push(verr('other', path, data, `${path} in ${IN} should match '${s.pattern}'`));
    }
  }
}

/** numberValidator: multipleOf, minimum, maximum, reported in that order. */
function numberValidator(node: SchemaNode, data: number, isInt: boolean, path: string, errs: Errors): void {
  const s = node.schema;
  if (typeof s.multipleOf === 'number') {
    if (isInt) {
      // MultipleOfInt with the factor truncated to an int64.
      const factor = goInt64(s.multipleOf);
      if (factor <= 0) errs.push(verr('other', path, factor, `factor MultipleOf declared for ${path} must be positive: ${formatInt64(factor)}`));
      else if (data % factor !== 0) errs.push(verr('other', path, data, `${path} in ${IN} should be a multiple of ${formatInt64(factor)}`));
    } else {
      const factor = s.multipleOf;
      if (factor <= 0) errs.push(verr('other', path, factor, `factor MultipleOf declared for ${path} must be positive: ${goFloat(factor)}`));
      else if (!isJsonInteger(factor < 1 ? (1 / factor) * data : data / factor)) {
        errs.push(verr('other', path, data, `${path} in ${IN} should be a multiple of ${goFloat(factor)}`));
      }
    }
  }
  if (typeof s.minimum === 'number') {
    const excl = s.exclusiveMinimum === true;
    const min = isInt ? goInt64(s.minimum) : s.minimum;
    if ((!excl && data < min) || (excl && data <= min)) {
      const bound = isInt ? formatInt64(min) : goFloat(min);
      errs.push(verr('other', path, data, `${path} in ${IN} should be greater than ${excl ? '' : 'or equal to '}${bound}`));
    }
  }
  if (typeof s.maximum === 'number') {
    const excl = s.exclusiveMaximum === true;
    const max = isInt ? goInt64(s.maximum) : s.maximum;
    if ((!excl && data > max) || (excl && data >= max)) {
      const bound = isInt ? formatInt64(max) : goFloat(max);
      errs.push(verr('other', path, data, `${path} in ${IN} should be less than ${excl ? '' : 'or equal to '}${bound}`));
    }
  }
}

/** schemaSliceValidator: the items, then minItems, maxItems, uniqueItems. */
function sliceValidator(node: SchemaNode, data: unknown[], path: string, errs: Errors, corr: Correlation | undefined): number {
  let count = 0;
  const items = node.items;
  if (items) for (let i = 0; i < data.length; i++) count += validateNode(items, data[i], `${path}[${i}]`, errs, corr?.index(i));
  const s = node.schema;
  const size = data.length;
  if (typeof s.minItems === 'number' && size < s.minItems) errs.push(verr('other', path, size, `${path} in ${IN} should have at least ${s.minItems} items`));
  if (typeof s.maxItems === 'number' && size > s.maxItems)
    errs.push(verr('maxItems', path, size, `${path} in ${IN} should have at most ${s.maxItems} items`, s.maxItems));
  if (s.uniqueItems === true && hasDuplicates(data)) errs.push(verr('other', path, undefined, `${path} in ${IN} shouldn't contain duplicates`));
  return count + 1;
}

/** UniqueItems by hashing (reflect.DeepEqual pairwise upstream, quadratic). */
function hasDuplicates(data: readonly unknown[]): boolean {
  if (data.length < 2) return false;
  const seen = new Set<unknown>();
  for (const v of data) {
    const key = typeof v === 'object' && v !== null ? `\u0000${canonicalKey(v)}` : v;
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

/** objectValidator: property counts, additionalProperties, properties, required. Counts its children only. */
function objectValidator(node: SchemaNode, data: Record<string, unknown>, path: string, errs: Errors, corr: Correlation | undefined): number {
  let count = 0;
  const s = node.schema;
  if (typeof s.minProperties === 'number' || typeof s.maxProperties === 'number') {
    let numKeys = 0;
    for (const _ in data) numKeys++;
    if (typeof s.minProperties === 'number' && numKeys < s.minProperties) {
      errs.push(verr('other', path, numKeys, `${path} in ${IN} should have at least ${s.minProperties} properties`));
    }
    if (typeof s.maxProperties === 'number' && numKeys > s.maxProperties) {
      errs.push(verr('tooManyProperties', path, numKeys, `${path} in ${IN} should have at most ${s.maxProperties} properties`, s.maxProperties));
    }
  }
  const props = node.properties;
  if (node.hasAdditional && !node.additionalAllows) {
    for (const k in data) {
      if (!props?.has(k)) errs.push(verr('other', path, k, `${path}.${k} in ${IN} is a forbidden property`));
    }
  } else if (node.additional) {
    for (const k in data) {
      if (!props?.has(k)) count += validateNode(node.additional, data[k], `${path}.${k}`, errs, childCorrelation(corr, path, k));
    }
  }
  if (props) {
    const names = node.propertyNames;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      if (Object.hasOwn(data, name))
        count += validateNode(props.get(name)!, data[name], path === '' ? name : `${path}.${name}`, errs, childCorrelation(corr, path, name));
    }
  }
  if (node.required) {
    for (const k of node.required) if (!Object.hasOwn(data, k)) errs.push(verr('required', `${path}.${k}`, undefined, `${path}.${k} in ${IN} is required`));
  }
  return count;
}

/** The ratcheting validator of a property (SubPropertyValidator): none for the root's apiVersion and kind. */
function childCorrelation(corr: Correlation | undefined, path: string, key: string): Correlation | undefined {
  if (!corr || (path === '' && (key === 'apiVersion' || key === 'kind'))) return undefined;
  return corr.key(key);
}

/**
 * errors.EnumFail. Its message (`<path> in body should be one of [<values>]`) serves only to
 * tell errors apart, and a long enum makes it long: it is not built, the path and the enum's
 * values (by their text, made once per enum) tell them apart instead.
 */
function enumFail(node: SchemaNode, path: string, data: unknown): OpenApiError {
  const values = node.enum!.values;
  return { validation: true, code: 'enum', name: path, value: data, message: '', enumValues: values, enumPath: path };
}

/** The `%v` text of an enum's values, once per enum. */
const enumTexts = new WeakMap<object, string>();

function enumText(values: readonly unknown[]): string {
  let text = enumTexts.get(values);
  if (text === undefined) enumTexts.set(values, (text = `[${values.map((v) => goPrint(v)).join(' ')}]`));
  return text;
}

// ---- kubeOpenAPIResultToFieldErrors ----

/** A field error with upstream's text, the bad value printed as field.Error's ErrorBody prints it. */
export function goFieldError(
  type: FieldErrorType,
  field: string,
  badValue: unknown,
  detail: string | undefined,
  showValue: boolean,
  rendered?: string,
): FieldError {
  let body = FIELD_ERROR_TYPE_TEXT[type] ?? 'Invalid value';
  if (showValue) body += `: ${rendered ?? goBadValue(badValue)}`;
  if (detail) body += `: ${detail}`;
  return { type, field, badValue, ...(detail !== undefined ? { detail } : {}), causeReason: type, causeMessage: body, message: `${field}: ${body}` };
}

/** field.Path's String of the caller's path: `<nil>` for none. */
export function pathText(path: FieldPath | string | undefined): string {
  return path === undefined ? '<nil>' : path.toString();
}

/** errPath.Child(name) on a possibly nil path. */
function childText(base: FieldPath | string | undefined, name: string): string {
  if (base === undefined) return name;
  const b = base.toString();
  return b === '' ? `.${name}` : `${b}.${name}`;
}

/** An enum's `supported values: …` text, made once per enum (a long enum is long to print). */
const enumDetails = new WeakMap<object, string>();

function enumDetail(values: readonly unknown[]): string | undefined {
  if (values.length === 0) return undefined;
  let text = enumDetails.get(values);
  if (text === undefined) {
    text = `supported values: ${values.map((v) => goQuote(typeof v === 'string' ? v : goJson(v))).join(', ')}`;
    enumDetails.set(values, text);
  }
  return text;
}

/** Renders bad values once per call: errors about the same object share its (possibly long) text. */
type Renderer = (v: unknown) => string;

function toFieldError(e: OpenApiError, fldPath: FieldPath | string | undefined, render: Renderer): FieldError {
  if (!e.validation) return goFieldError('FieldValueInvalid', pathText(fldPath), '', e.message, true);
  const field = e.name.length > 0 && e.name !== '.' ? childText(fldPath, e.name.startsWith('.') ? e.name.slice(1) : e.name) : pathText(fldPath);
  const value = e.value === undefined ? '' : e.value;
  switch (e.code) {
    case 'required':
      return goFieldError('FieldValueRequired', field, '', undefined, false);
    case 'enum': {
      // A nil value prints as "null" (ErrorBody), not the "" the other codes fall back to.
      const bad = e.value === undefined ? null : e.value;
      return goFieldError('FieldValueNotSupported', field, bad, enumDetail(e.enumValues ?? []), true, render(bad));
    }
    case 'tooLong':
      return goFieldError('FieldValueTooLong', field, '', `may not be more than ${e.valid} bytes`, false);
    case 'maxItems':
    case 'tooManyProperties':
      return goFieldError('FieldValueTooMany', field, e.value, `must have at most ${e.valid} items`, true);
    case 'invalidType':
      return goFieldError('FieldValueTypeInvalid', field, value, e.message, true);
    default:
      return goFieldError('FieldValueInvalid', field, value, e.message, true, render(value));
  }
}

/**
 * Check `value` against the schema of `node` as apiextensions' ValidateCustomResource does,
 * `fldPath` being the path it passes (none for a custom resource, `status` for the status
 * subresource's schema, a `default`'s path when CRD validation checks one).
 */
export function validateSchemaValue(node: SchemaNode, value: unknown, fldPath?: FieldPath | string): FieldError[] {
  return toFieldErrors(runValidation(node, value, undefined), fldPath);
}

/**
 * ValidateCustomResourceUpdate with ratcheting (CRDValidationRatcheting, on by default in
 * 1.32): the same checks, but an error of a value that equals its correlated old value is
 * dropped. Values correlate through properties and additionalProperties present in both
 * objects and, in a `map` list, elements with the same keys; a value correlates as equal when
 * it and everything in it does (common.CorrelatedObject).
 */
export function validateSchemaUpdate(node: SchemaNode, value: unknown, old: unknown, fldPath?: FieldPath | string): FieldError[] {
  return toFieldErrors(runValidation(node, value, new Correlation(value, old, node)), fldPath);
}

function runValidation(node: SchemaNode, value: unknown, corr: Correlation | undefined): Errors {
  const errs: Errors = [];
  validateNode(node, value, '', errs, corr);
  return errs;
}

function toFieldErrors(errs: Errors, fldPath: FieldPath | string | undefined): FieldError[] {
  if (errs.length === 0) return [];
  const seen = new Set<string>();
  // Enum errors by path and values: the values' texts are numbered, equal texts alike (their hash is kept in the string).
  const enumIds = new Map<string, number>();
  const out: FieldError[] = [];
  const texts = new Map<unknown, string>();
  const render: Renderer = (v) => {
    if (typeof v !== 'object' || v === null) return goBadValue(v);
    let text = texts.get(v);
    if (text === undefined) texts.set(v, (text = goBadValue(v)));
    return text;
  };
  for (const e of errs) {
    // Result.AddErrors keeps one error per message.
    let key = e.message;
    if (e.enumValues) {
      const text = enumText(e.enumValues);
      let id = enumIds.get(text);
      if (id === undefined) enumIds.set(text, (id = enumIds.size));
      key = `\u0001${id}\u0000${e.enumPath}`;
    }
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(toFieldError(e, fldPath, render));
  }
  return out;
}

// ---- ratcheting: common.CorrelatedObject ----

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A map list's key of an element (singleKeyStrategy / multiKeyStrategy): scalars only. */
function mapListKey(node: SchemaNode, element: unknown): unknown {
  if (!isMap(element)) return undefined;
  const keys = node.listMapKeys ?? [];
  const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
  if (keys.length === 1) {
    const k = keys[0]!;
    if (!Object.hasOwn(element, k) || !scalar(element[k])) return undefined;
    return element[k];
  }
  let text = '';
  for (const k of keys) {
    if (!Object.hasOwn(element, k)) return undefined;
    const v = element[k];
    if (typeof v === 'boolean') text += `\u0000${v}`;
    else if (typeof v === 'number') text += isInt64(v) ? `\u0000${formatInt64(v)}` : `\u0000${v.toFixed(6)}`;
    else if (typeof v === 'string') text += `\u0000${goQuote(v)}`;
    else return undefined;
  }
  return text;
}

/** A new value with the old value it correlates with, and the (structural) schema of both. */
export class Correlation {
  private children: Map<string | number, Correlation | undefined> | undefined;
  private equal: boolean | undefined;
  /** The old map list by key, first element per key (MakeMapList), once looked at. */
  private oldByKey: Map<unknown, unknown> | undefined;

  constructor(
    readonly value: unknown,
    readonly old: unknown,
    readonly node: SchemaNode | undefined,
  ) {}

  private cached(k: string | number, make: () => Correlation | undefined): Correlation | undefined {
    this.children ??= new Map();
    if (this.children.has(k)) return this.children.get(k);
    const c = make();
    this.children.set(k, c);
    return c;
  }

  key(field: string): Correlation | undefined {
    const node = this.node;
    if (!node || !isMap(this.value) || !isMap(this.old)) return undefined;
    const value = this.value;
    const old = this.old;
    return this.cached(field, () => {
      if (!Object.hasOwn(old, field) || !Object.hasOwn(value, field)) return undefined;
      const sub = node.properties?.get(field) ?? node.additional;
      return sub ? new Correlation(value[field], old[field], sub) : undefined;
    });
  }

  index(i: number): Correlation | undefined {
    const node = this.node;
    if (!node || !Array.isArray(this.value) || i >= this.value.length) return undefined;
    const value = this.value;
    return this.cached(i, () => {
      const old = this.oldElement(value[i]);
      if (old === undefined || !node.items) return undefined;
      return new Correlation(value[i], old, node.items);
    });
  }

  /** correlateOldValueForChildAtNewIndex: only a `map` list's elements correlate, by their keys. */
  private oldElement(element: unknown): unknown {
    if (!Array.isArray(this.old) || this.node?.listType !== 'map') return undefined;
    if (!this.oldByKey) {
      this.oldByKey = new Map();
      const node = this.node;
      if (node.schema.type === 'array' && (node.listMapKeys?.length ?? 0) > 0) {
        for (const item of this.old) {
          const k = mapListKey(node, item);
          if (k !== undefined && !this.oldByKey.has(k)) this.oldByKey.set(k, item);
        }
      }
    }
    const k = mapListKey(this.node, element);
    return k === undefined ? undefined : this.oldByKey.get(k);
  }

  /** CachedDeepEqual. */
  deepEqual(): boolean {
    if (this.equal === undefined) this.equal = this.compare();
    return this.equal;
  }

  private compare(): boolean {
    const { value, old } = this;
    if ((value === null || value === undefined) && (old === null || old === undefined)) return true;
    if (value === null || value === undefined || old === null || old === undefined) return false;
    if (Array.isArray(value) !== Array.isArray(old) || isMap(value) !== isMap(old)) return false;
    if (Array.isArray(value)) {
      const oldList = old as unknown[];
      if (value.length !== oldList.length) return false;
      for (let i = 0; i < value.length; i++) {
        const c = this.index(i);
        if (!c) return this.oldByKey === undefined ? jsonEqual(oldList, value) : false;
        if (!c.deepEqual()) return false;
      }
      return true;
    }
    if (isMap(value)) {
      const oldMap = old as Record<string, unknown>;
      if (Object.keys(value).length !== Object.keys(oldMap).length) return false;
      for (const k in value) {
        const c = this.key(k);
        if (!c?.deepEqual()) return false;
      }
      return true;
    }
    return value === old;
  }
}

// ---- objectmeta.Validate: embedded resources ----

/** field.Path steps on a possibly nil path. */
const child = (p: string | undefined, k: string) => (p === undefined ? k : `${p}.${k}`);
const key = (p: string | undefined, k: string) => `${p ?? ''}[${k}]`;
const index = (p: string | undefined, i: number) => `${p ?? ''}[${i}]`;

/** schema.ParseGroupVersion's error, if any. */
function groupVersionError(gv: string): string | undefined {
  if (gv === '' || gv === '/') return undefined;
  const slashes = gv.split('/').length - 1;
  return slashes > 1 ? `unexpected GroupVersion string: ${gv}` : undefined;
}

/** An error of the metadata checks (paths under `metadata`) moved under `prefix`. */
function underPrefix(e: FieldError, prefix: string): FieldError {
  return { ...e, field: `${prefix}.${e.field}`, message: `${prefix}.${e.message}` };
}

function validateEmbeddedResource(pth: string | undefined, x: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  if (!Object.hasOwn(x, 'apiVersion')) errs.push(goFieldError('FieldValueRequired', child(pth, 'apiVersion'), '', 'must not be empty', false));
  if (!Object.hasOwn(x, 'kind')) errs.push(goFieldError('FieldValueRequired', child(pth, 'kind'), '', 'must not be empty', false));
  for (const k in x) {
    const v = x[k];
    if (k === 'apiVersion') {
      const p = child(pth, k);
      if (typeof v !== 'string') errs.push(goFieldError('FieldValueInvalid', p, v, 'must be a string', true));
      else if (v === '') errs.push(goFieldError('FieldValueInvalid', p, v, 'must not be empty', true));
      else {
        const err = groupVersionError(v);
        if (err) errs.push(goFieldError('FieldValueInvalid', p, v, err, true));
      }
    } else if (k === 'kind') {
      const p = child(pth, k);
      if (typeof v !== 'string') errs.push(goFieldError('FieldValueInvalid', p, v, 'must be a string', true));
      else if (v === '') errs.push(goFieldError('FieldValueInvalid', p, v, 'must not be empty', true));
      else {
        const problems = isDns1035Label(v.toLowerCase());
        if (problems.length > 0)
          errs.push(goFieldError('FieldValueInvalid', p, v, `may have mixed case, but should otherwise match: ${problems.join(',')}`, true));
      }
    } else if (k === 'metadata') {
      const p = child(pth, 'metadata');
      const decoded = decodeObjectMeta(v);
      if (typeof decoded === 'string') {
        errs.push(goFieldError('FieldValueInvalid', p, v, decoded, true));
      } else {
        const meta: ObjectMeta = { ...decoded };
        if (!meta.name) meta.name = 'fakename';
        const metaErrs = validateObjectMeta(meta, { namespaced: !!meta.namespace, nameRule: 'pathSegment', customResource: true });
        const prefix = pth ?? '';
        for (const e of metaErrs) errs.push(prefix === '' ? e : underPrefix(e, prefix));
      }
    }
  }
  return errs;
}

/**
 * objectmeta.Validate: every embedded resource in `value` (nodes marked embedded) has a string
 * apiVersion and kind, an apiVersion Go's ParseGroupVersion takes, a kind that is a DNS-1035
 * label but for case, and metadata that decodes and passes ValidateObjectMeta (a missing name
 * stands as `fakename`, the namespace is checked when set). `isResourceRoot` treats the root
 * itself as embedded (upstream does so for a default at a resource's root).
 */
export function validateEmbeddedResources(root: SchemaNode, value: unknown, fldPath?: FieldPath | string, isResourceRoot = false): FieldError[] {
  if (!root.subtreeEmbedded && !isResourceRoot) return [];
  const errs: FieldError[] = [];
  const walk = (pth: string | undefined, x: unknown, node: SchemaNode | undefined, embedded: boolean): void => {
    if (!node || typeof x !== 'object' || x === null) return;
    if (!node.subtreeEmbedded && !embedded) return;
    if (Array.isArray(x)) {
      if (node.items) for (let i = 0; i < x.length; i++) walk(index(pth, i), x[i], node.items, node.items.embedded);
      return;
    }
    const obj = x as Record<string, unknown>;
    if (embedded) errs.push(...validateEmbeddedResource(pth, obj));
    for (const k in obj) {
      const prop = node.properties?.get(k);
      if (prop) walk(child(pth, k), obj[k], prop, prop.embedded);
      else if (node.hasAdditional && node.additional) walk(key(pth, k), obj[k], node.additional, node.additional.embedded);
    }
  };
  walk(fldPath === undefined ? undefined : fldPath.toString(), value, root, root.embedded || isResourceRoot);
  return errs;
}
