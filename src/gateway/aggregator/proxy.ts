/**
 * The aggregator's proxy (upstream's proxyHandler): a request under `/apis/<group>/<version>`
 * whose APIService names a Service goes to the extension server behind it, after this server
 * authenticated and authorized it (the step runs after authorization, so a caller without
 * permission never reaches the extension). The end user travels in `X-Remote-User`,
 * `X-Remote-Group` and `X-Remote-Extra-<key>`; the caller's `Authorization`, impersonation and
 * `X-Remote-*` headers do not. The answer streams back as it comes (a watch stays open).
 * An APIService not Available or a Service that does not resolve: 503 `service unavailable`;
 * a backend that cannot be reached, sends no answer within the timeout or no HTTP: 503 with
 * the error — plain text, as upstream's proxyError and responder write them with Go's
 * http.Error — without touching other groups.
 */
import * as https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Clock } from '../../clock';
import { type APIService, isAPIServiceAvailable } from '../../core';
import type { Exchange, Handler, UpgradeConnection } from '../types';
import { authProxyHeaders, type ProxyClientCertificate, type ResolvedService, type ServiceResolver, serviceRef, tlsOptionsFor } from './transport';

/** Headers that belong to one connection (Go's reverse proxy drops them), and what we never forward. */
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'authorization',
]);
const NOT_RETURNED = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** The body a proxied request may carry when the door cannot stream it (the audit step keeping request bodies reads it whole). */
export const PROXIED_BODY_LIMIT_BYTES = 3 * 1024 * 1024;

export interface ProxyOptions {
  resolver: ServiceResolver;
  proxyClient?: () => ProxyClientCertificate | undefined;
  clock: Clock;
  /** How long the extension server has to start answering (default 30 s). */
  responseTimeoutMs?: number;
  /** Marks requests this server proxied, so one that comes back is refused, not sent again. */
  loopHeader: { name: string; value: string };
}

export const UNAVAILABLE = 'service unavailable';

/** Go's http.Error: the message and a newline as plain text, not sniffed. */
function proxyError(exchange: Exchange, message: string, code: number): void {
  const response = exchange.response;
  response.setHeader('Content-Type', 'text/plain; charset=utf-8');
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.writeHead(code);
  response.end(exchange.request.method === 'HEAD' ? undefined : `${message}\n`);
}

/** A failed round trip in the words of Go's transport where they differ from node's. */
function backendError(err: Error & { code?: string }, authority: string): string {
  if (err.code === 'ECONNREFUSED') return `dial tcp ${authority}: connect: connection refused`;
  if (err.code === 'HPE_INVALID_CONSTANT' || err.code?.startsWith('HPE_')) return `net/http: HTTP/1.x transport connection broken: ${err.message}`;
  return err.message;
}

/** Go's url.Values.Encode: keys sorted, values in order. */
function encodeQuery(query: URLSearchParams): string {
  const keys = [...new Set(query.keys())].sort();
  const out = new URLSearchParams();
  for (const key of keys) for (const value of query.getAll(key)) out.append(key, value);
  return out.toString();
}

function requestPath(exchange: Exchange): string {
  const path = exchange.request.path.split('/').map(encodeURIComponent).join('/');
  const query = encodeQuery(exchange.request.query);
  return query ? `${path}?${query}` : path;
}

/** The caller's address as Go writes it in `X-Forwarded-For` (an IPv4 address mapped into IPv6 as itself). */
function clientIp(address: string | undefined): string | undefined {
  return address?.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/**
 * The headers that go to the extension server: the caller's, less what belongs to one connection
 * (kept for an upgrade, which asks for one) and its credentials, plus the identity headers, the
 * caller's address appended to `X-Forwarded-For` (Go's reverse proxy and upstream's upgrade
 * dial both do) and the loop marker.
 */
function forwardedHeaders(exchange: Exchange, user: NonNullable<Exchange['user']>, options: ProxyOptions, upgrade: boolean): Record<string, string | string[]> {
  const req = exchange.request;
  const headers: Record<string, string | string[]> = {};
  const add = (name: string, value: string) => {
    const had = headers[name];
    headers[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  };
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith('impersonate-') || name.startsWith('x-remote-') || name === 'x-forwarded-for') continue;
    if (NOT_FORWARDED.has(name) && !(upgrade && (name === 'connection' || name === 'upgrade'))) continue;
    add(name, value);
  }
  const ip = clientIp(req.remoteAddress);
  const prior = req.headers['x-forwarded-for'];
  if (ip) add('x-forwarded-for', prior ? `${prior}, ${ip}` : ip);
  else if (prior) add('x-forwarded-for', prior);
  for (const [name, value] of authProxyHeaders(user)) add(name, value);
  add(options.loopHeader.name, options.loopHeader.value);
  return headers;
}

