/**
 * core/v1 Node: cluster-scoped, a spec the owner of the node (or an administrator) changes and a
 * status its agent reports through `/status` (upstream's node strategy and ValidateNode /
 * ValidateNodeUpdate).
 */
import { isIP } from 'node:net';
import type { Naming } from '../../naming';
import type { ApiObject } from '../api';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { validateLabelName } from '../validation/metadata';
import { isValidLabelValue } from '../validation/names';
import { deepCopy } from '../../util/json-values';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

/** A pod's toleration of node taints (core/v1 Toleration). */
export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface NodeCondition {
  type: string;
  status: string;
  lastHeartbeatTime?: string | null;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}

export interface NodeSpec {
  podCIDR?: string;
  podCIDRs?: string[];
  providerID?: string;
  unschedulable?: boolean;
  taints?: Taint[];
  externalID?: string;
  [field: string]: unknown;
}

export interface NodeStatus {
  capacity?: Record<string, string>;
  allocatable?: Record<string, string>;
  conditions?: NodeCondition[];
  addresses?: Array<{ type: string; address: string }>;
  daemonEndpoints?: { kubeletEndpoint?: { Port: number } };
  nodeInfo?: Record<string, string>;
  [field: string]: unknown;
}

export interface Node extends ApiObject {
  spec?: NodeSpec;
  status?: NodeStatus;
}

/** The taint effects upstream accepts, in its order. */
export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

const SPEC = FieldPath.root('spec');

