/**
 * What webhook configurations and admission policies share (upstream's admissionregistration
 * validation): which requests a rule matches (operations, API groups, versions, resources with
 * their `*` and subresource forms, scope), CEL match conditions, and the Go rendering of the
 * list values its field errors print.
 */
import { validateCelExpression, type CelEnvironment } from '../validation/cel';
import { fieldErrors, type FieldError, type FieldPath } from '../validation/field-errors';
import { invalidWithRendering } from '../validation/go-format';
import { validateLabelName } from '../validation/metadata';
import type { MetaLabelSelector } from '../validation/selectors';
import { jsonEqual } from '../../util/json-values';

export type LabelSelector = MetaLabelSelector;

/** Which resources a rule names; `scope` defaults to `*`. */
export interface Rule {
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

/** A Rule and the operations it matches (`CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`). */
export interface RuleWithOperations extends Rule {
  operations?: string[];
}

/** A CEL condition a request must meet before a webhook is called or a policy applies. */
export interface MatchCondition {
  name: string;
  expression: string;
}

/** Upstream's sorted value sets (`sets.List()`), as NotSupported errors list them. */
export const FAILURE_POLICIES = ['Fail', 'Ignore'] as const;
export const MATCH_POLICIES = ['Equivalent', 'Exact'] as const;
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const MAX_MATCH_CONDITIONS = 64;

/** The internal API package's name, which `%#v` prints before typed lists. */
const GO_PACKAGE = 'admissionregistration';

/** Go's `%#v` of a string slice, typed (`[]admissionregistration.OperationType{"*"}`) or not. */
export function goSlice(values: readonly string[] | undefined, elementType = 'string'): string {
  const type = elementType === 'string' ? '[]string' : `[]${GO_PACKAGE}.${elementType}`;
  return values ? `${type}{${values.map((v) => JSON.stringify(v)).join(', ')}}` : `${type}(nil)`;
}

/** upstream SetDefaults_Rule. */
export function defaultRule(rule: Rule): void {
  if (rule.scope === undefined || rule.scope === null) rule.scope = '*';
}

const hasWildcard = (list: readonly string[]): boolean => list.includes('*');

/** Resources with subresources: `x/*` excludes `x/y`, `*\/y` excludes `x/y`, `*\/*` and `*` stand alone. */
function validateResources(resources: readonly string[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const list = resources ?? [];
  if (list.length === 0) errs.push(fieldErrors.required(path, ''));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let hasDoubleWildcard = false;
  let hasSingleWildcard = false;
  let hasResourceWithoutSubresource = false;
  list.forEach((resSub, i) => {
    if (resSub === '') {
      errs.push(fieldErrors.required(path.index(i), ''));
      return;
    }
    if (resSub === '*/*') hasDoubleWildcard = true;
    if (resSub === '*') hasSingleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      hasResourceWithoutSubresource = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (withWildcardSub.has(res)) errs.push(fieldErrors.invalid(path.index(i), resSub, `if '${res}/*' is present, must not specify ${resSub}`));
    if (subWithWildcardRes.has(sub)) errs.push(fieldErrors.invalid(path.index(i), resSub, `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (list.length > 1 && hasDoubleWildcard) {
    errs.push(invalidWithRendering(path, list, goSlice(list), "if '*/*' is present, must not specify other resources"));
  }
  if (hasSingleWildcard && hasResourceWithoutSubresource) {
    errs.push(invalidWithRendering(path, list, goSlice(list), "if '*' is present, must not specify other resources without subresources"));
  }
  return errs;
}

/** upstream validateRule (subresources allowed, as every admissionregistration/v1 rule does). */
function validateRule(rule: Rule, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const groups = rule.apiGroups ?? [];
  if (groups.length === 0) errs.push(fieldErrors.required(path.child('apiGroups'), ''));
  if (groups.length > 1 && hasWildcard(groups)) {
    errs.push(invalidWithRendering(path.child('apiGroups'), groups, goSlice(groups), "if '*' is present, must not specify other API groups"));
  }
  const versions = rule.apiVersions ?? [];
  if (versions.length === 0) errs.push(fieldErrors.required(path.child('apiVersions'), ''));
  if (versions.length > 1 && hasWildcard(versions)) {
    errs.push(invalidWithRendering(path.child('apiVersions'), versions, goSlice(versions), "if '*' is present, must not specify other API versions"));
  }
  versions.forEach((v, i) => {
    if (v === '') errs.push(fieldErrors.required(path.child('apiVersions').index(i), ''));
  });
  errs.push(...validateResources(rule.resources, path.child('resources')));
  if (rule.scope !== undefined && rule.scope !== null && !SCOPES.includes(rule.scope)) {
    errs.push(fieldErrors.notSupported(path.child('scope'), rule.scope, SCOPES));
  }
  return errs;
}

/** upstream validateRuleWithOperations. */
export function validateRuleWithOperations(rule: RuleWithOperations, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const ops = rule.operations ?? [];
  if (ops.length === 0) errs.push(fieldErrors.required(path.child('operations'), ''));
  if (ops.length > 1 && hasWildcard(ops)) {
    errs.push(invalidWithRendering(path.child('operations'), ops, goSlice(ops, 'OperationType'), "if '*' is present, must not specify other operations"));
  }
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(fieldErrors.notSupported(path.child('operations').index(i), op, OPERATIONS));
  });
  errs.push(...validateRule(rule, path));
  return errs;
}

/** The variables a match condition may use (upstream's admission CEL environment). */
export function matchConditionEnvironment(allowParams: boolean): CelEnvironment {
  return {
    variables: ['object', 'oldObject', 'namespaceObject', 'request', 'authorizer', ...(allowParams ? ['params'] : [])],
    returnTypes: ['bool'],
  };
}

/** upstream validateMatchConditions: at most 64, unique names (qualified names), expressions that compile to bool. */
export function validateMatchConditions(conditions: readonly MatchCondition[] | undefined, allowParams: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const list = conditions ?? [];
  if (list.length > MAX_MATCH_CONDITIONS) errs.push(fieldErrors.tooMany(path, list.length, MAX_MATCH_CONDITIONS));
  const names = new Set<string>();
  const env = matchConditionEnvironment(allowParams);
  list.forEach((mc, i) => {
    const at = path.index(i);
    const expression = (mc.expression ?? '').trim();
    if (expression.length === 0) errs.push(fieldErrors.required(at.child('expression'), ''));
    else errs.push(...validateCelExpression(expression, env, at.child('expression')));
    const name = mc.name ?? '';
    if (name.length === 0) errs.push(fieldErrors.required(at.child('name'), ''));
    else errs.push(...validateLabelName(name, at.child('name')));
    if (name.length > 0) {
      if (names.has(name)) errs.push(fieldErrors.duplicate(at.child('name'), name));
      else names.add(name);
    }
  });
  return errs;
}

/** Ratcheting: an update that leaves every webhook's match conditions as they were does not re-check them. */
export function matchConditionsUnchanged(
  next: ReadonlyArray<{ matchConditions?: MatchCondition[] }>,
  old: ReadonlyArray<{ matchConditions?: MatchCondition[] }>,
): boolean {
  if (next.length !== old.length) return false;
  return next.every((hook, i) => jsonEqual(hook.matchConditions ?? null, old[i]!.matchConditions ?? null));
}
