/**
 * The node adapter's response keeps its headers until the head goes out, then hands them to
 * node in one writeHead (express-adapter.ts). What a client reads must be what node's own
 * setHeader would have sent: a name set again replaces its value whatever its case, a list
 * goes out as repeated lines, a bad header fails where it is set, and headers set once the
 * head went out fail as node fails them.
 */
import { once } from 'node:events';
import http, { type ServerResponse } from 'node:http';
import net from 'node:net';
import { ResponseEnds, toGatewayResponse } from '../../src/gateway/express-adapter';
import type { GatewayResponse } from '../../src/gateway/types';
import { closeServer, listenOnLoopback } from '../support/loopback-server';

let server: http.Server;
let port: number;
let handler: (res: GatewayResponse, raw: ServerResponse) => void = () => {};

beforeAll(async () => {
  server = http.createServer((_req, res) => handler(toGatewayResponse(res, new ResponseEnds()), res));
  port = await listenOnLoopback(server);
});

afterAll(() => closeServer(server));

/** The raw response (head and body) to one GET, as the client reads it. */
async function rawResponse(): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  await once(socket, 'end');
  return Buffer.concat(chunks).toString('latin1');
}

function headLines(raw: string): string[] {
  return raw.slice(0, raw.indexOf('\r\n\r\n')).split('\r\n');
}

test('headers go out in the order first set, a name set again keeps its place and takes the new value', async () => {
  handler = (res) => {
    res.setHeader('Audit-Id', 'a');
    res.setHeader('Content-Type', 'text/plain');
    res.setHeader('content-type', 'application/json');
    res.setHeader('Content-Length', '2');
    res.writeHead(201);
    res.end('{}');
  };
  const lines = headLines(await rawResponse());
  expect(lines[0]).toBe('HTTP/1.1 201 Created');
  expect(lines.slice(1, 4)).toEqual(['Audit-Id: a', 'Content-Type: application/json', 'Content-Length: 2']);
  expect(lines.filter((l) => /^content-type:/i.test(l))).toHaveLength(1);
});

test('a list of values goes out as one line each', async () => {
  handler = (res) => {
    res.setHeader('Warning', ['299 - "one"', '299 - "two"']);
    res.end('');
  };
  expect(headLines(await rawResponse()).filter((l) => l.startsWith('Warning:'))).toEqual(['Warning: 299 - "one"', 'Warning: 299 - "two"']);
});

test('a bad header fails where it is set, and the response still goes out', async () => {
  const errors: string[] = [];
  handler = (res) => {
    for (const [name, value] of [
      ['Bad Name', 'x'],
      ['X-Value', 'line\nbreak'],
      ['X-List', ['fine', 'bad\r\n']],
    ] as const) {
      try {
        res.setHeader(name, value);
      } catch (err) {
        errors.push((err as NodeJS.ErrnoException).code!);
      }
    }
    res.setHeader('Content-Length', '2');
    res.end('ok');
  };
  const raw = await rawResponse();
  expect(errors).toEqual(['ERR_INVALID_HTTP_TOKEN', 'ERR_INVALID_CHAR', 'ERR_INVALID_CHAR']);
  expect(raw.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
  expect(raw.endsWith('\r\n\r\nok')).toBe(true);
  expect(raw).not.toMatch(/X-List|X-Value/);
});

test('flushHeaders sends the headers set so far; setting one afterwards fails as node fails it', async () => {
  let late: string | undefined;
  handler = (res) => {
    res.setHeader('Content-Type', 'application/json');
    res.writeHead(200);
    res.flushHeaders();
    expect(res.headersSent).toBe(true);
    try {
      res.setHeader('X-Late', '1');
    } catch (err) {
      late = (err as NodeJS.ErrnoException).code;
    }
    res.write('{"a":');
    res.end('1}');
  };
  const raw = await rawResponse();
  expect(late).toBe('ERR_HTTP_HEADERS_SENT');
  expect(headLines(raw)).toContain('Content-Type: application/json');
  expect(raw).not.toContain('X-Late');
  expect(raw).toContain('{"a":');
});

test('the status is the one last given to writeHead, 200 without one', async () => {
  handler = (res) => {
    expect(res.statusCode).toBe(200);
    res.writeHead(404);
    res.writeHead(410);
    expect(res.statusCode).toBe(410);
    expect(res.headersSent).toBe(false);
    res.end();
  };
  expect(headLines(await rawResponse())[0]).toBe('HTTP/1.1 410 Gone');
});
