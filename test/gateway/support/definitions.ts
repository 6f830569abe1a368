/** A handful of resource definitions for gateway tests (the real ones live in src/core/resources). */
import type { ResourceDefinition } from '../../../src/core/resources/definition';
import type { Naming } from '../../../src/naming';

function def(
  partial: Partial<ResourceDefinition> & Pick<ResourceDefinition, 'group' | 'version' | 'kind' | 'resource' | 'singular' | 'namespaced'>,
): ResourceDefinition {
  return { nameRule: 'dns1123Subdomain', allowCreateOnUpdate: false, allowUnconditionalUpdate: true, ...partial };
}

const noop = { prepareForUpdate() {} };

export function testDefinitions(naming: Naming): ResourceDefinition[] {
  return [
    def({
      group: '',
      version: 'v1',
      kind: 'Namespace',
      resource: 'namespaces',
      singular: 'namespace',
      namespaced: false,
      shortNames: ['ns'],
      status: noop,
      finalize: noop,
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    }),
    def({ group: '', version: 'v1', kind: 'Pod', resource: 'pods', singular: 'pod', namespaced: true, shortNames: ['po'], categories: ['all'], status: noop }),
    def({ group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', singular: 'configmap', namespaced: true, shortNames: ['cm'] }),
    def({
      group: 'apps',
      version: 'v1',
      kind: 'ReplicaSet',
      resource: 'replicasets',
      singular: 'replicaset',
      namespaced: true,
      shortNames: ['rs'],
      categories: ['all'],
      status: noop,
      scale: { specReplicas: () => 1, setSpecReplicas() {}, statusReplicas: () => 1, selector: () => '' },
    }),
    def({ group: naming.groups.rbac, version: 'v1', kind: 'ClusterRole', resource: 'clusterroles', singular: 'clusterrole', namespaced: false }),
    def({ group: naming.groups.rbac, version: 'v1', kind: 'Role', resource: 'roles', singular: 'role', namespaced: true }),
  ];
}
