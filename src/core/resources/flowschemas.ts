/**
 * flowcontrol.apiserver FlowSchema, v1 (stored) and v1beta3 (upstream's FlowSchema strategy and
 * ValidateFlowSchema): which requests, by subject and by resource or non-resource rule, go to
 * which priority level, and how they are split into flows. Cluster-scoped, with `/status`
 * (the configuration controller's `Dangling` condition); spec changes count in the generation.
 * The mandatory `exempt` and `catch-all` schemas' specs cannot be changed.
 */
import type { ApiObject } from '../api';
import type { Naming } from '../../naming';
import { fieldErrors, FieldPath, GoLiteral, type FieldError } from '../validation/field-errors';
import { semanticEqual } from '../validation/equality';
import { goStringSlice, goStringStruct } from '../validation/go-format';
import { validateName } from '../validation/names';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { deepCopy } from '../../util/json-values';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource, EquivalentVersion, ResourceDefinition } from './definition';
import { flowControlBootstrap, mandatoryObject } from './flowcontrol-bootstrap';
import {
  FLOW_SCHEMA_CONDITION_DANGLING,
  FLOW_SCHEMA_EXEMPT,
  FLOW_SCHEMA_MAX_MATCHING_PRECEDENCE,
  FLOWCONTROL_WILDCARD,
  type FlowSchema,
  type FlowSchemaSpec,
  type NonResourcePolicyRule,
  type PolicyRulesWithSubjects,
  type ResourcePolicyRule,
  type Subject,
} from './flowcontrol-types';

/** Upstream's FlowSchemaDefaultMatchingPrecedence. */
export const DEFAULT_MATCHING_PRECEDENCE = 1000;

const DISTINGUISHER_METHODS = ['ByNamespace', 'ByUser'];
const SUBJECT_KINDS = ['Group', 'ServiceAccount', 'User'];
/** The verbs a rule may name (upstream's supportedVerbs, in its sorted order). */
export const FLOWCONTROL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'proxy', 'update', 'watch'];
const NAMESPACE_ERROR_INTRO = "each member of this list must be '*' or a DNS-1123 label; ";

const hasWildcard = (list: readonly string[] | undefined) => (list ?? []).includes(FLOWCONTROL_WILDCARD);

/** Upstream's SetDefaults_FlowSchemaSpec (the same in v1 and v1beta3). */
export function defaultFlowSchema(fs: FlowSchema): void {
  fs.spec ??= { priorityLevelConfiguration: { name: '' } };
  fs.spec.priorityLevelConfiguration ??= { name: '' };
  if (!fs.spec.matchingPrecedence) fs.spec.matchingPrecedence = DEFAULT_MATCHING_PRECEDENCE;
}

/** Upstream's verbs check, shared by resource and non-resource rules. */
function validateVerbs(verbs: readonly string[] | undefined, path: FieldPath): FieldError[] {
  if (!verbs?.length) return [fieldErrors.required(path, 'verbs must contain at least one value')];
  if (hasWildcard(verbs))
    return verbs.length > 1 ? [fieldErrors.invalid(path, new GoLiteral(goStringSlice(verbs)), "if '*' is present, must not specify other verbs")] : [];
  if (!verbs.every((v) => FLOWCONTROL_VERBS.includes(v))) return [fieldErrors.notSupported(path, new GoLiteral(goStringSlice(verbs)), FLOWCONTROL_VERBS)];
  return [];
}

