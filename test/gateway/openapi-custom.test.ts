/**
 * Custom resources in the OpenAPI documents, as apiextensions-apiserver's builder publishes
 * them (pkg/controller/openapi/builder, v2/conversion.go): the kind's and the list's
 * definitions, the v2 conversion of the schema, the operations and their parameters, one v3
 * document per group version, the documents rebuilt when the served types change (the v3
 * index's hashes and the ETags with them) while unchanged parts are kept, the protobuf and
 * gzip forms, under both naming profiles.
 */
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import YAML from 'yaml';
import type { ResourceDefinition } from '../../src/core';
import { builtinResources } from '../../src/core/resources';
import { ServedDocuments, buildOpenApiDocuments, createOpenApiHandler } from '../../src/gateway/openapi';
import { yamlOf } from '../../src/gateway/openapi/v2-protobuf';
import { ResourceIndex } from '../../src/gateway/resource-index';
import { createExchange } from '../../src/gateway/types';
import { type Naming, type Vendor, createNaming } from '../../src/naming';
import { RecordingResponse, fakeRequest } from './support/http';

type Json = Record<string, any>;

interface TypeOptions {
  group?: string;
  version?: string;
  kind?: string;
  plural?: string;
  namespaced?: boolean;
  schema?: Json;
  subresources?: Json;
  uid?: string;
}

/** A custom resource type as the CRD machinery makes it (core/customresources): `custom` set, no schema registry entry. */
function customType(o: TypeOptions = {}): ResourceDefinition {
  const kind = o.kind ?? 'CronTab';
  const plural = o.plural ?? 'crontabs';
  const group = o.group ?? 'stable.example.com';
  const version = o.version ?? 'v1';
  const served: Json = { name: version, served: true, storage: true };
  if (o.schema !== undefined) served.schema = { openAPIV3Schema: o.schema };
  if (o.subresources) served.subresources = o.subresources;
  return {
    group,
    version,
    kind,
    resource: plural,
    singular: kind.toLowerCase(),
    namespaced: o.namespaced ?? true,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    custom: { crd: `${plural}.${group}`, uid: o.uid ?? 'uid-1', listKind: `${kind}List`, served },
  };
}

/** The profile's spelling of a schema extension name. */
function cronTabSchema(naming: Naming): Json {
  const x = (name: string) => naming.extension(name);
  return {
    type: 'object',
    description: 'A CronTab runs a command on a schedule.',
    properties: {
      spec: {
        type: 'object',
        description: 'What to run, and when.',
        required: ['cronSpec', 'note'],
        properties: {
          cronSpec: { type: 'string', description: 'The schedule, in cron format.', pattern: '^(\\S+ ){4}\\S+$', maxLength: 64, example: '* * * * *' },
          replicas: { type: 'integer', format: 'int32', minimum: 0, maximum: 10, default: 1 },
          port: { [x('int-or-string')]: true },
          note: { type: 'string', nullable: true },
          mode: { type: 'string', enum: ['Fast', 'Slow'], oneOf: [{ pattern: '^F' }, { pattern: '^S' }], not: { enum: ['Off'] } },
          choice: { type: 'object', anyOf: [{ required: ['a'] }, { required: ['b'] }], allOf: [{ required: ['c'] }], properties: { a: { type: 'string' } } },
          free: { type: 'object', [x('preserve-unknown-fields')]: true, properties: { known: { type: 'string' } } },
          freeList: { type: 'array', items: { type: 'string' }, [x('preserve-unknown-fields')]: true },
          labels: { type: 'object', additionalProperties: { type: 'string' }, [x('map-type')]: 'granular' },
          ports: {
            type: 'array',
            [x('list-type')]: 'map',
            [x('list-map-keys')]: ['name'],
            items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
          },
          template: { type: 'object', [x('embedded-resource')]: true, properties: { spec: { type: 'object', [x('preserve-unknown-fields')]: true } } },
          raw: { type: 'object', [x('embedded-resource')]: true, [x('preserve-unknown-fields')]: true },
          rules: { type: 'string', [x('validations')]: [{ rule: 'self.size() > 0', message: 'empty' }] },
          docs: { type: 'string', externalDocs: { url: 'https://example.com' } },
        },
      },
      status: { type: 'object', properties: { replicas: { type: 'integer' } } },
    },
  };
}

const SCALE = { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } };

function documentsFor(naming: Naming, defs: ResourceDefinition[]) {
  return buildOpenApiDocuments(naming, new ResourceIndex([...builtinResources(naming), ...defs]), 'v1.32.0');
}

