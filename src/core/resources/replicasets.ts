/**
 * apps/v1 ReplicaSet (docs/API.md, "ReplicaSet"; upstream's ReplicaSet strategy and
 * `ValidateReplicaSet`): a spec/status split with generation tracking, `/status` and
 * `/scale`, a required non-empty selector that must match the template's labels and, in
 * apps/v1, never changes.
 */
import type { ApiObject, ObjectMeta } from '../api';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { semanticEqual } from '../validation/equality';
import { GO_NIL, goStringMap, immutableWithRendering, invalidWithRendering } from '../validation/go-format';
import { validateNonnegative } from '../validation/metadata';
import {
  goLabelSelector,
  isConvertibleLabelSelector,
  isEmptyLabelSelector,
  labelSelectorMatches,
  labelSelectorToString,
  validateLabelSelector,
  type MetaLabelSelector,
} from '../validation/selectors';
import { defineTyped, STANDARD_VERBS } from './common';
import { deepCopy } from '../../util/json-values';
import type { DefineResource } from './definition';
import { defaultPodSpec, type PodTemplateSpec } from './pod-spec';
import { validatePodTemplateSpec } from './pod-spec-validation';
import {
  column,
  formatLabelSelector,
  layoutContainerCells,
  OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION,
  OBJECT_META_NAME_DESCRIPTION,
  since,
  type TableDefinition,
} from '../table';

export interface ReplicaSetSpec {
  /** Absent means 1; an explicit 0 stays 0. */
  replicas?: number;
  minReadySeconds?: number;
  selector?: MetaLabelSelector | null;
  template?: PodTemplateSpec;
}

export interface ReplicaSetCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown' | string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ReplicaSetStatus {
  replicas?: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: ReplicaSetCondition[];
}

export interface ReplicaSet extends ApiObject {
  metadata?: ObjectMeta;
  spec: ReplicaSetSpec;
  status?: ReplicaSetStatus;
}

export const DEFAULT_REPLICAS = 1;

const SPEC = FieldPath.root('spec');
const STATUS = FieldPath.root('status');

/** Template checks: selector match, pod template rules, restartPolicy Always, no activeDeadlineSeconds. */
function validateTemplate(spec: ReplicaSetSpec, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const template = spec.template ?? {};
  const labels = template.metadata?.labels;
  // A missing selector selects nothing; an empty one everything, which any template matches.
  const selectsEverything = !!spec.selector && isEmptyLabelSelector(spec.selector);
  if (!selectsEverything && !labelSelectorMatches(spec.selector, labels)) {
    errs.push(invalidWithRendering(path.child('metadata', 'labels'), labels ?? null, goStringMap(labels), '`selector` does not match template `labels`'));
  }
  errs.push(...validatePodTemplateSpec(template, path));
  const restartPolicy = template.spec?.restartPolicy ?? '';
  if (restartPolicy !== 'Always') errs.push(fieldErrors.notSupported(path.child('spec', 'restartPolicy'), restartPolicy, ['Always']));
  if (template.spec?.activeDeadlineSeconds !== undefined) {
    errs.push(fieldErrors.forbidden(path.child('spec', 'activeDeadlineSeconds'), 'activeDeadlineSeconds in ReplicaSet is not Supported'));
  }
  return errs;
}

/** upstream ValidateReplicaSetSpec. */
export function validateReplicaSetSpec(spec: ReplicaSetSpec): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...validateNonnegative(spec.replicas ?? DEFAULT_REPLICAS, SPEC.child('replicas')));
  errs.push(...validateNonnegative(spec.minReadySeconds ?? 0, SPEC.child('minReadySeconds')));
  const selector = spec.selector;
  if (!selector) errs.push(fieldErrors.required(SPEC.child('selector')));
  else {
    errs.push(...validateLabelSelector(selector, SPEC.child('selector')));
    if (isEmptyLabelSelector(selector)) {
      // Upstream shares this message with Deployments, word for word.
      errs.push(invalidWithRendering(SPEC.child('selector'), selector, goLabelSelector(selector), 'empty selector is invalid for deployment'));
    }
  }
  if (!isConvertibleLabelSelector(selector)) {
    errs.push(invalidWithRendering(SPEC.child('selector'), selector, goLabelSelector(selector!), 'invalid label selector'));
  } else {
    errs.push(...validateTemplate(spec, SPEC.child('template')));
  }
  return errs;
}

