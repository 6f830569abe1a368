/**
 * A create through the gateway stores the object in upstream's field order and answers with the
 * same text, its resourceVersion spliced in after the uid (core/storage/object-codec.ts,
 * `encodeCreatedForStorage`). Held against the encoder itself: the answer is exactly what the
 * ordered encoder writes for the object it describes, and the stored bytes are that object
 * without its resourceVersion, for kinds of every group and scope and for text that needs
 * escaping. Other answer formats and later reads are unaffected.
 */
import { createCore, type Core } from '../../src/core';
import { createNaming } from '../../src/naming';
import { createStore, type Store } from '../../src/store';
import { schemaRegistry } from '../../src/schema';
import { encodeOrderedJson, orderedJsonBeforeVersion, withResourceVersion } from '../../src/codecs/json-order';
import { objectKey } from '../../src/core/storage/keys';
import { ADMIN_CERT, RecordingResponse, fakeRequest } from './support/http';
import { gatewayOverCore } from '../../tools/bench/core-gateway';

const naming = createNaming('kubernetes');
const registry = schemaRegistry(naming);

let store: Store;
let core: Core;
let gateway: ReturnType<typeof gatewayOverCore>;

beforeAll(async () => {
  store = createStore({ kind: 'embedded', inMemory: true });
  core = createCore({ store, naming, compactionIntervalMs: 0 });
  await core.ready();
  gateway = gatewayOverCore(core, naming);
});

afterAll(() => core.close());

async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<RecordingResponse> {
  const response = new RecordingResponse();
  const init = { method, url, cert: ADMIN_CERT, headers: { accept: 'application/json', 'content-type': 'application/json', ...headers } };
  await gateway.handle(fakeRequest(body === undefined ? init : { ...init, body: JSON.stringify(body) }), response);
  return response;
}

const tricky = { 'example.com/html': '<b>&amp;</b> "quoted" \\ back', 'example.com/unicode': 'grüße \u2028 line \u2029 para ✓' };

const cases: Array<{ name: string; url: string; resource: string; namespace?: string; body: Record<string, unknown> }> = [
  {
    name: 'a ReplicaSet (apps, namespaced)',
    url: '/apis/apps/v1/namespaces/answers/replicasets',
    resource: 'replicasets',
    namespace: 'answers',
    body: {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'rs', labels: { app: 'a' }, annotations: tricky },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'a' } },
        template: {
          metadata: { labels: { app: 'a' } },
          spec: { containers: [{ name: 'c', image: 'registry.example.com/c:1', env: [{ name: 'X', value: '<&>' }] }] },
        },
      },
    },
  },
  {
    name: 'a ConfigMap (core, namespaced), its name generated',
    url: '/api/v1/namespaces/answers/configmaps',
    resource: 'configmaps',
    namespace: 'answers',
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'cm-', annotations: tricky }, data: { 'z-last': '1', 'a-first': '2', '10': 'ten' } },
  },
  {
    name: 'a ClusterRole (rbac, cluster-scoped)',
    url: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    resource: 'clusterroles',
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'answers-role' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
    },
  },
  {
    name: 'a body without kind and apiVersion',
    url: '/api/v1/namespaces/answers/secrets',
    resource: 'secrets',
    namespace: 'answers',
    body: { metadata: { name: 'bare' }, stringData: { k: 'v' } },
  },
];