function validateResourceRule(rule: ResourcePolicyRule, path: FieldPath): FieldError[] {
  const errs = validateVerbs(rule.verbs, path.child('verbs'));
  if (!rule.apiGroups?.length) errs.push(fieldErrors.required(path.child('apiGroups'), 'resource rules must supply at least one api group'));
  else if (rule.apiGroups.length > 1 && hasWildcard(rule.apiGroups))
    errs.push(
      fieldErrors.invalid(path.child('apiGroups'), new GoLiteral(goStringSlice(rule.apiGroups)), "if '*' is present, must not specify other api groups"),
    );
  if (!rule.resources?.length) errs.push(fieldErrors.required(path.child('resources'), 'resource rules must supply at least one resource'));
  else if (rule.resources.length > 1 && hasWildcard(rule.resources))
    errs.push(
      fieldErrors.invalid(path.child('resources'), new GoLiteral(goStringSlice(rule.resources)), "if '*' is present, must not specify other resources"),
    );
  const namespaces = rule.namespaces ?? [];
  if (namespaces.length === 0 && !rule.clusterScope)
    errs.push(fieldErrors.required(path.child('namespaces'), 'resource rules that are not cluster scoped must supply at least one namespace'));
  else if (hasWildcard(namespaces)) {
    if (namespaces.length > 1)
      errs.push(
        fieldErrors.invalid(path.child('namespaces'), new GoLiteral(goStringSlice(namespaces)), "if '*' is present, must not specify other namespaces"),
      );
  } else {
    namespaces.forEach((ns, i) => {
      for (const msg of validateName(ns, 'dns1123Label')) errs.push(fieldErrors.invalid(path.child('namespaces').index(i), ns, NAMESPACE_ERROR_INTRO + msg));
    });
  }
  return errs;
}

/** Upstream's ValidateNonResourceURLPath: a path, or a prefix ending in `/*`. */
export function validateNonResourceURLPath(url: string, path: FieldPath): FieldError | undefined {
  if (url === '') return fieldErrors.invalid(path, url, 'must not be empty');
  if (url === '/') return undefined;
  if (!url.startsWith('/')) return fieldErrors.invalid(path, url, 'must start with slash');
  if (url.includes(' ')) return fieldErrors.invalid(path, url, 'must not contain white-space');
  if (url.includes('//')) return fieldErrors.invalid(path, url, 'must not contain double slash');
  const wildcards = url.split('*').length - 1;
  if (wildcards > 1 || (wildcards === 1 && !url.endsWith('/*'))) return fieldErrors.invalid(path, url, 'wildcard can only do suffix matching');
  return undefined;
}

function validateNonResourceRule(rule: NonResourcePolicyRule, path: FieldPath): FieldError[] {
  const errs = validateVerbs(rule.verbs, path.child('verbs'));
  const urls = rule.nonResourceURLs ?? [];
  if (urls.length === 0) errs.push(fieldErrors.required(path.child('nonResourceURLs'), 'nonResourceURLs must contain at least one value'));
  else if (hasWildcard(urls)) {
    if (urls.length > 1)
      errs.push(
        fieldErrors.invalid(path.child('nonResourceURLs'), new GoLiteral(goStringSlice(urls)), "if '*' is present, must not specify other non-resource URLs"),
      );
  } else {
    urls.forEach((url, i) => {
      const err = validateNonResourceURLPath(url, path.child('nonResourceURLs').index(i));
      if (err) errs.push(err);
    });
  }
  return errs;
}

/** Upstream's ValidateFlowSchemaSubject: `kind` names the one member that is set. */
function validateSubject(subject: Subject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const forbid = (member: 'user' | 'group' | 'serviceAccount', kindName: string) => {
    if (subject[member] != null) errs.push(fieldErrors.forbidden(path.child(member), `${member} is forbidden when subject kind is not '${kindName}'`));
  };
  switch (subject.kind) {
    case 'ServiceAccount': {
      const sa = subject.serviceAccount;
      const saPath = path.child('serviceAccount');
      if (sa == null) errs.push(fieldErrors.required(saPath, "serviceAccount is required when subject kind is 'ServiceAccount'"));
      else {
        if (!sa.name) errs.push(fieldErrors.required(saPath.child('name')));
        else if (sa.name !== FLOWCONTROL_WILDCARD)
          for (const msg of validateName(sa.name, 'dns1123Subdomain')) errs.push(fieldErrors.invalid(saPath.child('name'), sa.name, msg));
        if (!sa.namespace) errs.push(fieldErrors.required(saPath.child('namespace'), 'must specify namespace for service account'));
        else for (const msg of validateName(sa.namespace, 'dns1123Label')) errs.push(fieldErrors.invalid(saPath.child('namespace'), sa.namespace, msg));
      }
      forbid('user', 'User');
      forbid('group', 'Group');
      break;
    }
    case 'User':
      if (subject.user == null) errs.push(fieldErrors.required(path.child('user'), "user is required when subject kind is 'User'"));
      else if (!subject.user.name) errs.push(fieldErrors.required(path.child('user', 'name')));
      forbid('serviceAccount', 'ServiceAccount');
      forbid('group', 'Group');
      break;
    case 'Group':
      if (subject.group == null) errs.push(fieldErrors.required(path.child('group'), "group is required when subject kind is 'Group'"));
      else if (!subject.group.name) errs.push(fieldErrors.required(path.child('group', 'name')));
      forbid('serviceAccount', 'ServiceAccount');
      forbid('user', 'User');
      break;
    default:
      errs.push(fieldErrors.notSupported(path.child('kind'), subject.kind ?? '', SUBJECT_KINDS));
  }
  return errs;
}

