/**
 * Step 2: one log entry per request once it has been answered, as upstream's HTTP log writes it
 * (`"HTTP" verb URI latency userAgent audit-ID srcIP resp`): no headers but the user agent, so
 * no credential ever reaches the log.
 */
import { thenWithCode } from './answered';
import type { Step } from '../types';

export interface RequestLogEntry {
  verb: string;
  URI: string;
  latency: string;
  userAgent?: string;
  'audit-ID'?: string;
  srcIP?: string;
  resp: number;
}

/** Go's time.Duration text for a latency: `1.234567ms`, `2.5s`, `950µs`. */
export function goDuration(ms: number): string {
  if (ms >= 1000) return `${+(ms / 1000).toFixed(9)}s`;
  if (ms >= 1) return `${+ms.toFixed(6)}ms`;
  return `${+(ms * 1000).toFixed(3)}µs`;
}

export function requestLogStep(onLogged: (entry: RequestLogEntry) => void): Step {
  return (next) => (exchange) => {
    const start = performance.now();
    return thenWithCode(next, exchange, (resp) => {
      const { request } = exchange;
      const query = request.query.toString();
      onLogged({
        verb: request.method,
        URI: query ? `${request.path}?${query}` : request.path,
        latency: goDuration(performance.now() - start),
        ...(request.headers['user-agent'] ? { userAgent: request.headers['user-agent'] } : {}),
        ...(exchange.id ? { 'audit-ID': exchange.id } : {}),
        ...(request.remoteAddress ? { srcIP: request.remoteAddress.replace(/^::ffff:/, '') } : {}),
        resp,
      });
    });
  };
}
