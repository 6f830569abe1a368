/**
 * The reference for reads: a bare node:https server with Keelson's TLS settings (same serving
 * certificate, client certificates requested and verified against the same CA, keep-alive),
 * answering each path with bytes held in memory, and fanning events out to held streams
 * (`/bare-watch`). Whatever Keelson spends beyond this is its own.
 *
 * Given a store (the `floor` call), it is also the floor of a request that must reach the
 * store: a create (`POST /bare-create/...`) that parses the body, stamps the metadata, writes
 * it with one store create and answers the stored object; a get of a mapped path that reads
 * the key from the store (linearizable on etcd) and answers the stored bytes. That is the
 * least any API server in Node can do for those requests: what Keelson spends beyond it is
 * its own, what the floor spends beyond the store's own rate is Node's, TLS's and the
 * store client's. A get under `/bare-shared` is the floor of a consistent get served from
 * memory: it waits for a revision read shared with the gets around it (Keelson's own
 * SharedRevision, one linearizable etcd Range per batch) and answers the bytes held for the
 * path, so the difference to Keelson is Keelson's own work, the rest is Node's, TLS's and etcd's.
 *
 *   bare-server.js <dataDir>   (reads serving.crt, serving.key and ca.crt Keelson wrote there)
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Store, StoreError, type StoreOptions, createStore } from '../../src/store';
import { SharedRevision } from '../../src/core/cache/shared-revision';
import { sendEvent, serveCalls } from './ipc';
import { FLOOR_CREATE_PATH } from './processes';
import type { ServerStats } from './keelson-child';

interface Route {
  body: Buffer;
  contentType: string;
}

function stats(): ServerStats {
  const cpu = process.cpuUsage();
  const mem = process.memoryUsage();
  return {
    cpuUs: cpu.user + cpu.system,
    rss: mem.rss,
    heapUsed: mem.heapUsed,
    external: mem.external,
    maxRss: process.resourceUsage().maxRSS * 1024,
    hrtimeUs: Number(process.hrtime.bigint() / 1000n),
  };
}

/**
 * The reference for watch fan-out: a GET of this path is held open as a chunked stream; a POST
 * to it is acknowledged (201), then its body is written to every held stream as one
 * newline-terminated watch event, the least per-connection work node:https allows.
 */
const FAN_OUT_PATH = '/bare-watch';
const fanOutStreams = new Set<ServerResponse>();

function fanOut(req: IncomingMessage, res: ServerResponse): void {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    fanOutStreams.add(res);
    res.on('close', () => fanOutStreams.delete(res));
    return;
  }
  void readBody(req).then((body) => {
    const event = Buffer.concat([EVENT_HEAD, body, EVENT_TAIL]);
    res.writeHead(201, { 'content-type': 'application/json', 'content-length': 2 });
    res.end('{}');
    for (const stream of fanOutStreams) stream.write(event);
  });
}

/**
 * Busy time added to every routed GET and floor create (`spin` call, µs): run at Keelson's
 * request rate, the bare server shows what Node, TLS and the kernel (and, for a create, the
 * store's write) cost per request at that rate (a slower server's writes wake a waiting client,
 * which costs more than feeding a busy one, and a slower stream of creates shares fewer store
 * commits).
 */
let spinNs = 0n;

function spin(ns: bigint): void {
  const until = process.hrtime.bigint() + ns;
  while (process.hrtime.bigint() < until);
}

/** The floor's store, the paths it reads from it (path → key), and the managedFields it stamps. */
interface Floor {
  store: Store;
  keys: Map<string, string>;
  managedFields: unknown;
  /** The revision read the `/bare-shared` gets share. */
  revision: SharedRevision;
}

/** Paths under this prefix answer the routed bytes of the rest once a shared revision read is back. */
const SHARED_GET_PREFIX = '/bare-shared';

let floor: Floor | undefined;
/** The floor's revision reads so far and their time from sending to answer, as Keelson's `etcd_request_duration_seconds` counts its own. */
const revisionReads = { reads: 0, seconds: 0 };

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function answer(res: ServerResponse, status: number, body: Uint8Array): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.byteLength });
  res.end(body);
}

/**
 * One create at the floor: the body decoded once, the fields a server must set stamped on it
 * (the managedFields Keelson would record, as one shared object, so both store about the same
 * bytes), one store create, the stored object with its resourceVersion encoded as the answer.
 */
