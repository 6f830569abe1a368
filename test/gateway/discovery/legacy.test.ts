import { createNaming } from '../../../src/naming';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, storageVersionHash } from '../../../src/gateway/discovery';
import { ResourceIndex } from '../../../src/gateway/resource-index';
import { testDefinitions } from '../support/definitions';

const naming = createNaming('kubernetes');
const index = new ResourceIndex(testDefinitions(naming));

describe('unaggregated discovery documents', () => {
  it('computes storageVersionHash as upstream (known values)', () => {
    expect(storageVersionHash('', 'v1', 'Pod')).toBe('xPOwRZ+Yhw8=');
    expect(storageVersionHash('apps', 'v1', 'ReplicaSet')).toBe('P1RzHs8/mWQ=');
    expect(storageVersionHash('', 'v1', 'ConfigMap')).toBe('qFsyl6wFWjQ=');
  });

  it('/api lists the core versions with the server address', () => {
    expect(apiVersions(index, '127.0.0.1:6443')).toEqual({
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1:6443' }],
    });
  });

  it('/apis lists the named groups with their preferred version', () => {
    expect(apiGroupList(index)).toEqual({
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [
        { name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } },
        {
          name: 'rbac.authorization.k8s.io',
          versions: [{ groupVersion: 'rbac.authorization.k8s.io/v1', version: 'v1' }],
          preferredVersion: { groupVersion: 'rbac.authorization.k8s.io/v1', version: 'v1' },
        },
      ],
    });
    expect(apiGroup(index.group('apps')!)).toEqual({
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'apps',
      versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
      preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
    });
  });

  it('/api/v1 lists resources and subresources sorted by name, without apiVersion', () => {
    const list = apiResourceList(index, '', 'v1');
    expect(list).not.toHaveProperty('apiVersion');
    expect(list.groupVersion).toBe('v1');
    expect(list.resources.map((r) => r.name)).toEqual(['configmaps', 'namespaces', 'namespaces/finalize', 'namespaces/status', 'pods', 'pods/status']);
    expect(list.resources[4]).toEqual({
      name: 'pods',
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['po'],
      categories: ['all'],
      storageVersionHash: 'xPOwRZ+Yhw8=',
    });
    expect(list.resources[2]).toEqual({ name: 'namespaces/finalize', singularName: '', namespaced: false, kind: 'Namespace', verbs: ['update'] });
  });

  it('/apis/apps/v1 carries apiVersion and the scale subresource as autoscaling/v1 Scale', () => {
    const list = apiResourceList(index, 'apps', 'v1');
    expect(list).toMatchObject({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'apps/v1' });
    expect(list.resources).toEqual([
      expect.objectContaining({ name: 'replicasets', singularName: 'replicaset', shortNames: ['rs'], storageVersionHash: 'P1RzHs8/mWQ=' }),
      { name: 'replicasets/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] },
      { name: 'replicasets/status', singularName: '', namespaced: true, kind: 'ReplicaSet', verbs: ['get', 'patch', 'update'] },
    ]);
  });
});
