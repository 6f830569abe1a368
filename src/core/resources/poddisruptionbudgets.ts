/**
 * policy/v1 PodDisruptionBudget (upstream's PodDisruptionBudget strategy and
 * ValidatePodDisruptionBudget): how many of the pods a selector picks may be down at once, as
 * `minAvailable` or `maxUnavailable` (an integer or a percentage, not both), with `/status`,
 * which the disruption controller writes. Spec changes count in the generation.
 */
import type { ApiObject } from '../api';
import { deepCopy } from '../../util/json-values';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { invalidWithRendering } from '../validation/go-format';
import { validateLabelSelector } from '../validation/selectors';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';
import type { MetaLabelSelector } from '../validation/selectors';

export type IntOrString = number | string;

export interface PodDisruptionBudgetSpec {
  minAvailable?: IntOrString;
  selector?: MetaLabelSelector;
  maxUnavailable?: IntOrString;
  unhealthyPodEvictionPolicy?: string;
}

export interface MetaCondition {
  type: string;
  status: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
  reason: string;
  message: string;
}

export interface PodDisruptionBudgetStatus {
  observedGeneration?: number;
  disruptedPods?: Record<string, string>;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  conditions?: MetaCondition[];
}

export interface PodDisruptionBudget extends ApiObject {
  spec?: PodDisruptionBudgetSpec;
  status?: PodDisruptionBudgetStatus;
}

export const UNHEALTHY_POD_EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget'] as const;

const SPEC = FieldPath.root('spec');
const STATUS = FieldPath.root('status');
const PERCENT = /^[0-9]+%$/;
const PERCENT_MESSAGE =
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/** Go's `%#v` of an intstr.IntOrString. */
function goIntOrString(value: IntOrString): string {
  return typeof value === 'number'
    ? `intstr.IntOrString{Type:0, IntVal:${value}, StrVal:""}`
    : `intstr.IntOrString{Type:1, IntVal:0, StrVal:${JSON.stringify(value)}}`;
}

/** upstream's ValidatePositiveIntOrPercent and IsNotMoreThan100Percent. */
function validateIntOrPercent(value: IntOrString, path: FieldPath): FieldError[] {
  if (typeof value === 'number') return value < 0 ? [fieldErrors.invalid(path, value, 'must be greater than or equal to 0')] : [];
  if (!PERCENT.test(value)) return [invalidWithRendering(path, value, goIntOrString(value), PERCENT_MESSAGE)];
  return Number(value.slice(0, -1)) > 100 ? [invalidWithRendering(path, value, goIntOrString(value), 'must not be greater than 100%')] : [];
}

function validateSpec(spec: PodDisruptionBudgetSpec): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
    errs.push(fieldErrors.invalid(SPEC, spec, 'minAvailable and maxUnavailable cannot be both set'));
  }
  if (spec.minAvailable !== undefined) errs.push(...validateIntOrPercent(spec.minAvailable, SPEC.child('minAvailable')));
  if (spec.maxUnavailable !== undefined) errs.push(...validateIntOrPercent(spec.maxUnavailable, SPEC.child('maxUnavailable')));
  errs.push(...validateLabelSelector(spec.selector, SPEC.child('selector')));
  const policy = spec.unhealthyPodEvictionPolicy;
  if (policy !== undefined && !(UNHEALTHY_POD_EVICTION_POLICIES as readonly string[]).includes(policy)) {
    errs.push(fieldErrors.notSupported(SPEC.child('unhealthyPodEvictionPolicy'), policy, UNHEALTHY_POD_EVICTION_POLICIES));
  }
  return errs;
}

function validateStatus(status: PodDisruptionBudgetStatus | undefined): FieldError[] {
  const errs: FieldError[] = [];
  for (const field of ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods'] as const) {
    const value = status?.[field] ?? 0;
    if (value < 0) errs.push(fieldErrors.invalid(STATUS.child(field), value, 'must be greater than or equal to 0'));
  }
  return errs;
}

/** An empty status: the four counts Go always writes. */
export const emptyBudgetStatus = (): PodDisruptionBudgetStatus => ({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });

/**
 * The budget's conditions with `DisruptionAllowed` set (upstream's pdb helper): its transition
 * time kept while its status stays, the others left as they are.
 */
export function withDisruptionAllowed(
  conditions: readonly MetaCondition[] | undefined,
  status: 'True' | 'False',
  reason: string,
  message: string,
  generation: number | undefined,
  at: string,
): MetaCondition[] {
  const old = conditions?.find((c) => c.type === 'DisruptionAllowed');
  const lastTransitionTime = old && old.status === status ? old.lastTransitionTime : at;
  return [
    ...(conditions ?? []).filter((c) => c.type !== 'DisruptionAllowed'),
    { type: 'DisruptionAllowed', status, observedGeneration: generation, lastTransitionTime, reason, message },
  ];
}

const PDB_TABLE: TableDefinition<PodDisruptionBudget> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column(
      'Min Available',
      'string',
      'The minimum number of pods that must be available simultaneously.  This can be either an integer or a string specifying a percentage, e.g. "28%".',
    ),
    column(
      'Max Unavailable',
      'string',
      'The maximum number of pods that may be unavailable simultaneously.  This can be either an integer or a string specifying a percentage, e.g. "28%".',
    ),
    column('Allowed Disruptions', 'integer', 'Calculated number of pods that may be disrupted at this time.'),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
  ],
  row: (pdb, { now }) => ({
    cells: [
      pdb.metadata?.name ?? '',
      pdb.spec?.minAvailable !== undefined ? String(pdb.spec.minAvailable) : 'N/A',
      pdb.spec?.maxUnavailable !== undefined ? String(pdb.spec.maxUnavailable) : 'N/A',
      pdb.status?.disruptionsAllowed ?? 0,
      since(pdb.metadata?.creationTimestamp, now),
    ],
  }),
};

export const definePodDisruptionBudgets: DefineResource = () =>
  defineTyped<PodDisruptionBudget>({
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudget',
    resource: 'poddisruptionbudgets',
    singular: 'poddisruptionbudget',
    namespaced: true,
    shortNames: ['pdb'],
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    prepareForCreate(pdb) {
      pdb.status = emptyBudgetStatus();
    },
    prepareForUpdate(pdb, old) {
      pdb.status = deepCopy(old.status) ?? emptyBudgetStatus();
    },
    validate: (pdb) => validateSpec(pdb.spec ?? {}),
    status: {
      prepareForUpdate(pdb, old) {
        pdb.spec = deepCopy(old.spec);
      },
      validateUpdate: (pdb) => validateStatus(pdb.status),
    },
    table: PDB_TABLE,
  });
