/**
 * admissionregistration/v1 MutatingWebhookConfiguration and ValidatingWebhookConfiguration:
 * the admission webhooks the server calls, and when (upstream's admissionregistration
 * strategies, SetDefaults_*Webhook and ValidateValidatingWebhookConfiguration). Calling them is
 * the admission chain's business (core/admission); this module stores them.
 *
 * Updates ratchet as upstream's do: a rule a new object must meet is waived while the stored
 * object already broke it (`sideEffects: Unknown`, an admission review version the server no
 * longer knows, duplicate names, label values now refused), and match conditions are not
 * compiled again while every webhook's are unchanged.
 */
import type { ApiObject } from '../api';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { invalidWithRendering } from '../validation/go-format';
import { isDns1035Label, isDns1123Subdomain } from '../validation/names';
import { validateLabelSelector } from '../validation/selectors';
import { validateWebhookService, validateWebhookUrl } from '../validation/webhook-client';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import {
  defaultRule,
  FAILURE_POLICIES,
  goSlice,
  MATCH_POLICIES,
  matchConditionsUnchanged,
  validateMatchConditions,
  validateRuleWithOperations,
  type LabelSelector,
  type MatchCondition,
  type RuleWithOperations,
} from './admission-rules';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource, ResourceDefinition } from './definition';
import { jsonEqual } from '../../util/json-values';

/** An in-cluster service that serves a webhook; `port` defaults to 443. */
export interface ServiceReference {
  namespace: string;
  name: string;
  path?: string;
  port?: number;
}

/** How to reach a webhook: exactly one of `url` and `service`; `caBundle` is base64 PEM. */
export interface WebhookClientConfig {
  url?: string;
  service?: ServiceReference;
  caBundle?: string;
}

/** The fields both webhook kinds share. */
export interface Webhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules?: RuleWithOperations[];
  failurePolicy?: string;
  matchPolicy?: string;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  sideEffects: string | null;
  timeoutSeconds?: number;
  admissionReviewVersions: string[] | null;
  matchConditions?: MatchCondition[];
}

export type ValidatingWebhook = Webhook;

export interface MutatingWebhook extends Webhook {
  /** `Never` (default) or `IfNeeded`. */
  reinvocationPolicy?: string;
}

export interface ValidatingWebhookConfiguration extends ApiObject {
  webhooks?: ValidatingWebhook[];
}

export interface MutatingWebhookConfiguration extends ApiObject {
  webhooks?: MutatingWebhook[];
}

type WebhookConfiguration = ApiObject & { webhooks?: Webhook[] };

