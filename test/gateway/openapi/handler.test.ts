/**
 * `/openapi/v2` and `/openapi/v3` over the gateway's socket-free exchange: negotiation, the
 * v3 index and its hashes (301 on a stale hash, immutable caching on the current one), ETags,
 * gzip, and the v2 protobuf read back with an independent decoder (protobufjs over gnostic's
 * field numbers).
 */
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { createOpenApiHandler } from '../../../src/gateway/openapi';
import { createNaming } from '../../../src/naming';
import { ResourceIndex } from '../../../src/gateway/resource-index';
import { builtinResources } from '../../../src/core/resources';
import { createExchange } from '../../../src/gateway/types';
import { RecordingResponse, fakeRequest } from '../support/http';

const naming = createNaming('kubernetes');
const handler = createOpenApiHandler({ naming, index: new ResourceIndex(builtinResources(naming)), serverVersion: 'v1.32.0' });

function get(url: string, headers: Record<string, string> = {}, method = 'GET'): RecordingResponse {
  const res = new RecordingResponse();
  handler(createExchange(fakeRequest({ method, url, headers }), res));
  return res;
}

/** gnostic's OpenAPIv2 messages, only the fields the test reads. */
const gnostic = protobuf.Root.fromJSON({
  nested: {
    Document: {
      fields: {
        swagger: { type: 'string', id: 1 },
        info: { type: 'Info', id: 2 },
        paths: { type: 'Paths', id: 8 },
        definitions: { type: 'Definitions', id: 9 },
      },
    },
    Info: { fields: { title: { type: 'string', id: 1 }, version: { type: 'string', id: 2 } } },
    Paths: { fields: { path: { rule: 'repeated', type: 'NamedPathItem', id: 2 } } },
    NamedPathItem: { fields: { name: { type: 'string', id: 1 }, value: { type: 'PathItem', id: 2 } } },
    PathItem: { fields: { patch: { type: 'Operation', id: 8 } } },
    Operation: {
      fields: {
        operationId: { type: 'string', id: 5 },
        parameters: { rule: 'repeated', type: 'ParametersItem', id: 8 },
        vendorExtension: { rule: 'repeated', type: 'NamedAny', id: 13 },
      },
    },
    ParametersItem: { fields: { parameter: { type: 'Parameter', id: 1 } } },
    Parameter: { fields: { nonBodyParameter: { type: 'NonBodyParameter', id: 2 } } },
    NonBodyParameter: { fields: { query: { type: 'QueryParameterSubSchema', id: 3 } } },
    QueryParameterSubSchema: { fields: { in: { type: 'string', id: 2 }, name: { type: 'string', id: 4 } } },
    Definitions: { fields: { additionalProperties: { rule: 'repeated', type: 'NamedSchema', id: 1 } } },
    NamedSchema: { fields: { name: { type: 'string', id: 1 }, value: { type: 'Schema', id: 2 } } },
    Schema: {
      fields: {
        ref: { type: 'string', id: 1 },
        required: { rule: 'repeated', type: 'string', id: 19 },
        type: { type: 'TypeItem', id: 22 },
        properties: { type: 'Properties', id: 25 },
        vendorExtension: { rule: 'repeated', type: 'NamedAny', id: 31 },
      },
    },
    TypeItem: { fields: { value: { rule: 'repeated', type: 'string', id: 1 } } },
    Properties: { fields: { additionalProperties: { rule: 'repeated', type: 'NamedSchema', id: 1 } } },
    NamedAny: { fields: { name: { type: 'string', id: 1 }, value: { type: 'Any', id: 2 } } },
    Any: { fields: { yaml: { type: 'string', id: 2 } } },
  },
});

