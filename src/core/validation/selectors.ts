/**
 * The structured label selector of object fields (metav1.LabelSelector: `matchLabels` plus
 * `matchExpressions`), as ReplicaSet `spec.selector` and ClusterRole aggregation use it:
 * validation, matching, and upstream's string form (what `/scale` reports in `status.selector`).
 * Query-string selectors (`?labelSelector=`) live in core/selectors.
 */
import { fieldErrors, FieldPath, type FieldError } from './field-errors';
import { goString, goStringMap, goStringSlice, goStruct } from './go-format';
import { isValidLabelValue } from './names';
import { validateLabelName, validateLabels } from './metadata';

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  operator: LabelSelectorOperator | string;
  values?: string[];
}

/** metav1.LabelSelector. A missing selector selects nothing; an empty one selects everything. */
export interface MetaLabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface LabelSelectorValidationOptions {
  /** Only for existing objects that already hold invalid values (upstream's compatibility escape). */
  allowInvalidLabelValueInSelector?: boolean;
}

function validateRequirement(req: LabelSelectorRequirement, path: FieldPath, options: LabelSelectorValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) errs.push(fieldErrors.required(path.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) errs.push(fieldErrors.forbidden(path.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    default:
      errs.push(fieldErrors.invalid(path.child('operator'), req.operator ?? '', 'not a valid selector operator'));
  }
  errs.push(...validateLabelName(req.key ?? '', path.child('key')));
  if (!options.allowInvalidLabelValueInSelector) {
    values.forEach((v, i) => {
      for (const msg of isValidLabelValue(v)) errs.push(fieldErrors.invalid(path.child('values').index(i), v, msg));
    });
  }
  return errs;
}

/** upstream ValidateLabelSelector: label rules for matchLabels, operator/value rules for expressions. */
export function validateLabelSelector(
  selector: MetaLabelSelector | null | undefined,
  path: FieldPath,
  options: LabelSelectorValidationOptions = {},
): FieldError[] {
  if (!selector) return [];
  const errs = validateLabels(selector.matchLabels, path.child('matchLabels'));
  (selector.matchExpressions ?? []).forEach((req, i) => errs.push(...validateRequirement(req, path.child('matchExpressions').index(i), options)));
  return errs;
}

/** True when the selector has no requirement at all (it then selects everything). */
export function isEmptyLabelSelector(selector: MetaLabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions ?? []).length === 0;
}

/**
 * Whether upstream's LabelSelectorAsSelector accepts the selector (it refuses what
 * validateLabelSelector reports, and unknown operators).
 */
export function isConvertibleLabelSelector(selector: MetaLabelSelector | null | undefined): boolean {
  if (!selector) return true;
  return validateLabelSelector(selector, FieldPath.root('selector')).length === 0;
}

function requirementMatches(req: LabelSelectorRequirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, req.key);
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return has && values.includes(labels[req.key]!);
    case 'NotIn':
      return !has || !values.includes(labels[req.key]!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    default:
      return false;
  }
}

/** Does the selector select an object with these labels? A missing selector selects nothing. */
export function labelSelectorMatches(selector: MetaLabelSelector | null | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const set = labels ?? {};
  const matchLabels = selector.matchLabels;
  if (matchLabels) {
    for (const k in matchLabels) if (!Object.hasOwn(set, k) || set[k] !== matchLabels[k]) return false;
  }
  const expressions = selector.matchExpressions;
  if (expressions) for (const req of expressions) if (!requirementMatches(req, set)) return false;
  return true;
}

const OPERATOR_TEXT: Record<string, string> = { In: ' in ', NotIn: ' notin ' };

function requirementString(key: string, operator: string, values: string[]): string {
  if (operator === 'Exists') return key;
  if (operator === 'DoesNotExist') return `!${key}`;
  if (operator === '=') return `${key}=${values[0] ?? ''}`;
  const sorted = [...values].sort();
  return `${key}${OPERATOR_TEXT[operator] ?? ` ${operator} `}(${sorted.join(',')})`;
}

/**
 * upstream's `LabelSelectorAsSelector(sel).String()`: requirements sorted by key, `k=v` for
 * matchLabels, `k in (a,b)` / `k notin (a,b)` with sorted values, `k` and `!k`. Empty for an
 * empty selector (everything) and for a missing one.
 */
export function labelSelectorToString(selector: MetaLabelSelector | null | undefined): string {
  if (!selector) return '';
  const reqs: Array<{ key: string; text: string }> = [];
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) reqs.push({ key: k, text: requirementString(k, '=', [v]) });
  for (const e of selector.matchExpressions ?? []) reqs.push({ key: e.key, text: requirementString(e.key, e.operator, e.values ?? []) });
  // Stable sort by key, as the requirements are added in this order upstream.
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return reqs.map((r) => r.text).join(',');
}

/** Go's `%#v` of a metav1.LabelSelector, as upstream prints it in field errors. */
export function goLabelSelector(selector: MetaLabelSelector): string {
  const exprs = selector.matchExpressions;
  const renderedExprs =
    exprs === undefined || exprs === null
      ? '[]v1.LabelSelectorRequirement(nil)'
      : `[]v1.LabelSelectorRequirement{${exprs
          .map((e) =>
            goStruct('v1.LabelSelectorRequirement', [
              ['Key', goString(e.key)],
              ['Operator', goString(e.operator)],
              ['Values', goStringSlice(e.values)],
            ]),
          )
          .join(', ')}}`;
  return goStruct('v1.LabelSelector', [
    ['MatchLabels', goStringMap(selector.matchLabels)],
    ['MatchExpressions', renderedExprs],
  ]);
}
