/**
 * A streamed list over a real TLS socket to a client that reads slowly: the server fills its
 * batch buffer again only once the socket has drained, so what a slow reader gets is byte for
 * byte what a fast one gets, plain and through gzip (the real server process, embedded store).
 */
import https from 'node:https';
import { gunzipSync } from 'node:zlib';
import { API_ONLY, type ServerProcess, startServerProcess } from './support/server-process';
import { httpsRequest } from './support/https-client';

const COUNT = 1200;
const PATH = '/api/v1/namespaces/default/configmaps';
let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess(API_ONLY);
  // Items of varied size and text, so a batch written from a buffer filled too early would show.
  for (let i = 0; i < COUNT; i += 100) {
    await Promise.all(
      Array.from({ length: 100 }, async (_, j) => {
        const n = i + j;
        const body = JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `cm-${String(n).padStart(5, '0')}` },
          data: { v: `${n}:`.repeat(1 + (n % 211)) },
        });
        const res = await httpsRequest(`${server.url}${PATH}`, server.admin, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
        if (res.status !== 201) throw new Error(`create ${n}: ${res.status} ${res.body}`);
      }),
    );
  }
}, 120_000);

afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

/** GET the list, reading one chunk at a time with a pause after each when `slow`. */
function list(headers: Record<string, string>, slow: boolean): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = https.request(`${server.url}${PATH}`, { headers, ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (!slow) return;
        res.pause();
        setTimeout(() => res.resume(), 2); // a slow reader is the point: it pauses after every chunk
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * The bytes from `"items":[` on. The list's own resourceVersion is the store's current revision,
 * which any write elsewhere moves between two lists (a lease, an event): the items' are theirs.
 */
function items(body: Buffer): Buffer {
  const at = body.indexOf('"items":[');
  expect(at).toBeGreaterThan(0);
  expect(JSON.parse(`${body.subarray(0, at - 1).toString('utf8')}}`)).toMatchObject({
    kind: 'ConfigMapList',
    apiVersion: 'v1',
    metadata: { resourceVersion: expect.stringMatching(/^\d+$/) },
  });
  return body.subarray(at);
}

/** Where two bodies first differ, with the text around it; undefined when they are the same. */
function difference(a: Buffer, b: Buffer): string | undefined {
  if (a.equals(b)) return undefined;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const around = (x: Buffer) => JSON.stringify(x.subarray(Math.max(0, i - 60), i + 60).toString('utf8'));
  return `at byte ${i} of ${a.length} / ${b.length}: ${around(a)} vs ${around(b)}`;
}

test('a slow reader gets the same bytes as a fast one, every item intact, plain and gzip', async () => {
  const fast = await list({ accept: 'application/json' }, false);
  expect(fast.status).toBe(200);
  expect(fast.headers['content-length']).toBeUndefined();
  const parsed = JSON.parse(fast.body.toString('utf8')) as { items: Array<{ metadata: { name: string }; data: { v: string } }> };
  expect(parsed.items).toHaveLength(COUNT);
  parsed.items.forEach((item, n) => {
    expect(item.metadata.name).toBe(`cm-${String(n).padStart(5, '0')}`);
    expect(item.data.v).toBe(`${n}:`.repeat(1 + (n % 211)));
  });
  const slow = await list({ accept: 'application/json' }, true);
  expect(difference(items(slow.body), items(fast.body))).toBeUndefined();
  const zipped = await list({ accept: 'application/json', 'accept-encoding': 'gzip' }, true);
  expect(zipped.headers['content-encoding']).toBe('gzip');
  expect(difference(items(gunzipSync(zipped.body)), items(fast.body))).toBeUndefined();
}, 60_000);
