/**
 * Step 0: the outermost step turns anything thrown further in into a Status response
 * (upstream's panic recovery plus `scope.err`): StatusErrors keep their code, anything else is
 * a 500 InternalError. Errors after the head was sent can only end the response.
 */
import { StatusError } from '../../status';
import type { Codecs } from '../codecs';
import { writeError } from '../respond';
import type { Step } from '../types';

export interface RecoverOptions {
  codecs: Codecs;
  /** Called with errors that are not StatusErrors (bugs), for the log. */
  onUnexpectedError?: (err: unknown) => void;
}

export function recoverStep(options: RecoverOptions): Step {
  return (next) => async (exchange) => {
    try {
      await next(exchange);
    } catch (err) {
      if (!StatusError.is(err)) options.onUnexpectedError?.(err);
      writeError(exchange, err, options.codecs);
    }
  };
}
