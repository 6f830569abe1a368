/**
 * admissionregistration/v1 ValidatingAdmissionPolicy (CEL validations of matching requests, with
 * a `/status` the type-checking controller writes) and ValidatingAdmissionPolicyBinding (which
 * policy applies where, with which parameters and actions); upstream's strategies, defaults and
 * ValidateValidatingAdmissionPolicy. Evaluating them is the admission chain's business.
 *
 * Upstream also refuses a policy (binding) whose author may not read the `paramKind` (`paramRef`)
 * objects; that check needs the caller and the authorizer, which strategies here do not see.
 */
import type { ApiObject } from '../api';
import { validateCelExpression, type CelEnvironment } from '../validation/cel';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { invalidWithRendering } from '../validation/go-format';
import { isDns1035Label, isDns1123Subdomain, isQualifiedName, isValidPathSegmentName } from '../validation/names';
import { validateLabelSelector } from '../validation/selectors';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { deepCopy, jsonEqual } from '../../util/json-values';
import {
  defaultRule,
  FAILURE_POLICIES,
  goSlice,
  MATCH_POLICIES,
  validateMatchConditions,
  validateRuleWithOperations,
  type LabelSelector,
  type MatchCondition,
  type RuleWithOperations,
} from './admission-rules';
import { validatePolicyStatus, type ValidatingAdmissionPolicyStatus } from './validatingadmissionpolicy-status';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';
import { CEL_RESERVED_WORDS } from '../../util/cel';

export type { ValidatingAdmissionPolicyStatus, TypeChecking, ExpressionWarning, Condition } from './validatingadmissionpolicy-status';

/** The kind of the parameter objects a policy reads (`params`). */
export interface ParamKind {
  apiVersion?: string;
  kind?: string;
}

/** A RuleWithOperations limited to some object names. */
export interface NamedRuleWithOperations extends RuleWithOperations {
  resourceNames?: string[];
}

/** Which requests a policy (or binding) applies to. */
export interface MatchResources {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  resourceRules?: NamedRuleWithOperations[];
  excludeResourceRules?: NamedRuleWithOperations[];
  matchPolicy?: string;
}

export interface Validation {
  expression: string;
  message?: string;
  reason?: string;
  messageExpression?: string;
}

export interface Variable {
  name: string;
  expression: string;
}

export interface AuditAnnotation {
  key: string;
  valueExpression: string;
}

export interface ValidatingAdmissionPolicySpec {
  paramKind?: ParamKind;
  matchConstraints?: MatchResources;
  validations?: Validation[];
  failurePolicy?: string;
  auditAnnotations?: AuditAnnotation[];
  matchConditions?: MatchCondition[];
  variables?: Variable[];
}

export interface ValidatingAdmissionPolicy extends ApiObject {
  spec?: ValidatingAdmissionPolicySpec;
  status?: ValidatingAdmissionPolicyStatus;
}

/** Which parameter objects a binding hands its policy. */
export interface ParamRef {
  name?: string;
  namespace?: string;
  selector?: LabelSelector;
  /** `Allow` or `Deny`; required. */
  parameterNotFoundAction?: string;
}

export interface ValidatingAdmissionPolicyBindingSpec {
  policyName?: string;
  paramRef?: ParamRef;
  matchResources?: MatchResources;
  /** `Deny`, `Warn`, `Audit`. */
  validationActions?: string[];
}

export interface ValidatingAdmissionPolicyBinding extends ApiObject {
  spec?: ValidatingAdmissionPolicyBindingSpec;
}

const MAX_AUDIT_ANNOTATIONS = 20;
const MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH = 5 * 1024;
const VALIDATION_REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn'];
const SPEC = FieldPath.root('spec');

/** upstream SetDefaults_MatchResources, with its rules. */
function defaultMatchResources(mr: MatchResources | undefined): void {
  if (!mr) return;
  mr.matchPolicy ??= 'Equivalent';
  mr.namespaceSelector ??= {};
  mr.objectSelector ??= {};
  for (const rule of [...(mr.resourceRules ?? []), ...(mr.excludeResourceRules ?? [])]) defaultRule(rule);
}

