/**
 * Every encoding on every verb through the running server (issue 6 "Done when"), with the CBOR
 * gate on: JSON, YAML, protobuf and CBOR bodies and responses for create, get, list, update,
 * patch (the JSON patch types with any Accept; `apply-patch+cbor` for CBOR), delete, errors and
 * watch (YAML cannot stream: 406), plus negotiation's edges (q-values, parameters, 406/415
 * shapes) and the gate off.
 */
import https from 'node:https';
import { createCborCodec, createJsonCodec, yamlCodec } from '../../src/gateway/codecs';
import { createProtobufCodec } from '../../src/codecs/protobuf';
import { createNaming } from '../../src/naming';
import type { ClientTls } from '../gateway/support/https-client';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { API_ONLY } from '../gateway/support/server-process';

const naming = createNaming('kubernetes');
const PB = 'application/vnd.kubernetes.protobuf';
const codecs = { json: createJsonCodec(naming), yaml: yamlCodec, protobuf: createProtobufCodec(naming), cbor: createCborCodec(naming) };
type Format = keyof typeof codecs;
const MEDIA: Record<Format, string> = { json: 'application/json', yaml: 'application/yaml', protobuf: PB, cbor: 'application/cbor' };

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function request(server: ServerProcess, method: string, path: string, headers: Record<string, string> = {}, body?: Buffer | string): Promise<Reply> {
  const tls: ClientTls = server.admin;
  return new Promise((resolve, reject) => {
    const req = https.request(`${server.url}${path}`, { method, headers, ca: tls.ca, cert: tls.cert, key: tls.key, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A watch: collect raw bytes until `enough(bytes)` or the timeout, then hang up. */
function watchBytes(server: ServerProcess, path: string, accept: string, enough: (b: Buffer) => boolean, trigger: () => Promise<unknown>): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const req = https.request(
      `${server.url}${path}`,
      { headers: { accept }, ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false },
      (res) => {
        const done = () => {
          clearTimeout(timer);
          req.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
        };
        const timer = setTimeout(done, 5000);
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          if (enough(Buffer.concat(chunks))) done();
        });
        res.on('end', done);
        if (res.statusCode === 200) trigger().catch(reject);
      },
    );
    req.on('error', (e) => (chunks.length ? undefined : reject(e)));
    req.end();
  });
}

const configMap = (name: string, data: Record<string, string> = { a: 'b' }) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data,
});

