import { createNaming } from '../../../src/naming';
import { aggregatedContentType, aggregatedDiscovery, isAggregatedDiscovery } from '../../../src/gateway/discovery';
import { ResourceIndex } from '../../../src/gateway/resource-index';
import { testDefinitions } from '../support/definitions';

describe('aggregated discovery (apidiscovery v2)', () => {
  const naming = createNaming('kubernetes');
  const index = new ResourceIndex(testDefinitions(naming));

  it('recognises only the APIGroupDiscoveryList conversions of the naming profile', () => {
    expect(isAggregatedDiscovery({ group: 'apidiscovery.k8s.io', version: 'v2', kind: 'APIGroupDiscoveryList' }, naming)).toBe(true);
    expect(isAggregatedDiscovery({ group: 'apidiscovery.k8s.io', version: 'v2beta1', kind: 'APIGroupDiscoveryList' }, naming)).toBe(true);
    expect(isAggregatedDiscovery({ group: 'apidiscovery.k8s.io', version: 'v1', kind: 'APIGroupDiscoveryList' }, naming)).toBe(false);
    expect(isAggregatedDiscovery({ group: 'apidiscovery.platform.io', version: 'v2', kind: 'APIGroupDiscoveryList' }, naming)).toBe(false);
    expect(isAggregatedDiscovery(undefined, naming)).toBe(false);
  });

  it('/api holds only the core group, with empty-group response kinds and subresources', () => {
    const doc = aggregatedDiscovery(index, naming, 'api', 'v2');
    expect(doc).toMatchObject({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {} });
    expect(doc.items).toHaveLength(1);
    expect(doc.items[0].metadata).toEqual({ creationTimestamp: null });
    const v1 = doc.items[0].versions![0];
    expect(v1.version).toBe('v1');
    expect(v1.freshness).toBe('Current');
    expect(v1.resources!.map((r) => r.resource)).toEqual(['configmaps', 'namespaces', 'pods']);
    expect(v1.resources![2]).toEqual({
      resource: 'pods',
      responseKind: { group: '', version: '', kind: 'Pod' },
      scope: 'Namespaced',
      singularResource: 'pod',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['po'],
      categories: ['all'],
      subresources: [{ subresource: 'status', responseKind: { group: '', version: '', kind: 'Pod' }, verbs: ['get', 'patch', 'update'] }],
    });
    expect(v1.resources![1]).toMatchObject({ resource: 'namespaces', scope: 'Cluster' });
  });

  it('/apis holds every named group; scale answers autoscaling/v1 Scale', () => {
    const doc = aggregatedDiscovery(index, naming, 'apis', 'v2beta1');
    expect(doc.apiVersion).toBe('apidiscovery.k8s.io/v2beta1');
    expect(doc.items.map((g) => g.metadata.name)).toEqual(['apps', 'rbac.authorization.k8s.io']);
    const rs = doc.items[0].versions![0].resources![0];
    expect(rs.subresources).toEqual([
      { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
      { subresource: 'status', responseKind: { group: '', version: '', kind: 'ReplicaSet' }, verbs: ['get', 'patch', 'update'] },
    ]);
  });

  it('names the content type with g, v and as', () => {
    expect(aggregatedContentType('application/json', naming, 'v2')).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
  });

  it('follows the platform naming profile', () => {
    const platform = createNaming('platform');
    const doc = aggregatedDiscovery(new ResourceIndex(testDefinitions(platform)), platform, 'apis', 'v2');
    expect(doc.apiVersion).toBe('apidiscovery.platform.io/v2');
    expect(doc.items.map((g) => g.metadata.name)).toContain('rbac.authorization.platform.io');
  });
});
