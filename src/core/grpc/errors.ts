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
import { StatusTrailer } from '../../gen/keelson/core/v1/core';
import { GrpcCode, REASON_CODES, StatusError, type Status, type StatusReason } from '../../status';
import { decodeStatus, encodeEnvelope } from './envelope';

/** Trailing-metadata key of the StatusTrailer; `-bin` makes gRPC carry it as raw bytes. */
export const STATUS_TRAILER_KEY = 'keelson-status-bin';

/** The status a failed server call ends with. */
export function toGrpcStatus(err: unknown, warnings: readonly string[]): StatusObject {
  const { status } = StatusError.from(err);
  const metadata = new Metadata();
  const trailer = StatusTrailer.encode({ status: encodeEnvelope(status), warnings: [...warnings] }).finish();
  metadata.set(STATUS_TRAILER_KEY, Buffer.from(trailer));
  return { code: grpcCodeOf(status), details: status.message ?? status.reason ?? '', metadata };
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
  const reason = REASON_BY_GRPC_CODE.get(code) ?? 'InternalError';
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code: REASON_CODES[reason].http,
  });
}

const REASON_BY_GRPC_CODE: ReadonlyMap<number, StatusReason> = (() => {
  const map = new Map<number, StatusReason>();
  for (const [reason, row] of Object.entries(REASON_CODES) as [StatusReason, { grpc: number }][]) {
    if (!map.has(row.grpc)) map.set(row.grpc, reason);
  }
  return map;
})();

function isServiceError(err: unknown): err is ServiceError {
  return (
    err instanceof Error &&
    typeof (err as Partial<ServiceError>).code === 'number' &&
    (err as Partial<ServiceError>).metadata instanceof Metadata
  );
}