function validateRule(rule: PolicyRulesWithSubjects, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (rule.subjects?.length) rule.subjects.forEach((s, i) => errs.push(...validateSubject(s, path.child('subjects').index(i))));
  else errs.push(fieldErrors.required(path.child('subjects'), 'subjects must contain at least one value'));
  if (!rule.resourceRules?.length && !rule.nonResourceRules?.length)
    errs.push(fieldErrors.required(path, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
  (rule.resourceRules ?? []).forEach((r, i) => errs.push(...validateResourceRule(r, path.child('resourceRules').index(i))));
  (rule.nonResourceRules ?? []).forEach((r, i) => errs.push(...validateNonResourceRule(r, path.child('nonResourceRules').index(i))));
  return errs;
}

/** Upstream's ValidateFlowSchemaSpec. */
function validateSpec(name: string, spec: FlowSchemaSpec, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const precedence = spec.matchingPrecedence ?? 0;
  const precedencePath = path.child('matchingPrecedence');
  if (precedence <= 0) errs.push(fieldErrors.invalid(precedencePath, precedence, 'must be a positive value'));
  if (precedence > FLOW_SCHEMA_MAX_MATCHING_PRECEDENCE)
    errs.push(fieldErrors.invalid(precedencePath, precedence, `must not be greater than ${FLOW_SCHEMA_MAX_MATCHING_PRECEDENCE}`));
  if (precedence === 1 && name !== FLOW_SCHEMA_EXEMPT)
    errs.push(fieldErrors.invalid(precedencePath, precedence, "only the schema named 'exempt' may have matchingPrecedence 1"));
  const method = spec.distinguisherMethod;
  if (method != null && !DISTINGUISHER_METHODS.includes(method.type))
    errs.push(
      fieldErrors.notSupported(
        path.child('distinguisherMethod', 'type'),
        new GoLiteral(goStringStruct('flowcontrol.FlowDistinguisherMethod', [['Type', method.type ?? '']])),
        DISTINGUISHER_METHODS,
      ),
    );
  const plName = spec.priorityLevelConfiguration?.name ?? '';
  const plPath = path.child('priorityLevelConfiguration', 'name');
  if (plName) for (const msg of validateName(plName, 'dns1123Subdomain')) errs.push(fieldErrors.invalid(plPath, plName, msg));
  else errs.push(fieldErrors.required(plPath, 'must reference a priority level'));
  (spec.rules ?? []).forEach((rule, i) => errs.push(...validateRule(rule, path.child('rules').index(i))));
  return errs;
}

/** Upstream's ValidateFlowSchemaStatus and ValidatePriorityLevelConfigurationStatus: condition types present and unique. */
export function validateConditions(status: { conditions?: Array<{ type?: string }> } | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (status?.conditions ?? []).forEach((c, i) => {
    const path = FieldPath.root('status', 'conditions').index(i).child('type');
    const type = c.type ?? '';
    if (seen.has(type)) errs.push(fieldErrors.duplicate(path, type));
    seen.add(type);
    if (!type) errs.push(fieldErrors.required(path, 'must not be empty'));
  });
  return errs;
}

/** Upstream's ValidateFlowSchema (metadata is checked by the registry). */
export function validateFlowSchema(fs: FlowSchema, naming: Naming): FieldError[] {
  const name = fs.metadata?.name ?? '';
  const specPath = FieldPath.root('spec');
  const spec = fs.spec ?? { priorityLevelConfiguration: { name: '' } };
  const errs = validateSpec(name, spec, specPath);
  const mandatory = mandatoryObject(flowControlBootstrap(naming).flowSchemas, name);
  if (mandatory && !semanticEqual(spec, mandatory.spec)) errs.push(fieldErrors.invalid(specPath, spec, `spec of '${name}' must equal the fixed value`));
  errs.push(...validateConditions(fs.status));
  return errs;
}

const FLOW_SCHEMA_TABLE: TableDefinition<FlowSchema> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column('PriorityLevel', 'string', '`name` is the name of the priority level configuration being referenced Required.'),
    column(
      'MatchingPrecedence',
      'string',
      '`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default.',
    ),
    column(
      'DistinguisherMethod',
      'string',
      '`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string.',
    ),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
    column('MissingPL', 'string', 'indicates if the priority level of this flow schema is missing'),
  ],
  // Upstream's printFlowSchema: `<none>` without a distinguisher, `?` until the Dangling condition is set.
  row: (fs, { now }) => ({
    cells: [
      fs.metadata?.name ?? '',
      fs.spec?.priorityLevelConfiguration?.name ?? '',
      fs.spec?.matchingPrecedence ?? 0,
      fs.spec?.distinguisherMethod?.type ?? '<none>',
      since(fs.metadata?.creationTimestamp, now),
      fs.status?.conditions?.find((c) => c.type === FLOW_SCHEMA_CONDITION_DANGLING)?.status ?? '?',
    ],
  }),
  // Upstream's printFlowSchemaList sorts as FlowSchemaSequence: matching precedence, then name.
  order: (items) =>
    [...items].sort(
      (a, b) =>
        (a.spec?.matchingPrecedence ?? 0) - (b.spec?.matchingPrecedence ?? 0) ||
        ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : (a.metadata?.name ?? '') > (b.metadata?.name ?? '') ? 1 : 0),
    ),
};

