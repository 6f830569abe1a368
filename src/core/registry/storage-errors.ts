/**
 * Storage failures of a write translated into upstream's Status errors, at the boundary between
 * the registry and the store's closed error set (docs/ARCHITECTURE.md, "Errors").
 */
import { StoreError } from '../../store';
import {
  OPTIMISTIC_LOCK_MESSAGE,
  type GroupResource,
  StatusError,
  alreadyExists,
  conflict,
  gone,
  notFound,
  serviceUnavailable,
  timeout,
  unclassifiedError,
} from '../../status';

export function storageError(err: unknown, gr: GroupResource, name: string): StatusError {
  if (err instanceof StatusError) return err;
  if (StoreError.is(err)) {
    switch (err.code) {
      case 'exists':
        return alreadyExists(gr, name);
      case 'not-found':
        return notFound(gr, name);
      case 'conflict':
        return conflict(gr, name, OPTIMISTIC_LOCK_MESSAGE);
      case 'compacted':
        return gone(`too old resource version: ${err.revision ?? ''}`);
      case 'future-revision':
        return timeout('Too large resource version', 1);
      case 'unavailable':
        return serviceUnavailable(`storage is unavailable: ${err.message}`);
    }
  }
  // Anything else is a plain error to upstream too (etcd's "request is too large", a message
  // over the client's send limit): a 500 with its text and no reason.
  return unclassifiedError(err instanceof Error ? err.message : String(err));
}
