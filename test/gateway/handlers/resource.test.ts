import { createNaming } from '../../../src/naming';
import { defaultCodecs } from '../../../src/gateway/codecs';
import { createResourceHandler } from '../../../src/gateway/handlers/resource';
import { ResourceIndex } from '../../../src/gateway/resource-index';
import { parseRequestInfo } from '../../../src/gateway/steps/request-info';
import type { ResourceRequestInfo } from '../../../src/gateway/types';
import { conflict } from '../../../src/status';
import { type FakeRequestInit, fakeExchange } from '../support/http';
import { testDefinitions } from '../support/definitions';
import { RecordingCore } from '../support/recording-core';

const naming = createNaming('kubernetes');
const admin = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

function setup() {
  const core = new RecordingCore();
  const handler = createResourceHandler({
    core,
    codecs: defaultCodecs,
    naming,
    index: new ResourceIndex(testDefinitions(naming)),
    watchTimeoutMs: () => 60_000,
  });
  async function call(init: FakeRequestInit) {
    const { exchange, response } = fakeExchange(init);
    exchange.info = parseRequestInfo(exchange.request);
    exchange.user = admin;
    await handler(exchange, exchange.info as ResourceRequestInfo);
    return response;
  }
  return { core, call };
}

describe('resource handler', () => {
  it('get: calls core.get with the resourceVersion and answers 200', async () => {
    const { core, call } = setup();
    const res = await call({ url: '/api/v1/namespaces/ns/pods/p?resourceVersion=0', headers: { 'user-agent': 'kubectl/v1.32' } });
    expect(res.status).toBe(200);
    expect(core.last).toMatchObject({ method: 'get', target: { resource: 'pods', namespace: 'ns', name: 'p' }, args: [{ resourceVersion: '0' }] });
    expect(core.last.ctx).toMatchObject({ user: admin, userAgent: 'kubectl/v1.32' });
    expect(res.json).toMatchObject({ kind: 'Pod', metadata: { name: 'p' } });
  });

  it('list: passes parsed ListOptions, YAML on request', async () => {
    const { core, call } = setup();
    const res = await call({ url: '/api/v1/pods?limit=5&labelSelector=a%3Db', headers: { accept: 'application/yaml' } });
    expect(core.last).toMatchObject({ method: 'list', target: { resource: 'pods' }, args: [{ limit: 5, labelSelector: 'a=b' }] });
    expect(res.header('content-type')).toBe('application/yaml');
    expect(res.text).toContain('kind: PodList');
  });

  it('decides the response format before calling the core (406 costs nothing)', async () => {
    const { core, call } = setup();
    await expect(call({ url: '/api/v1/pods', headers: { accept: 'text/html' } })).rejects.toMatchObject({ code: 406 });
    expect(core.calls).toHaveLength(0);
  });

  it('create: decodes JSON or YAML bodies, answers 201', async () => {
    const { core, call } = setup();
    const res = await call({
      method: 'POST',
      url: '/api/v1/namespaces/ns/configmaps?fieldManager=me',
      headers: { 'content-type': 'application/yaml' },
      body: 'kind: ConfigMap\nmetadata:\n  name: c\n',
    });
    expect(res.status).toBe(201);
    expect(core.last).toMatchObject({
      method: 'create',
      target: { resource: 'configmaps', namespace: 'ns' },
      args: [{ kind: 'ConfigMap', metadata: { name: 'c' } }, { fieldManager: 'me' }],
    });
  });

  it('create: 415 for an unknown body type, before the core', async () => {
    const { core, call } = setup();
    await expect(call({ method: 'POST', url: '/api/v1/namespaces/ns/configmaps', headers: { 'content-type': 'text/plain' }, body: 'x' })).rejects.toMatchObject(
      { code: 415 },
    );
    expect(core.calls).toHaveLength(0);
  });

  it('update: 200, or 201 when the core created the object', async () => {
    const { core, call } = setup();
    core.created = false;
    expect((await call({ method: 'PUT', url: '/api/v1/namespaces/ns/configmaps/c', body: '{"kind":"ConfigMap"}' })).status).toBe(200);
    core.created = true;
    expect((await call({ method: 'PUT', url: '/api/v1/namespaces/ns/configmaps/c', body: '{"kind":"ConfigMap"}' })).status).toBe(201);
  });

  it('patch: maps the content type to the patch type and passes PATCH options', async () => {
    const { core, call } = setup();
    core.created = false;
    const res = await call({
      method: 'PATCH',
      url: '/apis/apps/v1/namespaces/ns/replicasets/r/scale?fieldManager=kubectl&force=true',
      headers: { 'content-type': 'application/apply-patch+yaml' },
      body: 'spec:\n  replicas: 3\n',
    });
    expect(res.status).toBe(200);
    expect(core.last).toMatchObject({
      method: 'patch',
      target: { group: 'apps', resource: 'replicasets', subresource: 'scale', name: 'r' },
      args: [
        { type: 'apply', body: { spec: { replicas: 3 } } },
        { fieldManager: 'kubectl', force: true },
      ],
    });
    core.created = true;
    expect(
      (
        await call({
          method: 'PATCH',
          url: '/api/v1/namespaces/ns/pods/p?fieldManager=x',
          headers: { 'content-type': 'application/apply-patch+yaml' },
          body: 'a: 1',
        })
      ).status,
    ).toBe(201);
  });

  it('delete: options from the body, status from the core (200 or 202)', async () => {
    const { core, call } = setup();
    core.deleteStatus = 202;
    const res = await call({
      method: 'DELETE',
      url: '/api/v1/namespaces/ns/pods/p',
      body: '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}',
    });
    expect(res.status).toBe(202);
    expect(core.last).toMatchObject({ method: 'delete', args: [{ propagationPolicy: 'Background' }] });
    expect(res.json).toMatchObject({ kind: 'Status', status: 'Success' });
  });

  it('deletecollection: list options from the query, delete options from the query', async () => {
    const { core, call } = setup();
    const res = await call({ method: 'DELETE', url: '/api/v1/namespaces/ns/pods?labelSelector=a&gracePeriodSeconds=0' });
    expect(res.status).toBe(200);
    expect(core.last).toMatchObject({ method: 'deleteCollection', args: [{ labelSelector: 'a' }, { gracePeriodSeconds: 0 }] });
  });

  it('passes core errors through untouched', async () => {
    const { core, call } = setup();
    core.nextError = conflict({ group: '', resource: 'pods' }, 'p', 'stale');
    await expect(call({ url: '/api/v1/namespaces/ns/pods/p' })).rejects.toMatchObject({ code: 409 });
  });

  it('shares the warnings array with the core', async () => {
    const { core, call } = setup();
    const original = core.create.bind(core);
    core.create = async (t, o, opts, ctx) => {
      ctx.warnings!.push('unknown field "x"');
      return original(t, o, opts, ctx);
    };
    const res = await call({ method: 'POST', url: '/api/v1/namespaces/ns/configmaps', body: '{"x":1}' });
    expect(res.header('warning')).toEqual(['299 - "unknown field \\"x\\""']);
  });
});
