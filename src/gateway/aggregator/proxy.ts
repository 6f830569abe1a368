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
import type { Clock } from '../../clock';
import { type APIService, isAPIServiceAvailable } from '../../core';
import type { Exchange, Handler } from '../types';
import { authProxyHeaders, type ProxyClientCertificate, type ServiceResolver, serviceRef, tlsOptionsFor } from './transport';

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

/** The body a proxied request may carry (read before sending; upstream streams it). */
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
  const req = exchange.request;
  const headers: [string, string][] = [];
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || NOT_FORWARDED.has(name) || name.startsWith('impersonate-') || name.startsWith('x-remote-')) continue;
    headers.push([name, value]);
  }
  headers.push(...authProxyHeaders(user));
  headers.push([options.loopHeader.name, options.loopHeader.value]);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'OPTIONS';
  const body = hasBody ? await req.readBody(PROXIED_BODY_LIMIT_BYTES) : undefined;

  const roundTrip = await new Promise<{ response: IncomingMessage } | { error: Error }>((resolve) => {
    const outgoing = https.request({
      ...tlsOptionsFor(apiService, resolved, options.proxyClient?.()),
      method: req.method,
      path: requestPath(exchange),
      headers: headers.reduce<Record<string, string | string[]>>((all, [name, value]) => {
        const had = all[name];
        all[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
        return all;
      }, {}),
      agent: false,
    });
    const cancelTimer = options.clock.setTimeout(() => outgoing.destroy(new Error('timed out awaiting response headers')), options.responseTimeoutMs ?? 30_000);
    const onAbort = () => outgoing.destroy(new Error('client went away'));
    req.signal.addEventListener('abort', onAbort, { once: true });
    outgoing.on('response', (res) => {
      cancelTimer();
      res.on('close', () => req.signal.removeEventListener('abort', onAbort));
      resolve({ response: res });
    });
    outgoing.on('error', (err) => {
      cancelTimer();
      req.signal.removeEventListener('abort', onAbort);
      resolve({ error: err });
    });
    outgoing.end(body);
  });
  if ('error' in roundTrip) return proxyError(exchange, backendError(roundTrip.error, authority), 503);
  const upstream = roundTrip.response;

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