/** upstream parseGroupVersion: `v1`, `group/v1`; more than one `/` is an error. */
function parseGroupVersion(gv: string): { group: string; version: string } | string {
  if (gv === '' || gv === '/') return { group: '', version: '' };
  const parts = gv.split('/');
  if (parts.length === 1) return { group: '', version: gv };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return `unexpected GroupVersion string: ${gv}`;
}

function validateParamKind(pk: ParamKind, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const apiVersion = pk.apiVersion ?? '';
  if (apiVersion.length === 0) errs.push(fieldErrors.required(path.child('apiVersion'), ''));
  else {
    const gv = parseGroupVersion(apiVersion);
    if (typeof gv === 'string') errs.push(fieldErrors.invalid(path.child('apiVersion'), apiVersion, gv));
    else {
      if (gv.group.length > 0) {
        const bad = isDns1123Subdomain(gv.group);
        if (bad.length > 0) errs.push(fieldErrors.invalid(path.child('apiVersion'), gv.group, bad.join(',')));
      }
      if (gv.version.length === 0) errs.push(fieldErrors.invalid(path.child('apiVersion'), apiVersion, 'version must be specified'));
      else {
        const bad = isDns1035Label(gv.version);
        if (bad.length > 0) errs.push(fieldErrors.invalid(path.child('apiVersion'), gv.version, bad.join(',')));
      }
    }
  }
  const kind = pk.kind ?? '';
  if (kind.length === 0) errs.push(fieldErrors.required(path.child('kind'), ''));
  else {
    const bad = isDns1035Label(kind.toLowerCase());
    if (bad.length > 0) errs.push(fieldErrors.invalid(path.child('kind'), kind, `may have mixed case, but should otherwise match: ${bad.join(',')}`));
  }
  return errs;
}

function validateNamedRule(rule: NamedRuleWithOperations, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (rule.resourceNames ?? []).forEach((name, i) => {
    for (const msg of isValidPathSegmentName(name)) errs.push(fieldErrors.invalid(path.child('resourceNames').index(i), name, msg));
    if (seen.has(name)) errs.push(fieldErrors.duplicate(path.child('resourceNames').index(i), name));
    else seen.add(name);
  });
  errs.push(...validateRuleWithOperations(rule, path));
  return errs;
}

/** upstream validateMatchResources: matchPolicy and both selectors required (defaulted), selectors strict. */
function validateMatchResources(mr: MatchResources | undefined, path: FieldPath): FieldError[] {
  if (!mr) return [];
  const errs: FieldError[] = [];
  if (mr.matchPolicy == null) errs.push(fieldErrors.required(path.child('matchPolicy'), ''));
  else if (!(MATCH_POLICIES as readonly string[]).includes(mr.matchPolicy))
    errs.push(fieldErrors.notSupported(path.child('matchPolicy'), mr.matchPolicy, MATCH_POLICIES));
  for (const selector of ['namespaceSelector', 'objectSelector'] as const) {
    if (mr[selector] == null) errs.push(fieldErrors.required(path.child(selector), ''));
    else errs.push(...validateLabelSelector(mr[selector], path.child(selector)));
  }
  (mr.resourceRules ?? []).forEach((r, i) => errs.push(...validateNamedRule(r, path.child('resourceRules').index(i))));
  (mr.excludeResourceRules ?? []).forEach((r, i) => errs.push(...validateNamedRule(r, path.child('excludeResourceRules').index(i))));
  return errs;
}

/** The variables of a policy's expressions (upstream's OptionalVariableDeclarations). */
function policyEnvironment(options: { params: boolean; authorizer: boolean; variables: boolean }, returnTypes?: string[]): CelEnvironment {
  const variables = ['object', 'oldObject', 'namespaceObject', 'request'];
  if (options.params) variables.push('params');
  if (options.authorizer) variables.push('authorizer');
  if (options.variables) variables.push('variables');
  return { variables, ...(returnTypes ? { returnTypes } : {}) };
}

const hasNewlines = (s: string): boolean => /[\n\r]/.test(s);

