/**
 * The resource handler's encodings without sockets: Tables and PartialObjectMetadata on reads,
 * writes and watches (AGE from the injected clock), their 400/406 answers, raw-JSON 406s, the
 * CBOR gate (bodies, apply patches, 415s) and gzip above upstream's threshold.
 */
import { gunzipSync } from 'node:zlib';
import { ManualClock } from '../../../src/clock';
import type { ApiList, ApiObject, GetOptions, ListOptions, RequestContext, ResourceTarget } from '../../../src/core/api';
import { builtinResources } from '../../../src/core/resources';
import { buildFeatureGates } from '../../../src/features';
import { createCborCodec, gatewayCodecs } from '../../../src/gateway/codecs';
import { createResourceHandler } from '../../../src/gateway/handlers/resource';
import { ResourceIndex } from '../../../src/gateway/resource-index';
import { parseRequestInfo } from '../../../src/gateway/steps/request-info';
import type { ResourceRequestInfo } from '../../../src/gateway/types';
import { createNaming } from '../../../src/naming';
import { StatusError } from '../../../src/status';
import { type FakeRequestInit, fakeExchange } from '../support/http';
import { RecordingCore } from '../support/recording-core';

const naming = createNaming('kubernetes');
const clock = new ManualClock(Date.parse('2026-01-01T12:00:00Z'));
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

function replicaSet(name: string, createdSecondsAgo = 90): ApiObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: 'default',
      uid: `u-${name}`,
      resourceVersion: '11',
      creationTimestamp: new Date(clock.now() - createdSecondsAgo * 1000).toISOString().replace('.000Z', 'Z'),
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
    status: { replicas: 2, readyReplicas: 1 },
  };
}

/** A core answering with ReplicaSets (lists of `size`). */
class ReplicaSetCore extends RecordingCore {
  size = 2;
  override async get(target: ResourceTarget, options: GetOptions, ctx: RequestContext): Promise<ApiObject> {
    await super.get(target, options, ctx);
    return replicaSet(target.name ?? 'x');
  }
  override async list(target: ResourceTarget, options: ListOptions, ctx: RequestContext): Promise<ApiList> {
    await super.list(target, options, ctx);
    const items = Array.from({ length: this.size }, (_, i) => {
      const { apiVersion: _a, kind: _k, ...item } = replicaSet(`rs-${i}`);
      return item;
    });
    return { apiVersion: 'apps/v1', kind: 'ReplicaSetList', metadata: { resourceVersion: '12', continue: 'next' }, items };
  }
}

function setup(gates: Record<string, boolean> = {}) {
  const core = new ReplicaSetCore();
  const features = buildFeatureGates(gates).gates;
  const handler = createResourceHandler({
    core,
    codecs: gatewayCodecs(naming),
    naming,
    index: new ResourceIndex(builtinResources(naming)),
    features,
    clock,
    watchTimeoutMs: () => 60_000,
  });
  async function call(init: FakeRequestInit) {
    const { exchange, response } = fakeExchange(init);
    exchange.info = parseRequestInfo(exchange.request);
    exchange.user = { username: 'admin', groups: ['system:masters'] };
    await handler(exchange, exchange.info as ResourceRequestInfo);
    await response.done;
    return response;
  }
  return { core, call, handler };
}

const RS = '/apis/apps/v1/namespaces/default/replicasets';

/** Errors are responses here: the handler writes them with the gated codecs it serves. */
function expectStatus(res: { status: number; json: any }, expected: { code: number; message?: unknown }): void {
  expect(res.status).toBe(expected.code);
  expect(res.json).toMatchObject({ kind: 'Status', ...expected });
}

