/**
 * Writing responses: objects in the negotiated format, Status errors (every error response
 * goes through `writeError`), plain text and upstream's raw indented JSON. Warnings collected
 * while serving become `Warning: 299 - "..."` headers (RFC 7234 5.5) when the head is sent.
 *
 * Compression (docs/API.md, "Content negotiation" 6, gate APIResponseCompression): as upstream's
 * deferredResponseWriter, a body over 128 KiB to a client that accepts gzip is sent gzipped
 * (level 1, upstream's choice of speed over ratio) with `Content-Encoding: gzip` and
 * `Vary: Accept-Encoding`; smaller bodies go as they are. Watches never pass through here.
 */
import { once } from 'node:events';
import { createGzip, gzip } from 'node:zlib';
import { type Status, StatusError, notAcceptable } from '../status';
import { type Codecs, type MediaTypeOptions, defaultRestrictions, negotiateMediaTypeOptions, responseContentEncoding, wantsPretty } from './codecs';
import { JSON_MEDIA_TYPE } from './codecs/json';
import type { Exchange } from './types';
import { escapeGoHtml } from '../codecs/go-strings';

/** Upstream's defaultGzipThresholdBytes: bodies up to this size are never compressed. */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;
/** Upstream's defaultGzipContentEncodingLevel. */
const GZIP_LEVEL = 1;

