/**
 * admissionregistration/v1 in discovery as upstream 1.32 lists it: four cluster-scoped resources
 * in the `api-extensions` category, all verbs, no short names, and the policies' `/status`.
 */
import { builtinResources } from '../../../src/core/resources';
import { aggregatedDiscovery, apiGroupList, apiResourceList } from '../../../src/gateway/discovery';
import { ResourceIndex } from '../../../src/gateway/resource-index';
import { createNaming, type Vendor } from '../../../src/naming';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

describe.each<Vendor>(['kubernetes', 'platform'])('admissionregistration discovery (%s profile)', (vendor) => {
  const naming = createNaming(vendor);
  const group = naming.groups.admissionregistration;
  const index = new ResourceIndex(builtinResources(naming));

  it('serves the group at v1, named by the profile', () => {
    expect(group).toBe(`admissionregistration.${naming.groupDomain}`);
    expect(apiGroupList(index).groups).toContainEqual({
      name: group,
      versions: [{ groupVersion: `${group}/v1`, version: 'v1' }],
      preferredVersion: { groupVersion: `${group}/v1`, version: 'v1' },
    });
  });

  it('lists the four kinds and the policy status', () => {
    const list = apiResourceList(index, group, 'v1');
    expect(list).toMatchObject({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/v1` });
    const entry = (name: string, singularName: string, kind: string) => ({
      name,
      singularName,
      namespaced: false,
      kind,
      verbs: VERBS,
      categories: ['api-extensions'],
      storageVersionHash: expect.any(String),
    });
    expect(list.resources).toEqual([
      entry('mutatingwebhookconfigurations', 'mutatingwebhookconfiguration', 'MutatingWebhookConfiguration'),
      entry('validatingadmissionpolicies', 'validatingadmissionpolicy', 'ValidatingAdmissionPolicy'),
      { name: 'validatingadmissionpolicies/status', singularName: '', namespaced: false, kind: 'ValidatingAdmissionPolicy', verbs: ['get', 'patch', 'update'] },
      entry('validatingadmissionpolicybindings', 'validatingadmissionpolicybinding', 'ValidatingAdmissionPolicyBinding'),
      entry('validatingwebhookconfigurations', 'validatingwebhookconfiguration', 'ValidatingWebhookConfiguration'),
    ]);
    if (vendor === 'kubernetes') {
      // The hashes upstream's discovery shows for the webhook configurations.
      expect(list.resources[0]!.storageVersionHash).toBe('Sqi0GUgDaX0=');
      expect(list.resources[4]!.storageVersionHash).toBe('B0wHjQmsGNk=');
    }
  });

  it('appears in aggregated discovery', () => {
    const doc = aggregatedDiscovery(index, naming, 'apis', 'v2');
    const item = doc.items.find((g) => g.metadata.name === group)!;
    const resources = item.versions![0]!.resources!;
    expect(resources.map((r) => [r.resource, r.scope, r.categories])).toEqual([
      ['mutatingwebhookconfigurations', 'Cluster', ['api-extensions']],
      ['validatingadmissionpolicies', 'Cluster', ['api-extensions']],
      ['validatingadmissionpolicybindings', 'Cluster', ['api-extensions']],
      ['validatingwebhookconfigurations', 'Cluster', ['api-extensions']],
    ]);
    expect(resources[1]!.subresources).toEqual([
      { subresource: 'status', responseKind: { group: '', version: '', kind: 'ValidatingAdmissionPolicy' }, verbs: ['get', 'patch', 'update'] },
    ]);
  });
});
