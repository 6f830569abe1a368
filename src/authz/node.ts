/**
 * The Node authorizer, as upstream's: a kubelet — user `system:node:<name>` in group
 * `system:nodes` — may read the Secrets, ConfigMaps, PersistentVolumeClaims and
 * ServiceAccount tokens only of pods bound to its node, read its own Node, list and watch only
 * the pods bound to it (with the `AuthorizeNodeWithSelectors` gate, through a `spec.nodeName`
 * field selector), and otherwise what the `system:node` role's rules say. Which object is tied
 * to which node comes from a graph kept current by a watch of pods through `CoreApi`: each pod
 * bound to a node links the node to the pod and to everything the pod refers to. Requests from
 * other users get no opinion.
 */
import { type ApiObject, type CoreApi, type RequestContext, Informer, type InformerChange, nodeIdentity } from '../core';
import type { Clock } from '../clock';
import type { Naming } from '../naming';
import { ruleAllows } from './rbac';
import type { PolicyRule } from './rules';
import type { AuthorizationAttributes, Authorizer, Decision, RulesResult } from './types';

export { NODES_GROUP, nodeIdentity } from '../core';

type VertexType = 'pod' | 'secret' | 'configmap' | 'pvc' | 'serviceaccount';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isObj) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const at = (o: unknown, ...path: string[]): string => {
  let v: unknown = o;
  for (const p of path) v = isObj(v) ? v[p] : undefined;
  return str(v);
};

/** Everything a pod refers to that its node may then read, as upstream's pod visitors find it. */
export function podReferences(pod: ApiObject): Array<[VertexType, string]> {
  const spec = isObj(pod.spec) ? pod.spec : {};
  const refs: Array<[VertexType, string]> = [];
  const add = (type: VertexType, name: string) => {
    if (name) refs.push([type, name]);
  };
  add('serviceaccount', str(spec.serviceAccountName));
  for (const s of list(spec.imagePullSecrets)) add('secret', str(s.name));
  for (const c of [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)]) {
    for (const e of list(c.envFrom)) {
      add('secret', at(e, 'secretRef', 'name'));
      add('configmap', at(e, 'configMapRef', 'name'));
    }
    for (const e of list(c.env)) {
      add('secret', at(e, 'valueFrom', 'secretKeyRef', 'name'));
      add('configmap', at(e, 'valueFrom', 'configMapKeyRef', 'name'));
    }
  }
  for (const v of list(spec.volumes)) {
    add('secret', at(v, 'secret', 'secretName'));
    add('secret', at(v, 'azureFile', 'secretName'));
    for (const plugin of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos']) add('secret', at(v, plugin, 'secretRef', 'name'));
    add('secret', at(v, 'csi', 'nodePublishSecretRef', 'name'));
    add('configmap', at(v, 'configMap', 'name'));
    for (const source of list(isObj(v.projected) ? v.projected.sources : undefined)) {
      add('secret', at(source, 'secret', 'name'));
      add('configmap', at(source, 'configMap', 'name'));
    }
    add('pvc', at(v, 'persistentVolumeClaim', 'claimName'));
    // A generic ephemeral volume's claim is named after the pod and the volume.
    if (isObj(v.ephemeral)) add('pvc', `${pod.metadata?.name ?? ''}-${str(v.name)}`);
  }
  return refs;
}

/** Which nodes reach which objects, through the pods bound to them. */
export class NodeGraph {
  /** `type/namespace/name` → node → how many pods link them. */
  private readonly reach = new Map<string, Map<string, number>>();
  /** The links each pod contributed, to take back when it changes. */
  private readonly contributed = new Map<string, { node: string; keys: string[] }>();

  private static vertex(type: VertexType, namespace: string, name: string): string {
    return `${type}/${namespace}/${name}`;
  }

  /** Add, replace or (with `deleted`) remove one pod's links. */
  setPod(pod: ApiObject, deleted = false): void {
    const namespace = pod.metadata?.namespace ?? '';
    const podKey = `${namespace}/${pod.metadata?.name ?? ''}`;
    const old = this.contributed.get(podKey);
    if (old) {
      for (const key of old.keys) {
        const nodes = this.reach.get(key)!;
        const n = (nodes.get(old.node) ?? 1) - 1;
        if (n > 0) nodes.set(old.node, n);
        else nodes.delete(old.node);
        if (nodes.size === 0) this.reach.delete(key);
      }
      this.contributed.delete(podKey);
    }
    const node = isObj(pod.spec) ? str(pod.spec.nodeName) : '';
    if (deleted || !node) return;
    const keys = [
      NodeGraph.vertex('pod', namespace, pod.metadata?.name ?? ''),
      ...podReferences(pod).map(([type, name]) => NodeGraph.vertex(type, namespace, name)),
    ];
    const unique = [...new Set(keys)];
    for (const key of unique) {
      let nodes = this.reach.get(key);
      if (!nodes) this.reach.set(key, (nodes = new Map()));
      nodes.set(node, (nodes.get(node) ?? 0) + 1);
    }
    this.contributed.set(podKey, { node, keys: unique });
  }

  reset(pods: Iterable<ApiObject>): void {
    this.reach.clear();
    this.contributed.clear();
    for (const pod of pods) this.setPod(pod);
  }

  hasPath(node: string, type: VertexType, namespace: string, name: string): boolean {
    return !!this.reach.get(NodeGraph.vertex(type, namespace, name))?.has(node);
  }
}

