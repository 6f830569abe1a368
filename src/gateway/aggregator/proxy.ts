/**
 * The aggregator's proxy (upstream's proxyHandler): a request under `/apis/<group>/<version>`
 * whose APIService names a Service goes to the extension server behind it, after this server
 * authenticated and authorized it (the step runs after authorization, so a caller without
 * permission never reaches the extension). The end user travels in `X-Remote-User`,
 * `X-Remote-Group` and `X-Remote-Extra-<key>`; the caller's `Authorization`, impersonation and
 * `X-Remote-*` headers do not. The answer streams back as it comes (a watch stays open).
 * An APIService not Available, a Service that does not resolve, a backend that cannot be
 * reached, that sends no answer within the timeout or that breaks the answer: 503 Status
 * `service unavailable` (upstream's message), without touching other groups.
 */
import * as https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../../clock';
import { type APIService, isAPIServiceAvailable } from '../../core';
import { serviceUnavailable, type StatusError } from '../../status';
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

function unavailable(): StatusError {
  return serviceUnavailable(UNAVAILABLE);
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
  if (!isAPIServiceAvailable(apiService)) throw unavailable();
  const user = exchange.user;
  if (!user) throw unavailable();
  let resolved;
  try {
    resolved = await options.resolver.resolve(serviceRef(apiService));
  } catch {
    throw unavailable();
  }
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

  const upstream = await new Promise<IncomingMessage>((resolve, reject) => {
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
      resolve(res);
    });
    outgoing.on('error', (err) => {
      cancelTimer();
      req.signal.removeEventListener('abort', onAbort);
      reject(err);
    });
    outgoing.end(body);
  }).catch(() => {
    throw unavailable();
  });

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
    upstream.on('error', () => {
      // The answer broke after its head went out: all that is left is to drop the connection.
      req.signal.removeEventListener('abort', abort);
      response.abort();
      resolve();
    });
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
    if (exchange.request.headers[loop] === options.proxy.loopHeader.value) return Promise.reject(unavailable());
    return proxyToAPIService(exchange, apiService, options.proxy);
  };
}
