/**
 * core/v1 Pod: defaults, create-time status (phase Pending, QoS class), the narrow set of spec
 * fields an update may change, and the `/status` split (as upstream's pod strategy).
 */
import { isIP } from 'node:net';
import type { ApiObject } from '../api';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { semanticEqual } from '../validation/equality';
import { GO_NIL, invalidWithRendering } from '../validation/go-format';
import { inclusiveRangeError, isQualifiedName, validateName } from '../validation/names';
import { defineTyped, STANDARD_VERBS } from './common';
import { deepCopy } from '../../util/json-values';
import type { DefineResource } from './definition';
import { defaultPodOnlyFields, defaultPodSpec, type Container, type PodSpec, type ResourceList } from './pod-spec';
import { validatePodSpec } from './pod-spec-validation';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, podCells, since, type TableDefinition } from '../table';
import { compare, readQuantity, sign } from '../../util/quantity';

export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
}

export interface PodStatus {
  phase?: string;
  conditions?: PodCondition[];
  hostIP?: string;
  podIP?: string;
  podIPs?: Array<{ ip: string }>;
  nominatedNodeName?: string;
  qosClass?: string;
  startTime?: string;
  [field: string]: unknown;
}

export interface Pod extends ApiObject {
  spec: PodSpec;
  status?: PodStatus;
}

const SPEC = FieldPath.root('spec');
const MAX_INT32 = 2147483647;

/** Fields a pod update may change, as upstream lists them in its refusal. */
const UPDATABLE_POD_SPEC_FIELDS = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
];

/** The pod's first Ready condition, the one upstream's pod helpers read. */
export function podReadyCondition(pod: ApiObject): PodCondition | undefined {
  const conditions = (pod.status as PodStatus | undefined)?.conditions;
  if (conditions) for (const c of conditions) if (c.type === 'Ready') return c;
  return undefined;
}

/** upstream's IsPodReady: the pod's (first) Ready condition is True. */
export function isPodReady(pod: ApiObject): boolean {
  return podReadyCondition(pod)?.status === 'True';
}

/**
 * The pod's conditions with `DisruptionTarget` True for `reason` in place of any earlier one
 * (upstream's PodDisruptionConditions: what is about to take the pod away, and why).
 */
export function withDisruptionTarget(conditions: readonly PodCondition[] | undefined, reason: string, message: string, at: string): PodCondition[] {
  const target: PodCondition = { type: 'DisruptionTarget', status: 'True', lastProbeTime: null, lastTransitionTime: at, reason, message };
  return [...(conditions ?? []).filter((c) => c.type !== 'DisruptionTarget'), target];
}