describe('OpenAPI handler', () => {
  it('/openapi/v2: JSON by default, 406 for what it cannot give, gzip when accepted, 304 on a matching ETag', () => {
    const json = get('/openapi/v2');
    expect(json.status).toBe(200);
    expect(json.header('content-type')).toBe('application/json');
    expect(json.json).toMatchObject({ swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.32.0' } });
    const etag = json.header('etag') as string;
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    expect(get('/openapi/v2', { 'if-none-match': etag }).status).toBe(304);
    expect(get('/openapi/v2', { accept: 'text/html' }).status).toBe(406);
    const zipped = get('/openapi/v2', { 'accept-encoding': 'gzip' });
    expect(zipped.header('content-encoding')).toBe('gzip');
    expect(JSON.parse(gunzipSync(Buffer.concat(zipped.chunks)).toString()).swagger).toBe('2.0');
    const head = get('/openapi/v2', {}, 'HEAD');
    expect(head.chunks).toHaveLength(0);
  });

  it('/openapi/v2 as gnostic protobuf: the document kubectl parses, extensions as YAML', () => {
    const res = get('/openapi/v2', { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' });
    expect(res.header('content-type')).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const doc = gnostic.lookupType('Document').toObject(gnostic.lookupType('Document').decode(Buffer.concat(res.chunks))) as any;
    expect(doc.swagger).toBe('2.0');
    expect(doc.info).toEqual({ title: 'Kubernetes', version: 'v1.32.0' });
    const patch = doc.paths.path.find((p: any) => p.name === '/apis/apps/v1/namespaces/{namespace}/replicasets/{name}').value.patch;
    expect(patch.operationId).toBe('patchAppsV1NamespacedReplicaSet');
    expect(patch.parameters.map((p: any) => p.parameter.nonBodyParameter?.query?.name).filter(Boolean)).toContain('fieldValidation');
    const gvk = patch.vendorExtension.find((e: any) => e.name === 'x-kubernetes-group-version-kind');
    expect(gvk.value.yaml).toBe('group: apps\nkind: ReplicaSet\nversion: v1\n');
    const rs = doc.definitions.additionalProperties.find((d: any) => d.name === 'io.k8s.api.apps.v1.ReplicaSetSpec').value;
    expect(rs.required).toEqual(['selector']);
    expect(rs.properties.additionalProperties.find((p: any) => p.name === 'selector').value.ref).toBe(
      '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector',
    );
  });

  it('/openapi/v3: an index of group versions with hashed URLs; a stale hash redirects, the current one is immutable', () => {
    const index = get('/openapi/v3');
    expect(index.header('content-type')).toBe('application/json');
    const url: string = index.json.paths['apis/apps/v1'].serverRelativeURL;
    expect(url).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);
    expect(Object.keys(index.json.paths).sort()).toEqual([
      'api/v1',
      'apis/admissionregistration.k8s.io/v1',
      'apis/apiextensions.k8s.io/v1',
      'apis/apiregistration.k8s.io/v1',
      'apis/apps/v1',
      'apis/authentication.k8s.io/v1',
      'apis/authorization.k8s.io/v1',
      'apis/certificates.k8s.io/v1',
      'apis/coordination.k8s.io/v1',
      'apis/discovery.k8s.io/v1',
      'apis/events.k8s.io/v1',
      'apis/flowcontrol.apiserver.k8s.io/v1',
      'apis/flowcontrol.apiserver.k8s.io/v1beta3',
      'apis/policy/v1',
      'apis/rbac.authorization.k8s.io/v1',
      'apis/scheduling.k8s.io/v1',
    ]);

    const doc = get(url);
    expect(doc.status).toBe(200);
    expect(doc.header('cache-control')).toBe('public, immutable');
    expect(doc.json.paths['/apis/apps/v1/namespaces/{namespace}/replicasets']).toBeDefined();
    const unhashed = get('/openapi/v3/apis/apps/v1');
    expect(unhashed.header('cache-control')).toBe('no-cache, private');
    expect(unhashed.header('etag')).toBe(`"${url.split('hash=')[1]}"`);

    const stale = get('/openapi/v3/apis/apps/v1?hash=ABC');
    expect(stale.status).toBe(301);
    expect(stale.header('location')).toBe(url);
    expect(get('/openapi/v3/apis/nope/v1').status).toBe(404);
    expect(get(url, { accept: 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf' }).status).toBe(406);
  });
});
