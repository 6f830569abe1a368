/**
 * The aggregator's pure parts: the identity headers (client-go's SetAuthProxyHeaders with Go's
 * url.PathEscape of extra keys), the local APIServices the served groups ask for (upstream's
 * priorities, custom groups at 1000/100), and a legacy APIResourceList as an aggregated
 * discovery version.
 */
import { authProxyHeaders, goPathEscape } from '../../../src/gateway/aggregator/transport';
import { desiredLocalAPIServices } from '../../../src/gateway/aggregator/local-apiservices';
import { versionFromResourceList } from '../../../src/gateway/aggregator/remote-discovery';
import { ResourceIndex } from '../../../src/gateway/resource-index';
import { builtinResources } from '../../../src/core/resources';
import { createNaming, VENDORS } from '../../../src/naming';

describe('identity headers', () => {
  it('percent-encodes extra keys as Go url.PathEscape does, one header per value', () => {
    expect(goPathEscape('example.org/foo bar%/;,?$&+:=@~')).toBe('example.org%2Ffoo%20bar%25%2F%3B%2C%3F$&+:=@~');
    expect(authProxyHeaders({ username: 'alice', groups: ['dev', 'system:authenticated'], extra: { 'scopes.example.org/x': ['a', 'b'] } })).toEqual([
      ['X-Remote-User', 'alice'],
      ['X-Remote-Group', 'dev'],
      ['X-Remote-Group', 'system:authenticated'],
      ['X-Remote-Extra-scopes.example.org%2Fx', 'a'],
      ['X-Remote-Extra-scopes.example.org%2Fx', 'b'],
    ]);
  });
});

describe.each(VENDORS)('local APIServices (%s profile)', (vendor) => {
  const naming = createNaming(vendor);
  it('one per served built-in group version with upstream priorities; none for the aggregator group itself', () => {
    const desired = desiredLocalAPIServices(new ResourceIndex(builtinResources(naming)), naming);
    expect(desired.get('v1.')?.spec).toEqual({ service: null, group: '', version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 });
    expect(desired.get('v1.apps')?.spec).toMatchObject({ groupPriorityMinimum: 17800, versionPriority: 15 });
    expect(desired.get(`v1.${naming.groups.rbac}`)?.spec).toMatchObject({ groupPriorityMinimum: 17000, versionPriority: 15 });
    expect(desired.get(`v1.${naming.groups.rbac}`)?.metadata?.labels).toEqual({ [naming.labels.apiServiceAutomanaged]: 'onstart' });
    expect(desired.has(`v1.${naming.groups.apiregistration}`)).toBe(false);
  });
});

describe('remote discovery', () => {
  it('turns an APIResourceList into an aggregated version: resources sorted, subresources folded in', () => {
    const version = versionFromResourceList('v1alpha1', {
      resources: [
        { name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['get', 'list', 'watch'], shortNames: ['fl'] },
        { name: 'flunders/status', singularName: '', namespaced: true, kind: 'Flunder', verbs: ['get', 'patch'] },
        { name: 'fischers', singularName: 'fischer', namespaced: false, kind: 'Fischer', verbs: ['get'] },
      ],
    });
    expect(version).toEqual({
      version: 'v1alpha1',
      freshness: 'Current',
      resources: [
        { resource: 'fischers', responseKind: { group: '', version: '', kind: 'Fischer' }, scope: 'Cluster', singularResource: 'fischer', verbs: ['get'] },
        {
          resource: 'flunders',
          responseKind: { group: '', version: '', kind: 'Flunder' },
          scope: 'Namespaced',
          singularResource: 'flunder',
          verbs: ['get', 'list', 'watch'],
          shortNames: ['fl'],
          subresources: [{ subresource: 'status', responseKind: { group: '', version: '', kind: 'Flunder' }, verbs: ['get', 'patch'] }],
        },
      ],
    });
  });
});
