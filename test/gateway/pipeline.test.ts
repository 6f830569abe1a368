import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createNaming } from '../../src/naming';
import { createGateway, keelsonVersion } from '../../src/gateway';
import { createProtobufCodec } from '../../src/codecs/protobuf';
import { compose } from '../../src/gateway/pipeline';
import type { Handler, Step } from '../../src/gateway/types';
import { ADMIN_CERT, type FakeRequestInit, RecordingResponse, fakeRequest } from './support/http';
import { testDefinitions } from './support/definitions';
import { RecordingCore } from './support/recording-core';

const naming = createNaming('kubernetes');
const AGGREGATED_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

function setup(ready = true) {
  const core = new RecordingCore();
  const gateway = createGateway({
    core,
    resources: testDefinitions(naming),
    naming,
    version: keelsonVersion({ keelsonVersion: '0.1.0', buildDate: Date.UTC(2026, 0, 2) }),
    serverAddress: () => '127.0.0.1:6443',
    health: {
      livez: [{ name: 'ping', check: () => {} }],
      readyz: [
        { name: 'ping', check: () => {} },
        {
          name: 'core-ready',
          check: () => {
            if (!ready) throw new Error('bootstrapping');
          },
        },
      ],
      healthz: [{ name: 'ping', check: () => {} }],
    },
  });
  async function call(init: FakeRequestInit & { anonymous?: boolean }) {
    const response = new RecordingResponse();
    await gateway.handle(fakeRequest({ cert: init.anonymous ? undefined : ADMIN_CERT, ...init }), response);
    return response;
  }
  return { core, call };
}

