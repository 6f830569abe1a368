/**
 * When a response counts as sent, for the in-flight limits (steps/limits.ts holds a request's slot
 * until then): over a real TLS socket, a small answer at once after end() (its TLS write
 * completes a tick later, though the kernel took it), a large answer to a client that reads
 * nothing only once the client has read it.
 */
import { once } from 'node:events';
import https from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import type { ServerResponse } from 'node:http';
import { ResponseEnds, toGatewayResponse } from '../../src/gateway/express-adapter';
import { type Pki, ensurePki } from '../../src/server/pki';
import { closeServer, listenOnLoopback } from '../support/loopback-server';

let dir: string;
let pki: Pki;
let server: https.Server;
let port: number;
const answered: Array<(res: ServerResponse) => void> = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-flushed-'));
  pki = await ensurePki({ dataDir: dir });
  server = https.createServer({ key: pki.servingKey, cert: pki.servingCert }, (req, res) => {
    const size = Number(req.url?.slice(1));
    res.setHeader('content-length', String(size));
    res.end(Buffer.alloc(size, 'x'));
    answered.shift()!(res);
  });
  port = await listenOnLoopback(server);
});

afterAll(async () => {
  closeServer(server);
  await rm(dir, { recursive: true, force: true });
});

/** Ask for `size` bytes on a raw TLS socket, reading nothing back until told to. */
async function ask(size: number): Promise<{ res: ServerResponse; socket: tls.TLSSocket }> {
  const res = new Promise<ServerResponse>((resolve) => answered.push(resolve));
  const socket = tls.connect({ host: '127.0.0.1', port, ca: pki.caCert, servername: 'localhost' });
  await once(socket, 'secureConnect');
  socket.pause();
  socket.write(`GET /${size} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
  return { res: await res, socket };
}

test('a small answer counts as sent as soon as it ended', async () => {
  const { res, socket } = await ask(2800);
  expect(res.socket?.writableLength).toBeGreaterThan(0);
  expect(toGatewayResponse(res, new ResponseEnds()).whenFlushed()).toBeUndefined();
  socket.destroy();
});

test('a large answer to a client that reads nothing counts as sent only once it is read', async () => {
  const { res, socket } = await ask(8 * 1024 * 1024);
  const flushed = toGatewayResponse(res, new ResponseEnds()).whenFlushed();
  expect(flushed).toBeInstanceOf(Promise);
  let done = false;
  void flushed!.then(() => (done = true));
  // The pause is the point: a client that reads nothing for a while must leave the answer unflushed.
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(done).toBe(false);
  socket.resume();
  await flushed;
  expect(done).toBe(true);
  socket.destroy();
});