describe("a create's answer is spliced from its stored bytes", () => {
  beforeAll(async () => {
    expect((await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'answers' } })).status).toBe(201);
  });

  it.each(cases)('$name: the answer is what the encoder writes, the stored bytes the same without the version', async ({ url, resource, namespace, body }) => {
    const res = await call('POST', url, body);
    expect(res.status).toBe(201);
    const answer = res.text;
    const object = JSON.parse(answer) as { metadata: { name: string; resourceVersion: string; uid: string } };
    expect(answer).toBe(`${encodeOrderedJson(registry, object)}\n`);
    const { kv } = await store.get(objectKey(resource, namespace, object.metadata.name));
    expect(object.metadata.resourceVersion).toBe(String(kv!.modRevision));
    const stored = Buffer.from(kv!.value).toString('utf8');
    const { resourceVersion: _rv, ...metaWithoutVersion } = object.metadata;
    const withoutVersion = { ...object, metadata: metaWithoutVersion };
    expect(stored).toBe(encodeOrderedJson(registry, withoutVersion));
    // A read afterwards, and a read of the whole collection, describe the same object.
    const read = await call('GET', `${url}/${object.metadata.name}`);
    expect(read.text).toBe(answer);
    const list = await call('GET', `${url}?fieldSelector=metadata.name%3D${object.metadata.name}`);
    const { kind: _kind, apiVersion: _apiVersion, ...item } = list.json.items[0];
    const { kind: _k, apiVersion: _a, ...described } = object as Record<string, unknown>;
    expect(item).toEqual(described);
  });

  it('answers other formats from the object, not from the spliced JSON', async () => {
    const res = await call(
      'POST',
      '/api/v1/namespaces/answers/configmaps',
      { metadata: { name: 'as-yaml' }, data: { a: '<b>' } },
      { accept: 'application/yaml' },
    );
    expect(res.status).toBe(201);
    expect(res.header('content-type')).toBe('application/yaml');
    expect(res.text).toMatch(/^ {2}resourceVersion: "\d+"$/m);
    expect(res.text).toContain('a: <b>');
  });

  it('lays out a custom resource as an unstructured object: the version goes before the uid, keys sorted', () => {
    const meta = { uid: '0b5c7d36-4c8e-4a55-b7c4-3d0f3ce3f8d1', name: 'x', creationTimestamp: '2026-01-01T00:00:00Z' };
    const object = { kind: 'Widget', apiVersion: 'example.com/v1', metadata: meta, spec: { z: 1, a: { d: 2, c: 3 } } };
    const layout = orderedJsonBeforeVersion(registry, object)!;
    expect(layout.bytes.toString()).toBe(encodeOrderedJson(registry, object));
    expect(withResourceVersion(layout.bytes, layout.at, '42').toString()).toBe(
      `${encodeOrderedJson(registry, { ...object, metadata: { ...meta, resourceVersion: '42' } })}\n`,
    );
    expect(withResourceVersion(layout.bytes, layout.at, '42').toString()).toBe(
      `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"creationTimestamp":"2026-01-01T00:00:00Z","name":"x","resourceVersion":"42","uid":"${meta.uid}"},"spec":{"a":{"c":3,"d":2},"z":1}}\n`,
    );
  });

  it('leaves out what it cannot promise: no uid, a version already set', () => {
    const meta = { name: 'x', uid: '0b5c7d36-4c8e-4a55-b7c4-3d0f3ce3f8d1' };
    expect(orderedJsonBeforeVersion(registry, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } })).toBeUndefined();
    expect(orderedJsonBeforeVersion(registry, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...meta, resourceVersion: '5' } })).toBeUndefined();
    const layout = orderedJsonBeforeVersion(registry, { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta, data: { uid: `"uid":"${meta.uid}"` } });
    expect(layout?.bytes.subarray(0, layout.at).toString()).toBe(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","uid":"${meta.uid}"`);
  });

  it('splices the version in at a byte offset, after non-ASCII text', () => {
    const meta = { name: 'é-<x>', generateName: '\u{1F600}', uid: '0b5c7d36-4c8e-4a55-b7c4-3d0f3ce3f8d1' };
    const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta, data: { ü: 'ß' } };
    const layout = orderedJsonBeforeVersion(registry, object)!;
    expect(layout.bytes.toString()).toBe(encodeOrderedJson(registry, object));
    expect(withResourceVersion(layout.bytes, layout.at, '42').toString()).toBe(
      `${encodeOrderedJson(registry, { ...object, metadata: { ...meta, resourceVersion: '42' } })}\n`,
    );
  });
});
