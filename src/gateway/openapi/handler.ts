/**
 * Serving the OpenAPI documents as upstream's kube-openapi handlers do:
 *
 * - `/openapi/v2`: JSON, or gnostic protobuf for `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
 *   (what kubectl asks for), gzipped for clients that accept it; 406 for anything else.
 * - `/openapi/v3`: the index `{"paths": {"apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=<SHA-512>"}}}`.
 * - `/openapi/v3/<api/v1 | apis/<group>/<version>>`: that group version's JSON document; with
 *   the current `hash` it is immutable (`Cache-Control: public, immutable`), with a stale one
 *   the client is redirected (301) to the current URL.
 *
 * Every answer carries a strong `Etag` (upper-case hex SHA-512) and honours `If-None-Match`.
 * Documents are built on first use and kept until the served types change (custom resources
 * come and go: the index's generation moves); then each is put together again on its next
 * request from the parts that did not change and the ones that did (served.ts), so that a
 * client sees a changed custom resource definition on its next request.
 */
import type { Naming } from '../../naming';
import type { ResourceIndex } from '../resource-index';
import type { Exchange } from '../types';
import { type ServedDocument, ServedDocuments } from './served';
import type { RemoteOpenApi } from './remote';

const V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const V2_PROTOBUF_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

/** Accept clauses in goautoneg's order: by q, then more specific first. */
function acceptClauses(header: string | undefined): { type: string; subtype: string }[] {
  const clauses = (header || '*/*').split(',').flatMap((part, i) => {
    const [range, ...params] = part.trim().split(';');
    const [type, subtype] = (range ?? '').trim().split('/');
    if (!type || !subtype) return [];
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    return [{ type, subtype, q: Number.isFinite(q) ? q : 0, i, wild: (type === '*' ? 2 : 0) + (subtype === '*' ? 1 : 0) }];
  });
  return clauses.filter((c) => c.q > 0).sort((a, b) => b.q - a.q || a.wild - b.wild || a.i - b.i);
}

function pick(header: string | undefined, offered: readonly string[]): string | undefined {
  for (const clause of acceptClauses(header)) {
    for (const mediaType of offered) {
      const [type, subtype] = mediaType.split('/');
      if ((clause.type === type || clause.type === '*') && (clause.subtype === subtype || clause.subtype === '*')) return mediaType;
    }
  }
  return undefined;
}

export interface OpenApiHandlerOptions {
  naming: Naming;
  index: ResourceIndex;
  /** `info.version` of the documents (the server's gitVersion). */
  serverVersion: string;
  /** Extension servers' documents to merge in (the aggregator's); none when absent. */
  remote?: RemoteOpenApi;
}

export type OpenApiHandler = (exchange: Exchange) => Promise<void> | void;

export function isOpenApiPath(path: string): boolean {
  return path === '/openapi/v2' || path === '/openapi/v3' || path.startsWith('/openapi/v3/');
}

/** Bytes gathered into one write: large enough to keep writes few (a document is thousands of pieces), small enough to hold little. */
const WRITE_BYTES = 64 * 1024;

/**
 * Send a document's pieces in writes of about WRITE_BYTES, waiting for the client only when
 * the response says it is full (a slow reader holds a socket's worth, not a copy of the
 * document); synchronous while it is not. A batch buffer is filled again only once the
 * response has passed it on (drained): one it took without waiting it may still hold, so the
 * next batch then gets a buffer of its own.
 */
function writePieces(exchange: Exchange, pieces: readonly Buffer[], from = 0): Promise<void> | undefined {
  let batch: Buffer | undefined;
  let used = 0;
  for (let i = from; i < pieces.length; i++) {
    if (exchange.request.signal.aborted) break;
    const piece = pieces[i]!;
    let chunk: Buffer | undefined;
    if (piece.length >= WRITE_BYTES) {
      if (used > 0) {
        // Flush the batch first; the piece goes next on its own.
        chunk = batch!.subarray(0, used);
        i--;
      } else {
        chunk = piece;
      }
    } else {
      if (used + piece.length > WRITE_BYTES) {
        chunk = batch!.subarray(0, used);
        i--;
      } else {
        batch ??= Buffer.allocUnsafeSlow(WRITE_BYTES);
        piece.copy(batch, used);
        used += piece.length;
      }
    }
    if (!chunk) continue;
    const wasBatch = used > 0 && chunk !== piece;
    if (wasBatch) used = 0;
    if (exchange.response.write(chunk)) {
      if (wasBatch) batch = undefined;
      continue;
    }
    const next = i + 1;
    return exchange.response.drain().then(() => writePieces(exchange, pieces, next));
  }
  exchange.response.end(used > 0 && !exchange.request.signal.aborted ? batch!.subarray(0, used) : undefined);
  return undefined;
}