describe.each(['kubernetes', 'platform'] as const)('custom resources in OpenAPI (%s profile)', (vendor: Vendor) => {
  const naming = createNaming(vendor);
  const x = (name: string) => naming.extension(name);
  const domain = naming.groupDomain.split('.').reverse().join('.');
  const meta = `${domain}.apimachinery.pkg.apis.meta.v1`;
  const conventions = `https://git.${naming.groupDomain}/community/contributors/devel/sig-architecture/api-conventions.md`;
  const cronTab = customType({ schema: cronTabSchema(naming), subresources: SCALE });
  const { v2, v3 } = documentsFor(naming, [cronTab]);
  const definitions = v2.definitions as Record<string, Json>;
  const doc = v3.find((d) => d.path === 'apis/stable.example.com/v1')!.document as Json;
  const schemas = doc.components.schemas as Record<string, Json>;

  it('names the kind and the list by the reversed group, with their group-version-kinds', () => {
    for (const defs of [definitions, schemas]) {
      expect(defs['com.example.stable.v1.CronTab'][x('group-version-kind')]).toEqual([{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }]);
      expect(defs['com.example.stable.v1.CronTabList'][x('group-version-kind')]).toEqual([{ group: 'stable.example.com', kind: 'CronTabList', version: 'v1' }]);
    }
  });

  it("gives the kind ObjectMeta and TypeMeta's fields with upstream's descriptions, its own schema's description", () => {
    const kind = definitions['com.example.stable.v1.CronTab'];
    expect(kind.description).toBe('A CronTab runs a command on a schedule.');
    expect(kind.type).toBe('object');
    expect(Object.keys(kind.properties)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect(kind.properties.metadata).toEqual({
      description: `Standard object's metadata. More info: ${conventions}#metadata`,
      $ref: `#/definitions/${meta}.ObjectMeta`,
    });
    expect(kind.properties.apiVersion).toEqual({
      description: `APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: ${conventions}#resources`,
      type: 'string',
    });
    expect(kind.properties.kind.description).toMatch(/^Kind is a string value representing the REST resource this object represents\./);
    // v3: a reference with a description is wrapped in allOf (kube-openapi's WrapRefs).
    expect(schemas['com.example.stable.v1.CronTab'].properties.metadata).toEqual({
      description: `Standard object's metadata. More info: ${conventions}#metadata`,
      allOf: [{ $ref: `#/components/schemas/${meta}.ObjectMeta` }],
    });
  });

  it('makes the list: items referencing the kind, ListMeta, TypeMeta', () => {
    for (const [defs, prefix] of [
      [definitions, '#/definitions/'],
      [schemas, '#/components/schemas/'],
    ] as const) {
      const list = defs['com.example.stable.v1.CronTabList'];
      expect(list).toMatchObject({ description: 'CronTabList is a list of CronTab', type: 'object', required: ['items'] });
      expect(list.properties.items).toEqual({
        description: `List of crontabs. More info: ${conventions}`,
        type: 'array',
        items: { $ref: `${prefix}com.example.stable.v1.CronTab` },
      });
      expect(JSON.stringify(list.properties.metadata)).toContain(`${prefix}${meta}.ListMeta`);
      expect(list.properties.metadata.description).toBe(`Standard list metadata. More info: ${conventions}#types-kinds`);
      expect(Object.keys(list.properties)).toEqual(['apiVersion', 'items', 'kind', 'metadata']);
    }
  });

  describe('v2 conversion (ToStructuralOpenAPIV2, PruneDefaults)', () => {
    const spec = definitions['com.example.stable.v1.CronTab'].properties.spec;
    const p = spec.properties;

    it('keeps value validations, formats and the extensions kubectl reads; drops defaults and what a structural schema does not carry', () => {
      expect(p.cronSpec).toEqual({ description: 'The schedule, in cron format.', type: 'string', maxLength: 64, pattern: '^(\\S+ ){4}\\S+$' });
      expect(p.replicas).toEqual({ type: 'integer', format: 'int32', maximum: 10, minimum: 0 });
      expect(p.labels).toEqual({ type: 'object', additionalProperties: { type: 'string' }, [x('map-type')]: 'granular' });
      expect(p.ports).toMatchObject({ type: 'array', [x('list-type')]: 'map', [x('list-map-keys')]: ['name'] });
      expect(p.rules[x('validations')]).toEqual([{ rule: 'self.size() > 0', message: 'empty' }]);
      expect(p.docs).toEqual({ type: 'string' });
    });

    it('drops oneOf, anyOf, allOf and not; keeps int-or-string without its unfolded anyOf', () => {
      expect(p.mode).toEqual({ type: 'string', enum: ['Fast', 'Slow'] });
      expect(p.choice).toEqual({ type: 'object', properties: { a: { type: 'string' } } });
      expect(p.port).toEqual({ [x('int-or-string')]: true });
    });

    it('a nullable field loses its type and leaves its parent required list', () => {
      expect(p.note).toEqual({});
      expect(spec.required).toEqual(['cronSpec']);
    });

    it('a field preserving unknown fields loses items, properties and an object type; an array without items loses its type', () => {
      expect(p.free).toEqual({ [x('preserve-unknown-fields')]: true });
      expect(p.freeList).toEqual({ [x('preserve-unknown-fields')]: true });
    });

    it('an embedded resource gets apiVersion, kind and metadata, required, unless it preserves unknown fields', () => {
      expect(Object.keys(p.template.properties)).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
      expect(p.template.required).toEqual(['kind', 'apiVersion']);
      expect(p.template.properties.metadata.$ref).toBe(`#/definitions/${meta}.ObjectMeta`);
      expect(p.template.properties.apiVersion.description).toMatch(/^apiVersion defines the versioned schema/);
      expect(p.raw).toEqual({ [x('embedded-resource')]: true, [x('preserve-unknown-fields')]: true });
    });
  });

  describe('v3 keeps the schema', () => {
    const p = schemas['com.example.stable.v1.CronTab'].properties.spec.properties;

    it('with defaults, nullable and the junctors; int-or-string unfolded into its anyOf', () => {
      expect(p.replicas.default).toBe(1);
      expect(p.note).toEqual({ type: 'string', nullable: true });
      expect(p.mode.oneOf).toEqual([{ pattern: '^F' }, { pattern: '^S' }]);
      expect(p.mode.not).toEqual({ enum: ['Off'] });
      expect(p.choice.allOf).toEqual([{ required: ['c'] }]);
      expect(p.port).toEqual({ anyOf: [{ type: 'integer' }, { type: 'string' }], [x('int-or-string')]: true });
      expect(schemas['com.example.stable.v1.CronTab'].properties.spec.required).toEqual(['cronSpec', 'note']);
      expect(p.free).toMatchObject({ type: 'object', properties: { known: { type: 'string' } } });
      expect(p.raw).toMatchObject({
        required: ['kind', 'apiVersion'],
        properties: { metadata: { allOf: [{ $ref: `#/components/schemas/${meta}.ObjectMeta` }] } },
      });
      expect(p.cronSpec.example).toBeUndefined();
    });

    it('an int-or-string already spelled as its anyOf is not unfolded again', () => {
      const schema = { type: 'object', properties: { port: { [x('int-or-string')]: true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } };
      const { v3: docs } = documentsFor(naming, [customType({ schema })]);
      const port = (docs.find((d) => d.path === 'apis/stable.example.com/v1')!.document as Json).components.schemas['com.example.stable.v1.CronTab'].properties
        .port;
      expect(port.anyOf).toEqual([{ type: 'integer' }, { type: 'string' }]);
      expect(port.allOf).toBeUndefined();
    });
  });

  it('publishes a version without a schema, and (v2 only) one whose root preserves unknown fields, as a bare object', () => {
    const bare = customType({ group: 'bare.example.com', kind: 'Bare', plural: 'bares' });
    const open = customType({ group: 'open.example.com', kind: 'Open', plural: 'opens', schema: { type: 'object', [x('preserve-unknown-fields')]: true } });
    const docs = documentsFor(naming, [bare, open]);
    const defs = docs.v2.definitions as Record<string, Json>;
    const gvk = (group: string, kind: string) => ({ [x('group-version-kind')]: [{ group, kind, version: 'v1' }] });
    expect(defs['com.example.bare.v1.Bare']).toEqual({ type: 'object', ...gvk('bare.example.com', 'Bare') });
    expect(defs['com.example.open.v1.Open']).toEqual({ type: 'object', ...gvk('open.example.com', 'Open') });
    const v3Of = (path: string) => (docs.v3.find((d) => d.path === path)!.document as Json).components.schemas;
    expect(v3Of('apis/bare.example.com/v1')['com.example.bare.v1.Bare']).toEqual({ type: 'object', ...gvk('bare.example.com', 'Bare') });
    expect(Object.keys(v3Of('apis/open.example.com/v1')['com.example.open.v1.Open'].properties)).toEqual(['apiVersion', 'kind', 'metadata']);
    // The list is there all the same.
    expect(defs['com.example.bare.v1.BareList'].properties.items.items.$ref).toBe('#/definitions/com.example.bare.v1.Bare');
  });

  describe('operations as the CRD builder lays them out', () => {
    const paths = v2.paths as Record<string, Json>;
    const base = '/apis/stable.example.com/v1/namespaces/{namespace}/crontabs';
    const names = (params: Json[] | undefined) => (params ?? []).map((q) => `${q.in}:${q.name}`);

    it('has every verb, the status and scale subresources and the all-namespaces list, with upstream operation ids', () => {
      const ids = Object.entries(paths)
        .filter(([path]) => path.startsWith('/apis/stable.example.com/'))
        .flatMap(([path, item]) =>
          Object.entries(item)
            .filter(([m]) => m !== 'parameters')
            .map(([m, op]) => `${m.toUpperCase()} ${path} ${op.operationId} ${op[x('action')]}`),
        )
        .sort();
      expect(ids).toEqual(
        [
          'GET /apis/stable.example.com/v1/crontabs listStableExampleComV1CronTabForAllNamespaces list',
          `GET ${base} listStableExampleComV1NamespacedCronTab list`,
          `POST ${base} createStableExampleComV1NamespacedCronTab post`,
          `DELETE ${base} deleteStableExampleComV1CollectionNamespacedCronTab deletecollection`,
          `GET ${base}/{name} readStableExampleComV1NamespacedCronTab get`,
          `PUT ${base}/{name} replaceStableExampleComV1NamespacedCronTab put`,
          `DELETE ${base}/{name} deleteStableExampleComV1NamespacedCronTab delete`,
          `PATCH ${base}/{name} patchStableExampleComV1NamespacedCronTab patch`,
          `GET ${base}/{name}/status readStableExampleComV1NamespacedCronTabStatus get`,
          `PUT ${base}/{name}/status replaceStableExampleComV1NamespacedCronTabStatus put`,
          `PATCH ${base}/{name}/status patchStableExampleComV1NamespacedCronTabStatus patch`,
          `GET ${base}/{name}/scale readStableExampleComV1NamespacedCronTabScale get`,
          `PUT ${base}/{name}/scale replaceStableExampleComV1NamespacedCronTabScale put`,
          `PATCH ${base}/{name}/scale patchStableExampleComV1NamespacedCronTabScale patch`,
        ].sort(),
      );
      for (const item of Object.values(paths).filter((i) => i.get?.tags?.[0] === 'stableExampleCom_v1')) {
        for (const [m, op] of Object.entries(item)) {
          if (m === 'parameters') continue;
          // Every route carries the custom kind's group-version-kind, the scale subresource's too.
          expect(op[x('group-version-kind')]).toEqual({ group: 'stable.example.com', kind: 'CronTab', version: 'v1' });
          expect(op.tags).toEqual(['stableExampleCom_v1']);
          expect(op.schemes).toEqual(['https']);
          expect(op.produces).toEqual(['application/json', 'application/yaml']);
        }
      }
    });

    it("takes each verb's options as query parameters, the common ones on the path", () => {
      const collection = paths[base];
      expect(names(collection.parameters)).toEqual(['path:namespace', 'query:pretty']);
      const list = names(collection.get.parameters);
      expect(list).toEqual(
        [
          'allowWatchBookmarks',
          'continue',
          'fieldSelector',
          'labelSelector',
          'limit',
          'resourceVersion',
          'resourceVersionMatch',
          'sendInitialEvents',
          'timeoutSeconds',
          'watch',
        ].map((n) => `query:${n}`),
      );
      // deletecollection takes ListOptions and no body.
      expect(names(collection.delete.parameters)).toEqual(list);
      expect(names(collection.post.parameters)).toEqual(['body:body', 'query:dryRun', 'query:fieldManager', 'query:fieldValidation']);
      const item = paths[`${base}/{name}`];
      expect(names(item.parameters)).toEqual(['path:name', 'path:namespace', 'query:pretty']);
      expect(names(item.get.parameters)).toEqual(['query:resourceVersion']);
      expect(names(item.patch.parameters)).toEqual(['body:body', 'query:dryRun', 'query:fieldManager', 'query:fieldValidation', 'query:force']);
      expect(names(item.delete.parameters)).toEqual([
        'body:body',
        'query:dryRun',
        'query:gracePeriodSeconds',
        'query:ignoreStoreReadErrorWithClusterBreakingPotential',
        'query:orphanDependents',
        'query:propagationPolicy',
      ]);
      // The all-namespaces list is the path's only operation: all its parameters are the path's.
      const all = paths['/apis/stable.example.com/v1/crontabs'];
      expect(all.get.parameters).toBeUndefined();
      expect(names(all.parameters)).toEqual([...list.slice(0, 5), 'query:pretty', ...list.slice(5)]);
    });

    it('reads and writes the kind, the list, Status, DeleteOptions, Patch and Scale; responds as upstream', () => {
      const ref = (op: Json, code: string) => op.responses[code]?.schema?.$ref?.replace('#/definitions/', '');
      const body = (op: Json) => op.parameters.find((q: Json) => q.in === 'body');
      const collection = paths[base];
      expect(ref(collection.get, '200')).toBe('com.example.stable.v1.CronTabList');
      expect(Object.keys(collection.post.responses)).toEqual(['200', '201', '202', '401']);
      expect(body(collection.post)).toEqual({ name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/com.example.stable.v1.CronTab' } });
      expect(collection.post.consumes).toEqual(['application/json', 'application/yaml']);
      expect(ref(collection.delete, '200')).toBe(`${meta}.Status`);
      const item = paths[`${base}/{name}`];
      expect(Object.keys(item.put.responses)).toEqual(['200', '201', '401']);
      expect(Object.keys(item.delete.responses)).toEqual(['200', '202', '401']);
      expect(body(item.delete)).toMatchObject({ required: false, schema: { $ref: `#/definitions/${meta}.DeleteOptions` } });
      expect(Object.keys(item.patch.responses)).toEqual(['200', '401']);
      expect(body(item.patch).schema.$ref).toBe(`#/definitions/${meta}.Patch`);
      expect(item.patch.consumes).toEqual(['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
      const scale = paths[`${base}/{name}/scale`];
      expect(ref(scale.get, '200')).toBe(`${domain}.api.autoscaling.v1.Scale`);
      expect(body(scale.put).schema.$ref).toBe(`#/definitions/${domain}.api.autoscaling.v1.Scale`);
      expect(ref(paths[`${base}/{name}/status`].put, '200')).toBe('com.example.stable.v1.CronTab');
      expect(collection.post.description).toBe('create a CronTab');
      expect(item.get.description).toBe('read the specified CronTab');
      expect(paths[`${base}/{name}/status`].patch.description).toBe('partially update status of the specified CronTab');
      expect(collection.delete.description).toBe('delete collection of CronTab');
    });

    it('a cluster-scoped type has no namespace and no all-namespaces list; articles follow the kind', () => {
      const apple = customType({ group: 'fruit.example.com', kind: 'Apple', plural: 'apples', namespaced: false });
      const docPaths = documentsFor(naming, [apple]).v2.paths as Record<string, Json>;
      const mine = Object.keys(docPaths).filter((k) => k.includes('fruit.example.com'));
      expect(mine.sort()).toEqual(['/apis/fruit.example.com/v1/apples', '/apis/fruit.example.com/v1/apples/{name}']);
      expect(docPaths['/apis/fruit.example.com/v1/apples'].get.operationId).toBe('listFruitExampleComV1Apple');
      expect(docPaths['/apis/fruit.example.com/v1/apples'].post.description).toBe('create an Apple');
      expect(names(docPaths['/apis/fruit.example.com/v1/apples/{name}'].parameters)).toEqual(['path:name', 'query:pretty']);
    });

    it('names operations as GetOperationIDAndTags does for any group (digits, hyphens)', () => {
      const odd = customType({ group: 'my-app.v2.example.com', version: 'v1alpha1', kind: 'Thing', plural: 'things' });
      const docPaths = documentsFor(naming, [odd]).v2.paths as Record<string, Json>;
      const list = docPaths['/apis/my-app.v2.example.com/v1alpha1/namespaces/{namespace}/things'].get;
      expect(list.operationId).toBe('listMyAppV2ExampleComV1alpha1NamespacedThing');
      expect(list.tags).toEqual(['myAppV2ExampleCom_v1alpha1']);
    });

    it('in v3: request bodies and responses by media type, parameters with schemas', () => {
      const v3Paths = doc.paths as Record<string, Json>;
      const post = v3Paths[base].post;
      expect(Object.keys(post.requestBody.content)).toEqual(['application/json', 'application/yaml']);
      expect(post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/com.example.stable.v1.CronTab');
      expect(post.responses['201'].content['application/yaml'].schema.$ref).toBe('#/components/schemas/com.example.stable.v1.CronTab');
      expect(v3Paths[base].parameters[0]).toMatchObject({ name: 'namespace', in: 'path', required: true, schema: { type: 'string', uniqueItems: true } });
      expect(v3Paths[`${base}/{name}`].delete.requestBody.required).toBe(false);
    });
  });

  it('serves each custom group version its own v3 document, as the CRD builder makes it', () => {
    expect(doc.openapi).toBe('3.0.0');
    const word = naming.word[0]!.toUpperCase() + naming.word.slice(1);
    expect(doc.info).toEqual({ title: `${word} CRD Swagger`, version: 'v0.1.0' });
    expect(doc.security).toBeUndefined();
    expect(doc.components.securitySchemes).toBeUndefined();
    expect(Object.keys(doc.paths).every((p) => p.startsWith('/apis/stable.example.com/v1/'))).toBe(true);
    const names = Object.keys(schemas);
    expect(names).toEqual([...names].sort());
    for (const name of ['ObjectMeta', 'ListMeta', 'Status', 'DeleteOptions', 'Patch', 'ManagedFieldsEntry', 'Time']) expect(names).toContain(`${meta}.${name}`);
    expect(names).toContain(`${domain}.api.autoscaling.v1.Scale`);
    expect(names.some((n) => n.endsWith('.Pod'))).toBe(false);
    // Two types of one group version share its document; each version of a type has its own.
    const other = customType({ kind: 'Shift', plural: 'shifts', schema: { type: 'object' } });
    const v2Type = customType({ version: 'v2', schema: { type: 'object' } });
    const docs = documentsFor(naming, [cronTab, other, v2Type]).v3;
    const shared = docs.find((d) => d.path === 'apis/stable.example.com/v1')!.document as Json;
    expect(Object.keys(shared.components.schemas)).toEqual(expect.arrayContaining(['com.example.stable.v1.CronTab', 'com.example.stable.v1.Shift']));
    expect(shared.paths['/apis/stable.example.com/v1/namespaces/{namespace}/shifts']).toBeDefined();
    expect(Object.keys((docs.find((d) => d.path === 'apis/stable.example.com/v2')!.document as Json).components.schemas)).toContain(
      'com.example.stable.v2.CronTab',
    );
    // The static spec's shared DeleteOptions keeps its built-in group-version-kinds only.
    expect(JSON.stringify(definitions[`${meta}.DeleteOptions`])).not.toContain('stable.example.com');
  });

  it("never spells the other profile's vendor words", () => {
    const other = createNaming(vendor === 'kubernetes' ? 'platform' : 'kubernetes');
    const text = JSON.stringify(v2) + JSON.stringify(v3);
    expect(text.includes(`x-${other.word}-`)).toBe(false);
    expect(text.includes(other.groupDomain)).toBe(false);
  });
});

/** gnostic's OpenAPIv2 messages, the fields the tests read. */
const gnostic = protobuf.Root.fromJSON({
  nested: {
    Document: { fields: { paths: { type: 'Paths', id: 8 }, definitions: { type: 'Definitions', id: 9 } } },
    Paths: { fields: { path: { rule: 'repeated', type: 'NamedPathItem', id: 2 } } },
    NamedPathItem: { fields: { name: { type: 'string', id: 1 }, value: { type: 'PathItem', id: 2 } } },
    PathItem: { fields: { get: { type: 'Operation', id: 2 }, patch: { type: 'Operation', id: 8 } } },
    Operation: {
      fields: {
        operationId: { type: 'string', id: 5 },
        consumes: { rule: 'repeated', type: 'string', id: 7 },
        vendorExtension: { rule: 'repeated', type: 'NamedAny', id: 13 },
      },
    },
    Definitions: { fields: { additionalProperties: { rule: 'repeated', type: 'NamedSchema', id: 1 } } },
    NamedSchema: { fields: { name: { type: 'string', id: 1 }, value: { type: 'Schema', id: 2 } } },
    Schema: {
      fields: {
        ref: { type: 'string', id: 1 },
        format: { type: 'string', id: 2 },
        description: { type: 'string', id: 4 },
        maximum: { type: 'double', id: 7 },
        maxLength: { type: 'int64', id: 11 },
        pattern: { type: 'string', id: 13 },
        required: { rule: 'repeated', type: 'string', id: 19 },
        enum: { rule: 'repeated', type: 'Any', id: 20 },
        additionalProperties: { type: 'AdditionalPropertiesItem', id: 21 },
        type: { type: 'TypeItem', id: 22 },
        items: { type: 'ItemsItem', id: 23 },
        properties: { type: 'Properties', id: 25 },
        vendorExtension: { rule: 'repeated', type: 'NamedAny', id: 31 },
      },
    },
    AdditionalPropertiesItem: {
      oneofs: { oneof: { oneof: ['schema', 'boolean'] } },
      fields: { schema: { type: 'Schema', id: 1 }, boolean: { type: 'bool', id: 2 } },
    },
    ItemsItem: { fields: { schema: { rule: 'repeated', type: 'Schema', id: 1 } } },
    TypeItem: { fields: { value: { rule: 'repeated', type: 'string', id: 1 } } },
    Properties: { fields: { additionalProperties: { rule: 'repeated', type: 'NamedSchema', id: 1 } } },
    NamedAny: { fields: { name: { type: 'string', id: 1 }, value: { type: 'Any', id: 2 } } },
    Any: { fields: { yaml: { type: 'string', id: 2 } } },
  },
});
const Document = gnostic.lookupType('Document');

function decodeV2(bytes: Buffer): Json {
  return Document.toObject(Document.decode(bytes), { longs: Number, defaults: false }) as Json;
}

describe.each(['kubernetes', 'platform'] as const)('the handler with custom resources (%s profile)', (vendor: Vendor) => {
  const naming = createNaming(vendor);
  const meta = `${naming.groupDomain.split('.').reverse().join('.')}.apimachinery.pkg.apis.meta.v1`;
  const builtins = builtinResources(naming);
  const PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

  function serve(defs: ResourceDefinition[]) {
    const index = new ResourceIndex([...builtins, ...defs]);
    const handler = createOpenApiHandler({ naming, index, serverVersion: 'v1.32.0' });
    const get = (url: string, headers: Record<string, string> = {}): RecordingResponse => {
      const res = new RecordingResponse();
      void handler(createExchange(fakeRequest({ url, headers }), res));
      return res;
    };
    return { index, get };
  }

  it('serves exactly the documents buildOpenApiDocuments builds, in JSON, protobuf and gzip', () => {
    const defs = [customType({ schema: cronTabSchema(naming), subresources: SCALE }), customType({ group: 'a.example.com', kind: 'Ant', plural: 'ants' })];
    const { index, get } = serve(defs);
    const expected = buildOpenApiDocuments(naming, index, 'v1.32.0');
    const json = get('/openapi/v2');
    expect(json.json).toEqual(expected.v2);
    const zipped = get('/openapi/v2', { 'accept-encoding': 'gzip' });
    expect(zipped.header('content-encoding')).toBe('gzip');
    expect(gunzipSync(Buffer.concat(zipped.chunks)).equals(Buffer.concat(json.chunks))).toBe(true);
    expect(Number(zipped.header('content-length'))).toBe(Buffer.concat(zipped.chunks).length);
    const proto = get('/openapi/v2', { accept: PROTOBUF });
    const protoZipped = get('/openapi/v2', { accept: PROTOBUF, 'accept-encoding': 'gzip' });
    expect(gunzipSync(Buffer.concat(protoZipped.chunks)).equals(Buffer.concat(proto.chunks))).toBe(true);
    expect(proto.header('etag')).toBe(json.header('etag'));
    const index3 = get('/openapi/v3').json.paths;
    for (const { path, document } of expected.v3) expect(get(index3[path].serverRelativeURL).json).toEqual(document);
  });

  it('encodes the custom schemas in the v2 protobuf as gnostic reads them (what kubectl explain and validation parse)', () => {
    const { get } = serve([customType({ schema: cronTabSchema(naming), subresources: SCALE })]);
    const doc = decodeV2(Buffer.concat(get('/openapi/v2', { accept: PROTOBUF }).chunks));
    const definitions = new Map<string, Json>(doc.definitions.additionalProperties.map((d: Json) => [d.name, d.value]));
    const kind = definitions.get('com.example.stable.v1.CronTab')!;
    expect(kind.description).toBe('A CronTab runs a command on a schedule.');
    const gvk = kind.vendorExtension.find((e: Json) => e.name === naming.extension('group-version-kind'));
    expect(YAML.parse(gvk.value.yaml)).toEqual([{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }]);
    const props = (s: Json) => new Map<string, Json>(s.properties.additionalProperties.map((p: Json) => [p.name, p.value]));
    expect(props(kind).get('metadata')!.ref).toBe(`#/definitions/${meta}.ObjectMeta`);
    const spec = props(props(kind).get('spec')!);
    expect(spec.get('cronSpec')).toMatchObject({
      description: 'The schedule, in cron format.',
      pattern: '^(\\S+ ){4}\\S+$',
      maxLength: 64,
      type: { value: ['string'] },
    });
    expect(spec.get('replicas')).toMatchObject({ format: 'int32', maximum: 10 });
    expect(spec.get('mode')!.enum.map((e: Json) => e.yaml)).toEqual(['Fast\n', 'Slow\n']);
    expect(spec.get('free')!.vendorExtension).toEqual([{ name: naming.extension('preserve-unknown-fields'), value: { yaml: 'true\n' } }]);
    expect(spec.get('free')!.type).toBeUndefined();
    expect(spec.get('labels')!.additionalProperties.schema.type.value).toEqual(['string']);
    expect(spec.get('ports')!.items.schema[0].required).toEqual(['name']);
    const patch = doc.paths.path.find((p: Json) => p.name === '/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}').value.patch;
    expect(patch.operationId).toBe('patchStableExampleComV1NamespacedCronTab');
    expect(patch.consumes).toEqual(['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
  });

  it('encodes additionalProperties given as a boolean', () => {
    const schema = {
      type: 'object',
      properties: { any: { type: 'object', additionalProperties: true }, none: { type: 'object', additionalProperties: false } },
    };
    const { get } = serve([customType({ schema })]);
    const doc = decodeV2(Buffer.concat(get('/openapi/v2', { accept: PROTOBUF }).chunks));
    const kind = doc.definitions.additionalProperties.find((d: Json) => d.name === 'com.example.stable.v1.CronTab').value;
    const props = new Map<string, Json>(kind.properties.additionalProperties.map((p: Json) => [p.name, p.value]));
    expect(props.get('any')!.additionalProperties).toEqual({ boolean: true });
    expect(props.get('none')!.additionalProperties).toEqual({ boolean: false });
  });

  it('rebuilds after a change: new hashes and ETags for what changed, the same for the rest; gone types are gone', () => {
    const cronTab = customType({ schema: cronTabSchema(naming), subresources: SCALE });
    const ant = customType({ group: 'a.example.com', kind: 'Ant', plural: 'ants', schema: { type: 'object' } });
    const { index, get } = serve([cronTab, ant]);
    const before = get('/openapi/v3').json.paths;
    const v2Before = get('/openapi/v2');
    const cronUrl: string = before['apis/stable.example.com/v1'].serverRelativeURL;
    expect(get(cronUrl).status).toBe(200);

    // The CRD changes: a new definition object (another schema) for the same type.
    const changed = customType({ schema: { ...cronTabSchema(naming), description: 'Changed.' }, subresources: SCALE, uid: 'uid-1' });
    index.replace([...builtins, changed, ant]);
    const after = get('/openapi/v3').json.paths;
    expect(after['apis/stable.example.com/v1'].serverRelativeURL).not.toBe(cronUrl);
    expect(after['apis/a.example.com/v1']).toEqual(before['apis/a.example.com/v1']);
    expect(after['apis/apps/v1']).toEqual(before['apis/apps/v1']);
    expect(after['apis/apps/v1']).toBeDefined();
    // A client holding the old hash is sent to the new document.
    const stale = get(cronUrl);
    expect(stale.status).toBe(301);
    expect(stale.header('location')).toBe(after['apis/stable.example.com/v1'].serverRelativeURL);
    expect(get(after['apis/stable.example.com/v1'].serverRelativeURL).json.components.schemas['com.example.stable.v1.CronTab'].description).toBe('Changed.');
    const v2After = get('/openapi/v2');
    expect(v2After.header('etag')).not.toBe(v2Before.header('etag'));
    expect(v2After.json.definitions['com.example.stable.v1.CronTab'].description).toBe('Changed.');
    expect(get('/openapi/v2', { 'if-none-match': v2Before.header('etag') as string }).status).toBe(200);
    expect(get('/openapi/v2', { 'if-none-match': v2After.header('etag') as string }).status).toBe(304);

    // The type goes: its group version leaves the index, its document 404s, its definitions and paths leave v2.
    index.replace([...builtins, ant]);
    const gone = get('/openapi/v3').json.paths;
    expect(gone['apis/stable.example.com/v1']).toBeUndefined();
    expect(get('/openapi/v3/apis/stable.example.com/v1').status).toBe(404);
    const v2Gone = get('/openapi/v2').json;
    expect(v2Gone.definitions['com.example.stable.v1.CronTab']).toBeUndefined();
    expect(Object.keys(v2Gone.paths).some((p) => p.includes('stable.example.com'))).toBe(false);
    expect(v2Gone.definitions['com.example.a.v1.Ant']).toBeDefined();
  });

  it('keeps the parts of unchanged types: the same document objects, the same definition object rendered once', () => {
    const index = new ResourceIndex([...builtins, customType({ group: 'a.example.com', kind: 'Ant', plural: 'ants' })]);
    const docs = new ServedDocuments(naming, 'v1.32.0', index);
    const ant = docs.groupVersion('apis/a.example.com/v1');
    const apps = docs.groupVersion('apis/apps/v1');
    const v2 = docs.v2Json();
    index.replace([...index.definitions, customType({ group: 'b.example.com', kind: 'Bee', plural: 'bees' })]);
    expect(docs.groupVersion('apis/a.example.com/v1')).toBe(ant);
    expect(docs.groupVersion('apis/apps/v1')).toBe(apps);
    const next = docs.v2Json();
    expect(next).not.toBe(v2);
    // The pieces of the unchanged parts are the same buffers, not copies made again.
    const shared = next.pieces.filter((p) => v2.pieces.includes(p));
    expect(shared.length).toBeGreaterThan(v2.pieces.length - 4);
  });
});

describe('yamlOf', () => {
  it('writes the shapes it knows as the yaml library writes them, and hands it the rest', () => {
    const values: unknown[] = [
      true,
      false,
      'apps',
      'io.k8s.api.apps.v1.ReplicaSet',
      'yes',
      'null',
      '1.5',
      '',
      'with space',
      { group: 'apps', kind: 'ReplicaSet', version: 'v1' },
      { group: '', kind: 'Pod', version: 'v1' },
      [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }],
      [{ rule: 'self.size() > 0' }],
      ['name'],
      1,
      { a: { b: 'c' } },
    ];
    for (const v of values) expect(yamlOf(v)).toBe(YAML.stringify(v));
  });
});