async function floorCreate(f: Floor, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const object = JSON.parse((await readBody(req)).toString('utf8')) as { metadata: Record<string, unknown> };
  const meta = object.metadata;
  meta.uid = randomUUID();
  meta.creationTimestamp = `${new Date().toISOString().slice(0, 19)}Z`;
  meta.generation = 1;
  meta.managedFields = f.managedFields;
  if (spinNs > 0n) spin(spinNs);
  try {
    const kv = await f.store.create(`/registry/bare-create/${meta.namespace}/${meta.name}`, Buffer.from(JSON.stringify(object)));
    meta.resourceVersion = String(kv.modRevision);
    answer(res, 201, Buffer.from(JSON.stringify(object)));
  } catch (err) {
    answer(res, StoreError.is(err, 'exists') ? 409 : 500, Buffer.from(JSON.stringify({ kind: 'Status', message: String(err) })));
  }
}

async function floorGet(f: Floor, key: string, res: ServerResponse): Promise<void> {
  try {
    const { kv } = await f.store.get(key);
    if (kv) answer(res, 200, kv.value);
    else answer(res, 404, Buffer.from('{"kind":"Status","code":404}'));
  } catch (err) {
    answer(res, 500, Buffer.from(JSON.stringify({ kind: 'Status', message: String(err) })));
  }
}

async function sharedGet(f: Floor, route: Route, res: ServerResponse): Promise<void> {
  try {
    await f.revision.get();
    res.writeHead(200, { 'content-type': route.contentType, 'content-length': route.body.length });
    res.end(route.body);
  } catch (err) {
    answer(res, 500, Buffer.from(JSON.stringify({ kind: 'Status', message: String(err) })));
  }
}

const EVENT_HEAD = Buffer.from('{"type":"ADDED","object":');
const EVENT_TAIL = Buffer.from('}\n');

function main(): void {
  const dataDir = process.argv[2];
  const read = (file: string) => readFileSync(path.join(dataDir, file), 'utf8');
  const routes = new Map<string, Route>();
  const notFound = Buffer.from('404 page not found\n');
  const server = https.createServer(
    { cert: read('serving.crt'), key: read('serving.key'), ca: read('ca.crt'), requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2' },
    (req, res) => {
      if (req.url === FAN_OUT_PATH) return fanOut(req, res);
      if (floor) {
        if (req.method === 'POST' && req.url?.startsWith(FLOOR_CREATE_PATH)) return void floorCreate(floor, req, res);
        const key = floor.keys.get(req.url ?? '');
        if (key !== undefined) return void floorGet(floor, key, res);
        if (req.url?.startsWith(SHARED_GET_PREFIX)) {
          const shared = routes.get(req.url.slice(SHARED_GET_PREFIX.length));
          if (shared) return void sharedGet(floor, shared, res);
        }
      }
      const route = routes.get(req.url ?? '');
      if (!route) {
        res.writeHead(404, { 'content-type': 'text/plain', 'content-length': notFound.length });
        res.end(notFound);
        return;
      }
      if (spinNs > 0n) spin(spinNs);
      res.writeHead(200, { 'content-type': route.contentType, 'content-length': route.body.length });
      res.end(route.body);
    },
  );
  server.listen(0, '127.0.0.1', () => sendEvent({ event: 'listening', port: (server.address() as AddressInfo).port }));
  serveCalls({
    route: (args: { path: string; body: Uint8Array; contentType: string }) => {
      routes.set(args.path, { body: Buffer.from(args.body.buffer, args.body.byteOffset, args.body.byteLength), contentType: args.contentType });
    },
    floor: async (args: { store: StoreOptions; keys?: Record<string, string>; managedFields?: unknown }) => {
      if (!floor) {
        const store = createStore(args.store);
        floor = {
          store,
          keys: new Map(),
          managedFields: args.managedFields,
          revision: new SharedRevision(() => {
            const sent = performance.now();
            return store.currentRevision().finally(() => {
              revisionReads.reads++;
              revisionReads.seconds += (performance.now() - sent) / 1000;
            });
          }),
        };
      }
      for (const [p, key] of Object.entries(args.keys ?? {})) {
        if (!(await floor.store.get(key)).kv) throw new Error(`floor: no key ${key} for ${p}`);
        floor.keys.set(p, key);
      }
    },
    spin: (args: { us: number }) => {
      spinNs = BigInt(Math.round(args.us * 1000));
    },
    stats,
    revisionReads: () => ({ ...revisionReads }),
    gc: () => {
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      gc?.();
      return stats();
    },
  });
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => void (floor?.store.close() ?? Promise.resolve()).finally(() => process.exit(0)));
  });
}

main();
