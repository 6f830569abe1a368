/**
 * scheduling/v1 PriorityClass (upstream's PriorityClass strategy and
 * ValidatePriorityClass): a name for the priority pods ask for by `priorityClassName`, resolved by
 * the Priority admission plugin. Cluster-scoped; `value` and `preemptionPolicy` never change; the
 * `system-` prefix belongs to the two classes the server creates at start.
 */
import type { ApiObject } from '../api';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';

export interface PriorityClass extends ApiObject {
  value?: number;
  globalDefault?: boolean;
  description?: string;
  preemptionPolicy?: string;
}

/** upstream's scheduling constants. */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
export const SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;
export const SYSTEM_PRIORITY_CLASS_PREFIX = 'system-';
export const PREEMPTION_POLICIES = ['PreemptLowerPriority', 'Never'] as const;

/** The classes the server creates at start (upstream's SystemPriorityClasses). */
export const SYSTEM_PRIORITY_CLASSES: ReadonlyArray<Required<Pick<PriorityClass, 'value' | 'description'>> & { name: string }> = [
  {
    name: 'system-node-critical',
    value: SYSTEM_CRITICAL_PRIORITY + 1000,
    description: 'Used for system critical pods that must not be moved from their current node.',
  },
  {
    name: 'system-cluster-critical',
    value: SYSTEM_CRITICAL_PRIORITY,
    description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
  },
];

/** upstream's ValidatePreemptionPolicy (also for a pod's `spec.preemptionPolicy`). */
export function validatePreemptionPolicy(policy: string, path: FieldPath): FieldError[] {
  if (policy === '') return [fieldErrors.required(path)];
  if (!(PREEMPTION_POLICIES as readonly string[]).includes(policy)) return [fieldErrors.notSupported(path, policy, PREEMPTION_POLICIES)];
  return [];
}

function validatePriorityClass(pc: PriorityClass): FieldError[] {
  const errs: FieldError[] = [];
  const name = pc.metadata?.name ?? '';
  const value = pc.value ?? 0;
  if (name.startsWith(SYSTEM_PRIORITY_CLASS_PREFIX)) {
    const known = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === name);
    const problem = !known
      ? `${name} is not a known system priority class`
      : known.value !== value
        ? `value of ${name} PriorityClass must be ${known.value}`
        : (pc.globalDefault ?? false)
          ? `globalDefault of ${name} PriorityClass must be false`
          : undefined;
    if (problem) {
      errs.push(
        fieldErrors.forbidden(
          FieldPath.root('metadata', 'name'),
          `priority class names with '${SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: ${problem}`,
        ),
      );
    }
  } else if (value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    errs.push(fieldErrors.forbidden(FieldPath.root('value'), `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`));
  }
  if (pc.preemptionPolicy !== undefined) errs.push(...validatePreemptionPolicy(pc.preemptionPolicy, FieldPath.root('preemptionPolicy')));
  return errs;
}

function validatePriorityClassUpdate(pc: PriorityClass, old: PriorityClass): FieldError[] {
  const errs: FieldError[] = [];
  if ((pc.value ?? 0) !== (old.value ?? 0)) errs.push(fieldErrors.forbidden(FieldPath.root('value'), 'may not be changed in an update.'));
  if (pc.preemptionPolicy !== old.preemptionPolicy) errs.push(fieldErrors.immutable(FieldPath.root('preemptionPolicy'), pc.preemptionPolicy ?? null));
  return errs;
}

const PRIORITY_CLASS_TABLE: TableDefinition<PriorityClass> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column(
      'Value',
      'integer',
      'value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.',
    ),
    column(
      'Global-Default',
      'boolean',
      'globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.',
    ),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
    column(
      'PreemptionPolicy',
      'string',
      'preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.',
    ),
  ],
  row: (pc, { now }) => ({
    cells: [pc.metadata?.name ?? '', pc.value ?? 0, pc.globalDefault ?? false, since(pc.metadata?.creationTimestamp, now), pc.preemptionPolicy ?? ''],
  }),
};

export const definePriorityClasses: DefineResource = (naming) =>
  defineTyped<PriorityClass>({
    group: naming.groups.scheduling,
    version: 'v1',
    kind: 'PriorityClass',
    resource: 'priorityclasses',
    singular: 'priorityclass',
    namespaced: false,
    shortNames: ['pc'],
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    defaults(pc) {
      pc.preemptionPolicy ??= 'PreemptLowerPriority';
    },
    validate: validatePriorityClass,
    validateUpdate: validatePriorityClassUpdate,
    table: PRIORITY_CLASS_TABLE,
  });
