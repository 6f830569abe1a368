/**
 * The thin Express adapter: turns a node request/response into the gateway's plain objects
 * and hands them to the pipeline. Nothing else in the gateway knows about Express. Express'
 * own ETag, query parsing and `X-Powered-By` are off: the pipeline does its own work.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import express from 'express';
import { requestEntityTooLarge } from '../status';
import { describePeer } from '../authn';
import { type GatewayRequest, type GatewayResponse, type PeerCertificate, parseRequestTarget } from './types';

export type GatewayHandle = (request: GatewayRequest, response: GatewayResponse) => Promise<void>;

/** Per connection: getPeerCertificate() builds a fresh object on every call, so ask once. */
const peerCache = new WeakMap<TLSSocket, PeerCertificate | null>();

/** What the TLS socket knows about the client certificate (asked once per connection). */
export function peerCertificateOf(socket: TLSSocket): PeerCertificate | undefined {
  const cached = peerCache.get(socket);
  if (cached !== undefined) return cached ?? undefined;
  const cert = readPeerCertificate(socket);
  peerCache.set(socket, cert ?? null);
  return cert;
}

function readPeerCertificate(socket: TLSSocket): PeerCertificate | undefined {
  if (typeof socket.getPeerCertificate !== 'function') return undefined;
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  return describePeer(cert, socket.authorized, socket.authorizationError ? String(socket.authorizationError) : undefined);
}

/** Node already joins repeated request headers with ", " (only set-cookie stays a list, which requests do not use). */
function headersOf(req: IncomingMessage): Record<string, string | undefined> {
  return req.headers as Record<string, string | undefined>;
}

function bodyReader(req: IncomingMessage): (limit: number) => Promise<Buffer> {
  let pending: Promise<Buffer> | undefined;
  return (limit) => {
    pending ??= new Promise<Buffer>((resolve, reject) => {
      const declared = Number(req.headers['content-length'] ?? NaN);
      if (declared > limit) {
        req.resume();
        reject(requestEntityTooLarge(`limit is ${limit}`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let over = false;
      req.on('data', (chunk: Buffer) => {
        if (over) return;
        size += chunk.length;
        if (size > limit) {
          over = true;
          reject(requestEntityTooLarge(`limit is ${limit}`));
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => {
        if (!over) resolve(Buffer.concat(chunks));
      });
      req.on('error', reject);
    });
    return pending;
  };
}

/**
 * An AbortSignal that fires when the client goes away before the response finished. Made
 * lazily: only watches and long requests ask for it, and it costs a listener per request.
 */
function lazySignal(req: IncomingMessage, res: ServerResponse): () => AbortSignal {
  let aborter: AbortController | undefined;
  return () => {
    if (!aborter) {
      const a = new AbortController();
      aborter = a;
      if ((res.destroyed || req.socket.destroyed) && !res.writableFinished) a.abort();
      else res.on('close', () => !res.writableFinished && a.abort());
    }
    return aborter.signal;
  };
}

export function toGatewayRequest(req: IncomingMessage, res: ServerResponse): GatewayRequest {
  const { path, query } = parseRequestTarget(req.url ?? '/');
  const signal = lazySignal(req, res);
  return {
    method: (req.method ?? 'GET').toUpperCase(),
    path,
    query,
    headers: headersOf(req),
    peerCertificate: peerCertificateOf(req.socket as TLSSocket),
    // Read only by the audit log and the request log.
    get remoteAddress() {
      return req.socket.remoteAddress;
    },
    get signal() {
      return signal();
    },
    readBody: bodyReader(req),
  };
}

export function toGatewayResponse(res: ServerResponse): GatewayResponse {
  return {
    get headersSent() {
      return res.headersSent;
    },
    get statusCode() {
      return res.statusCode;
    },
    setHeader: (name, value) => {
      res.setHeader(name, value as string | string[]);
    },
    writeHead: (status) => {
      res.statusCode = status;
    },
    flushHeaders: () => res.flushHeaders(),
    write: (chunk) => res.write(chunk),
    drain: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      }),
    end: (chunk) => {
      if (chunk === undefined) res.end();
      else res.end(chunk);
    },
    abort: () => res.destroy(),
    whenFlushed: () =>
      res.writableFinished || res.destroyed
        ? undefined
        : new Promise<void>((resolve) => {
            const done = () => {
              res.off('finish', done);
              res.off('close', done);
              resolve();
            };
            res.on('finish', done);
            res.on('close', done);
          }),
  };
}

/** Hand one node request to the gateway. */
export function dispatch(handle: GatewayHandle, req: IncomingMessage, res: ServerResponse, onError: (err: unknown) => void): void {
  let request: GatewayRequest;
  try {
    request = toGatewayRequest(req, res);
  } catch {
    // Only a malformed path gets here; answer as Go's server does.
    res.statusCode = 400;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end('400 Bad Request');
    return;
  }
  handle(request, toGatewayResponse(res)).catch((err) => {
    onError(err);
    if (!res.headersSent) res.statusCode = 500;
    res.end();
  });
}

/**
 * The Kubernetes API surface: `/api`, `/apis` and every path below them (resources and
 * discovery), with or without a query.
 */
export function isApiPath(url: string): boolean {
  if (!url.startsWith('/api')) return false;
  const at = url.charCodeAt(4) === 0x73 /* s */ ? 5 : 4;
  return url.length === at || url[at] === '/' || url[at] === '?';
}

/** The listener `createExpressApp` returns: a node request listener with the Express app behind it. */
export type ExpressListener = ((req: IncomingMessage, res: ServerResponse) => void) & { readonly app: express.Express };

/**
 * An Express app whose only middleware hands every request to the gateway, behind a listener
 * that dispatches the API surface (`isApiPath`) to the gateway before Express sees it.
 *
 * Why: Express' per-request work (swapping the prototypes of req and res, which also slows every
 * later property access on them, walking the router's layers, finalhandler) measured ~180 µs of
 * CPU per request, as much as the rest of a cached GET (docs/BENCHMARKS.md), and none of it is
 * used: the gateway parses, routes and answers on plain node objects. The other paths (health,
 * version, OpenAPI) still pass through Express, so middleware added to `app` applies to them only.
 */
export function createExpressApp(handle: GatewayHandle, onError: (err: unknown) => void = () => {}): ExpressListener {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);
  app.use((req, res) => dispatch(handle, req, res, onError));
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    if (isApiPath(req.url ?? '/')) dispatch(handle, req, res, onError);
    else app(req, res);
  };
  return Object.assign(listener, { app });
}

/**
 * The same dispatch without Express, for deployments that measure Express' per-request cost
 * against the budgets in docs/BENCHMARKS.md (see `StartGatewayOptions.adapter`).
 */
export function createNodeListener(handle: GatewayHandle, onError: (err: unknown) => void = () => {}): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => dispatch(handle, req, res, onError);
}