/** The other version of the same objects: FlowSchema's v1 and v1beta3 have one shape, so only the apiVersion changes. */
function otherVersion(group: string, version: string, other: string): EquivalentVersion {
  return {
    apiVersion: `${group}/${other}`,
    fieldNames: {},
    toThat: (obj) => ({ ...deepCopy(obj), ...(obj.apiVersion ? { apiVersion: `${group}/${other}` } : {}) }),
    fromThat: (obj) => ({ ...obj, ...(obj.apiVersion ? { apiVersion: `${group}/${version}` } : {}) }),
  };
}

/**
 * What FlowSchema and PriorityLevelConfiguration share in each version: cluster-scoped with a
 * generation; v1beta3 deprecated (removed in 1.32) and kept as v1; the status reset on create and
 * kept on update, and `/status` changing the status only, validated by its conditions.
 */
export function flowControlStrategy<T extends ApiObject & { spec?: unknown; status?: { conditions?: Array<{ type?: string }> } }>(
  group: string,
  version: 'v1' | 'v1beta3',
  kind: string,
  other: EquivalentVersion,
) {
  return {
    namespaced: false,
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain' as const,
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    ...(version === 'v1beta3'
      ? { deprecation: { deprecatedIn: '1.29', removedIn: '1.32', replacement: { group, version: 'v1', kind } }, storedAs: other }
      : {}),
    equivalentVersions: [other],
    prepareForCreate(obj: T): void {
      delete obj.status;
    },
    prepareForUpdate(obj: T, old: T): void {
      if (old.status === undefined) delete obj.status;
      else obj.status = deepCopy(old.status);
    },
    status: {
      prepareForUpdate(obj: T, old: T): void {
        obj.spec = deepCopy(old.spec);
      },
      validateUpdate: (obj: T) => validateConditions(obj.status),
    },
  };
}

function defineFlowSchemasIn(naming: Naming, version: 'v1' | 'v1beta3'): ResourceDefinition {
  const group = naming.groups.flowcontrol;
  const toOther = otherVersion(group, version, version === 'v1' ? 'v1beta3' : 'v1');
  return defineTyped<FlowSchema>({
    group,
    version,
    kind: 'FlowSchema',
    resource: 'flowschemas',
    singular: 'flowschema',
    ...flowControlStrategy<FlowSchema>(group, version, 'FlowSchema', toOther),
    defaults: defaultFlowSchema,
    validate: (fs) => validateFlowSchema(fs, naming),
    table: FLOW_SCHEMA_TABLE,
  });
}

export const defineFlowSchemas: DefineResource = (naming) => defineFlowSchemasIn(naming, 'v1');
export const defineFlowSchemasV1beta3: DefineResource = (naming) => defineFlowSchemasIn(naming, 'v1beta3');