/** upstream IsValidCIDR: an address, a slash and a prefix length that fits the family. */
function isCidr(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash < 0) return false;
  const family = isIP(value.slice(0, slash));
  const bits = value.slice(slash + 1);
  if (family === 0 || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** upstream validateNodeTaints; its path is `metadata.taints`, as upstream (mis)names it. */
function validateTaints(taints: readonly Taint[]): FieldError[] {
  const path = FieldPath.root('metadata', 'taints');
  const errs: FieldError[] = [];
  const seen = new Map<string, Set<string>>();
  taints.forEach((taint, i) => {
    const at = path.index(i);
    errs.push(...validateLabelName(taint.key ?? '', at.child('key')));
    const valueErrs = isValidLabelValue(taint.value ?? '');
    if (valueErrs.length > 0) errs.push(fieldErrors.invalid(at.child('value'), taint.value ?? '', valueErrs.join(';')));
    const effect = taint.effect ?? '';
    if (effect === '') errs.push(fieldErrors.required(at.child('effect')));
    else if (!(TAINT_EFFECTS as readonly string[]).includes(effect)) errs.push(fieldErrors.notSupported(at.child('effect'), effect, TAINT_EFFECTS));
    const keys = seen.get(effect) ?? new Set<string>();
    if (keys.has(taint.key)) {
      errs.push(fieldErrors.duplicate(at, taint, 'taints must be unique by key and effect pair'));
      return;
    }
    keys.add(taint.key);
    seen.set(effect, keys);
  });
  return errs;
}

/** upstream ValidateNode: taints and pod CIDRs (status fields are optional and checked on update). */
export function validateNode(node: Node): FieldError[] {
  const spec = node.spec ?? {};
  const errs: FieldError[] = [];
  if ((spec.taints ?? []).length > 0) errs.push(...validateTaints(spec.taints!));
  const cidrs = spec.podCIDRs ?? [];
  const path = SPEC.child('podCIDRs');
  const invalid = cidrs.flatMap((cidr, i) =>
    isCidr(cidr) ? [] : [fieldErrors.invalid(path.index(i), cidr, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)')],
  );
  errs.push(...invalid);
  if (cidrs.length > 1 && invalid.length === 0) {
    const families = new Set(cidrs.map((c) => isIP(c.slice(0, c.indexOf('/')))));
    if (cidrs.length > 2 || families.size !== 2) errs.push(fieldErrors.invalid(path, cidrs, 'may specify no more than one CIDR for each IP family'));
  }
  return errs;
}

/** upstream ValidateNodeUpdate: pod CIDRs and providerID only go from unset to set; externalID never changes. */
export function validateNodeUpdate(node: Node, old: Node): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (node.status?.addresses ?? []).forEach((address, i) => {
    const key = `${address.type}\u0000${address.address}`;
    if (seen.has(key)) errs.push(fieldErrors.duplicate(FieldPath.root('status', 'addresses').index(i), address));
    seen.add(key);
  });
  const spec = node.spec ?? {};
  const before = old.spec ?? {};
  const oldCidrs = before.podCIDRs ?? [];
  if (oldCidrs.length > 0) {
    const now = spec.podCIDRs ?? [];
    const message = 'node updates may not change podCIDR except from "" to valid';
    if (now.length !== oldCidrs.length) errs.push(fieldErrors.forbidden(SPEC.child('podCIDRs'), message));
    else oldCidrs.forEach((c, i) => c !== now[i] && errs.push(fieldErrors.forbidden(SPEC.child('podCIDRs'), message)));
  }
  if (before.providerID && before.providerID !== spec.providerID) {
    errs.push(fieldErrors.forbidden(SPEC.child('providerID'), 'node updates may not change providerID except from "" to valid'));
  }
  if ((spec.externalID ?? '') !== (before.externalID ?? '')) errs.push(fieldErrors.forbidden(SPEC.child('externalID'), 'may not be updated'));
  return errs;
}

/** The node's Ready condition, as the printer and the scheduler read it. */
export function nodeIsReady(node: Node): boolean {
  return (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** upstream's node printer: Ready / NotReady / Unknown, and SchedulingDisabled when cordoned. */
function nodeStatusCell(node: Node): string {
  const ready = (node.status?.conditions ?? []).find((c) => c.type === 'Ready');
  const states = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (node.spec?.unschedulable) states.push('SchedulingDisabled');
  return states.join(',');
}

/** Roles from `node-role.<keyDomain>/<role>` label keys and the `<keyDomain>/role` label's value. */
function nodeRoles(node: Node, naming: Naming): string {
  const prefix = naming.key('', 'node-role');
  const roleLabel = naming.key('role');
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata?.labels ?? {})) {
    if (k.startsWith(prefix) && k.length > prefix.length) roles.add(k.slice(prefix.length));
    else if (k === roleLabel && v !== '') roles.add(v);
  }
  return roles.size === 0 ? '<none>' : [...roles].sort().join(',');
}

const ADDRESSES_DESCRIPTION =
  "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://{keyDomain}/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.{groupDomain}/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";

function nodeTable(naming: Naming): TableDefinition<Node> {
  const address = (node: Node, type: string) => node.status?.addresses?.find((a) => a.type === type)?.address ?? '<none>';
  const info = (node: Node, field: string) => node.status?.nodeInfo?.[field] || '<unknown>';
  return {
    columns: [
      column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
      column('Status', 'string', 'The status of the node'),
      column('Roles', 'string', 'The roles of the node'),
      column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
      column('Version', 'string', 'Kubelet Version reported by the node.'),
      column('Internal-IP', 'string', ADDRESSES_DESCRIPTION, { priority: 1 }),
      column('External-IP', 'string', ADDRESSES_DESCRIPTION, { priority: 1 }),
      column('OS-Image', 'string', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).', { priority: 1 }),
      column('Kernel-Version', 'string', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", { priority: 1 }),
      column('Container-Runtime', 'string', 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).', {
        priority: 1,
      }),
    ],
    row: (node, { now }) => ({
      cells: [
        node.metadata?.name ?? '',
        nodeStatusCell(node),
        nodeRoles(node, naming),
        since(node.metadata?.creationTimestamp, now),
        node.status?.nodeInfo?.kubeletVersion ?? '',
        address(node, 'InternalIP'),
        address(node, 'ExternalIP'),
        info(node, 'osImage'),
        info(node, 'kernelVersion'),
        info(node, 'containerRuntimeVersion'),
      ],
    }),
  };
}

export const defineNodes: DefineResource = (naming) =>
  defineTyped<Node>({
    group: '',
    version: 'v1',
    kind: 'Node',
    resource: 'nodes',
    singular: 'node',
    namespaced: false,
    shortNames: ['no'],
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    // A node registers with its status (upstream keeps it on create); updates of the main resource keep the stored one.
    prepareForUpdate(node, old) {
      node.status = deepCopy(old.status);
    },
    validate: validateNode,
    validateUpdate: validateNodeUpdate,
    status: {
      prepareForUpdate(node, old) {
        node.spec = deepCopy(old.spec);
      },
      validateUpdate: validateNodeUpdate,
    },
    selectableFields: (node) => ({ 'spec.unschedulable': String(node.spec?.unschedulable === true) }),
    table: nodeTable(naming),
  });