describe('Table responses', () => {
  it("list: kubectl's Accept gets a Table with list metadata, rows of PartialObjectMetadata, AGE from the clock", async () => {
    const { call } = setup();
    const res = await call({ url: RS, headers: { accept: `${TABLE},application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json` } });
    expect(res.header('content-type')).toBe('application/json');
    const table = res.json;
    expect(table).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: '12', continue: 'next' } });
    expect(table.columnDefinitions.map((c: { name: string }) => c.name)).toEqual([
      'Name',
      'Desired',
      'Current',
      'Ready',
      'Age',
      'Containers',
      'Images',
      'Selector',
    ]);
    expect(table.rows[0]).toEqual({
      cells: ['rs-0', 2, 2, 1, '90s', 'c', 'nginx', 'app=rs-0'],
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: expect.objectContaining({ name: 'rs-0', uid: 'u-rs-0' }) },
    });
  });

  it('get, v1beta1, YAML and includeObject=Object; None leaves the object out', async () => {
    const { call } = setup();
    const yaml = await call({ url: `${RS}/web?includeObject=Object`, headers: { accept: 'application/yaml;as=Table;v=v1beta1;g=meta.k8s.io' } });
    expect(yaml.header('content-type')).toBe('application/yaml');
    expect(yaml.text).toMatch(/^apiVersion: meta.k8s.io\/v1beta1\ncolumnDefinitions:/);
    expect(yaml.text).toContain('    kind: ReplicaSet\n');
    const none = await call({ url: `${RS}/web?includeObject=None`, headers: { accept: TABLE } });
    expect(none.json.rows).toEqual([{ cells: ['web', 2, 2, 1, '90s', 'c', 'nginx', 'app=web'], object: null }]);
    expect(none.json.metadata).toEqual({ resourceVersion: '11' });
  });

  it('answers 400 for a bad includeObject, after the operation as upstream does', async () => {
    const { core, call } = setup();
    expectStatus(await call({ url: `${RS}/web?includeObject=All`, headers: { accept: TABLE } }), {
      code: 400,
      message: "Unable to convert to Table as requested: includeObject: Invalid value: \"All\": must be 'Metadata', 'Object', 'None', or empty",
    });
    expect(core.last.method).toBe('get');
  });

  it('converts write responses too (create answers a Table of the created object)', async () => {
    const { call } = setup();
    const body = JSON.stringify(replicaSet('new'));
    const res = await call({ method: 'POST', url: RS, headers: { accept: TABLE, 'content-type': 'application/json' }, body });
    expect(res.status).toBe(201);
    expect(res.json.rows[0].cells[0]).toBe('new');
  });

  it('has no protobuf Table: 406 as raw indented JSON, listing the formats', async () => {
    const { core, call } = setup();
    const res = await call({ url: RS, headers: { accept: 'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io' } });
    expect(core.calls).toHaveLength(0);
    expect(res.status).toBe(406);
    expect(res.header('content-type')).toBe('application/json');
    expect(res.text).toBe(
      '{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n  "status": "Failure",\n  "message": "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",\n  "reason": "NotAcceptable",\n  "code": 406\n}',
    );
  });
});

