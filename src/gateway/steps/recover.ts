/**
 * Step 0: the outermost step gives every request its id (upstream's `Audit-Id` response header)
 * and turns anything thrown further in into a Status response (upstream's panic recovery plus
 * `scope.err`): StatusErrors keep their code, anything else is a 500 InternalError for this
 * request only. Every 5xx is reported with the request's id, so the log explains it. Errors
 * after the head was sent can only end the response.
 */
import { randomUUID } from 'node:crypto';
import { StatusError } from '../../status';
import type { Codecs } from '../codecs';
import { writeError } from '../respond';
import { type Step, afterNext } from '../types';

export interface RecoverOptions {
  codecs: Codecs;
  /** Called with errors that became a 5xx (bugs, or failures below), for the log. */
  onUnexpectedError?: (err: unknown, request: { id: string; method: string; path: string }) => void;
}

export function recoverStep(options: RecoverOptions): Step {
  return (next) => (exchange) => {
    const id = randomUUID();
    exchange.id = id;
    exchange.response.setHeader('Audit-Id', id);
    return afterNext(next, exchange, (err) => {
      if (err === undefined) return;
      if (!StatusError.is(err) || err.code >= 500) options.onUnexpectedError?.(err, { id, method: exchange.request.method, path: exchange.request.path });
      writeError(exchange, err, options.codecs);
    });
  };
}
