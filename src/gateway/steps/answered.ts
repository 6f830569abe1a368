/**
 * For steps that report on a request once it is over (metrics, the request log): run the rest
 * of the pipeline, then tell `done` the status code the client gets — the response's, or the
 * Status code of what was thrown, which the recover step writes.
 */
import { StatusError } from '../../status';
import { type Exchange, type Handler, afterNext } from '../types';

/** Within the call when the rest answered within it (no promise of its own then). */
export function thenWithCode(next: Handler, exchange: Exchange, done: (code: number) => void): Promise<void> | void {
  return afterNext(next, exchange, (err) => {
    if (err === undefined) return done(exchange.response.statusCode);
    done(StatusError.from(err).code);
    throw err;
  });
}
