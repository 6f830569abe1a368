/**
 * Response compression through the running server (docs/API.md, "Content negotiation" 6): with
 * `APIResponseCompression` on (the default) get and list responses over upstream's 128 KiB
 * threshold come gzipped to clients that accept gzip, smaller ones and watches do not; with the
 * gate off nothing is compressed. kubectl (whose Go transport asks for gzip) reads both.
 */
import { execFile } from 'node:child_process';
import https from 'node:https';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { API_ONLY, startServerProcess, type ServerProcess } from '../gateway/support/server-process';

const run = promisify(execFile);
const CM = '/api/v1/namespaces/default/configmaps';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function request(server: ServerProcess, method: string, path: string, headers: Record<string, string>, body?: string, stopAfter?: number): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const { ca, cert, key } = server.admin;
    const req = https.request(`${server.url}${path}`, { method, headers, ca, cert, key, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      const finish = () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        if (stopAfter !== undefined && Buffer.concat(chunks).length >= stopAfter) {
          req.destroy();
          finish();
        }
      });
      res.on('end', finish);
    });
    req.on('error', (e) => (stopAfter === undefined ? reject(e) : undefined));
    req.end(body);
  });
}

/** Three ConfigMaps of 60 KB each: their list is over the threshold, each one under it. */
async function fill(server: ServerProcess): Promise<void> {
  for (const i of [1, 2, 3]) {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { blob: 'x'.repeat(60 * 1024) } };
    const r = await request(server, 'POST', CM, { 'content-type': 'application/json' }, JSON.stringify(cm));
    expect(r.status).toBe(201);
  }
}

describe('compression with APIResponseCompression on (default)', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess(['--vendor', 'kubernetes', ...API_ONLY]);
    await fill(server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('gzips a list over 128 KiB for a gzip client, with Content-Encoding and Vary', async () => {
    const r = await request(server, 'GET', CM, { accept: 'application/json', 'accept-encoding': 'gzip' });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.headers.vary).toBe('Accept-Encoding');
    const text = gunzipSync(r.body).toString('utf8');
    expect(text.length).toBeGreaterThan(128 * 1024);
    expect(r.body.length).toBeLessThan(text.length / 10);
    expect(JSON.parse(text).items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['big-1', 'big-2', 'big-3']);
  });

  it('gzips protobuf and Table lists alike, and nothing for clients without gzip', async () => {
    const pb = await request(server, 'GET', CM, { accept: 'application/vnd.kubernetes.protobuf', 'accept-encoding': 'deflate, gzip' });
    expect(pb.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(pb.body).subarray(0, 4)).toEqual(Buffer.from([0x6b, 0x38, 0x73, 0x00]));
    const table = await request(server, 'GET', `${CM}?includeObject=Object`, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
      'accept-encoding': 'gzip',
    });
    expect(JSON.parse(gunzipSync(table.body).toString()).kind).toBe('Table');
    const plain = await request(server, 'GET', CM, { accept: 'application/json' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(plain.body.toString()).items).toHaveLength(3);
    const qualified = await request(server, 'GET', CM, { 'accept-encoding': 'gzip;q=1.0' });
    expect(qualified.headers['content-encoding']).toBeUndefined();
  });

  it('leaves responses under the threshold and watches uncompressed', async () => {
    const one = await request(server, 'GET', `${CM}/big-1`, { 'accept-encoding': 'gzip' });
    expect(one.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(one.body.toString()).metadata.name).toBe('big-1');
    const watch = await request(server, 'GET', `${CM}?watch=1`, { 'accept-encoding': 'gzip' }, undefined, 3 * 60 * 1024);
    expect(watch.status).toBe(200);
    expect(watch.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(watch.body.toString().split('\n')[0]!)).toMatchObject({ type: 'ADDED', object: { kind: 'ConfigMap' } });
  });

  it('is transparent to kubectl', async () => {
    const { stdout } = await run('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, 'get', 'configmaps', '-o', 'name'], { timeout: 30_000 });
    expect(stdout.split('\n').filter((l) => l.startsWith('configmap/big-'))).toHaveLength(3);
  });
});

describe('compression with APIResponseCompression=false', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess(['--vendor', 'kubernetes', '--feature-gates', 'APIResponseCompression=false', ...API_ONLY]);
    await fill(server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('never compresses', async () => {
    const r = await request(server, 'GET', CM, { 'accept-encoding': 'gzip' });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(r.body.toString()).items).toHaveLength(3);
  });
});