/** upstream qos.GetPodQOS over cpu and memory. */
export function podQosClass(spec: PodSpec): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers: Container[] = [...(spec.containers ?? []), ...(spec.initContainers ?? [])];
  const positive = (list: ResourceList | undefined, name: string) => {
    const amount = list?.[name] === undefined ? undefined : readQuantity(list[name]!);
    return amount && sign(amount) > 0 ? amount : undefined;
  };
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    for (const res of ['cpu', 'memory']) {
      const req = positive(c.resources?.requests, res);
      const lim = positive(c.resources?.limits, res);
      if (req !== undefined || lim !== undefined) any = true;
      if (lim === undefined) guaranteed = false;
      else if (req !== undefined && compare(req, lim) !== 0) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** v1 conversion keeps `podIP` and `podIPs[0]` in step; `podIP` wins when they disagree. */
function normalizePodIPs(status: PodStatus | undefined): void {
  if (!status) return;
  if (status.podIP && (!status.podIPs?.length || status.podIPs[0]!.ip !== status.podIP)) status.podIPs = [{ ip: status.podIP }];
  else if (!status.podIP && status.podIPs?.length) status.podIP = status.podIPs[0]!.ip;
}

function validateActiveDeadlineUpdate(pod: Pod, old: Pod): FieldError[] {
  const path = SPEC.child('activeDeadlineSeconds');
  const now = pod.spec.activeDeadlineSeconds;
  const before = old.spec.activeDeadlineSeconds;
  if (now !== undefined) {
    if (now < 0 || now > MAX_INT32) return [fieldErrors.invalid(path, now, inclusiveRangeError(0, MAX_INT32))];
    if (before !== undefined && before < now) return [fieldErrors.invalid(path, now, 'must be less than or equal to previous value')];
  } else if (before !== undefined) {
    return [invalidWithRendering(path, null, GO_NIL, 'must not update from a positive integer to nil value')];
  }
  return [];
}

/** A short description of what differs between two specs (upstream prints a cmp.Diff here). */
function specDiff(old: PodSpec, now: PodSpec): string {
  const keys = [...new Set([...Object.keys(old), ...Object.keys(now)])].sort();
  const lines: string[] = [];
  for (const k of keys) {
    if (semanticEqual(old[k], now[k])) continue;
    lines.push(`-\t${k}: ${JSON.stringify(old[k] ?? null)}`, `+\t${k}: ${JSON.stringify(now[k] ?? null)}`);
  }
  return lines.join('\n');
}

/** upstream ValidatePodUpdate: only images, activeDeadlineSeconds, added tolerations and a few more may change. */
export function validatePodUpdate(pod: Pod, old: Pod): FieldError[] {
  for (const list of ['containers', 'initContainers'] as const) {
    if ((pod.spec[list] ?? []).length !== (old.spec[list] ?? []).length) {
      return [fieldErrors.forbidden(SPEC.child(list), 'pod updates may not add or remove containers')];
    }
  }
  const errs = validateActiveDeadlineUpdate(pod, old);
  if (errs.length > 0) return errs;

  const munged = deepCopy(old.spec);
  munged.containers = munged.containers.map((c, i) => ({ ...c, image: pod.spec.containers[i]!.image }));
  if (munged.initContainers) munged.initContainers = munged.initContainers.map((c, i) => ({ ...c, image: pod.spec.initContainers![i]!.image }));
  munged.activeDeadlineSeconds = pod.spec.activeDeadlineSeconds;
  const oldTolerations = (old.spec.tolerations as unknown[] | undefined) ?? [];
  const newTolerations = (pod.spec.tolerations as unknown[] | undefined) ?? [];
  if (oldTolerations.every((t) => newTolerations.some((n) => semanticEqual(n, t)))) munged.tolerations = pod.spec.tolerations;
  const oldGrace = old.spec.terminationGracePeriodSeconds;
  if (oldGrace !== undefined && oldGrace < 0 && pod.spec.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = 1;
  // Scheduling gates may only be removed.
  const oldGates = (old.spec.schedulingGates as unknown[] | undefined) ?? [];
  const newGates = (pod.spec.schedulingGates as unknown[] | undefined) ?? [];
  if (newGates.every((g) => oldGates.some((o) => semanticEqual(o, g)))) munged.schedulingGates = pod.spec.schedulingGates;

  if (!semanticEqual(munged, pod.spec)) {
    errs.push(
      fieldErrors.forbidden(SPEC, `pod updates may not change fields other than ${UPDATABLE_POD_SPEC_FIELDS.join(',')}\n${specDiff(munged, pod.spec)}`),
    );
  }
  return errs;
}

const SYSTEM_CONDITIONS = new Set(['PodScheduled', 'Ready', 'Initialized']);

/** upstream ValidatePodStatusUpdate, the parts Keelson keeps (paths as upstream prints them). */
export function validatePodStatusUpdate(pod: Pod, old: Pod): FieldError[] {
  const errs: FieldError[] = [];
  const status = pod.status ?? {};
  (status.conditions ?? []).forEach((c, i) => {
    if (SYSTEM_CONDITIONS.has(c.type)) return;
    const p = FieldPath.root('metadata', 'conditions').index(i).child('Type');
    errs.push(...isQualifiedName(c.type ?? '').map((msg) => fieldErrors.invalid(p, c.type, msg)));
  });
  const nominated = status.nominatedNodeName;
  if (nominated && nominated !== old.status?.nominatedNodeName) {
    for (const msg of validateName(nominated, 'dns1123Subdomain')) errs.push(fieldErrors.invalid('status.nominatedNodeName', nominated, msg));
  }
  const ipsPath = FieldPath.root('status', 'podIPs');
  const ips = status.podIPs ?? [];
  ips.forEach((ip, i) => {
    if (!isIP(ip.ip ?? '')) errs.push(fieldErrors.invalid(ipsPath.index(i), ip.ip ?? '', 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
  });
  if (ips.length > 1) {
    const families = new Set(ips.map((ip) => isIP(ip.ip ?? '')));
    if (ips.length > 2 || families.size !== 2) errs.push(fieldErrors.invalid(ipsPath, ips, 'may specify no more than one IP for each IP family'));
    const seen = new Set<string>();
    ips.forEach((ip, i) => {
      if (seen.has(ip.ip)) errs.push(fieldErrors.duplicate(ipsPath.index(i), ip));
      seen.add(ip.ip);
    });
  }
  return errs;
}

const BINDING_KIND = { group: '', version: 'v1', kind: 'Binding' };
const EVICTION_KIND = { group: 'policy', version: 'v1', kind: 'Eviction' };

/**
 * core/v1 `bindings`: the legacy form of `pods/<name>/binding`, create only, never stored (the
 * Binding's own name names the pod).
 */
export const defineBindings: DefineResource = () =>
  defineTyped({
    group: '',
    version: 'v1',
    kind: 'Binding',
    resource: 'bindings',
    singular: 'binding',
    namespaced: true,
    verbs: ['create'],
    notStored: true,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
  });

/** upstream's Pod printer (the status logic is podCells in core/table). */
const POD_TABLE: TableDefinition<Pod> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'string', 'The aggregate status of the containers in this pod.'),
    column('Restarts', 'string', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
    column('IP', 'string', 'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.', { priority: 1 }),
    column(
      'Node',
      'string',
      'NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://{keyDomain}/docs/concepts/scheduling-eviction/assign-pod-node/#nodename',
      { priority: 1 },
    ),
    column(
      'Nominated Node',
      'string',
      'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.',
      { priority: 1 },
    ),
    column(
      'Readiness Gates',
      'string',
      'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.{groupDomain}/enhancements/keps/sig-network/580-pod-readiness-gates',
      { priority: 1 },
    ),
  ],
  row(pod, { now }) {
    const c = podCells(pod, now);
    const cells = [
      pod.metadata?.name ?? '',
      c.ready,
      c.status,
      c.restarts,
      since(pod.metadata?.creationTimestamp, now),
      c.ip,
      c.node,
      c.nominatedNode,
      c.readinessGates,
    ];
    return c.conditions ? { cells, conditions: c.conditions } : { cells };
  },
};

export const definePods: DefineResource = () =>
  defineTyped<Pod>({
    group: '',
    version: 'v1',
    kind: 'Pod',
    resource: 'pods',
    singular: 'pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,
    // A scheduler's Binding (`pods/<name>/binding`), answered by the core's binding handler.
    createSubresources: [
      { name: 'binding', kind: BINDING_KIND },
      { name: 'eviction', kind: EVICTION_KIND },
    ],

    defaults(pod) {
      pod.spec ??= { containers: [] };
      defaultPodSpec(pod.spec);
      defaultPodOnlyFields(pod.spec);
      normalizePodIPs(pod.status);
    },
    prepareForCreate(pod) {
      pod.status = { phase: 'Pending', qosClass: podQosClass(pod.spec) };
      if (Array.isArray(pod.spec.schedulingGates) && pod.spec.schedulingGates.length > 0) {
        pod.status.conditions = [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'SchedulingGated',
            message: 'Scheduling is blocked due to non-empty scheduling gates',
            lastProbeTime: null,
            lastTransitionTime: null,
          },
        ];
      }
    },
    prepareForUpdate(pod, old) {
      pod.status = deepCopy(old.status);
    },
    validate(pod) {
      const errs = validatePodSpec(pod.spec, SPEC);
      if (Array.isArray(pod.spec?.ephemeralContainers) && pod.spec.ephemeralContainers.length > 0) {
        errs.push(fieldErrors.forbidden(SPEC.child('ephemeralContainers'), 'cannot be set on create'));
      }
      return errs;
    },
    validateUpdate: (pod, old) => validatePodUpdate(pod, old),
    status: {
      prepareForUpdate(pod, old) {
        pod.spec = deepCopy(old.spec);
        // Old kubelets corrupt owner references; /status never changes them (upstream).
        const meta = (pod.metadata ??= {});
        if (old.metadata?.ownerReferences) meta.ownerReferences = deepCopy(old.metadata.ownerReferences);
        else delete meta.ownerReferences;
        if (pod.status && !pod.status.qosClass && old.status?.qosClass) pod.status.qosClass = old.status.qosClass;
      },
      validateUpdate: (pod, old) => validatePodStatusUpdate(pod, old),
    },
    selectableFields(pod) {
      return {
        'spec.nodeName': pod.spec?.nodeName ?? '',
        'spec.restartPolicy': pod.spec?.restartPolicy ?? '',
        'spec.schedulerName': pod.spec?.schedulerName ?? '',
        'spec.serviceAccountName': pod.spec?.serviceAccountName ?? '',
        'spec.hostNetwork': String(pod.spec?.hostNetwork === true),
        'status.phase': pod.status?.phase ?? '',
        'status.podIP': pod.status?.podIPs?.[0]?.ip ?? pod.status?.podIP ?? '',
        'status.nominatedNodeName': pod.status?.nominatedNodeName ?? '',
      };
    },
    table: POD_TABLE,
  });
