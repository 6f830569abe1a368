/**
 * The reference for reads: a bare node:https server with Keelson's TLS settings (same serving
 * certificate, client certificates requested and verified against the same CA, keep-alive),
 * answering each path with bytes held in memory, and fanning events out to held streams
 * (`/bare-watch`). Whatever Keelson spends beyond this is its own.
 *
 *   bare-server.js <dataDir>   (reads serving.crt, serving.key and ca.crt Keelson wrote there)
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { sendEvent, serveCalls } from './ipc';
import type { ServerStats } from './keelson-child';

interface Route {
  body: Buffer;
  contentType: string;
}

function stats(): ServerStats {
  const cpu = process.cpuUsage();
  const mem = process.memoryUsage();
  return { cpuUs: cpu.user + cpu.system, rss: mem.rss, heapUsed: mem.heapUsed, external: mem.external, maxRss: process.resourceUsage().maxRSS * 1024, hrtimeUs: Number(process.hrtime.bigint() / 1000n) };
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
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const event = Buffer.concat([EVENT_HEAD, ...chunks, EVENT_TAIL]);
    res.writeHead(201, { 'content-type': 'application/json', 'content-length': 2 });
    res.end('{}');
    for (const stream of fanOutStreams) stream.write(event);
  });
}

/**
 * Busy time added to every routed GET (`spin` call, µs): run at Keelson's request rate, the bare
 * server shows what Node, TLS and the kernel cost per request at that rate (a slower server's
 * writes wake a waiting client, which costs more than feeding a busy one).
 */
let spinNs = 0n;

function spin(ns: bigint): void {
  const until = process.hrtime.bigint() + ns;
  while (process.hrtime.bigint() < until);
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
    spin: (args: { us: number }) => {
      spinNs = BigInt(Math.round(args.us * 1000));
    },
    stats,
    gc: () => {
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      gc?.();
      return stats();
    },
  });
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

main();
