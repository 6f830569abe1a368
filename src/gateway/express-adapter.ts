/**
 * The thin Express adapter: turns a node request/response into the gateway's plain objects
 * and hands them to the pipeline. Nothing else in the gateway knows about Express. Express'
 * own ETag, query parsing and `X-Powered-By` are off: the pipeline does its own work.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket, PeerCertificate as NodePeerCertificate } from 'node:tls';
import express from 'express';
import { requestEntityTooLarge } from '../status';
import { type GatewayRequest, type GatewayResponse, type PeerCertificate, parseRequestTarget } from './types';

export type GatewayHandle = (request: GatewayRequest, response: GatewayResponse) => Promise<void>;

function asList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** What the TLS socket knows about the client certificate. */
export function peerCertificateOf(socket: TLSSocket): PeerCertificate | undefined {
  if (typeof socket.getPeerCertificate !== 'function') return undefined;
  const cert = socket.getPeerCertificate() as NodePeerCertificate & { ext_key_usage?: string[] };
  if (!cert || Object.keys(cert).length === 0 || !cert.subject) return undefined;
  const subject = cert.subject as unknown as Record<string, string | string[] | undefined>;
  const result: PeerCertificate = {
    verified: socket.authorized,
    commonName: asList(subject.CN)[0] ?? '',
    organizations: asList(subject.O),
  };
  if (!socket.authorized && socket.authorizationError) result.verifyError = String(socket.authorizationError);
  if (cert.ext_key_usage) result.extKeyUsage = cert.ext_key_usage;
  return result;
}

function headersOf(req: IncomingMessage): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
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

export function toGatewayRequest(req: IncomingMessage, signal: AbortSignal): GatewayRequest {
  const { path, query } = parseRequestTarget(req.url ?? '/');
  return {
    method: (req.method ?? 'GET').toUpperCase(),
    path,
    query,
    headers: headersOf(req),
    peerCertificate: peerCertificateOf(req.socket as TLSSocket),
    signal,
    readBody: bodyReader(req),
  };
}

export function toGatewayResponse(res: ServerResponse): GatewayResponse {
  return {
    get headersSent() {
      return res.headersSent;
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
  };
}

/** An Express app whose only middleware hands every request to the gateway. */
export function createExpressApp(handle: GatewayHandle, onError: (err: unknown) => void = () => {}): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);
  app.use((req, res) => {
    const aborter = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborter.abort();
    });
    let request: GatewayRequest;
    try {
      request = toGatewayRequest(req, aborter.signal);
    } catch (err) {
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
  });
  return app;
}
