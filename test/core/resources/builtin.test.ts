import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_VERBS } from '../../../src/core/resources/definition';
import { builtinResources } from '../../../src/core/resources';
import { createNaming } from '../../../src/naming';

const upstream = createNaming('kubernetes');
const platform = createNaming('platform');
const RBAC = upstream.groups.rbac;
const EVENTS = upstream.groups.events;
const ADMISSION = upstream.groups.admissionregistration;

describe('builtinResources', () => {
  const defs = builtinResources(upstream);
  // Served versions of one type besides its stored one (flowcontrol v1beta3) list it again.
  const byResource = new Map(defs.filter((d) => !d.storedAs).map((d) => [`${d.group}/${d.resource}`, d]));

  it('lists each group/version/resource once', () => {
    expect(new Set(defs.map((d) => `${d.group}/${d.version}/${d.resource}`)).size).toBe(defs.length);
  });

  it.each([
    ['/namespaces', 'namespace', false, ['ns'], undefined],
    ['/pods', 'pod', true, ['po'], ['all']],
    ['/secrets', 'secret', true, undefined, undefined],
    ['/configmaps', 'configmap', true, ['cm'], undefined],
    ['/serviceaccounts', 'serviceaccount', true, ['sa'], undefined],
    ['apps/replicasets', 'replicaset', true, ['rs'], ['all']],
    [`${RBAC}/roles`, 'role', true, undefined, undefined],
    [`${RBAC}/rolebindings`, 'rolebinding', true, undefined, undefined],
    [`${RBAC}/clusterroles`, 'clusterrole', false, undefined, undefined],
    [`${RBAC}/clusterrolebindings`, 'clusterrolebinding', false, undefined, undefined],
    [`${EVENTS}/events`, 'event', true, ['ev'], undefined],
    ['/nodes', 'node', false, ['no'], undefined],
    ['/bindings', 'binding', true, undefined, undefined],
    ['coordination.k8s.io/leases', 'lease', true, undefined, undefined],
    [`${ADMISSION}/mutatingwebhookconfigurations`, 'mutatingwebhookconfiguration', false, undefined, ['api-extensions']],
    [`${ADMISSION}/validatingwebhookconfigurations`, 'validatingwebhookconfiguration', false, undefined, ['api-extensions']],
    [`${ADMISSION}/validatingadmissionpolicies`, 'validatingadmissionpolicy', false, undefined, ['api-extensions']],
    [`${ADMISSION}/validatingadmissionpolicybindings`, 'validatingadmissionpolicybinding', false, undefined, ['api-extensions']],
  ])('serves %s as upstream discovery lists it', (key, singular, namespaced, shortNames, categories) => {
    const def = byResource.get(key)!;
    expect(def).toBeDefined();
    expect(def.singular).toBe(singular);
    expect(def.namespaced).toBe(namespaced);
    expect(def.shortNames).toEqual(shortNames);
    expect(def.categories).toEqual(categories);
    expect(def.version).toBe('v1');
  });

  it('gives every stored type all eight verbs except namespaces, which lack deletecollection; reviews only create', () => {
    for (const def of defs) {
      const expected = def.notStored ? ['create'] : def.resource === 'namespaces' ? ALL_VERBS.filter((v) => v !== 'deletecollection') : ALL_VERBS;
      expect([...(def.verbs ?? ALL_VERBS)].sort()).toEqual([...expected].sort());
    }
  });

  it('names groups through the naming profile', () => {
    const groups = builtinResources(platform)
      .map((d) => d.group)
      .filter((g) => g.includes('.'));
    const p = platform.groups;
    const admission = [p.admissionregistration, p.admissionregistration, p.admissionregistration, p.admissionregistration];
    expect(groups).toEqual([
      p.discovery,
      p.rbac,
      p.rbac,
      p.rbac,
      p.rbac,
      p.events,
      p.coordination,
      p.certificates,
      p.scheduling,
      p.flowcontrol,
      p.flowcontrol,
      p.flowcontrol,
      p.flowcontrol,
      ...admission,
      p.apiextensions,
      p.apiregistration,
      p.authentication,
      p.authentication,
      p.authorization,
      p.authorization,
      p.authorization,
      p.authorization,
    ]);
    expect(p.admissionregistration).toBe(`admissionregistration.${platform.groupDomain}`);
    expect(p.rbac.endsWith(`.${platform.groupDomain}`)).toBe(true);
  });

  it('gives subresources to the types upstream does', () => {
    const withStatus = defs
      .filter((d) => d.status)
      .map((d) => d.resource)
      .sort();
    expect(withStatus).toEqual([
      'apiservices',
      'certificatesigningrequests',
      'customresourcedefinitions',
      'flowschemas',
      'flowschemas',
      'namespaces',
      'nodes',
      'poddisruptionbudgets',
      'pods',
      'prioritylevelconfigurations',
      'prioritylevelconfigurations',
      'replicasets',
      'services',
      'validatingadmissionpolicies',
    ]);
    expect(defs.filter((d) => d.approval).map((d) => d.resource)).toEqual(['certificatesigningrequests']);
    const creates = defs.flatMap((d) => (d.createSubresources ?? []).map((s) => `${d.resource}/${s.name}`)).sort();
    expect(creates).toEqual(['pods/binding', 'pods/eviction', 'serviceaccounts/token']);
    expect(defs.filter((d) => d.scale).map((d) => d.resource)).toEqual(['replicasets']);
    // Webhook configurations count generations of `webhooks` in their own strategy (they have no spec).
    expect(defs.filter((d) => d.tracksGeneration).map((d) => d.resource)).toEqual([
      'replicasets',
      'endpointslices',
      'flowschemas',
      'prioritylevelconfigurations',
      'flowschemas',
      'prioritylevelconfigurations',
      'poddisruptionbudgets',
      'validatingadmissionpolicies',
      'validatingadmissionpolicybindings',
      'customresourcedefinitions',
    ]);
  });

  it("uses path-segment names for RBAC kinds and the core group's events, DNS names elsewhere", () => {
    for (const def of defs) {
      // CertificateSigningRequests: upstream checks no name rule at all; APIServices: a path
      // segment, their name being `<version>.<group>` (kube-aggregator's ValidateAPIService).
      const pathSegment =
        def.group.startsWith('rbac.') ||
        (def.group === '' && def.resource === 'events') ||
        def.resource === 'certificatesigningrequests' ||
        def.resource === 'apiservices';
      // Namespaces are DNS-1123 labels, Services DNS-1035 labels (upstream's ValidateServiceName).
      const label = { namespaces: 'dns1123Label', services: 'dns1035Label' }[def.resource as 'namespaces' | 'services'];
      const expected = pathSegment ? 'pathSegment' : (label ?? 'dns1123Subdomain');
      expect(def.nameRule).toBe(expected);
    }
  });

  it('never spells a vendor domain in the resource and validation modules', () => {
    for (const dir of ['src/core/resources', 'src/core/validation', 'src/core/customresources', 'src/core/table']) {
      for (const file of readdirSync(dir, { recursive: true }) as string[]) {
        if (!file.endsWith('.ts')) continue;
        const text = readFileSync(join(dir, file), 'utf8');
        const spelled = [upstream.groupDomain, upstream.keyDomain, platform.groupDomain].filter((d) => text.includes(d));
        expect(`${file}: ${spelled.join(',')}`).toBe(`${file}: `);
      }
    }
  });
});