/** The AdmissionReview versions this server sends (upstream's AcceptedAdmissionReviewVersions). */
export const ACCEPTED_ADMISSION_REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;
const SIDE_EFFECT_CLASSES = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const NO_SIDE_EFFECT_CLASSES = ['None', 'NoneOnDryRun'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
const DEFAULT_TIMEOUT_SECONDS = 10;
const DEFAULT_SERVICE_PORT = 443;

/** upstream SetDefaults_ValidatingWebhook / _MutatingWebhook, with their rules and service. */
function defaultWebhook(hook: Webhook, mutating: boolean): void {
  hook.failurePolicy ??= 'Fail';
  hook.matchPolicy ??= 'Equivalent';
  hook.namespaceSelector ??= {};
  hook.objectSelector ??= {};
  hook.timeoutSeconds ??= DEFAULT_TIMEOUT_SECONDS;
  if (mutating) (hook as MutatingWebhook).reinvocationPolicy ??= 'Never';
  const service = hook.clientConfig?.service;
  if (service) service.port ??= DEFAULT_SERVICE_PORT;
  for (const rule of hook.rules ?? []) defaultRule(rule);
}

/** Which rules an object is held to: all of them on create, the ones the old object met on update. */
interface WebhookRules {
  requireNoSideEffects: boolean;
  requireRecognizedAdmissionReviewVersion: boolean;
  requireUniqueWebhookNames: boolean;
  allowInvalidLabelValueInSelector: boolean;
  skipMatchConditions: boolean;
}

const ON_CREATE: WebhookRules = {
  requireNoSideEffects: true,
  requireRecognizedAdmissionReviewVersion: true,
  requireUniqueWebhookNames: true,
  allowInvalidLabelValueInSelector: false,
  skipMatchConditions: false,
};

function rulesForUpdate(next: Webhook[], old: Webhook[]): WebhookRules {
  const names = old.map((h) => h.name);
  const selectorIsValid = (s: LabelSelector | undefined) => !s || validateLabelSelector(s, FieldPath.root('selector')).length === 0;
  return {
    requireNoSideEffects: old.every((h) => h.sideEffects != null && NO_SIDE_EFFECT_CLASSES.includes(h.sideEffects)),
    requireRecognizedAdmissionReviewVersion: old.every(
      (h) => !h.admissionReviewVersions?.length || h.admissionReviewVersions.some((v) => (ACCEPTED_ADMISSION_REVIEW_VERSIONS as readonly string[]).includes(v)),
    ),
    requireUniqueWebhookNames: new Set(names).size === names.length,
    allowInvalidLabelValueInSelector: old.some((h) => !selectorIsValid(h.namespaceSelector) || !selectorIsValid(h.objectSelector)),
    skipMatchConditions: matchConditionsUnchanged(next, old),
  };
}

/** upstream IsFullyQualifiedName: a DNS subdomain of at least three labels. */
function validateWebhookName(name: string, path: FieldPath): FieldError[] {
  if (name.length === 0) return [fieldErrors.required(path, '')];
  const errs = isDns1123Subdomain(name);
  if (errs.length > 0) return [fieldErrors.invalid(path, name, errs.join(','))];
  if (name.split('.').length < 3) return [fieldErrors.invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

function validateAdmissionReviewVersions(versions: string[] | null | undefined, rules: WebhookRules, path: FieldPath): FieldError[] {
  const accepted = ACCEPTED_ADMISSION_REVIEW_VERSIONS.join(', ');
  if (!versions?.length) return [fieldErrors.required(path, `must specify one of ${accepted}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let hasAccepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(fieldErrors.invalid(path.index(i), v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const msg of isDns1035Label(v)) errs.push(fieldErrors.invalid(path.index(i), v, msg));
    if ((ACCEPTED_ADMISSION_REVIEW_VERSIONS as readonly string[]).includes(v)) hasAccepted = true;
  });
  if (rules.requireRecognizedAdmissionReviewVersion && !hasAccepted) {
    errs.push(invalidWithRendering(path, versions, goSlice(versions), `must include at least one of ${accepted}`));
  }
  return errs;
}

function validateClientConfig(cc: WebhookClientConfig | undefined, path: FieldPath): FieldError[] {
  const hasUrl = cc?.url !== undefined && cc.url !== null;
  const hasService = cc?.service !== undefined && cc.service !== null;
  if (hasUrl === hasService) return [fieldErrors.required(path, 'exactly one of url or service is required')];
  if (hasUrl) return validateWebhookUrl(path.child('url'), cc!.url!);
  return validateWebhookService(path.child('service'), cc!.service!);
}

/** upstream validateValidatingWebhook / validateMutatingWebhook, in upstream's order. */
function validateWebhook(hook: Webhook, mutating: boolean, rules: WebhookRules, path: FieldPath): FieldError[] {
  const errs = validateWebhookName(hook.name ?? '', path.child('name'));
  (hook.rules ?? []).forEach((rule, i) => errs.push(...validateRuleWithOperations(rule, path.child('rules').index(i))));
  if (hook.failurePolicy != null && !(FAILURE_POLICIES as readonly string[]).includes(hook.failurePolicy)) {
    errs.push(fieldErrors.notSupported(path.child('failurePolicy'), hook.failurePolicy, FAILURE_POLICIES));
  }
  if (hook.matchPolicy != null && !(MATCH_POLICIES as readonly string[]).includes(hook.matchPolicy)) {
    errs.push(fieldErrors.notSupported(path.child('matchPolicy'), hook.matchPolicy, MATCH_POLICIES));
  }
  const allowedSideEffects = rules.requireNoSideEffects ? NO_SIDE_EFFECT_CLASSES : SIDE_EFFECT_CLASSES;
  if (hook.sideEffects == null) errs.push(fieldErrors.required(path.child('sideEffects'), `must specify one of ${allowedSideEffects.join(', ')}`));
  else if (!allowedSideEffects.includes(hook.sideEffects)) errs.push(fieldErrors.notSupported(path.child('sideEffects'), hook.sideEffects, allowedSideEffects));
  if (hook.timeoutSeconds != null && (hook.timeoutSeconds > 30 || hook.timeoutSeconds < 1)) {
    errs.push(fieldErrors.invalid(path.child('timeoutSeconds'), hook.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
  }
  const selectorOptions = { allowInvalidLabelValueInSelector: rules.allowInvalidLabelValueInSelector };
  if (hook.namespaceSelector) errs.push(...validateLabelSelector(hook.namespaceSelector, path.child('namespaceSelector'), selectorOptions));
  if (hook.objectSelector) errs.push(...validateLabelSelector(hook.objectSelector, path.child('objectSelector'), selectorOptions));
  const reinvocation = (hook as MutatingWebhook).reinvocationPolicy;
  if (mutating && reinvocation != null && !REINVOCATION_POLICIES.includes(reinvocation)) {
    errs.push(fieldErrors.notSupported(path.child('reinvocationPolicy'), reinvocation, REINVOCATION_POLICIES));
  }
  errs.push(...validateClientConfig(hook.clientConfig, path.child('clientConfig')));
  if (!rules.skipMatchConditions) errs.push(...validateMatchConditions(hook.matchConditions, false, path.child('matchConditions')));
  return errs;
}

function validateConfiguration(config: WebhookConfiguration, mutating: boolean, rules: WebhookRules): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (config.webhooks ?? []).forEach((hook, i) => {
    const at = FieldPath.root('webhooks').index(i);
    errs.push(...validateWebhook(hook, mutating, rules, at));
    errs.push(...validateAdmissionReviewVersions(hook.admissionReviewVersions, rules, at.child('admissionReviewVersions')));
    const name = hook.name ?? '';
    if (rules.requireUniqueWebhookNames && name.length > 0) {
      if (names.has(name)) errs.push(fieldErrors.duplicate(at.child('name'), name));
      else names.add(name);
    }
  });
  return errs;
}

function webhookTable<T extends WebhookConfiguration>(): TableDefinition<T> {
  return {
    columns: [
      column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
      column('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'),
      column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
    ],
    row: (config, { now }) => ({ cells: [config.metadata?.name ?? '', (config.webhooks ?? []).length, since(config.metadata?.creationTimestamp, now)] }),
  };
}

/** The generation counts changes of `webhooks` (the kinds have no spec). */
function bumpGenerationOnChange(config: WebhookConfiguration, old: WebhookConfiguration): void {
  const meta = (config.metadata ??= {});
  if (!jsonEqual(config.webhooks ?? null, old.webhooks ?? null)) meta.generation = (old.metadata?.generation ?? 0) + 1;
}

function defineWebhookConfigurations<T extends WebhookConfiguration>(
  group: string,
  kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration',
): ResourceDefinition {
  const mutating = kind === 'MutatingWebhookConfiguration';
  return defineTyped<T>({
    group,
    version: 'v1',
    kind,
    resource: `${kind.toLowerCase()}s`,
    singular: kind.toLowerCase(),
    namespaced: false,
    categories: ['api-extensions'],
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    validateOnlyOnCreate: true,
    defaults: (config) => (config.webhooks ?? []).forEach((hook) => defaultWebhook(hook, mutating)),
    prepareForCreate: (config) => void ((config.metadata ??= {}).generation = 1),
    prepareForUpdate: bumpGenerationOnChange,
    validate: (config) => validateConfiguration(config, mutating, ON_CREATE),
    validateUpdate: (config, old) => validateConfiguration(config, mutating, rulesForUpdate(config.webhooks ?? [], old.webhooks ?? [])),
    table: webhookTable<T>(),
  });
}

export const defineValidatingWebhookConfigurations: DefineResource = (naming) =>
  defineWebhookConfigurations<ValidatingWebhookConfiguration>(naming.groups.admissionregistration, 'ValidatingWebhookConfiguration');

export const defineMutatingWebhookConfigurations: DefineResource = (naming) =>
  defineWebhookConfigurations<MutatingWebhookConfiguration>(naming.groups.admissionregistration, 'MutatingWebhookConfiguration');