/** Upstream escapes `"` and `\` inside the quoted warning text. */
export function warningHeaderValue(text: string): string {
  const quoted = `"${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  return `299 - ${quoted}`;
}

/** Header values travel as bytes: send UTF-8 text as its bytes, as Go does. */
function headerSafe(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? value : Buffer.from(value, 'utf8').toString('latin1');
}

/** Send the status line and headers (with any warnings) now. */
export function sendHead(exchange: Exchange, status: number, contentType?: string): void {
  const res = exchange.response;
  if (contentType) res.setHeader('Content-Type', contentType);
  // Upstream's WithCacheControl: API responses are never cached by intermediaries.
  res.setHeader('Cache-Control', 'no-cache, private');
  // Control characters cannot travel in a header (Go turns newlines into spaces; the rest would break the response).
  if (exchange.warnings.length > 0) {
    const warnings = [...new Set(exchange.warnings)].map((w) =>
      headerSafe(warningHeaderValue(w.replace(/[\r\n]+/g, ' ').replace(/[\x00-\x08\x0a-\x1f\x7f]/g, ' '))),
    );
    res.setHeader('Warning', warnings);
  }
  res.writeHead(status);
}

function finish(exchange: Exchange, status: number, contentType: string, body: Buffer | string): void {
  const res = exchange.response;
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.setHeader('Content-Length', String(bytes.length));
  sendHead(exchange, status, contentType);
  if (exchange.request.method === 'HEAD') res.end();
  else res.end(bytes);
}

/** Gzip off the event loop (zlib's thread pool), then send; resolves once the response ended. */
function finishGzipped(exchange: Exchange, status: number, contentType: string, bytes: Buffer): Promise<void> {
  return new Promise<void>((resolve) => {
    gzip(bytes, { level: GZIP_LEVEL }, (err, compressed) => {
      if (err) {
        finish(exchange, status, contentType, bytes);
      } else {
        const res = exchange.response;
        res.setHeader('Content-Encoding', 'gzip');
        res.setHeader('Vary', 'Accept-Encoding');
        finish(exchange, status, contentType, compressed);
      }
      resolve();
    });
  });
}

/**
 * A value the negotiated format cannot carry (a kind without a protobuf form): upstream answers
 * 406 with the serializer's reason.
 */
function notEncodable(err: unknown): StatusError {
  const e = notAcceptable([]);
  e.status.message = err instanceof Error ? err.message : String(err);
  return e;
}

/**
 * Encode `value` in the negotiated format. `contentType` overrides the codec's media type (e.g.
 * with `;g=...;v=...;as=...`). `json` is the value's compact JSON answer where the caller has
 * it already (a create's, made from its stored text), used when that is what goes out. Returns
 * a promise only when the body is being compressed (it resolves once sent); callers that do not
 * await it lose nothing.
 */
export function writeObject(
  exchange: Exchange,
  status: number,
  value: unknown,
  output: MediaTypeOptions,
  contentType?: string,
  json?: () => Buffer,
): void | Promise<void> {
  // A large list goes out as it is encoded, through gzip when the client takes it.
  if (exchange.request.method !== 'HEAD') {
    const pieces = output.codec.encodeChunks?.(value, output);
    const type = contentType ?? output.codec.mediaType;
    if (pieces) return output.contentEncoding === 'gzip' ? writePiecesGzipped(exchange, status, type, pieces) : writePieces(exchange, status, type, pieces);
  }
  let body: Buffer;
  try {
    body = json && !output.pretty && output.codec.mediaType === JSON_MEDIA_TYPE ? json() : output.codec.encode(value, { pretty: output.pretty });
  } catch (err) {
    throw notEncodable(err);
  }
  const type = contentType ?? output.codec.mediaType;
  if (output.contentEncoding === 'gzip' && body.length > GZIP_THRESHOLD_BYTES && exchange.request.method !== 'HEAD') {
    return finishGzipped(exchange, status, type, body);
  }
  finish(exchange, status, type, body);
}

/** Bytes gathered before a write: large enough to keep writes few, small enough to hold little. */
const STREAM_WRITE_BYTES = 64 * 1024;

/**
 * Feed `pieces` to a writer in batches of about STREAM_WRITE_BYTES, waiting on `drain` whenever
 * it is full; stops early when the client goes away. Returns the last, partial batch.
 *
 * Each batch is made and written in a write turn of the gateway's (`exchange.writeTurns`,
 * write-turns.ts), the wait for `drain` outside it: a list whose client keeps up still gives the
 * event loop back between its batches, as often as the turns' slice says, so short requests are
 * served between them rather than after the whole list.
 *
 * A batch is copied into one buffer that is filled again once the writer has drained (all of
 * it passed on: TLS has encrypted it, zlib compressed it), so a response of any length
 * allocates one buffer, not one per batch: buffers made in JavaScript count as V8's external
 * memory, and a list's worth of them made the collector run full collections for "external
 * memory pressure" every few lists. A piece of a batch's size or more is written as it is
 * (pieces are never changed after they are handed over).
 */
async function pump(
  exchange: Exchange,
  pieces: Iterable<Uint8Array>,
  write: (chunk: Uint8Array) => boolean,
  drain: () => Promise<unknown>,
): Promise<Uint8Array | undefined> {
  const turns = exchange.writeTurns;
  let holding = false;
  /** Wait for a turn; false when the client went away meanwhile (its 'close' has passed: no drain would come). */
  const hold = async (): Promise<boolean> => {
    if (turns && !holding) {
      await turns.take();
      holding = true;
    }
    return !exchange.request.signal.aborted;
  };
  /** Write in the turn, give the turn back, then wait for the drain when full; true when whatever was written has been passed on. */
  const send = async (chunk: Uint8Array): Promise<boolean> => {
    const accepted = write(chunk);
    if (holding) {
      holding = false;
      turns!.release();
    }
    if (accepted) return false;
    await drain();
    return true;
  };
  let buffer: Buffer | undefined;
  let used = 0;
  try {
    if (!(await hold())) return undefined;
    for (const piece of pieces) {
      if (used > 0 && used + piece.length > STREAM_WRITE_BYTES) {
        // Still held by the writer: the next batch goes into a buffer of its own.
        if (!(await send(buffer!.subarray(0, used)))) buffer = undefined;
        used = 0;
        if (exchange.request.signal.aborted || !(await hold())) return undefined;
      }
      if (piece.length >= STREAM_WRITE_BYTES) {
        await send(piece);
        if (exchange.request.signal.aborted || !(await hold())) return undefined;
        continue;
      }
      buffer ??= Buffer.allocUnsafeSlow(STREAM_WRITE_BYTES);
      buffer.set(piece, used);
      used += piece.length;
    }
    return used > 0 ? buffer!.subarray(0, used) : undefined;
  } finally {
    if (holding) turns!.release();
  }
}

/**
 * Write a body in pieces, without Content-Length (chunked), waiting for the socket to drain
 * whenever it is full: a client that reads slowly holds a socket's worth of the response in
 * memory, not the whole response. `exchange.response` is read afresh each time: a request
 * timeout swaps in one that drops what comes later.
 */
async function writePieces(exchange: Exchange, status: number, contentType: string, pieces: Iterable<Uint8Array>): Promise<void> {
  sendHead(exchange, status, contentType);
  const rest = await pump(
    exchange,
    pieces,
    (chunk) => exchange.response.write(chunk),
    () => exchange.response.drain(),
  );
  exchange.response.end(rest);
}

/** `writePieces` through a gzip stream (upstream's level), with backpressure on both sides. */
async function writePiecesGzipped(exchange: Exchange, status: number, contentType: string, pieces: Iterable<Uint8Array>): Promise<void> {
  exchange.response.setHeader('Content-Encoding', 'gzip');
  exchange.response.setHeader('Vary', 'Accept-Encoding');
  sendHead(exchange, status, contentType);
  const zip = createGzip({ level: GZIP_LEVEL });
  zip.on('data', (chunk: Buffer) => {
    if (exchange.response.write(chunk)) return;
    zip.pause();
    void exchange.response.drain().then(() => zip.resume());
  });
  const finished = once(zip, 'end');
  const rest = await pump(
    exchange,
    pieces,
    (chunk) => zip.write(chunk),
    () => once(zip, 'drain'),
  );
  zip.end(rest);
  await finished;
  exchange.response.end();
}

/** Upstream WriteRawJSON: indented JSON regardless of Accept (used by /version). */
export function writeRawJson(exchange: Exchange, status: number, value: unknown): void {
  // json.MarshalIndent escapes <, >, & and U+2028/9 as Go's encoder always does.
  const text = escapeGoHtml(JSON.stringify(value, null, 2));
  finish(exchange, status, 'application/json', text);
}

/** A document any client may cache as `cacheControl` says, answered 200 as it is. */
export function writeCacheable(exchange: Exchange, contentType: string, body: Buffer, cacheControl: string): void {
  const res = exchange.response;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', String(body.length));
  res.setHeader('Cache-Control', cacheControl);
  res.writeHead(200);
  if (exchange.request.method === 'HEAD') res.end();
  else res.end(body);
}

/** Plain text, as Go's http.Error and the health endpoints write it. */
export function writeText(exchange: Exchange, status: number, text: string): void {
  exchange.response.setHeader('X-Content-Type-Options', 'nosniff');
  finish(exchange, status, 'text/plain; charset=utf-8', text);
}

/** The Status with its fields in upstream's order (kind, apiVersion, metadata, status, message, reason, details, code). */
export function orderedStatus(s: Status): Status {
  const out: Status = { kind: s.kind, apiVersion: s.apiVersion, metadata: s.metadata, status: s.status } as Status;
  if (s.message !== undefined) out.message = s.message;
  if (s.reason !== undefined) out.reason = s.reason;
  if (s.details !== undefined) out.details = s.details;
  out.code = s.code;
  return out;
}

/**
 * Upstream ErrorNegotiated: the Status in the format the client accepts, with `Retry-After`
 * when the Status asks the client to wait. When no format fits (an `Accept` of only `text/html`,
 * or of only a Table), upstream's WriteObjectNegotiated falls back to WriteRawJSON: the Status
 * as indented JSON, which is how a 406 reads.
 */
export function writeError(exchange: Exchange, err: unknown, codecs: Codecs): void {
  const error = StatusError.from(err);
  const res = exchange.response;
  if (res.headersSent) {
    res.end();
    return;
  }
  const retryAfter = error.status.details?.retryAfterSeconds;
  if (retryAfter && retryAfter > 0) res.setHeader('Retry-After', String(retryAfter));
  const req = exchange.request;
  const negotiated = negotiateMediaTypeOptions(req.headers.accept, codecs, defaultRestrictions);
  const body = orderedStatus(error.status);
  if (!negotiated || !(negotiated.codec.canEncode?.(body) ?? true)) {
    writeRawJson(exchange, error.code, body);
    return;
  }
  const output: MediaTypeOptions = { ...negotiated, pretty: negotiated.pretty || wantsPretty(req) };
  const encoding = responseContentEncoding(req, codecs);
  if (encoding) output.contentEncoding = encoding;
  void writeObject(exchange, error.code, body, output);
}
