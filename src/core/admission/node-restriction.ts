/**
 * NodeRestriction, upstream's admission plugin of the same name: with the Node authorizer, a
 * kubelet (`system:node:<name>` in `system:nodes`) may change only itself and what is bound to
 * it. Its Node object and no other, without the labels reserved for the cluster's
 * administrators (`node-restriction.<domain>/`) and without changing taints; mirror pods bound
 * to it (no service account, secrets, config maps or claims); the status of pods bound to it;
 * deleting pods bound to it; and its own Lease in the node-lease namespace. Messages are
 * upstream's, behind its `<resource> "<name>" is forbidden: ` prefix.
 */
import type { ApiObject } from '../api';
import type { Naming } from '../../naming';
import { forbidden } from '../../status';
import { nodeIdentity } from '../node-identity';
import type { AdmissionReader } from './reader';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import { jsonEqual } from '../../util/json-values';

interface PodLike extends ApiObject {
  spec?: {
    nodeName?: string;
    serviceAccountName?: string;
    volumes?: Array<Record<string, unknown>>;
    containers?: Array<Record<string, unknown>>;
    initContainers?: Array<Record<string, unknown>>;
  };
}

export interface NodeRestrictionOptions {
  naming: Naming;
  reader: AdmissionReader;
}

export function nodeRestriction({ naming, reader }: NodeRestrictionOptions): AdmissionPlugin {
  const mirrorAnnotation = naming.key('config.mirror');
  const restrictedLabelPrefix = `node-restriction.${naming.keyDomain}/`;
  const coordination = naming.groups.coordination;

  const refuse = (a: AdmissionAttributes, message: string) => forbidden({ group: a.group, resource: a.resource }, a.name, message);

  async function storedPod(a: AdmissionAttributes): Promise<PodLike | undefined> {
    return (
      (a.oldObject as PodLike | undefined) ??
      ((await reader.get({ group: '', version: 'v1', resource: 'pods', namespace: a.namespace, name: a.name })) as PodLike | undefined)
    );
  }

  function restrictedLabels(obj: ApiObject | undefined): string[] {
    return Object.keys(obj?.metadata?.labels ?? {}).filter((k) => k.startsWith(restrictedLabelPrefix));
  }

  async function admitPod(a: AdmissionAttributes, node: string): Promise<void> {
    if (a.subresource === '') {
      if (a.operation === 'CREATE') return admitMirrorPod(a, node);
      if (a.operation === 'DELETE') {
        const pod = await storedPod(a);
        if (!pod) return;
        if (pod.spec?.nodeName !== node) throw refuse(a, `node "${node}" can only delete pods with spec.nodeName set to itself`);
        return;
      }
      throw refuse(a, `unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`);
    }
    if (a.subresource === 'status') {
      if (a.operation !== 'UPDATE') throw refuse(a, `unexpected operation "${a.operation}"`);
      const old = await storedPod(a);
      if (old?.spec?.nodeName !== node) throw refuse(a, `node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
      if (!jsonEqual(old?.metadata?.labels ?? {}, a.object?.metadata?.labels ?? {})) {
        throw refuse(a, `node "${node}" cannot update labels through pod status`);
      }
      return;
    }
    throw refuse(a, `unexpected subresource "${a.subresource}", node "${node}" can only update pod status`);
  }

  function admitMirrorPod(a: AdmissionAttributes, node: string): void {
    const pod = (a.object ?? {}) as PodLike;
    if (pod.metadata?.annotations?.[mirrorAnnotation] === undefined) {
      throw refuse(a, `pod does not have "${mirrorAnnotation}" annotation, node "${node}" can only create mirror pods`);
    }
    if (pod.spec?.nodeName !== node) throw refuse(a, `node "${node}" can only create pods with spec.nodeName set to itself`);
    const owners = pod.metadata?.ownerReferences ?? [];
    if (owners.length > 1) throw refuse(a, `node "${node}" can only create pods with a single owner reference set to itself`);
    if (owners.length === 1) {
      const o = owners[0]!;
      if (o.apiVersion !== 'v1' || o.kind !== 'Node' || o.name !== node)
        throw refuse(a, `node "${node}" can only create pods with an owner reference set to itself`);
      if (o.controller !== true) throw refuse(a, `node "${node}" can only create pods with a controller owner reference set to itself`);
      if (o.blockOwnerDeletion === true) throw refuse(a, `node "${node}" must not set blockOwnerDeletion on an owner reference`);
    }
    if (pod.spec?.serviceAccountName) throw refuse(a, `node "${node}" can not create pods that reference a service account`);
    const volumes = pod.spec?.volumes ?? [];
    if (volumes.some((v) => v.secret)) throw refuse(a, `node "${node}" can not create pods that reference secrets`);
    if (volumes.some((v) => v.configMap)) throw refuse(a, `node "${node}" can not create pods that reference configmaps`);
    if (volumes.some((v) => v.persistentVolumeClaim || v.ephemeral))
      throw refuse(a, `node "${node}" can not create pods that reference persistentvolumeclaims`);
    const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
    const envFrom = (c: Record<string, unknown>) => [
      ...((c.envFrom as Array<Record<string, unknown>> | undefined) ?? []),
      ...((c.env as Array<{ valueFrom?: Record<string, unknown> }> | undefined) ?? []).map((e) => e.valueFrom ?? {}),
    ];
    for (const ref of containers.flatMap(envFrom)) {
      if (ref.secretRef || ref.secretKeyRef) throw refuse(a, `node "${node}" can not create pods that reference secrets`);
      if (ref.configMapRef || ref.configMapKeyRef) throw refuse(a, `node "${node}" can not create pods that reference configmaps`);
    }
  }

  function admitNode(a: AdmissionAttributes, node: string): void {
    // A node may only create, change or delete its own Node object.
    if (a.name !== node && !(a.operation === 'CREATE' && a.object?.metadata?.name === node)) {
      throw refuse(a, `node "${node}" is not allowed to modify node "${a.name}"`);
    }
    if (a.operation === 'CREATE') {
      const set = restrictedLabels(a.object);
      if (set.length > 0) throw refuse(a, `node "${node}" is not allowed to set the following labels: ${set.sort().join(', ')}`);
      return;
    }
    if (a.operation !== 'UPDATE') return;
    const before = a.oldObject?.metadata?.labels ?? {};
    const after = a.object?.metadata?.labels ?? {};
    const changed = [...new Set([...restrictedLabels(a.oldObject), ...restrictedLabels(a.object)])].filter((k) => before[k] !== after[k]);
    if (changed.length > 0) throw refuse(a, `node "${node}" is not allowed to modify labels: ${changed.sort().join(', ')}`);
    const taints = (o: ApiObject | undefined) => JSON.stringify((o as { spec?: { taints?: unknown } } | undefined)?.spec?.taints ?? []);
    if (a.subresource === '' && taints(a.object) !== taints(a.oldObject)) throw refuse(a, `node "${node}" is not allowed to modify taints`);
  }

  function admitLease(a: AdmissionAttributes, node: string): void {
    if (a.namespace !== naming.namespaces.nodeLease) throw refuse(a, `can only access leases in the "${naming.namespaces.nodeLease}" namespace`);
    const name = a.name || a.object?.metadata?.name;
    if (name !== node) throw refuse(a, 'can only access node lease with the same name as the requesting node');
  }

  return {
    name: 'NodeRestriction',
    // Not a node (nearly every request): nothing to do, at once.
    admit(a) {
      const node = nodeIdentity(a.user);
      if (node === undefined) return;
      return admitNodeRequest(a, node);
    },
  };

  async function admitNodeRequest(a: AdmissionAttributes, node: string): Promise<void> {
    if (node === '') throw refuse(a, `could not determine node from user "${a.user.username}"`);
    if (a.group === '' && a.resource === 'pods') return admitPod(a, node);
    if (a.group === '' && a.resource === 'nodes') return admitNode(a, node);
    if (a.group === coordination && a.resource === 'leases') return admitLease(a, node);
  }
}