/**
 * One gateway's handler: its documents are built on its first request and kept with it, not
 * shared with the other servers of the process (library servers), whose names (the naming
 * profile) and types (`--runtime-config`, custom resources) may differ from its own.
 */
export function createOpenApiHandler(options: OpenApiHandlerOptions): OpenApiHandler {
  const docs = new ServedDocuments(options.naming, options.serverVersion, options.index, options.remote);

  const send = (
    exchange: Exchange,
    status: number,
    contentType: string | undefined,
    doc: ServedDocument | undefined,
    headers: Record<string, string> = {},
  ): Promise<void> | undefined => {
    const { request, response } = exchange;
    response.setHeader('Cache-Control', 'no-cache, private');
    for (const [k, v] of Object.entries(headers)) response.setHeader(k, v);
    if (!doc) {
      response.writeHead(status);
      response.end();
      return;
    }
    response.setHeader('Etag', `"${doc.etag}"`);
    response.setHeader('Last-Modified', docs.lastModified);
    const match = request.headers['if-none-match'];
    if (match?.split(',').some((t) => t.trim() === `"${doc.etag}"` || t.trim() === '*')) {
      response.writeHead(304);
      response.end();
      return;
    }
    if (contentType) response.setHeader('Content-Type', contentType);
    let pieces = doc.pieces;
    let length = doc.length;
    if (headers.Vary?.includes('Accept-Encoding') && /\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) {
      ({ pieces, length } = docs.gzipped(doc));
      response.setHeader('Content-Encoding', 'gzip');
    }
    response.setHeader('Content-Length', String(length));
    response.writeHead(status);
    if (request.method === 'HEAD') {
      response.end();
      return;
    }
    if (pieces.length === 1) {
      response.end(pieces[0]);
      return;
    }
    return writePieces(exchange, pieces);
  };

  return (exchange) => {
    const { request } = exchange;
    const path = request.path;
    if (path === '/openapi/v2') {
      const chosen = pick(request.headers.accept, ['application/json', V2_PROTOBUF_DEPRECATED, V2_PROTOBUF]);
      const vary = { Vary: 'Accept, Accept-Encoding' };
      if (!chosen) return send(exchange, 406, undefined, undefined, vary);
      if (chosen === 'application/json') return send(exchange, 200, 'application/json', docs.v2Json(), vary);
      return send(exchange, 200, V2_PROTOBUF, docs.v2Proto(), vary);
    }
    if (path === '/openapi/v3') return send(exchange, 200, 'application/json', docs.v3Index());
    const key = path.slice('/openapi/v3/'.length);
    const doc = docs.groupVersion(key);
    if (!doc) {
      exchange.response.setHeader('Content-Type', 'text/plain; charset=utf-8');
      exchange.response.setHeader('X-Content-Type-Options', 'nosniff');
      exchange.response.writeHead(404);
      exchange.response.end(request.method === 'HEAD' ? undefined : '404 page not found\n');
      return;
    }
    if (!pick(request.headers.accept, ['application/json'])) return send(exchange, 406, undefined, undefined, { Vary: 'Accept' });
    const hash = request.query.get('hash');
    if (hash && hash !== doc.etag) {
      return send(exchange, 301, undefined, undefined, { Location: `/openapi/v3/${key}?hash=${doc.etag}`, Vary: 'Accept' });
    }
    const cache: Record<string, string> = { Vary: 'Accept' };
    if (hash) {
      cache['Cache-Control'] = 'public, immutable';
      cache.Expires = new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString();
    }
    return send(exchange, 200, 'application/json', doc, cache);
  };
}