/** upstream ValidateReplicaSetStatus: non-negative counts that never exceed `replicas` (available ≤ ready). */
export function validateReplicaSetStatus(status: ReplicaSetStatus | undefined): FieldError[] {
  const s = status ?? {};
  const replicas = s.replicas ?? 0;
  const fully = s.fullyLabeledReplicas ?? 0;
  const ready = s.readyReplicas ?? 0;
  const available = s.availableReplicas ?? 0;
  const errs: FieldError[] = [
    ...validateNonnegative(replicas, STATUS.child('replicas')),
    ...validateNonnegative(fully, STATUS.child('fullyLabeledReplicas')),
    ...validateNonnegative(ready, STATUS.child('readyReplicas')),
    ...validateNonnegative(available, STATUS.child('availableReplicas')),
    ...validateNonnegative(s.observedGeneration ?? 0, STATUS.child('observedGeneration')),
  ];
  const msg = 'cannot be greater than status.replicas';
  if (fully > replicas) errs.push(fieldErrors.invalid(STATUS.child('fullyLabeledReplicas'), fully, msg));
  if (ready > replicas) errs.push(fieldErrors.invalid(STATUS.child('readyReplicas'), ready, msg));
  if (available > replicas) errs.push(fieldErrors.invalid(STATUS.child('availableReplicas'), available, msg));
  if (available > ready) errs.push(fieldErrors.invalid(STATUS.child('availableReplicas'), available, 'cannot be greater than readyReplicas'));
  return errs;
}

/** apps/v1 refuses any change of `spec.selector`. */
export function validateReplicaSetUpdate(rs: ReplicaSet, old: ReplicaSet): FieldError[] {
  if (semanticEqual(rs.spec?.selector ?? null, old.spec?.selector ?? null)) return [];
  const selector = rs.spec?.selector;
  return [immutableWithRendering(SPEC.child('selector'), selector ?? null, selector ? goLabelSelector(selector) : GO_NIL)];
}

function defaultReplicaSet(rs: ReplicaSet): void {
  const spec = (rs.spec ??= {});
  spec.replicas ??= DEFAULT_REPLICAS;
  // minReadySeconds defaults to 0, its zero value: absent in JSON, as upstream's encoding/json
  // leaves an omitempty zero out (its protobuf writes 0).
  const template = (spec.template ??= {});
  // Templates serialise their metadata's zero creationTimestamp as null, as upstream's do.
  template.metadata ??= {};
  if (template.metadata.creationTimestamp === undefined) template.metadata.creationTimestamp = null;
  template.spec ??= { containers: [] };
  defaultPodSpec(template.spec);
  // Empty ReplicaSet labels default to its template's (docs/API.md, "ReplicaSet").
  const meta = (rs.metadata ??= {});
  const templateLabels = template.metadata.labels;
  if (Object.keys(meta.labels ?? {}).length === 0 && templateLabels && Object.keys(templateLabels).length > 0) meta.labels = { ...templateLabels };
}

/** upstream's ReplicaSet printer; descriptions from extensions/v1beta1, as upstream takes them. */
const REPLICA_SET_TABLE: TableDefinition<ReplicaSet> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column(
      'Desired',
      'integer',
      'Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://{keyDomain}/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller',
    ),
    column(
      'Current',
      'integer',
      'Replicas is the most recently observed number of replicas. More info: https://{keyDomain}/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller',
    ),
    column('Ready', 'integer', 'The number of ready replicas for this replica set.'),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
    column('Containers', 'string', 'Names of each container in the template.', { priority: 1 }),
    column('Images', 'string', 'Images referenced by each container in the template.', { priority: 1 }),
    column(
      'Selector',
      'string',
      'Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: https://{keyDomain}/docs/concepts/overview/working-with-objects/labels/#label-selectors',
      { priority: 1 },
    ),
  ],
  row(rs, { now }) {
    const { names, images } = layoutContainerCells(rs.spec?.template?.spec?.containers);
    const status = rs.status ?? {};
    return {
      cells: [
        rs.metadata?.name ?? '',
        rs.spec?.replicas ?? DEFAULT_REPLICAS,
        status.replicas ?? 0,
        status.readyReplicas ?? 0,
        since(rs.metadata?.creationTimestamp, now),
        names,
        images,
        formatLabelSelector(rs.spec?.selector),
      ],
    };
  },
};

export const defineReplicaSets: DefineResource = () =>
  defineTyped<ReplicaSet>({
    group: 'apps',
    version: 'v1',
    kind: 'ReplicaSet',
    resource: 'replicasets',
    singular: 'replicaset',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,

    defaults: defaultReplicaSet,
    prepareForCreate(rs) {
      rs.status = { replicas: 0 };
    },
    prepareForUpdate(rs, old) {
      rs.status = deepCopy(old.status) ?? { replicas: 0 };
    },
    validate: (rs) => validateReplicaSetSpec(rs.spec ?? {}),
    validateUpdate: validateReplicaSetUpdate,
    status: {
      prepareForUpdate(rs, old) {
        rs.spec = deepCopy(old.spec);
      },
      validateUpdate: (rs) => validateReplicaSetStatus(rs.status),
    },
    scale: {
      specReplicas: (obj) => (obj as ReplicaSet).spec?.replicas ?? DEFAULT_REPLICAS,
      setSpecReplicas(obj, replicas) {
        const rs = obj as ReplicaSet;
        (rs.spec ??= {}).replicas = replicas;
      },
      statusReplicas: (obj) => (obj as ReplicaSet).status?.replicas ?? 0,
      selector: (obj) => labelSelectorToString((obj as ReplicaSet).spec?.selector),
    },
    selectableFields: (rs) => ({ 'status.replicas': String(rs.status?.replicas ?? 0) }),
    table: REPLICA_SET_TABLE,
  });