describe('pipeline', () => {
  it("numbers each step in its file's header by its place in createPipeline's list", () => {
    const dir = path.join(__dirname, '../../src/gateway');
    const source = readFileSync(path.join(dir, 'pipeline.ts'), 'utf8');
    const list = /const steps: Step\[\] = \[([\s\S]*?)\n {2}\];/.exec(source)?.[1] ?? '';
    const steps = [...list.matchAll(/\b([a-z]\w*Step)\b/g)].map((m) => m[1]!);
    expect(steps.length).toBeGreaterThan(5);
    const numbers = steps.map((step) => {
      const from = new RegExp(`import \\{[^}]*\\b${step}\\b[^}]*\\} from '(\\./[^']+)'`).exec(source)?.[1];
      const file = [`${from}.ts`, `${from}/index.ts`].map((f) => path.join(dir, f)).find((f) => existsSync(f));
      return file && Number(/^ \* Step (\d+):/m.exec(readFileSync(file, 'utf8'))?.[1]);
    });
    expect(numbers).toEqual(steps.map((_, i) => i));
  });

  it('composes steps so the first listed runs first', async () => {
    const order: string[] = [];
    const step =
      (name: string): Step =>
      (next) =>
      async (ex) => {
        order.push(name);
        await next(ex);
      };
    const last: Handler = async () => {
      order.push('handler');
    };
    await compose([step('a'), step('b'), step('c')], last)({} as never);
    expect(order).toEqual(['a', 'b', 'c', 'handler']);
  });

  it('serves /version to anyone, as raw indented JSON', async () => {
    const { call } = setup();
    const res = await call({ url: '/version', anonymous: true, headers: { accept: 'application/yaml' } });
    expect(res.status).toBe(200);
    expect(res.header('content-type')).toBe('application/json');
    expect(res.json).toMatchObject({ major: '1', minor: '32', gitVersion: 'v1.32.0+keelson-0.1.0', buildDate: '2026-01-02T00:00:00Z' });
    expect(res.json.platform).toMatch(/^[a-z0-9]+\/[a-z0-9]+$/);
  });

  it('serves health to anyone; readyz fails until the core is ready', async () => {
    expect((await setup().call({ url: '/readyz', anonymous: true })).text).toBe('ok');
    const notReady = await setup(false).call({ url: '/readyz?verbose', anonymous: true });
    expect(notReady.status).toBe(500);
    expect(notReady.text).toBe('[+]ping ok\n[-]core-ready failed: reason withheld\nreadyz check failed\n');
    expect((await setup().call({ url: '/livez?verbose' })).text).toBe('[+]ping ok\nlivez check passed\n');
    expect((await setup().call({ url: '/healthz' })).text).toBe('ok');
    expect((await setup().call({ url: '/livez/ping' })).text).toBe('ok');
  });

  it('denies anonymous discovery and resources with upstream messages', async () => {
    const { call, core } = setup();
    const api = await call({ url: '/api', anonymous: true });
    expect(api.status).toBe(403);
    expect(api.json.message).toBe('forbidden: User "system:anonymous" cannot get path "/api"');
    const pods = await call({ url: '/api/v1/namespaces/default/pods', anonymous: true });
    expect(pods.json).toMatchObject({
      code: 403,
      message: 'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"',
    });
    expect(core.calls).toHaveLength(0);
  });

  it('answers 401 for a certificate the CA did not sign', async () => {
    const res = await setup().call({ url: '/version', cert: { verified: false, commonName: 'x', organizations: [] } });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
  });

  it('serves aggregated discovery on /api and /apis for kubectl 1.32', async () => {
    const { call } = setup();
    const api = await call({ url: '/api', headers: { accept: AGGREGATED_ACCEPT } });
    expect(api.header('content-type')).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    expect(api.header('vary')).toBe('Accept');
    expect(api.json.items[0].versions[0].resources.map((r: { resource: string }) => r.resource)).toEqual(['configmaps', 'namespaces', 'pods']);
    const apis = await call({ url: '/apis', headers: { accept: AGGREGATED_ACCEPT.split(',').slice(1).join(',') } });
    expect(apis.header('content-type')).toBe('application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList');
    expect(apis.json.kind).toBe('APIGroupDiscoveryList');
  });

  it('serves unaggregated discovery otherwise, in JSON or YAML', async () => {
    const { call } = setup();
    expect((await call({ url: '/api' })).json).toMatchObject({
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ serverAddress: '127.0.0.1:6443' }],
    });
    expect((await call({ url: '/apis/' })).json.kind).toBe('APIGroupList');
    expect((await call({ url: '/apis/apps' })).json.kind).toBe('APIGroup');
    expect((await call({ url: '/api/v1' })).json.groupVersion).toBe('v1');
    const yaml = await call({ url: '/apis/apps/v1', headers: { accept: 'application/yaml' } });
    expect(yaml.text).toContain('groupVersion: apps/v1');
    expect((await call({ url: '/apis', headers: { accept: 'text/html' } })).status).toBe(406);
  });

  it('404s unknown paths: Status under served roots, Go plain text elsewhere', async () => {
    const { call } = setup();
    for (const url of ['/api/v2', '/apis/apps/v2', '/api/v1/foos', '/apis/apps/v1/namespaces/x/deployments']) {
      const res = await call({ url });
      expect([url, res.status, res.json.message]).toEqual([url, 404, 'the server could not find the requested resource']);
    }
    for (const url of ['/foo', '/apis/example.com', '/apis/example.com/v1/widgets', '/livez/nope', '/metrics']) {
      const res = await call({ url });
      expect([url, res.status, res.text, res.header('content-type')]).toEqual([url, 404, '404 page not found\n', 'text/plain; charset=utf-8']);
    }
  });

  it('lists the served paths at / for those allowed to see it', async () => {
    const { call } = setup();
    const root = await call({ url: '/' });
    expect(root.json.paths).toEqual(
      expect.arrayContaining(['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/healthz', '/livez/ping', '/readyz/core-ready', '/version']),
    );
    expect(root.header('cache-control')).toBe('no-cache, private');
    expect((await call({ url: '/', anonymous: true })).status).toBe(403);
  });

  it('405s writes to discovery and /version', async () => {
    const { call } = setup();
    expect((await call({ method: 'POST', url: '/apis' })).status).toBe(405);
    expect((await call({ method: 'DELETE', url: '/version' })).status).toBe(405);
  });

  it('routes resource requests to the core with the authenticated user', async () => {
    const { call, core } = setup();
    const res = await call({ method: 'POST', url: '/apis/apps/v1/namespaces/ns/replicasets', body: '{"kind":"ReplicaSet"}' });
    expect(res.status).toBe(201);
    expect(core.last).toMatchObject({ method: 'create', target: { group: 'apps', resource: 'replicasets', namespace: 'ns' } });
    expect(core.last.ctx.user.username).toBe('admin');
  });

  it('writes errors from the core in the negotiated format', async () => {
    const { call } = setup();
    const res = await call({ url: '/api/v1/pods?limit=x', headers: { accept: 'application/yaml' } });
    expect(res.status).toBe(400);
    expect(res.text).toContain('message: \'strconv.ParseInt: parsing "x": invalid syntax\'');
  });

  describe("protobuf (the naming profile's envelope)", () => {
    const pb = createProtobufCodec(naming);
    const PB = 'application/vnd.kubernetes.protobuf';

    it('answers in protobuf when the client prefers it, as client-go typed clients do', async () => {
      const { call } = setup();
      const res = await call({ url: '/api/v1/namespaces/ns/pods/p', headers: { accept: `${PB},application/json` } });
      expect(res.header('content-type')).toBe(PB);
      const body = Buffer.concat(res.chunks);
      expect([...body.subarray(0, 4)]).toEqual([0x6b, 0x38, 0x73, 0x00]);
      expect(pb.decode(body)).toMatchObject({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p', namespace: 'ns' } });
    });

    it('decodes protobuf request bodies', async () => {
      const { call, core } = setup();
      const body = pb.encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } });
      const res = await call({ method: 'POST', url: '/api/v1/namespaces/ns/configmaps', headers: { 'content-type': PB, accept: 'application/json' }, body });
      expect(res.status).toBe(201);
      expect(core.last.args[0]).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } });
    });

    it('lists protobuf among the accepted body types, in upstream order', async () => {
      const { call } = setup();
      const res = await call({ method: 'POST', url: '/api/v1/namespaces/ns/configmaps', headers: { 'content-type': 'text/plain' }, body: 'x' });
      expect(res.json.message).toBe(
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      );
    });

    it('writes errors as protobuf Status for protobuf clients', async () => {
      const { call } = setup();
      const res = await call({ url: '/api/v1/foos', headers: { accept: PB } });
      expect(res.status).toBe(404);
      expect(pb.decode(Buffer.concat(res.chunks))).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
    });

    it('streams watch events as length-prefixed protobuf frames', async () => {
      const { call, core } = setup();
      core.watchStream.push({ type: 'ADDED', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' } } });
      core.watchStream.close();
      const res = await call({ url: '/api/v1/pods?watch=1', headers: { accept: `${PB};stream=watch` } });
      expect(res.header('content-type')).toBe(`${PB};stream=watch`);
      expect(pb.decodeWatchStream(Buffer.concat(res.chunks))).toEqual([
        { type: 'ADDED', object: expect.objectContaining({ kind: 'Pod', metadata: expect.objectContaining({ name: 'a' }) }) },
      ]);
    });

    it('keeps aggregated discovery in JSON for kubectl even when protobuf is listed first', async () => {
      const { call } = setup();
      const res = await call({ url: '/apis', headers: { accept: `${PB};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,${AGGREGATED_ACCEPT}` } });
      expect(res.header('content-type')).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    });
  });
});