describe('every encoding on every verb (CBOR gate on)', () => {
  let server: ServerProcess;
  const CM = '/api/v1/namespaces/default/configmaps';

  beforeAll(async () => {
    server = await startServerProcess(['--vendor', 'kubernetes', '--feature-gates', 'CBORServingAndStorage=true', ...API_ONLY]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const decode = (format: Format, r: Reply) => codecs[format].decode(r.body) as Record<string, any>;

  describe.each<Format>(['json', 'yaml', 'protobuf', 'cbor'])('%s', (format) => {
    const accept = MEDIA[format];
    const name = `cm-${format}`;

    it('create, get, list, update, delete with bodies and responses in the format', async () => {
      const created = await request(server, 'POST', CM, { 'content-type': accept, accept }, codecs[format].encode(configMap(name)));
      expect(created.status).toBe(201);
      expect(created.headers['content-type']).toBe(accept);
      expect(decode(format, created)).toMatchObject({ kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } });

      const got = await request(server, 'GET', `${CM}/${name}`, { accept });
      expect(got.headers['content-type']).toBe(accept);
      const object = decode(format, got);
      expect(object.metadata.uid).toBe(decode(format, created).metadata.uid);

      const list = await request(server, 'GET', CM, { accept });
      expect(decode(format, list)).toMatchObject({ kind: 'ConfigMapList', apiVersion: 'v1' });
      expect((decode(format, list).items as { metadata: { name: string } }[]).map((i) => i.metadata.name)).toContain(name);

      const updated = await request(server, 'PUT', `${CM}/${name}`, { 'content-type': accept, accept }, codecs[format].encode({ ...object, data: { a: 'c' } }));
      expect(updated.status).toBe(200);
      expect(decode(format, updated).data).toEqual({ a: 'c' });

      const deleted = await request(server, 'DELETE', `${CM}/${name}`, { accept });
      expect(deleted.status).toBe(200);
      expect(deleted.headers['content-type']).toBe(accept);
      expect(decode(format, deleted)).toMatchObject({ kind: 'Status', status: 'Success' });
    });

    it('patch: the JSON patch types answered in the format; apply in CBOR only with apply-patch+cbor', async () => {
      await request(server, 'POST', CM, { 'content-type': 'application/json' }, JSON.stringify(configMap(`p-${format}`)));
      const merged = await request(server, 'PATCH', `${CM}/p-${format}`, { 'content-type': 'application/merge-patch+json', accept }, '{"data":{"m":"1"}}');
      expect(merged.status).toBe(200);
      expect(decode(format, merged).data).toEqual({ a: 'b', m: '1' });
      if (format === 'cbor') {
        const applied = await request(
          server,
          'PATCH',
          `${CM}/p-cbor?fieldManager=e2e&force=true`,
          { 'content-type': 'application/apply-patch+cbor', accept },
          codecs.cbor.encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p-cbor' }, data: { x: 'y' } }),
        );
        expect(applied.status).toBe(200);
        expect(decode('cbor', applied).data).toMatchObject({ x: 'y' });
        for (const type of ['application/merge-patch+cbor', 'application/json-patch+cbor', 'application/strategic-merge-patch+cbor']) {
          const refused = await request(server, 'PATCH', `${CM}/p-cbor`, { 'content-type': type, accept: 'application/json' }, codecs.cbor.encode({}));
          expect(refused.status).toBe(415);
          expect(JSON.parse(refused.body.toString()).message).toBe(
            'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml, application/apply-patch+cbor',
          );
        }
      }
    });

    it('errors: a Status in the format', async () => {
      const missing = await request(server, 'GET', `${CM}/absent`, { accept });
      expect(missing.status).toBe(404);
      expect(missing.headers['content-type']).toBe(accept);
      expect(decode(format, missing)).toMatchObject({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
        message: 'configmaps "absent" not found',
      });
    });

    it('watch: events in the format (YAML cannot stream: 406)', async () => {
      const wname = `w-${format}`;
      const trigger = () => request(server, 'POST', CM, { 'content-type': 'application/json' }, JSON.stringify(configMap(wname)));
      const path = `${CM}?watch=true&fieldSelector=metadata.name%3D${wname}`;
      if (format === 'yaml') {
        const r = await request(server, 'GET', path, { accept });
        expect(r.status).toBe(406);
        return;
      }
      const enough: Record<Exclude<Format, 'yaml'>, (b: Buffer) => boolean> = {
        json: (b) => b.toString().includes('\n'),
        protobuf: (b) => b.length >= 4 && b.length >= 4 + b.readUInt32BE(0),
        cbor: (b) => {
          try {
            return codecs.cbor.decodeWatchStream(b).length > 0;
          } catch {
            return false;
          }
        },
      };
      const r = await watchBytes(server, path, format === 'protobuf' ? `${PB};stream=watch` : accept, enough[format], trigger);
      expect(r.status).toBe(200);
      const events =
        format === 'json'
          ? r.body
              .toString()
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l))
          : format === 'protobuf'
            ? codecs.protobuf.decodeWatchStream(r.body)
            : codecs.cbor.decodeWatchStream(r.body);
      expect(r.headers['content-type']).toBe({ json: 'application/json', protobuf: `${PB};stream=watch`, cbor: 'application/cbor-seq' }[format]);
      expect(events[0]).toMatchObject({ type: 'ADDED', object: { kind: 'ConfigMap', metadata: { name: wname } } });
    });
  });

  it('serves ReplicaSets (pod templates, quantities, selectors) identically in every format', async () => {
    const rs = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'formats', namespace: 'default' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'formats' } },
        template: {
          metadata: { labels: { app: 'formats' } },
          spec: { containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: '500m', memory: '1Gi' } } }] },
        },
      },
    };
    expect(
      (await request(server, 'POST', '/apis/apps/v1/namespaces/default/replicasets', { 'content-type': 'application/cbor' }, codecs.cbor.encode(rs))).status,
    ).toBe(201);
    const read = async (format: Format) =>
      decode(format, await request(server, 'GET', '/apis/apps/v1/namespaces/default/replicasets/formats', { accept: MEDIA[format] }));
    const json = await read('json');
    for (const format of ['yaml', 'cbor'] as const) expect(await read(format)).toEqual(json);
    // Protobuf carries the same object: the stored JSON, like upstream's, holds no omitempty
    // field at its zero value, which the protobuf decoder leaves out too.
    expect(json.spec).not.toHaveProperty('minReadySeconds');
    expect(await read('protobuf')).toEqual(json);
    expect(json.spec.template.spec.containers[0].resources.limits).toEqual({ cpu: '500m', memory: '1Gi' });
  });

  it('negotiates as upstream: q-values order only, parameters, pretty, 406 as raw indented JSON, 415', async () => {
    const get = (accept: string, query = '') => request(server, 'GET', `/api/v1/namespaces/default${query}`, { accept });
    expect((await get('application/json;q=0')).headers['content-type']).toBe('application/json');
    expect((await get('application/json;q=0.5, application/yaml')).headers['content-type']).toBe('application/yaml');
    expect((await get(`text/html, ${PB};q=0.1`)).headers['content-type']).toBe(PB);
    expect((await get('application/json;pretty=1')).body.toString()).toMatch(/^\{\n {2}"kind": "Namespace",\n {2}"apiVersion": "v1",\n/);
    expect((await get('application/json', '?pretty=true')).body.toString()).toContain('\n  "metadata": {\n');
    const refused = await get('text/html');
    expect(refused.status).toBe(406);
    expect(refused.body.toString()).toBe(
      '{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n  "status": "Failure",\n  "message": "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor",\n  "reason": "NotAcceptable",\n  "code": 406\n}',
    );
    const unsupported = await request(server, 'POST', CM, { 'content-type': 'text/csv', accept: 'application/json' }, 'a,b');
    expect(unsupported.status).toBe(415);
    expect(JSON.parse(unsupported.body.toString())).toMatchObject({
      reason: 'UnsupportedMediaType',
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor',
    });
  });
});

describe('CBOR with its gate off (the default)', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess(['--vendor', 'kubernetes', ...API_ONLY]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('is not offered: 406 for Accept, 415 for bodies and for apply-patch+cbor', async () => {
    const accept = await request(server, 'GET', '/api/v1/namespaces/default', { accept: 'application/cbor' });
    expect(accept.status).toBe(406);
    expect(JSON.parse(accept.body.toString()).message).toBe(
      'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    );
    const body = await request(
      server,
      'POST',
      '/api/v1/namespaces/default/configmaps',
      { 'content-type': 'application/cbor' },
      codecs.cbor.encode(configMap('x')),
    );
    expect(body.status).toBe(415);
    const apply = await request(
      server,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/x?fieldManager=m',
      { 'content-type': 'application/apply-patch+cbor' },
      codecs.cbor.encode(configMap('x')),
    );
    expect(apply.status).toBe(415);
    const watch = await request(server, 'GET', '/api/v1/namespaces?watch=1&timeoutSeconds=1', { accept: 'application/cbor' });
    expect(watch.status).toBe(406);
  });
});
