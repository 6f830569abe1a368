/**
 * Framed chunks written straight to the connection (`GatewayResponse.chunkWriter`, what a watch
 * uses to send one event's bytes to every watcher): over a real TLS server they arrive as the
 * chunked body node's client decodes, in order with `write`s around them, the body ends with
 * `end`, a full socket is waited for through `drain`, and the writer is offered only where the
 * response is a chunked body already on its connection.
 */
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ResponseEnds, toGatewayResponse } from '../../src/gateway/express-adapter';
import { frameChunk } from '../../src/gateway/types';
import { type HeldResponses, startHeldResponses } from '../support/held-responses';

let server: HeldResponses;

beforeAll(async () => {
  server = await startHeldResponses('keelson-chunks-');
});

afterAll(() => server.close());

async function hold(): Promise<ServerResponse> {
  const [res] = await server.hold(1);
  return res!;
}

/** A GET whose response the test reads as it likes. */
function request(): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const agent = new https.Agent({ ca: server.pki.caCert, keepAlive: false });
    https.get({ host: '127.0.0.1', port: server.port, path: '/', servername: 'localhost', agent }, resolve).on('error', reject);
  });
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (body += c));
    res.on('end', () => resolve(body));
    res.on('error', reject);
  });
}

test('frameChunk frames data as one HTTP/1.1 chunk', () => {
  expect(frameChunk(Buffer.from('hello')).toString('latin1')).toBe('5\r\nhello\r\n');
  expect(frameChunk(Buffer.alloc(300, 'a')).toString('latin1')).toBe(`12c\r\n${'a'.repeat(300)}\r\n`);
});

test('framed chunks arrive in order with writes around them, and end finishes the body', async () => {
  const answer = request();
  const node = await hold();
  const res = toGatewayResponse(node, new ResponseEnds());
  expect(res.chunkWriter!()).toBeUndefined(); // the head is not out yet
  res.setHeader('Content-Type', 'application/json');
  res.flushHeaders();
  const write = res.chunkWriter!()!;
  expect(write).toBeDefined();
  const shared = frameChunk(Buffer.from('{"b":2}\n'));
  expect(res.write(Buffer.from('{"a":1}\n'))).toBe(true);
  expect(write(shared)).toBe(true);
  expect(write(shared)).toBe(true);
  expect(res.write('{"c":3}\n')).toBe(true);
  res.end();
  const incoming = await answer;
  expect(incoming.headers['transfer-encoding']).toBe('chunked');
  expect(await readAll(incoming)).toBe('{"a":1}\n{"b":2}\n{"b":2}\n{"c":3}\n');
});

test('no writer for a body with a length, or once the response ended', async () => {
  const answer = request();
  const node = await hold();
  const res = toGatewayResponse(node, new ResponseEnds());
  res.setHeader('Content-Length', '2');
  res.flushHeaders();
  expect(res.chunkWriter!()).toBeUndefined();
  res.end('{}');
  expect(res.chunkWriter!()).toBeUndefined();
  expect(await readAll(await answer)).toBe('{}');
});

test('a socket that pushes back is waited for with drain, and nothing is lost', async () => {
  const answer = request();
  const node = await hold();
  const res = toGatewayResponse(node, new ResponseEnds());
  res.flushHeaders();
  const write = res.chunkWriter!()!;
  const chunk = frameChunk(Buffer.alloc(64 * 1024, 'x'));
  const incoming = await answer;
  const body = readAll(incoming);
  let written = 0;
  // Three times: write until the socket says wait, then wait for it (node's response itself
  // never emits 'drain' for these writes: a drain() that waited on it would never resolve).
  for (let round = 0; round < 3; round++) {
    let taken = true;
    while (taken) {
      taken = write(chunk);
      written++;
    }
    await res.drain();
  }
  res.end();
  expect((await body).length).toBe(written * 64 * 1024);
});
