/**
 * The gateway's plain request/response objects. Steps and handlers see only these, never
 * Express or node:http, so every one of them can be tested without a socket. `express-adapter.ts` is the only place that builds them from a real request.
 */
import type { Duplex, Readable } from 'node:stream';
import type { UserInfo } from '../core';
import { badRequest } from '../status';

import type { PeerCertificate } from '../authn';
import type { WriteTurns } from './write-turns';

export type { PeerCertificate } from '../authn';

export interface GatewayRequest {
  /** Upper-case HTTP method. */
  readonly method: string;
  /** The percent-decoded path, as Go's `req.URL.Path`. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Header values by lower-case name; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** Every value of the header `name` (lower-case), one per header line (the front proxy's groups). */
  headerValues?(name: string): readonly string[];
  /** Forget a header: the front proxy's `X-Remote-*` once authentication has read them. */
  removeHeader?(name: string): void;
  readonly peerCertificate?: PeerCertificate;
  /** The client's address, for the audit log's sourceIPs. */
  readonly remoteAddress?: string;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /** Read the whole body; rejects with 413 past `limitBytes`. */
  readBody(limitBytes: number): Promise<Buffer>;
  /**
   * The body as it arrives, for a step that forwards it rather than reads it (the aggregator's
   * proxy); undefined when the door cannot give it (already read, or a request that asked to
   * upgrade). Either this or `readBody`, once.
   */
  bodyStream?(): Readable | undefined;
  /** Set when the request asked to switch protocols (`Connection: Upgrade`): its connection, which a step may take over. */
  readonly upgrade?: UpgradeConnection;
}

/** The connection of a request that asked to switch protocols (upstream's hijackable response writer). */
export interface UpgradeConnection {
  /**
   * Take the connection over: the response is over (its status `status` for the logs and
   * metrics, nothing more written through it) and the socket is the caller's, with `head`, the
   * bytes the client sent after the request's head.
   */
  take(status: number): { socket: Duplex; head: Buffer };
}

/** Writes bytes framed as one HTTP/1.1 chunk (`frameChunk`); false when the caller should wait for `drain()`. */
export type ChunkWriter = (framed: Uint8Array) => boolean;

/** `data` (not empty: an empty chunk ends the body) framed as one HTTP/1.1 chunk: its length in hex, CRLF, the data, CRLF. */
export function frameChunk(data: Uint8Array): Buffer {
  const size = data.length.toString(16);
  const framed = Buffer.allocUnsafeSlow(size.length + data.length + 4);
  let at = framed.write(size, 0, 'latin1');
  framed[at++] = 0x0d;
  framed[at++] = 0x0a;
  framed.set(data, at);
  at += data.length;
  framed[at++] = 0x0d;
  framed[at] = 0x0a;
  return framed;
}

export interface GatewayResponse {
  readonly headersSent: boolean;
  /** The status set so far (200 until `writeHead`). */
  readonly statusCode: number;
  setHeader(name: string, value: string | readonly string[]): void;
  /** Set the status and headers; they go out with the first write or `end`. */
  writeHead(status: number): void;
  /** Push the status line and headers to the client now (streams). */
  flushHeaders(): void;
  /** Write a chunk; false when the caller should wait for `drain()`. */
  write(chunk: Uint8Array | string): boolean;
  /**
   * Where the body goes out as HTTP/1.1 chunks straight onto the connection (its head sent,
   * nothing of it waiting in the process), a writer of chunks framed beforehand (`frameChunk`),
   * so that the same framed bytes can go to many responses (a watch event to every watcher)
   * with no framing per response. Undefined otherwise; writes through `write` may be mixed in.
   */
  chunkWriter?(): ChunkWriter | undefined;
  drain(): Promise<void>;
  end(chunk?: Uint8Array | string): void;
  /** Drop the connection without finishing the response (a client that stopped reading). */
  abort(): void;
  /**
   * Resolves once the response has been handed to the operating system whole (or the
   * connection is gone); undefined when that is already so. What the in-flight limits wait
   * for: a response still in the process's buffers still costs its memory.
   */
  whenFlushed(): Promise<void> | undefined;
}

/** Upstream's RequestInfo for `/api` and `/apis` paths (what its RequestInfoFactory derives). */
export interface ResourceRequestInfo {
  isResourceRequest: true;
  path: string;
  verb: string;
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** The path parts from the resource on: resource/name/subresource/... */
  parts: string[];
  /**
   * Keelson addition: true when the resource was addressed below `namespaces/{ns}/`
   * (upstream's installer knows this from the route it matched).
   */
  namespaceScopedPath: boolean;
  /** Keelson addition: true when the verb came from the deprecated `/watch/` path prefix. */
  watchPrefix: boolean;
}

