/**
 * A protobuf-speaking client over HTTP (issue 6 "Done when"): its messages come from protobufjs
 * types built from Keelson's own schema (src/codecs/protobuf/protobufjs-root.ts), with the
 * `k8s\0` prefix and `Unknown` envelope written by protobufjs too — nothing of the server's codec.
 * It creates ReplicaSets, watches them as length-prefixed WatchEvent frames, updates and deletes
 * one, and reads every event's object back.
 */
import https from 'node:https';
import protobuf from 'protobufjs';
import { protobufjsRoot } from '../../src/codecs/protobuf/protobufjs-root';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { eventually } from '../support/eventually';

const PB = 'application/vnd.kubernetes.protobuf';
const PREFIX = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** The client's protobuf vocabulary: the schema's types plus upstream's runtime.Unknown envelope. */
class ProtobufClient {
  readonly root = protobufjsRoot();
  private readonly Unknown = protobuf
    .parse(
      'syntax = "proto2"; message TypeMeta { optional string apiVersion = 1; optional string kind = 2; } message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }',
    )
    .root.lookupType('Unknown');
  readonly ReplicaSet = this.root.lookupType('apps.v1.ReplicaSet');
  readonly WatchEvent = this.root.lookupType('meta.v1.WatchEvent');
  readonly Status = this.root.lookupType('meta.v1.Status');

  constructor(private readonly server: ServerProcess) {}

  body(apiVersion: string, kind: string, type: protobuf.Type, message: Record<string, unknown>): Buffer {
    const raw = type.encode(type.fromObject(message)).finish();
    const envelope = this.Unknown.encode(this.Unknown.fromObject({ typeMeta: { apiVersion, kind }, raw, contentEncoding: '', contentType: '' })).finish();
    return Buffer.concat([PREFIX, envelope]);
  }

  /** The envelope's type and the object message, decoded with `type`. */
  open(body: Uint8Array, type: protobuf.Type): { apiVersion: string; kind: string; object: Record<string, any> } {
    expect(Buffer.from(body.subarray(0, 4))).toEqual(PREFIX);
    const envelope = this.Unknown.toObject(this.Unknown.decode(body.subarray(4)), { defaults: true }) as {
      typeMeta: { apiVersion: string; kind: string };
      raw: Uint8Array;
    };
    return { ...envelope.typeMeta, object: type.toObject(type.decode(envelope.raw), { longs: Number }) };
  }

  request(method: string, path: string, body?: Buffer): Promise<{ status: number; type: string; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { accept: PB };
      if (body) headers['content-type'] = PB;
      const { ca, cert, key } = this.server.admin;
      const req = https.request(`${this.server.url}${path}`, { method, headers, ca, cert, key, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  /** A watch: frames (4-byte big-endian length, then a WatchEvent) decoded as they arrive. */
  watch(path: string, onEvent: (type: string, rs: Record<string, any>) => void): { opened: Promise<string>; close(): void } {
    let pending = Buffer.alloc(0);
    let req!: ReturnType<typeof https.request>;
    const opened = new Promise<string>((resolve, reject) => {
      const { ca, cert, key } = this.server.admin;
      req = https.request(`${this.server.url}${path}`, { headers: { accept: `${PB};stream=watch` }, ca, cert, key, agent: false }, (res) => {
        resolve(String(res.headers['content-type']));
        res.on('data', (chunk: Buffer) => {
          pending = Buffer.concat([pending, chunk]);
          while (pending.length >= 4 && pending.length >= 4 + pending.readUInt32BE(0)) {
            const frame = pending.subarray(4, 4 + pending.readUInt32BE(0));
            pending = pending.subarray(4 + frame.length);
            const event = this.WatchEvent.toObject(this.WatchEvent.decode(frame)) as { type: string; object: { raw: Uint8Array } };
            onEvent(event.type, this.open(event.object.raw, this.ReplicaSet).object);
          }
        });
        res.on('error', () => {});
      });
      req.on('error', (e) => reject(e));
      req.end();
    });
    return { opened, close: () => req.destroy() };
  }
}

function replicaSet(name: string, replicas: number): Record<string, unknown> {
  return {
    metadata: { name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80, protocol: 'TCP' }] }] },
      },
    },
  };
}

describe('a protobufjs client creating and watching ReplicaSets', () => {
  let server: ServerProcess;
  let client: ProtobufClient;
  const RS = '/apis/apps/v1/namespaces/default/replicasets';

  beforeAll(async () => {
    server = await startServerProcess(['--vendor', 'kubernetes']);
    client = new ProtobufClient(server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('creates, watches, updates and deletes over protobuf', async () => {
    const created = await client.request('POST', RS, client.body('apps/v1', 'ReplicaSet', client.ReplicaSet, replicaSet('pb-one', 2)));
    expect(created.status).toBe(201);
    expect(created.type).toBe(PB);
    const one = client.open(created.body, client.ReplicaSet);
    expect(one).toMatchObject({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      object: { metadata: { name: 'pb-one', namespace: 'default' }, spec: { replicas: 2 } },
    });
    expect(one.object.metadata.uid).toBeTruthy();
    expect(one.object.spec.template.spec.containers[0]).toMatchObject({ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80, protocol: 'TCP' }] });

    const seen: string[] = [];
    const watch = client.watch(`${RS}?watch=true&resourceVersion=${one.object.metadata.resourceVersion}`, (type, rs) => {
      if (rs.metadata.name.startsWith('pb-')) seen.push(`${type} ${rs.metadata.name} ${rs.spec?.replicas}`);
    });
    expect(await watch.opened).toBe(`${PB};stream=watch`);

    expect((await client.request('POST', RS, client.body('apps/v1', 'ReplicaSet', client.ReplicaSet, replicaSet('pb-two', 1)))).status).toBe(201);
    const current = client.open((await client.request('GET', `${RS}/pb-one`)).body, client.ReplicaSet).object;
    current.spec.replicas = 5;
    const updated = await client.request('PUT', `${RS}/pb-one`, client.body('apps/v1', 'ReplicaSet', client.ReplicaSet, current));
    expect(updated.status).toBe(200);
    expect(client.open(updated.body, client.ReplicaSet).object.spec.replicas).toBe(5);
    expect((await client.request('DELETE', `${RS}/pb-two`)).status).toBe(200);

    await eventually(() => seen.some((s) => s.startsWith('DELETED pb-two')), { what: 'the DELETED event' });
    watch.close();
    expect(seen.filter((s) => !s.startsWith('MODIFIED pb-two'))).toEqual(expect.arrayContaining(['ADDED pb-two 1', 'MODIFIED pb-one 5', 'DELETED pb-two 1']));
    expect(seen.indexOf('ADDED pb-two 1')).toBeLessThan(seen.indexOf('DELETED pb-two 1'));

    const list = client.open((await client.request('GET', RS)).body, client.root.lookupType('apps.v1.ReplicaSetList'));
    expect(list.kind).toBe('ReplicaSetList');
    expect((list.object.items as { metadata: { name: string } }[]).map((i) => i.metadata.name)).toEqual(['pb-one']);
  });

  it('reads errors as a protobuf Status', async () => {
    const missing = await client.request('GET', `${RS}/absent`);
    expect(missing.status).toBe(404);
    expect(client.open(missing.body, client.Status)).toMatchObject({
      apiVersion: 'v1',
      kind: 'Status',
      object: { status: 'Failure', reason: 'NotFound', code: 404 },
    });
  });
});
