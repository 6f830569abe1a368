/**
 * Which of the store's closed error codes an etcd client failure means. The store turns the
 * answer into a StoreError (it may need another read first, e.g. the compacted revision).
 */
import { GrpcCode } from '../../status';
import { EtcdCallError } from './client';

export type EtcdFailureKind = 'compacted' | 'future-revision' | 'unavailable';

// etcd returns both as gRPC OUT_OF_RANGE (mvcc.ErrCompacted / mvcc.ErrFutureRev); only the
// message tells them apart.
const COMPACTED_MESSAGE = 'required revision has been compacted';
const FUTURE_MESSAGE = 'required revision is a future revision';
/** gRPC's words for a message over the sender's or the receiver's limit (RESOURCE_EXHAUSTED). */
const TOO_LARGE_MESSAGE = 'message larger than max';

/** The gRPC codes of transient failures: the connection, the deadline, an overloaded or changing leader. */
const TRANSIENT_CODES: ReadonlySet<number> = new Set([
  GrpcCode.CANCELLED,
  GrpcCode.UNKNOWN,
  GrpcCode.DEADLINE_EXCEEDED,
  GrpcCode.RESOURCE_EXHAUSTED,
  GrpcCode.ABORTED,
  GrpcCode.INTERNAL,
  GrpcCode.UNAVAILABLE,
]);

export function classifyEtcdError(err: unknown): EtcdFailureKind | undefined {
  if (!(err instanceof EtcdCallError)) return undefined;
  if (err.code === GrpcCode.OUT_OF_RANGE) {
    if (err.message.includes(COMPACTED_MESSAGE)) return 'compacted';
    if (err.message.includes(FUTURE_MESSAGE)) return 'future-revision';
  }
  // A message over a size limit fails again however often it is sent: not a store condition.
  if (err.code === GrpcCode.RESOURCE_EXHAUSTED && err.message.includes(TOO_LARGE_MESSAGE)) return undefined;
  return TRANSIENT_CODES.has(err.code) ? 'unavailable' : undefined;
}

/** The message of anything thrown (errors from another realm included). */
export function errorMessage(err: unknown): string {
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : String(err);
}