export interface NonResourceRequestInfo {
  isResourceRequest: false;
  path: string;
  /** The lower-case HTTP method. */
  verb: string;
}

export type RequestInfo = ResourceRequestInfo | NonResourceRequestInfo;

/** One request in flight: filled in by the steps in the order they run. */
export interface Exchange {
  /** Replaced in place by a step that must see the body (audit); never by anything else. */
  request: GatewayRequest;
  /**
   * Replaced in place by a step that must see or stop what is written (audit, the request
   * timeout). In place, not by a new exchange object: every later step and handler keeps
   * seeing one object shape, which V8 optimises for.
   */
  response: GatewayResponse;
  /** Set by the request-info step. */
  info?: RequestInfo;
  /** Set by the authentication step. */
  user?: UserInfo;
  /** Warnings to send as `Warning: 299 - "..."` headers. */
  readonly warnings: string[];
  /** Set by the recover step: the request's id (its `Audit-Id` header). */
  id?: string;
  /** Set by the audit step when the request is audited: adds an annotation to its audit event. */
  annotate?: (key: string, value: string) => void;
  /** The gateway's write turns, which a large streamed body takes batch by batch (write-turns.ts); absent: no pacing. */
  readonly writeTurns?: WriteTurns;
}

/**
 * Serves a request. A request answered within the call (a get from the watch cache, most
 * refusals) returns nothing; one that must wait returns the promise of its end. Either way it
 * fails by a rejected promise, never a throw, so a caller has one failure path to handle. The
 * pipeline costs no promise or microtask per step unless some step waits (docs/ARCHITECTURE.md).
 */
export type Handler = (exchange: Exchange) => Promise<void> | void;

/** A pipeline step: wraps the rest of the pipeline, as an interceptor `(next) => next`. */
export type Step = (next: Handler) => Handler;

/**
 * A handler written without `async`, so that it can hand back the rest of the pipeline's
 * outcome (nothing, or its promise) and cost no promise of its own, that still fails as every
 * handler does: by a rejected promise, never a throw.
 */
export function rejectingThrows(handle: (exchange: Exchange) => Promise<void> | void): Handler {
  return (exchange) => {
    try {
      return handle(exchange);
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

/**
 * Run `next`, then `after` with how it ended (an error, or undefined): within this call when
 * `next` answered within it, else when its promise settles. What `after` returns or throws is
 * the outcome, a throw as a rejected promise (the Handler contract).
 */
export function afterNext(next: Handler, exchange: Exchange, after: (err: unknown) => Promise<void> | void): Promise<void> | void {
  let pending: Promise<void> | void;
  try {
    pending = next(exchange);
  } catch (err) {
    // Not the contract, but a step's bug must still reach `after` (the recover step's 500).
    pending = Promise.reject(err);
  }
  if (pending === undefined) {
    try {
      return after(undefined);
    } catch (err) {
      return Promise.reject(err);
    }
  }
  return pending.then(
    () => after(undefined),
    (err: unknown) => after(err ?? new Error('rejected without a reason')),
  );
}

export function createExchange(request: GatewayRequest, response: GatewayResponse, writeTurns?: WriteTurns): Exchange {
  return { request, response, warnings: [], writeTurns };
}

/** The request info, which every step after request-info may rely on. */
export function infoOf(exchange: Exchange): RequestInfo {
  if (!exchange.info) throw new Error('request info step has not run');
  return exchange.info;
}

export function userOf(exchange: Exchange): UserInfo {
  if (!exchange.user) throw new Error('authentication step has not run');
  return exchange.user;
}

/**
 * Split a request target (`/api/v1/pods?limit=1`) into the decoded path and the query, as
 * Go's net/url does: the path is percent-decoded as a whole, so `%2F` becomes a separator.
 */
export function parseRequestTarget(target: string): { path: string; query: URLSearchParams } {
  const q = target.indexOf('?');
  const rawPath = q < 0 ? target : target.slice(0, q);
  const rawQuery = q < 0 ? '' : target.slice(q + 1);
  let path = rawPath;
  // Most paths have no escape: no decode, which scans and copies the path.
  if (rawPath.includes('%')) {
    try {
      path = decodeURIComponent(rawPath);
    } catch {
      throw badRequest(`invalid URL escape in path ${JSON.stringify(rawPath)}`);
    }
  }
  return { path: path || '/', query: new URLSearchParams(rawQuery) };
}
