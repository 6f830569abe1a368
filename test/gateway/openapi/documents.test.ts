/**
 * The OpenAPI documents generated from the schema: what kubectl reads from them (a PATCH
 * operation per kind with the fieldValidation parameter and the group-version-kind extension,
 * schemas found by their group-version-kind, patch strategies and merge keys) under each
 * profile's extension names, and the rules kube-openapi's v2 parser enforces.
 */
import { buildOpenApiDocuments } from '../../../src/gateway/openapi';
import { createNaming, type Vendor } from '../../../src/naming';
import { ResourceIndex } from '../../../src/gateway/resource-index';
import { builtinResources } from '../../../src/core/resources';

type Json = Record<string, any>;

function docs(vendor: Vendor) {
  const naming = createNaming(vendor);
  return { naming, ...buildOpenApiDocuments(naming, new ResourceIndex(builtinResources(naming)), 'v1.32.0+keelson') };
}

describe.each(['kubernetes', 'platform'] as const)('OpenAPI documents (%s profile)', (vendor) => {
  const { naming, v2, v3 } = docs(vendor);
  const x = (name: string) => naming.extension(name);
  const rbac = naming.groups.rbac;

  it('has one v3 document per served group version, keyed as the v3 index keys them', () => {
    expect(v3.map((d) => d.path).sort()).toEqual(
      [
        'api/v1',
        'apis/apps/v1',
        `apis/${naming.groups.authentication}/v1`,
        `apis/${naming.groups.authorization}/v1`,
        `apis/${naming.groups.events}/v1`,
        `apis/${naming.groups.coordination}/v1`,
        `apis/${naming.groups.scheduling}/v1`,
        'apis/policy/v1',
        `apis/${rbac}/v1`,
        `apis/${naming.groups.admissionregistration}/v1`,
        `apis/${naming.groups.certificates}/v1`,
        `apis/${naming.groups.apiextensions}/v1`,
        `apis/${naming.groups.apiregistration}/v1`,
        `apis/${naming.groups.discovery}/v1`,
        `apis/${naming.groups.flowcontrol}/v1`,
        `apis/${naming.groups.flowcontrol}/v1beta3`,
      ].sort(),
    );
    for (const { document } of v3) expect(document).toMatchObject({ openapi: '3.0.0', info: { version: 'v1.32.0+keelson' } });
  });

  it("gives every kind a PATCH operation with fieldValidation and its group-version-kind (kubectl's server-side validation check)", () => {
    const apps = v3.find((d) => d.path === 'apis/apps/v1')!.document as Json;
    const patch = apps.paths['/apis/apps/v1/namespaces/{namespace}/replicasets/{name}'].patch;
    expect(patch[x('group-version-kind')]).toEqual({ group: 'apps', kind: 'ReplicaSet', version: 'v1' });
    expect(patch[x('action')]).toBe('patch');
    expect(patch.parameters.map((p: Json) => `${p.in}:${p.name}`)).toEqual(['query:dryRun', 'query:fieldManager', 'query:fieldValidation', 'query:force']);
    expect(Object.keys(patch.requestBody.content)).toContain('application/strategic-merge-patch+json');
    const scale = apps.paths['/apis/apps/v1/namespaces/{namespace}/replicasets/{name}/scale'].get;
    expect(scale[x('group-version-kind')]).toEqual({ group: 'autoscaling', kind: 'Scale', version: 'v1' });
    const core = v3.find((d) => d.path === 'api/v1')!.document as Json;
    expect(core.paths['/api/v1/namespaces/{name}'].delete.operationId).toBe('deleteCoreV1Namespace');
    expect(core.paths['/api/v1/namespaces/{namespace}/pods'].get.operationId).toBe('listCoreV1NamespacedPod');
    expect(core.paths['/api/v1/pods'].get.operationId).toBe('listCoreV1PodForAllNamespaces');
    const rb = (v3.find((d) => d.path === `apis/${rbac}/v1`)!.document as Json).paths[`/apis/${rbac}/v1/namespaces/{namespace}/rolebindings`];
    expect(rb.post.operationId).toBe('createRbacAuthorizationV1NamespacedRoleBinding');
    expect(rb.post.tags).toEqual(['rbacAuthorization_v1']);
  });

  it("derives schemas from the type definitions, markers under the profile's extension names", () => {
    const apps = (v3.find((d) => d.path === 'apis/apps/v1')!.document as Json).components.schemas as Json;
    const prefix = naming.groupDomain.split('.').reverse().join('.');
    const rs = apps[`${prefix}.api.apps.v1.ReplicaSet`];
    expect(rs[x('group-version-kind')]).toEqual([{ group: 'apps', kind: 'ReplicaSet', version: 'v1' }]);
    expect(rs.properties.spec).toEqual({ allOf: [{ $ref: `#/components/schemas/${prefix}.api.apps.v1.ReplicaSetSpec` }], default: {} });
    expect(apps[`${prefix}.api.apps.v1.ReplicaSetSpec`].required).toEqual(['selector']);
    expect(apps[`${prefix}.api.apps.v1.ReplicaSetStatus`].properties.conditions).toMatchObject({
      type: 'array',
      [x('list-type')]: 'map',
      [x('list-map-keys')]: ['type'],
      [x('patch-strategy')]: 'merge',
      [x('patch-merge-key')]: 'type',
    });
    const podSpec = apps[`${prefix}.api.core.v1.PodSpec`];
    expect(podSpec.properties.containers).toMatchObject({ [x('patch-merge-key')]: 'name', [x('patch-strategy')]: 'merge' });
    expect(apps[`${prefix}.apimachinery.pkg.apis.meta.v1.LabelSelector`][x('map-type')]).toBe('atomic');
    expect(apps[`${prefix}.apimachinery.pkg.apis.meta.v1.Time`]).toEqual({ type: 'string', format: 'date-time' });
    // A v3 document holds only what its paths reach.
    expect(apps[`${prefix}.api.rbac.v1.RoleBinding`]).toBeUndefined();
  });

  it("never spells the other profile's vendor words", () => {
    const other = createNaming(vendor === 'kubernetes' ? 'platform' : 'kubernetes');
    const text = JSON.stringify(v2) + JSON.stringify(v3);
    expect(text.includes(`x-${other.word}-`)).toBe(false);
    expect(text.includes(other.groupDomain)).toBe(false);
  });

  it("keeps the v2 shapes kube-openapi's parser accepts: references without types, one item type, resolvable refs", () => {
    const definitions = v2.definitions as Record<string, Json>;
    const check = (s: Json, where: string): void => {
      if (s.$ref) {
        expect({ where, type: s.type, properties: s.properties }).toEqual({ where, type: undefined, properties: undefined });
        expect(definitions[s.$ref.replace('#/definitions/', '')]).toBeDefined();
        return;
      }
      expect(s.allOf).toBeUndefined();
      if (s.type === 'array') check(s.items, `${where}[]`);
      for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Json>)) check(v, `${where}.${k}`);
      if (s.additionalProperties) check(s.additionalProperties, `${where}{}`);
    };
    for (const [name, s] of Object.entries(definitions)) check(s, name);
    const paths = v2.paths as Record<string, Json>;
    const body = paths['/apis/apps/v1/namespaces/{namespace}/replicasets'].post.parameters.find((p: Json) => p.in === 'body');
    expect(body.schema.$ref).toMatch(/\.api\.apps\.v1\.ReplicaSet$/);
  });
});
