/**
 * Which of the store's closed error codes an `etcd3` failure means. The store turns the answer
 * into a StoreError (it may need another read first, e.g. the compacted revision).
 */
import { ClientClosedError, EtcdWatchStreamEnded, GRPCOutOfRangeError, isRecoverableError } from 'etcd3';
import { EtcdCallError, GrpcCode } from './etcd-kv';

export type EtcdFailureKind = 'compacted' | 'future-revision' | 'unavailable';

// etcd returns both as gRPC OUT_OF_RANGE (mvcc.ErrCompacted / mvcc.ErrFutureRev); only the
// message tells them apart.
const COMPACTED_MESSAGE = 'required revision has been compacted';
const FUTURE_MESSAGE = 'required revision is a future revision';

/** The gRPC codes of transient failures (the ones etcd3's fault handling counts as recoverable). */
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
  // Duck-typed rather than `instanceof Error`: errors may come from another realm (Jest's VM).
  if (typeof err !== 'object' || err === null) return undefined;
  const message = String((err as { message?: unknown }).message ?? '');
  if (err instanceof EtcdCallError) {
    if (err.code === GrpcCode.OUT_OF_RANGE) {
      if (message.includes(COMPACTED_MESSAGE)) return 'compacted';
      if (message.includes(FUTURE_MESSAGE)) return 'future-revision';
    }
    return TRANSIENT_CODES.has(err.code) ? 'unavailable' : undefined;
  }
  if (err instanceof GRPCOutOfRangeError || message.includes('etcdserver: mvcc')) {
    if (message.includes(COMPACTED_MESSAGE)) return 'compacted';
    if (message.includes(FUTURE_MESSAGE)) return 'future-revision';
  }
  if (
    err instanceof ClientClosedError ||
    err instanceof EtcdWatchStreamEnded ||
    // Transient network/server failures as etcd3 marks them (unavailable, deadline, cancelled,
    // internal, ...): the ones its own fault-handling policies retry.
    isRecoverableError(err as Error) ||
    // etcd3's per-host circuit breaker (cockatiel) rejects calls while the host is marked down.
    'isBrokenCircuitError' in err
  ) {
    return 'unavailable';
  }
  return undefined;
}

/** The message of anything thrown (errors from another realm included). */
export function errorMessage(err: unknown): string {
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : String(err);
}
