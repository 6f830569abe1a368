/**
 * Writing responses: objects in the negotiated format, Status errors (every error response
 * goes through `writeError`), plain text and upstream's raw indented JSON. Warnings collected
 * while serving become `Warning: 299 - "..."` headers (RFC 7234 5.5) when the head is sent.
 */
import { type Status, StatusError, notAcceptable } from '../status';
import { type Codecs, type MediaTypeOptions, jsonCodec, negotiateMediaTypeOptions, resourceRestrictions, wantsPretty } from './codecs';
import type { Exchange } from './types';

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
  const warnings = [...new Set(exchange.warnings)].map((w) => headerSafe(warningHeaderValue(w.replace(/[\r\n]+/g, ' '))));
  if (warnings.length) res.setHeader('Warning', warnings);
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

/**
 * A value the negotiated format cannot carry (a kind without a protobuf form): upstream answers
 * 406 with the serializer's reason.
 */
function notEncodable(err: unknown): StatusError {
  const e = notAcceptable([]);
  e.status.message = err instanceof Error ? err.message : String(err);
  return e;
}

/** Encode `value` in the negotiated format. `contentType` overrides the codec's media type (e.g. with `;g=...;v=...;as=...`). */
export function writeObject(exchange: Exchange, status: number, value: unknown, output: MediaTypeOptions, contentType?: string): void {
  let body: Buffer;
  try {
    body = output.codec.encode(value, { pretty: output.pretty });
  } catch (err) {
    throw notEncodable(err);
  }
  finish(exchange, status, contentType ?? output.codec.mediaType, body);
}

/** Upstream WriteRawJSON: indented JSON regardless of Accept (used by /version). */
export function writeRawJson(exchange: Exchange, status: number, value: unknown): void {
  finish(exchange, status, 'application/json', JSON.stringify(value, null, 2));
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
 * Upstream ErrorNegotiated: the Status in the format the client accepts (JSON when nothing
 * fits), with `Retry-After` when the Status asks the client to wait.
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
  const negotiated = negotiateMediaTypeOptions(req.headers.accept, codecs, resourceRestrictions);
  const body = orderedStatus(error.status);
  const output = negotiated && (negotiated.codec.canEncode?.(body) ?? true) ? negotiated : { codec: jsonCodec, pretty: false };
  writeObject(exchange, error.code, body, { ...output, pretty: output.pretty || wantsPretty(req) });
}
