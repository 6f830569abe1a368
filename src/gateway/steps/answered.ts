/**
 * For steps that report on a request once it is over (metrics, the request log): run the rest
 * of the pipeline, then tell `done` the status code the client gets — the response's, or the
 * Status code of what was thrown, which the recover step writes.
 */
import { StatusError } from '../../status';
import type { Exchange, Handler } from '../types';

export async function thenWithCode(next: Handler, exchange: Exchange, done: (code: number) => void): Promise<void> {
  let code: number | undefined;
  try {
    await next(exchange);
  } catch (err) {
    code = StatusError.from(err).code;
    throw err;
  } finally {
    done(code ?? exchange.response.statusCode);
  }
}