export interface NodeAuthorizerOptions {
  api: CoreApi;
  naming: Naming;
  ctx: RequestContext;
  clock: Clock;
  /** The rules every node holds for what the graph does not subdivide (the `system:node` role's). */
  nodeRules: readonly PolicyRule[];
  /** `AuthorizeNodeWithSelectors`: own Node and bound pods only, pods listed by `spec.nodeName`. */
  withSelectors: boolean;
}

export interface NodeAuthorizer extends Authorizer {
  authorize(attributes: AuthorizationAttributes): Decision;
  synced(): Promise<void>;
  stop(): void;
}

export function nodeAuthorizer(options: NodeAuthorizerOptions): NodeAuthorizer {
  const graph = new NodeGraph();
  const informer: Informer = new Informer(
    options.api,
    { group: '', version: 'v1', resource: 'pods' },
    options.ctx,
    (change?: InformerChange) => {
      if (!change) graph.reset(informer.objects.values());
      else graph.setPod(change.object, change.type === 'DELETED');
    },
    options.clock,
  );
  const noOpinion = (reason = ''): Decision => ({ decision: 'noOpinion', reason });
  const allow: Decision = { decision: 'allow' };

  const related = (node: string, type: VertexType, a: AuthorizationAttributes): Decision => {
    if (!a.name) return noOpinion('No Object name found');
    return graph.hasPath(node, type, a.namespace, a.name) ? allow : noOpinion(`no relationship found between node '${node}' and this object`);
  };
  const readNamespaced = (node: string, type: VertexType, a: AuthorizationAttributes): Decision => {
    if (!['get', 'list', 'watch'].includes(a.verb)) return noOpinion('can only read resources of this type');
    if (a.subresource) return noOpinion('cannot read subresource');
    if (!a.namespace) return noOpinion('can only read namespaced object of this type');
    return related(node, type, a);
  };
  const getOnly = (node: string, type: VertexType, a: AuthorizationAttributes): Decision => {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource) return noOpinion('cannot get subresource');
    return related(node, type, a);
  };
  const ownNode = (node: string, a: AuthorizationAttributes): Decision => {
    if (a.subresource === '') {
      if (['create', 'update', 'patch'].includes(a.verb)) return allow;
      if (['get', 'list', 'watch'].includes(a.verb)) {
        if (a.name === node) return allow;
        return noOpinion(
          a.name ? `node '${node}' cannot read '${a.name}', only its own Node object` : `node '${node}' cannot read all nodes, only its own Node object`,
        );
      }
    } else if (a.subresource === 'status' && ['update', 'patch'].includes(a.verb)) {
      return allow;
    }
    return noOpinion();
  };
  const pods = (node: string, a: AuthorizationAttributes): Decision => {
    switch (a.subresource) {
      case '':
        if (a.verb === 'get') return getOnly(node, 'pod', a);
        if (a.verb === 'list' || a.verb === 'watch') {
          if ((a.fieldSelector ?? []).some((r) => r.field === 'spec.nodeName' && r.operator === '=' && r.value === node)) return allow;
          if (a.name) return related(node, 'pod', a);
          return noOpinion('can only list/watch pods with spec.nodeName field selector');
        }
        // Mirror pods; NodeRestriction admission limits them to the node's own.
        if (a.verb === 'create' || a.verb === 'delete') return allow;
        break;
      case 'status':
        if (a.verb === 'update' || a.verb === 'patch') return allow;
        break;
      case 'eviction':
        if (a.verb === 'create') return allow;
        break;
    }
    return noOpinion();
  };

  return {
    name: 'Node',
    synced: () => informer.synced,
    stop: () => informer.stop(),
    rulesFor(user): RulesResult {
      // As upstream: a node's permissions are not enumerable.
      if (nodeIdentity(user) === undefined) return { resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] };
      return { resourceRules: [], nonResourceRules: [], incomplete: true, errors: ['node authorizer does not support user rule resolution'] };
    },
    authorize(a): Decision {
      const node = nodeIdentity(a.user);
      if (node === undefined) return noOpinion();
      if (node === '') return noOpinion(`unknown node for user ${JSON.stringify(a.user.username)}`);
      if (a.isResourceRequest && a.apiGroup === '') {
        switch (a.resource) {
          case 'secrets':
            return readNamespaced(node, 'secret', a);
          case 'configmaps':
            return readNamespaced(node, 'configmap', a);
          case 'persistentvolumeclaims':
            if (a.subresource === 'status') {
              if (a.verb !== 'update' && a.verb !== 'patch') return noOpinion('can only get/update/patch this type');
              return related(node, 'pvc', a);
            }
            return getOnly(node, 'pvc', a);
          case 'serviceaccounts':
            if (a.verb !== 'create' || !a.name) return noOpinion('can only create tokens for individual service accounts');
            if (a.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
            return related(node, 'serviceaccount', a);
          case 'nodes':
            if (options.withSelectors) return ownNode(node, a);
            break;
          case 'pods':
            if (options.withSelectors) return pods(node, a);
            break;
        }
      }
      if (a.isResourceRequest && a.apiGroup === options.naming.group('coordination') && a.resource === 'leases') {
        if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a node lease');
        if (a.namespace !== options.naming.namespaces.nodeLease)
          return noOpinion(`can only access leases in the ${JSON.stringify(options.naming.namespaces.nodeLease)} system namespace`);
        if (a.verb !== 'create' && a.name !== node) return noOpinion('can only access node lease with the same name as the requesting node');
        return allow;
      }
      return options.nodeRules.some((r) => ruleAllows(a, r)) ? allow : noOpinion();
    },
  };
}