function validateValidation(v: Validation, envs: { params: boolean; variables: boolean }, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const expression = v.expression ?? '';
  if (expression.trim().length === 0) errs.push(fieldErrors.required(path.child('expression'), 'expression is not specified'));
  else errs.push(...validateCelExpression(expression, policyEnvironment({ ...envs, authorizer: true }, ['bool']), path.child('expression')));
  const messageExpression = v.messageExpression ?? '';
  if (messageExpression.length > 0 && messageExpression.trim().length === 0) {
    errs.push(fieldErrors.invalid(path.child('messageExpression'), messageExpression, 'must be non-empty if specified'));
  } else if (messageExpression.trim().length > 0) {
    errs.push(...validateCelExpression(messageExpression, policyEnvironment({ ...envs, authorizer: false }, ['string']), path.child('messageExpression')));
  }
  const message = v.message ?? '';
  if (message.length > 0 && message.trim().length === 0)
    errs.push(fieldErrors.invalid(path.child('message'), message, 'message must be non-empty if specified'));
  else if (hasNewlines(message.trim())) errs.push(fieldErrors.invalid(path.child('message'), message, 'message must not contain line breaks'));
  if (v.reason != null && !VALIDATION_REASONS.includes(v.reason)) errs.push(fieldErrors.notSupported(path.child('reason'), v.reason, VALIDATION_REASONS));
  return errs;
}

function validateVariable(v: Variable, envs: { params: boolean }, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const name = v.name ?? '';
  if (name.trim().length === 0) errs.push(fieldErrors.required(path.child('name'), 'name is not specified'));
  else if (!/^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name) || CEL_RESERVED_WORDS.has(name))
    errs.push(fieldErrors.invalid(path.child('name'), name, 'name is not a valid CEL identifier'));
  const expression = v.expression ?? '';
  if (expression.trim().length === 0) errs.push(fieldErrors.required(path.child('expression'), 'expression is not specified'));
  else errs.push(...validateCelExpression(expression, policyEnvironment({ ...envs, authorizer: true, variables: true }), path.child('expression')));
  return errs;
}

function validateAuditAnnotation(a: AuditAnnotation, policyName: string, envs: { params: boolean; variables: boolean }, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const key = a.key ?? '';
  if (policyName.length > 0)
    errs.push(...isQualifiedName(`${policyName}/${key}`).map((msg) => fieldErrors.invalid(path.child('key'), `${policyName}/${key}`, msg)));
  else errs.push(fieldErrors.invalid(path.child('key'), key, 'requires metadata.name be non-empty'));
  const value = (a.valueExpression ?? '').trim();
  const at = path.child('valueExpression');
  if (value.length === 0) errs.push(fieldErrors.required(at, 'valueExpression is not specified'));
  else if (Buffer.byteLength(value) > MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH) {
    errs.push(fieldErrors.required(at, `must not exceed ${MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH} bytes in length`));
  } else {
    const compiled = validateCelExpression(value, policyEnvironment({ ...envs, authorizer: true }, ['string', 'null_type']), at);
    // Upstream reports the expression as written, not trimmed.
    errs.push(...compiled.map((e) => fieldErrors.invalid(at, a.valueExpression, e.detail)));
  }
  return errs;
}

/** upstream validateValidatingAdmissionPolicySpec; `checkMatchConditions` is false while an update leaves them (and paramKind) alone. */
function validatePolicySpec(policy: ValidatingAdmissionPolicy, checkMatchConditions: boolean): FieldError[] {
  const spec = policy.spec ?? {};
  const errs: FieldError[] = [];
  if (spec.failurePolicy == null) errs.push(fieldErrors.required(SPEC.child('failurePolicy'), ''));
  else if (!(FAILURE_POLICIES as readonly string[]).includes(spec.failurePolicy))
    errs.push(fieldErrors.notSupported(SPEC.child('failurePolicy'), spec.failurePolicy, FAILURE_POLICIES));
  const params = spec.paramKind != null;
  if (spec.paramKind) errs.push(...validateParamKind(spec.paramKind, SPEC.child('paramKind')));
  if (spec.matchConstraints == null) errs.push(fieldErrors.required(SPEC.child('matchConstraints'), ''));
  else {
    errs.push(...validateMatchResources(spec.matchConstraints, SPEC.child('matchConstraints')));
    // At least one resource rule gives the expressions their types.
    if (!spec.matchConstraints.resourceRules?.length) errs.push(fieldErrors.required(SPEC.child('matchConstraints', 'resourceRules'), ''));
  }
  if (checkMatchConditions) errs.push(...validateMatchConditions(spec.matchConditions, params, SPEC.child('matchConditions')));
  const variables = (spec.variables ?? []).length > 0;
  (spec.variables ?? []).forEach((v, i) => errs.push(...validateVariable(v, { params }, SPEC.child('variables').index(i))));
  const validations = spec.validations ?? [];
  const audits = spec.auditAnnotations ?? [];
  if (validations.length === 0 && audits.length === 0) {
    const detail = 'validations or auditAnnotations must contain at least one item';
    errs.push(fieldErrors.required(SPEC.child('validations'), detail), fieldErrors.required(SPEC.child('auditAnnotations'), detail));
    return errs;
  }
  validations.forEach((v, i) => errs.push(...validateValidation(v, { params, variables }, SPEC.child('validations').index(i))));
  if (audits.length > MAX_AUDIT_ANNOTATIONS) {
    const rendered = `[]admissionregistration.AuditAnnotation{${audits.map((a) => `admissionregistration.AuditAnnotation{Key:${JSON.stringify(a.key ?? '')}, ValueExpression:${JSON.stringify(a.valueExpression ?? '')}}`).join(', ')}}`;
    errs.push(invalidWithRendering(SPEC.child('auditAnnotations'), audits, rendered, `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`));
  }
  const keys = new Set<string>();
  audits.forEach((a, i) => {
    const at = SPEC.child('auditAnnotations').index(i);
    errs.push(...validateAuditAnnotation(a, policy.metadata?.name ?? '', { params, variables }, at));
    if (keys.has(a.key ?? '')) errs.push(fieldErrors.duplicate(at.child('key'), a.key ?? ''));
    keys.add(a.key ?? '');
  });
  return errs;
}

