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
 * Every answer carries a strong `Etag` (the SHA-512 of the bytes, upper-case hex) and honours
 * `If-None-Match`. Documents are built on first use and kept: the types do not change while
 * the server runs.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Naming } from '../../naming';
import type { ResourceIndex } from '../resource-index';
import type { Exchange } from '../types';
import { buildOpenApiDocuments } from './documents';
import { encodeV2Protobuf } from './v2-protobuf';

const V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const V2_PROTOBUF_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

interface Served {
  bytes: Buffer;
  etag: string;
  gzipped?: Buffer;
}

interface Built {
  v2Json: Served;
  v2Proto: Served;
  index: Served;
  groupVersions: Map<string, Served>;
  lastModified: string;
}

function served(bytes: Buffer, etag = createHash('sha512').update(bytes).digest('hex').toUpperCase()): Served {
  return { bytes, etag };
}

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
}

export type OpenApiHandler = (exchange: Exchange) => void;

export function isOpenApiPath(path: string): boolean {
  return path === '/openapi/v2' || path === '/openapi/v3' || path.startsWith('/openapi/v3/');
}

/**
 * One gateway's handler: its documents are built on its first request and kept with it, not
 * shared with the other servers of the process (library servers), whose names (the naming
 * profile) and types (`--runtime-config`) may differ from its own.
 */
export function createOpenApiHandler(options: OpenApiHandlerOptions): OpenApiHandler {
  let built: Built | undefined;
  const build = (): Built => {
    if (built) return built;
    const docs = buildOpenApiDocuments(options.naming, options.index, options.serverVersion);
    const v2Json = served(Buffer.from(JSON.stringify(docs.v2)));
    const groupVersions = new Map<string, Served>();
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const gv of docs.v3) {
      const doc = served(Buffer.from(JSON.stringify(gv.document)));
      groupVersions.set(gv.path, doc);
      paths[gv.path] = { serverRelativeURL: `/openapi/v3/${gv.path}?hash=${doc.etag}` };
    }
    built = {
      v2Json,
      v2Proto: served(encodeV2Protobuf(docs.v2 as Record<string, unknown>), v2Json.etag),
      index: served(Buffer.from(JSON.stringify({ paths }))),
      groupVersions,
      lastModified: new Date().toUTCString(),
    };
    return built;
  };

  const send = (exchange: Exchange, status: number, contentType: string | undefined, doc: Served | undefined, headers: Record<string, string> = {}): void => {
    const { request, response } = exchange;
    response.setHeader('Cache-Control', 'no-cache, private');
    for (const [k, v] of Object.entries(headers)) response.setHeader(k, v);
    if (!doc) {
      response.writeHead(status);
      response.end();
      return;
    }
    response.setHeader('Etag', `"${doc.etag}"`);
    response.setHeader('Last-Modified', build().lastModified);
    const match = request.headers['if-none-match'];
    if (match?.split(',').some((t) => t.trim() === `"${doc.etag}"` || t.trim() === '*')) {
      response.writeHead(304);
      response.end();
      return;
    }
    if (contentType) response.setHeader('Content-Type', contentType);
    let body = doc.bytes;
    if (headers.Vary?.includes('Accept-Encoding') && /\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) {
      doc.gzipped ??= gzipSync(doc.bytes);
      body = doc.gzipped;
      response.setHeader('Content-Encoding', 'gzip');
    }
    response.setHeader('Content-Length', String(body.length));
    response.writeHead(status);
    if (request.method === 'HEAD') response.end();
    else response.end(body);
  };

  return (exchange) => {
    const { request } = exchange;
    const path = request.path;
    const docs = build();
    if (path === '/openapi/v2') {
      const chosen = pick(request.headers.accept, ['application/json', V2_PROTOBUF_DEPRECATED, V2_PROTOBUF]);
      const vary = { Vary: 'Accept, Accept-Encoding' };
      if (!chosen) return send(exchange, 406, undefined, undefined, vary);
      if (chosen === 'application/json') return send(exchange, 200, 'application/json', docs.v2Json, vary);
      return send(exchange, 200, V2_PROTOBUF, docs.v2Proto, vary);
    }
    if (path === '/openapi/v3') return send(exchange, 200, 'application/json', docs.index);
    const key = path.slice('/openapi/v3/'.length);
    const doc = docs.groupVersions.get(key);
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