describe('PartialObjectMetadata', () => {
  it('serves PartialObjectMetadataList for lists and PartialObjectMetadata for objects, protobuf included', async () => {
    const { call } = setup();
    const list = await call({ url: RS, headers: { accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' } });
    expect(list.json).toMatchObject({
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '12', continue: 'next' },
      items: [{ kind: 'PartialObjectMetadata', metadata: { name: 'rs-0' } }, {}],
    });
    const pb = await call({ url: `${RS}/web`, headers: { accept: 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;v=v1;g=meta.k8s.io' } });
    expect(pb.header('content-type')).toBe('application/vnd.kubernetes.protobuf');
    expect(gatewayCodecs(naming).get('application/vnd.kubernetes.protobuf')!.decode(Buffer.concat(pb.chunks))).toMatchObject({
      kind: 'PartialObjectMetadata',
      metadata: { name: 'web', uid: 'u-web' },
    });
  });

  it('refuses the wrong shape with 406, naming the Go type', async () => {
    const { call } = setup();
    expectStatus(await call({ url: RS, headers: { accept: 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io' } }), {
      code: 406,
      message: 'you requested PartialObjectMetadata, but the requested object is a list (*apps.ReplicaSetList)',
    });
    expectStatus(await call({ url: `${RS}/web`, headers: { accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' } }), {
      code: 406,
      message: 'you requested PartialObjectMetadataList, but the requested object is not a list (*apps.ReplicaSet)',
    });
  });
});

describe('watch conversions', () => {
  it('sends a one-row Table per event, column definitions on the first only', async () => {
    const { core, handler } = setup();
    const { exchange, response } = fakeExchange({ url: `${RS}?watch=1`, headers: { accept: TABLE } });
    exchange.info = parseRequestInfo(exchange.request);
    exchange.user = { username: 'admin', groups: ['system:masters'] };
    const done = handler(exchange, exchange.info as ResourceRequestInfo);
    core.watchStream.push({ type: 'ADDED', object: replicaSet('a') });
    core.watchStream.push({ type: 'MODIFIED', object: replicaSet('a', 200) });
    core.watchStream.close();
    await done;
    const events = response.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e) => [e.type, e.object.kind, e.object.columnDefinitions?.length ?? null, e.object.rows[0].cells[4]])).toEqual([
      ['ADDED', 'Table', 8, '90s'],
      ['MODIFIED', 'Table', null, '3m20s'],
    ]);
  });
});

describe('CBOR behind CBORServingAndStorage', () => {
  const cbor = createCborCodec(naming);

  it('is not served with the gate off: 406 for Accept, 415 for Content-Type and for apply-patch+cbor', async () => {
    const { call } = setup();
    expectStatus(await call({ url: `${RS}/web`, headers: { accept: 'application/cbor' } }), { code: 406 });
    expectStatus(await call({ method: 'POST', url: RS, headers: { 'content-type': 'application/cbor' }, body: cbor.encode(replicaSet('x')) }), { code: 415 });
    expectStatus(
      await call({ method: 'PATCH', url: `${RS}/web`, headers: { 'content-type': 'application/apply-patch+cbor' }, body: cbor.encode(replicaSet('x')) }),
      {
        code: 415,
        message:
          'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
      },
    );
  });

  it('with the gate on: CBOR bodies and responses, apply-patch+cbor as an apply, no CBOR for the other patch types', async () => {
    const { core, call } = setup({ CBORServingAndStorage: true });
    const res = await call({
      method: 'POST',
      url: RS,
      headers: { 'content-type': 'application/cbor', accept: 'application/cbor' },
      body: cbor.encode(replicaSet('x')),
    });
    expect(res.header('content-type')).toBe('application/cbor');
    expect(cbor.decode(Buffer.concat(res.chunks))).toEqual(replicaSet('x'));
    await call({
      method: 'PATCH',
      url: `${RS}/web?fieldManager=me`,
      headers: { 'content-type': 'application/apply-patch+cbor' },
      body: cbor.encode({ spec: { replicas: 3 } }),
    });
    expect(core.last.args[0]).toEqual({ type: 'apply', body: { spec: { replicas: 3 } } });
    expectStatus(await call({ method: 'PATCH', url: `${RS}/web`, headers: { 'content-type': 'application/merge-patch+cbor' }, body: 'x' }), {
      code: 415,
      message: expect.stringContaining('application/apply-patch+yaml, application/apply-patch+cbor'),
    });
    expectStatus(
      await call({ method: 'PATCH', url: `${RS}/web`, headers: { 'content-type': 'application/apply-patch+cbor' }, body: Buffer.from('a1', 'hex') }),
      { code: 400 },
    );
  });

  it('writes errors in CBOR to CBOR clients', async () => {
    const { core, call } = setup({ CBORServingAndStorage: true });
    core.nextError = new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'nope', reason: 'NotFound', code: 404 });
    const res = await call({ url: `${RS}/web`, headers: { accept: 'application/cbor' } });
    expect(res.status).toBe(404);
    expect(res.header('content-type')).toBe('application/cbor');
    expect(cbor.decode(Buffer.concat(res.chunks))).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });
});

describe('compression (APIResponseCompression)', () => {
  it('gzips bodies over 128 KiB for gzip clients, with Vary; smaller ones go as they are', async () => {
    const { core, call } = setup();
    core.size = 400;
    const big = await call({ url: RS, headers: { 'accept-encoding': 'gzip' } });
    expect(big.header('content-encoding')).toBe('gzip');
    expect(big.header('vary')).toBe('Accept-Encoding');
    const text = gunzipSync(Buffer.concat(big.chunks)).toString();
    expect(text.length).toBeGreaterThan(128 * 1024);
    expect(JSON.parse(text).items).toHaveLength(400);
    core.size = 2;
    const small = await call({ url: RS, headers: { 'accept-encoding': 'gzip' } });
    expect(small.header('content-encoding')).toBeUndefined();
  });

  it('does nothing without Accept-Encoding: gzip or with the gate off', async () => {
    const on = setup();
    on.core.size = 400;
    expect((await on.call({ url: RS })).header('content-encoding')).toBeUndefined();
    const off = setup({ APIResponseCompression: false });
    off.core.size = 400;
    expect((await off.call({ url: RS, headers: { 'accept-encoding': 'gzip' } })).header('content-encoding')).toBeUndefined();
  });
});