function validateParamRef(pr: ParamRef | undefined, path: FieldPath): FieldError[] {
  if (!pr) return [];
  const errs: FieldError[] = [];
  const name = pr.name ?? '';
  if (name.length > 0) {
    for (const msg of isValidPathSegmentName(name)) errs.push(fieldErrors.invalid(path.child('name'), name, msg));
    if (pr.selector != null) errs.push(fieldErrors.forbidden(path.child('name'), 'name and selector are mutually exclusive'));
  }
  if (pr.selector != null) {
    errs.push(...validateLabelSelector(pr.selector, path.child('selector')));
    if (name.length > 0) errs.push(fieldErrors.forbidden(path.child('selector'), 'name and selector are mutually exclusive'));
  }
  if (name.length === 0 && pr.selector == null) errs.push(fieldErrors.required(path, 'one of name or selector must be specified'));
  const action = pr.parameterNotFoundAction;
  if (action == null || action === '') errs.push(fieldErrors.required(path.child('parameterNotFoundAction'), ''));
  else if (action !== 'Deny' && action !== 'Allow') errs.push(fieldErrors.notSupported(path.child('parameterNotFoundAction'), action, ['Deny', 'Allow']));
  return errs;
}

function validateValidationActions(actions: string[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (actions ?? []).forEach((action, i) => {
    if (!VALIDATION_ACTIONS.includes(action)) errs.push(fieldErrors.notSupported(path.index(i), action, VALIDATION_ACTIONS));
    if (seen.has(action)) errs.push(fieldErrors.duplicate(path.index(i), action));
    seen.add(action);
  });
  if (seen.has('Deny') && seen.has('Warn')) {
    errs.push(
      invalidWithRendering(
        path,
        actions,
        goSlice(actions, 'ValidationAction'),
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  }
  if (seen.size === 0) errs.push(fieldErrors.required(path, 'at least one validation action is required'));
  return errs;
}

/** upstream validateValidatingAdmissionPolicyBindingSpec (its `matchResouces` path spelling included). */
function validateBindingSpec(spec: ValidatingAdmissionPolicyBindingSpec): FieldError[] {
  const errs: FieldError[] = [];
  const policyName = spec.policyName ?? '';
  if (policyName.length === 0) errs.push(fieldErrors.required(SPEC.child('policyName'), ''));
  else for (const msg of isDns1123Subdomain(policyName)) errs.push(fieldErrors.invalid(SPEC.child('policyName'), policyName, msg));
  errs.push(...validateParamRef(spec.paramRef, SPEC.child('paramRef')));
  errs.push(...validateMatchResources(spec.matchResources, SPEC.child('matchResouces')));
  errs.push(...validateValidationActions(spec.validationActions, SPEC.child('validationActions')));
  return errs;
}

const POLICY_TABLE: TableDefinition<ValidatingAdmissionPolicy> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column('Validations', 'integer', 'Validations indicates the number of validation rules defined in this configuration'),
    column('ParamKind', 'string', 'ParamKind specifies the kind of resources used to parameterize this policy'),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
  ],
  row: (p, { now }) => {
    const pk = p.spec?.paramKind;
    return {
      cells: [
        p.metadata?.name ?? '',
        (p.spec?.validations ?? []).length,
        pk ? `${pk.apiVersion ?? ''}/${pk.kind ?? ''}` : '<unset>',
        since(p.metadata?.creationTimestamp, now),
      ],
    };
  },
};

/** gogo's generated `LabelSelector.String()`, which upstream's binding printer shows. */
function gogoLabelSelector(s: LabelSelector): string {
  const labels = Object.keys(s.matchLabels ?? {})
    .sort()
    .map((k) => `${k}: ${s.matchLabels![k]},`)
    .join('');
  const exprs = (s.matchExpressions ?? [])
    .map((e) => `LabelSelectorRequirement{Key:${e.key},Operator:${e.operator},Values:[${(e.values ?? []).join(' ')}],},`)
    .join('');
  return `&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}

function paramRefCell(pr: ParamRef | undefined): string {
  if (!pr) return '<unset>';
  // Upstream cannot tell here whether the param is cluster-scoped, so a name without namespace gets `*`.
  if (pr.name) return `${pr.namespace || '*'}/${pr.name}`;
  return pr.selector ? gogoLabelSelector(pr.selector) : '<unset>';
}

const BINDING_TABLE: TableDefinition<ValidatingAdmissionPolicyBinding> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column('PolicyName', 'string', 'PolicyName indicates the policy definition which the policy binding binded to'),
    column('ParamRef', 'string', 'ParamRef indicates the param resource which sets the configration param'),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
  ],
  row: (b, { now }) => ({
    cells: [b.metadata?.name ?? '', b.spec?.policyName ?? '', paramRefCell(b.spec?.paramRef), since(b.metadata?.creationTimestamp, now)],
  }),
};

/** An update re-checks match conditions only when they or the paramKind changed (upstream's ratcheting). */
function matchConditionsTouched(p: ValidatingAdmissionPolicy, old: ValidatingAdmissionPolicy): boolean {
  const same = (a: unknown, b: unknown) => jsonEqual(a ?? null, b ?? null);
  return !same(p.spec?.paramKind, old.spec?.paramKind) || !same(p.spec?.matchConditions, old.spec?.matchConditions);
}

export const defineValidatingAdmissionPolicies: DefineResource = (naming) =>
  defineTyped<ValidatingAdmissionPolicy>({
    group: naming.groups.admissionregistration,
    version: 'v1',
    kind: 'ValidatingAdmissionPolicy',
    resource: 'validatingadmissionpolicies',
    singular: 'validatingadmissionpolicy',
    namespaced: false,
    categories: ['api-extensions'],
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    validateOnlyOnCreate: true,
    defaults(policy) {
      const spec = (policy.spec ??= {});
      spec.failurePolicy ??= 'Fail';
      defaultMatchResources(spec.matchConstraints);
    },
    prepareForCreate(policy) {
      policy.status = {};
    },
    prepareForUpdate(policy, old) {
      policy.status = deepCopy(old.status) ?? {};
    },
    validate: (policy) => validatePolicySpec(policy, true),
    validateUpdate: (policy, old) => validatePolicySpec(policy, matchConditionsTouched(policy, old)),
    status: {
      prepareForUpdate(policy, old) {
        policy.spec = deepCopy(old.spec);
      },
      validateUpdate: (policy) => validatePolicyStatus(policy.status),
    },
    table: POLICY_TABLE,
  });

export const defineValidatingAdmissionPolicyBindings: DefineResource = (naming) =>
  defineTyped<ValidatingAdmissionPolicyBinding>({
    group: naming.groups.admissionregistration,
    version: 'v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    resource: 'validatingadmissionpolicybindings',
    singular: 'validatingadmissionpolicybinding',
    namespaced: false,
    categories: ['api-extensions'],
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    defaults(binding) {
      defaultMatchResources((binding.spec ??= {}).matchResources);
    },
    validate: (binding) => validateBindingSpec(binding.spec ?? {}),
    table: BINDING_TABLE,
  });
