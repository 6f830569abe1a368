/**
 * How a failed call crosses the gRPC door: as a structured Status, not a string.
 *
 * The server ends the call with the gRPC code of the Status reason (REASON_CODES, the one
 * table), the Status message as the gRPC message (for generic gRPC tooling), and the whole
 * Status in trailing metadata `keelson-status-bin` (a `StatusTrailer` message holding the
 * Status in the object envelope, plus the warnings collected before the failure). The client
 * rebuilds a StatusError equal to the server's; when the trailer is missing (the failure
 * came from the transport, a proxy or a server that is not Keelson) it maps the gRPC code
 * back through the same table.
 */
import { Metadata, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { StatusTrailer } from '../gen/keelson/core/v1/core';
import { GrpcCode, REASON_CODES, StatusError, type Status, type StatusReason, statusError } from '../status';
import { decodeStatus, encodeEnvelope } from './envelope';

/** Trailing-metadata key of the StatusTrailer; `-bin` makes gRPC carry it as raw bytes. */
export const STATUS_TRAILER_KEY = 'keelson-status-bin';

/**
 * Size limits for what travels in headers. HTTP/2 peers stop reading a header block that is
 * too large, and grpc-js then never reports the call's end at all (measured: a trailer of
 * ~100 KB leaves the client waiting forever), so a Status too large for the budget is shrunk
 * (causes, then message, then warnings) rather than sent whole. The budgets stay well
 * below the sizes that were measured to work.
 */
export const MAX_TRAILER_BYTES = 32 * 1024;
const MAX_GRPC_MESSAGE_CHARS = 1024;
const SHRUNK_MESSAGE_CHARS = 4096;

/** The status a failed server call ends with. */
export function toGrpcStatus(err: unknown, warnings: readonly string[]): StatusObject {
  const { status } = StatusError.from(err);
  const metadata = new Metadata();
  metadata.set(STATUS_TRAILER_KEY, encodeTrailer(status, warnings));
  return { code: grpcCodeOf(status), details: wellFormed(truncate(status.message ?? status.reason ?? '', MAX_GRPC_MESSAGE_CHARS)), metadata };
}

/**
 * grpc-js percent-encodes the details with `encodeURI`, which throws on a lone UTF-16
 * surrogate, and then the call is never answered. Messages can carry one: a decoder's error
 * quoting a slice of undecodable input, or a truncation between the two halves of a pair.
 */
function wellFormed(text: string): string {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** The StatusTrailer bytes, within MAX_TRAILER_BYTES. */
function encodeTrailer(status: Status, warnings: readonly string[]): Buffer {
  const encode = (s: Status, w: readonly string[]) => Buffer.from(StatusTrailer.encode({ status: encodeEnvelope(s), warnings: [...w] }).finish());
  let bytes = encode(status, warnings);
  if (bytes.length <= MAX_TRAILER_BYTES) return bytes;

  let shrunk = status;
  const causes = status.details?.causes ?? [];
  for (let keep = Math.floor(causes.length / 2); bytes.length > MAX_TRAILER_BYTES && causes.length > 0; keep = Math.floor(keep / 2)) {
    shrunk = { ...status, details: { ...status.details, causes: causes.slice(0, keep) } };
    bytes = encode(shrunk, warnings);
    if (keep === 0) break;
  }
  if (bytes.length <= MAX_TRAILER_BYTES) return bytes;
  shrunk = { ...shrunk, message: truncate(shrunk.message ?? '', SHRUNK_MESSAGE_CHARS) };
  bytes = encode(shrunk, warnings);
  if (bytes.length <= MAX_TRAILER_BYTES) return bytes;
  bytes = encode(shrunk, []);
  if (bytes.length <= MAX_TRAILER_BYTES) return bytes;
  // Only an enormous details object is left: keep what identifies the failure.
  const { kind, apiVersion, metadata, code, reason, message } = shrunk;
  return encode({ kind, apiVersion, metadata, status: 'Failure', code, reason, message }, []);
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}

/** The gRPC code for a Status: by reason, else by HTTP code, else INTERNAL / UNKNOWN. */
export function grpcCodeOf(status: Status): number {
  const reason = status.reason;
  if (reason && Object.hasOwn(REASON_CODES, reason)) return REASON_CODES[reason].grpc;
  const byHttp = Object.values(REASON_CODES).find((row) => row.http === status.code);
  if (byHttp) return byHttp.grpc;
  return status.code >= 500 ? GrpcCode.INTERNAL : GrpcCode.UNKNOWN;
}

/** A client-side failure as the StatusError the server raised, with the warnings sent along. */
export function fromGrpcError(err: unknown): { error: StatusError; warnings: string[] } {
  if (!isServiceError(err)) return { error: StatusError.from(err), warnings: [] };
  const [trailer] = err.metadata.get(STATUS_TRAILER_KEY);
  if (Buffer.isBuffer(trailer)) {
    try {
      const decoded = StatusTrailer.decode(trailer);
      return { error: new StatusError(decodeStatus(decoded.status, 'status trailer')), warnings: decoded.warnings };
    } catch {
      // An unreadable trailer: fall back to the gRPC code below.
    }
  }
  return { error: statusErrorForGrpcCode(err.code, err.details), warnings: [] };
}

/**
 * A StatusError for a bare gRPC code: the first reason in REASON_CODES that maps to it
 * (UNAVAILABLE → 503 ServiceUnavailable, DEADLINE_EXCEEDED → 504 Timeout,
 * UNIMPLEMENTED → 405 MethodNotAllowed, ...). Codes no reason maps to (CANCELLED, UNKNOWN,
 * FAILED_PRECONDITION, DATA_LOSS) become 500 InternalError.
 */
export function statusErrorForGrpcCode(code: number, message: string): StatusError {
  return statusError(REASON_BY_GRPC_CODE.get(code) ?? 'InternalError', message);
}

const REASON_BY_GRPC_CODE: ReadonlyMap<number, StatusReason> = (() => {
  const map = new Map<number, StatusReason>();
  for (const [reason, row] of Object.entries(REASON_CODES) as [StatusReason, { grpc: number }][]) {
    if (!map.has(row.grpc)) map.set(row.grpc, reason);
  }
  return map;
})();

function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === 'number' && (err as Partial<ServiceError>).metadata instanceof Metadata;
}
