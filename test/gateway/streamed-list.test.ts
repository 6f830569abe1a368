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

/** Start a list and drop the connection after its first chunk; resolves once the client saw that chunk. */
function abandonedList(): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = https.request(`${server.url}${PATH}`, { ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
      res.on('error', () => undefined);
    });
    req.on('close', () => resolve());
    req.once('error', reject);
    req.end();
  });
}

test('lists streamed at once take turns (write-turns.ts): each intact, and a client that goes away mid-list holds up no other', async () => {
  const alone = await list({ accept: 'application/json' }, false);
  // Fast and slow readers, plain and gzip, and clients that leave after the first chunk, all at once.
  const [lists] = await Promise.all([
    Promise.all([
      list({ accept: 'application/json' }, false),
      list({ accept: 'application/json' }, true),
      list({ accept: 'application/json', 'accept-encoding': 'gzip' }, false),
      list({ accept: 'application/json' }, false),
    ]),
    Promise.all([abandonedList(), abandonedList(), abandonedList()]),
  ]);
  expect(lists.map((l) => l.status)).toEqual([200, 200, 200, 200]);
  for (const l of lists) {
    const body = l.headers['content-encoding'] === 'gzip' ? gunzipSync(l.body) : l.body;
    expect(difference(items(body), items(alone.body))).toBeUndefined();
  }
  // The turns the abandoned lists held were given back: a list afterwards still completes whole.
  const after = await list({ accept: 'application/json' }, false);
  expect(difference(items(after.body), items(alone.body))).toBeUndefined();
}, 60_000);
