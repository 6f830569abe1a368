/**
 * apiregistration/v1 APIService (kube-aggregator's apiservice strategy and ValidateAPIService):
 * the registration of one group version, named `<version>.<group>`, served locally (no
 * `service`) or by an extension API server behind a Service. Cluster-scoped; the status holds
 * the `Available` condition, which a local APIService has from its create and the availability
 * controller keeps for a remote one (docs/AGGREGATION.md).
 */
import { rfc3339 } from '../../clock';
import type { ApiObject } from '../api';
import { deepCopy } from '../../util/json-values';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { isDns1035Label, isDns1123Subdomain, isValidPathSegmentName } from '../validation/names';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource, StrategyContext } from './definition';

export interface APIServiceReference {
  namespace?: string;
  name?: string;
  port?: number;
}

export interface APIServiceCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface APIServiceSpec {
  service?: APIServiceReference | null;
  group?: string;
  version?: string;
  insecureSkipTLSVerify?: boolean;
  /** PEM, base64 in JSON. */
  caBundle?: string;
  groupPriorityMinimum?: number;
  versionPriority?: number;
}

export interface APIService extends ApiObject {
  spec?: APIServiceSpec;
  status?: { conditions?: APIServiceCondition[] };
}

/** The one condition type upstream defines. */
export const AVAILABLE = 'Available';
/** The port a service reference without one reaches (upstream's SetDefaults_ServiceReference). */
export const DEFAULT_SERVICE_PORT = 443;
const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

/** The name an APIService must have: `<version>.<group>` (`v1.` for the core group). */
export function apiServiceName(group: string, version: string): string {
  return `${version}.${group}`;
}

/** Is the service handled by this server (no service reference)? */
export function isLocalAPIService(apiService: APIService): boolean {
  return apiService.spec?.service == null;
}

/** The condition of `type`, if any (upstream's GetAPIServiceConditionByType). */
export function apiServiceCondition(apiService: APIService, type: string = AVAILABLE): APIServiceCondition | undefined {
  return apiService.status?.conditions?.find((c) => c.type === type);
}

/** Is `Available` True (upstream's IsAPIServiceConditionTrue)? */
export function isAPIServiceAvailable(apiService: APIService): boolean {
  return apiServiceCondition(apiService)?.status === 'True';
}

/**
 * The conditions with `condition` set in place of the one of its type (upstream's
 * SetAPIServiceCondition): its transition time kept while its status stays the same.
 */
export function withAPIServiceCondition(conditions: readonly APIServiceCondition[] | undefined, condition: APIServiceCondition): APIServiceCondition[] {
  const old = conditions?.find((c) => c.type === condition.type);
  const lastTransitionTime = old && old.status === condition.status ? old.lastTransitionTime : condition.lastTransitionTime;
  const next = { ...condition, lastTransitionTime };
  if (!old) return [...(conditions ?? []), next];
  return conditions!.map((c) => (c === old ? next : c));
}

/** upstream's NewLocalAvailableAPIServiceCondition. */
export function localAvailableCondition(at: string): APIServiceCondition {
  return { type: AVAILABLE, status: 'True', lastTransitionTime: at, reason: 'Local', message: 'Local APIServices are always available' };
}

const SPEC = FieldPath.root('spec');