/** How the extension server answered: a response, a switch of protocols (an upgrade), or an error before either. */
type RoundTrip =
  | { response: IncomingMessage }
  | { switched: IncomingMessage; socket: Duplex; head: Buffer }
  | { error: Error & { code?: string }; connected: boolean };

/**
 * Send the request (its body streamed when the door gives it as a stream, else read whole up to
 * PROXIED_BODY_LIMIT_BYTES) and wait for the answer's head. The timeout runs from the start and
 * again from the moment the body has been sent; a caller that goes away ends the attempt.
 */
async function roundTrip(
  exchange: Exchange,
  apiService: APIService,
  resolved: ResolvedService,
  headers: Record<string, string | string[]>,
  options: ProxyOptions,
): Promise<RoundTrip> {
  const req = exchange.request;
  const hasBody = !req.upgrade && req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'OPTIONS';
  const stream = hasBody ? req.bodyStream?.() : undefined;
  const body = hasBody && !stream ? await req.readBody(PROXIED_BODY_LIMIT_BYTES) : undefined;
  return new Promise<RoundTrip>((resolve) => {
    const outgoing = https.request({
      ...tlsOptionsFor(apiService, resolved, options.proxyClient?.()),
      method: req.method,
      path: requestPath(exchange),
      headers,
      agent: false,
    });
    let connected = false;
    outgoing.once('socket', (socket) => socket.once('secureConnect', () => (connected = true)));
    const timeoutMs = options.responseTimeoutMs ?? 30_000;
    const expire = () => outgoing.destroy(new Error('timed out awaiting response headers'));
    let cancelTimer = options.clock.setTimeout(expire, timeoutMs);
    outgoing.once('finish', () => {
      cancelTimer();
      cancelTimer = options.clock.setTimeout(expire, timeoutMs);
    });
    const onAbort = () => outgoing.destroy(new Error('client went away'));
    req.signal.addEventListener('abort', onAbort, { once: true });
    const settle = (outcome: RoundTrip) => {
      cancelTimer();
      req.signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    outgoing.on('response', (response) => settle({ response }));
    outgoing.on('upgrade', (switched, socket, head) => settle({ switched, socket, head }));
    outgoing.on('error', (error) => settle({ error, connected }));
    if (stream) stream.pipe(outgoing);
    else outgoing.end(body);
  });
}

/** Stream the extension server's answer to the caller; resolves when it ended (or broke). */
async function relay(exchange: Exchange, upstream: IncomingMessage): Promise<void> {
  const req = exchange.request;
  const response = exchange.response;
  for (const [name, value] of Object.entries(upstream.headers)) {
    if (value === undefined || NOT_RETURNED.has(name)) continue;
    response.setHeader(name, value);
  }
  response.writeHead(upstream.statusCode ?? 502);
  response.flushHeaders();
  await new Promise<void>((resolve) => {
    const abort = () => upstream.destroy();
    req.signal.addEventListener('abort', abort, { once: true });
    upstream.on('data', (chunk: Buffer) => {
      if (!response.write(chunk)) {
        upstream.pause();
        void response.drain().then(() => upstream.resume());
      }
    });
    upstream.on('end', () => {
      req.signal.removeEventListener('abort', abort);
      response.end();
      resolve();
    });
    // The answer broke after its head went out (or the caller went away and it was dropped):
    // all that is left is to drop the connection. A destroyed answer ends with 'close' alone.
    upstream.on('close', () => {
      if (upstream.complete) return;
      req.signal.removeEventListener('abort', abort);
      response.abort();
      resolve();
    });
    upstream.on('error', () => undefined);
  });
}

/**
 * The extension server switched protocols: its `101` goes to the caller as it came (status line,
 * headers, and anything it sent after them), then bytes go both ways until one side is done,
 * which closes both (upstream's UpgradeAwareHandler, after it hijacked the connection).
 */
function switchProtocols(connection: UpgradeConnection, switched: IncomingMessage, backend: Duplex, backendHead: Buffer): void {
  const { socket: client, head } = connection.take(101);
  let raw = `HTTP/${switched.httpVersion} ${switched.statusCode} ${switched.statusMessage}\r\n`;
  const rawHeaders = switched.rawHeaders;
  for (let i = 0; i < rawHeaders.length; i += 2) raw += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  client.write(`${raw}\r\n`, 'latin1');
  if (backendHead.length > 0) client.write(backendHead);
  if (head.length > 0) backend.write(head);
  let closing = false;
  // Both connections close: at once when one broke, else each once what was written to it is out.
  const close = (graceful: boolean) => {
    if (closing) return;
    closing = true;
    for (const socket of [client, backend]) {
      if (graceful && typeof (socket as Partial<Socket>).destroySoon === 'function') (socket as Socket).destroySoon();
      else socket.destroy();
    }
  };
  for (const [from, to] of [
    [client, backend],
    [backend, client],
  ] as const) {
    from.pipe(to);
    // One side ended what it sends: as upstream, the tunnel closes (what is on its way still arrives).
    from.on('end', () => close(true));
    from.on('error', () => close(false));
    // Gone without an end (reset, destroyed): nothing more can go either way.
    from.on('close', () => from.readableEnded || close(false));
  }
}

/** Proxy one request to the APIService's extension server. */
export async function proxyToAPIService(exchange: Exchange, apiService: APIService, options: ProxyOptions): Promise<void> {
  if (!isAPIServiceAvailable(apiService)) return proxyError(exchange, UNAVAILABLE, 503);
  const user = exchange.user;
  if (!user) return proxyError(exchange, 'missing user', 500);
  let resolved;
  try {
    resolved = await options.resolver.resolve(serviceRef(apiService));
  } catch {
    return proxyError(exchange, UNAVAILABLE, 503);
  }
  const authority = resolved.host.includes(':') ? `[${resolved.host}]:${resolved.port}` : `${resolved.host}:${resolved.port}`;
  const upgrade = exchange.request.upgrade;
  const outcome = await roundTrip(exchange, apiService, resolved, forwardedHeaders(exchange, user, options, upgrade !== undefined), options);
  if ('error' in outcome) {
    const message = backendError(outcome.error, authority);
    // upstream's upgrade path dials first, and says so when that fails.
    return proxyError(exchange, upgrade && !outcome.connected ? `error dialing backend: ${message}` : message, 503);
  }
  if ('switched' in outcome) {
    // Answered meanwhile (the request timeout): the switch comes too late.
    if (!upgrade || exchange.response.headersSent) {
      outcome.socket.destroy();
      return;
    }
    return switchProtocols(upgrade, outcome.switched, outcome.socket, outcome.head);
  }
  // An upgrade the extension server did not make: its error is relayed, anything else is not an answer to an upgrade.
  const status = outcome.response.statusCode ?? 0;
  if (upgrade && status < 400) {
    outcome.response.destroy();
    return proxyError(exchange, `invalid upgrade response: status code ${status}`, 503);
  }
  return relay(exchange, outcome.response);
}

/**
 * The step: requests for a remote APIService's group version are proxied, a remote group's
 * `/apis/<group>` is answered from the APIServices (`serveGroup`), everything else goes on.
 */
export function aggregatorStep(options: {
  remote: (group: string, version: string) => APIService | undefined;
  serveGroup: (exchange: Exchange, group: string) => boolean;
  proxy: ProxyOptions;
}): (next: Handler) => Handler {
  const loop = options.proxy.loopHeader.name.toLowerCase();
  return (next) => (exchange) => {
    const path = exchange.request.path;
    if (!path.startsWith('/apis/')) return next(exchange);
    const [, , group = '', version = ''] = path.split('/');
    if (group === '') return next(exchange);
    if (version === '') return options.serveGroup(exchange, group) ? undefined : next(exchange);
    const apiService = options.remote(group, version);
    if (!apiService) return next(exchange);
    // A request this server sent out and got back (an APIService that names this server):
    // sending it again would never end.
    if (exchange.request.headers[loop] === options.proxy.loopHeader.value) return proxyError(exchange, UNAVAILABLE, 503);
    return proxyToAPIService(exchange, apiService, options.proxy);
  };
}