/** upstream's ValidateAPIService, after the generic metadata checks the registry runs. */
export function validateAPIService(apiService: APIService): FieldError[] {
  const errs: FieldError[] = [];
  const spec = apiService.spec ?? {};
  const group = spec.group ?? '';
  const version = spec.version ?? '';
  const name = apiService.metadata?.name ?? '';
  // The name function upstream hands ValidateObjectMeta: a path segment (which the registry's
  // name rule checks), and then exactly `version.group`.
  const requiredName = apiServiceName(group, version);
  if (name !== '' && isValidPathSegmentName(name).length === 0 && name !== requiredName) {
    errs.push(fieldErrors.invalid(FieldPath.root('metadata', 'name'), name, `must be \`spec.version+"."+spec.group\`: ${JSON.stringify(requiredName)}`));
  }
  if (group === '' && version !== 'v1') errs.push(fieldErrors.required(SPEC.child('group'), 'only v1 may have an empty group and it better be legacy kube'));
  if (group !== '') for (const msg of isDns1123Subdomain(group)) errs.push(fieldErrors.invalid(SPEC.child('group'), group, msg));
  for (const msg of isDns1035Label(version)) errs.push(fieldErrors.invalid(SPEC.child('version'), version, msg));
  const groupPriority = spec.groupPriorityMinimum ?? 0;
  if (groupPriority <= 0 || groupPriority > 20000) {
    errs.push(fieldErrors.invalid(SPEC.child('groupPriorityMinimum'), groupPriority, 'must be positive and less than 20000'));
  }
  const versionPriority = spec.versionPriority ?? 0;
  if (versionPriority <= 0 || versionPriority > 1000) {
    errs.push(fieldErrors.invalid(SPEC.child('versionPriority'), versionPriority, 'must be positive and less than 1000'));
  }
  const caBytes = spec.caBundle ? Buffer.from(spec.caBundle, 'base64').length : 0;
  const service = spec.service;
  if (service == null) {
    if (caBytes !== 0) errs.push(fieldErrors.invalid(SPEC.child('caBundle'), `${caBytes} bytes`, 'local APIServices may not have a caBundle'));
    if (spec.insecureSkipTLSVerify)
      errs.push(fieldErrors.invalid(SPEC.child('insecureSkipTLSVerify'), true, 'local APIServices may not have insecureSkipTLSVerify'));
    return errs;
  }
  if (!service.namespace) errs.push(fieldErrors.required(SPEC.child('service', 'namespace'), ''));
  if (!service.name) errs.push(fieldErrors.required(SPEC.child('service', 'name'), ''));
  if (spec.insecureSkipTLSVerify && caBytes > 0) {
    errs.push(fieldErrors.invalid(SPEC.child('insecureSkipTLSVerify'), true, 'may not be true if caBundle is present'));
  }
  return errs;
}

/** upstream's ValidateAPIServiceStatus. */
function validateAPIServiceStatus(apiService: APIService): FieldError[] {
  const errs: FieldError[] = [];
  const conditions = apiService.status?.conditions ?? [];
  conditions.forEach((c, i) => {
    if (!(CONDITION_STATUSES as readonly string[]).includes(c.status)) {
      errs.push(fieldErrors.notSupported(FieldPath.root('status', 'conditions').index(i).child('status'), c.status ?? '', CONDITION_STATUSES));
    }
  });
  return errs;
}

/** kube-aggregator's table: the service as `<namespace>/<name>` or `Local`, `Available` with its reason when not True. */
const APISERVICE_TABLE: TableDefinition<APIService> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column('Service', 'string', 'The reference to the service that hosts this API endpoint.'),
    column('Available', 'string', 'Whether this service is available.'),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
  ],
  row: (apiService, { now }) => {
    const service = apiService.spec?.service;
    const condition = apiServiceCondition(apiService);
    const available = !condition ? 'Unknown' : condition.status !== 'True' && condition.reason ? `${condition.status} (${condition.reason})` : condition.status;
    return {
      cells: [
        apiService.metadata?.name ?? '',
        service == null ? 'Local' : `${service.namespace ?? ''}/${service.name ?? ''}`,
        available,
        since(apiService.metadata?.creationTimestamp, now),
      ],
    };
  },
};

export const defineAPIServices: DefineResource = (naming) =>
  defineTyped<APIService>({
    group: naming.groups.apiregistration,
    version: 'v1',
    kind: 'APIService',
    resource: 'apiservices',
    singular: 'apiservice',
    namespaced: false,
    categories: ['api-extensions'],
    verbs: STANDARD_VERBS,
    nameRule: 'pathSegment',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    defaults(apiService) {
      const service = apiService.spec?.service;
      if (service != null) service.port ??= DEFAULT_SERVICE_PORT;
    },
    prepareForCreate(apiService, ctx: StrategyContext) {
      apiService.status = {};
      // Local APIServices are available from their create.
      if (isLocalAPIService(apiService)) apiService.status.conditions = [localAvailableCondition(rfc3339(ctx.now))];
    },
    prepareForUpdate(apiService, old) {
      apiService.status = deepCopy(old.status) ?? {};
    },
    validate: (apiService) => validateAPIService(apiService),
    status: {
      prepareForUpdate(apiService, old) {
        apiService.spec = deepCopy(old.spec);
        const meta = (apiService.metadata ??= {});
        const oldMeta = old.metadata ?? {};
        for (const key of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
          if (oldMeta[key] === undefined) delete meta[key];
          else (meta as Record<string, unknown>)[key] = deepCopy(oldMeta[key]);
        }
      },
      validateUpdate: (apiService) => validateAPIServiceStatus(apiService),
    },
    table: APISERVICE_TABLE,
  });
