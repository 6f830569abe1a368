/**
 * Step 7: self-defence, as upstream's max-in-flight and timeout filters (the in-flight counters
 * only when priority and fairness, step 8, is off), before authorization as in upstream's chain:
 *
 * - at most `maxReadOnly` read-only and `maxMutating` mutating requests run at once
 *   (`--max-requests-inflight`, `--max-mutating-requests-inflight`; 0: no limit); one more
 *   answers 429 with `Retry-After: 1` and upstream's plain-text body. Long-running requests
 *   (watches) are not counted, and members of `system:masters` are never refused;
 * - a request that is not long-running and has not answered within `--request-timeout` (or its
 *   shorter `?timeout=`) answers 504 with upstream's Timeout Status; its handler's later writes
 *   are dropped and its context is aborted.
 */
import { type Clock, systemClock } from '../../clock';
import { Deadlines } from '../../clock/deadlines';
import type { ServerMetrics } from '../../metrics';
import { timeout, tooManyRequests } from '../../status';
import type { Codecs } from '../codecs';
import { writeError, writeText } from '../respond';
import { type Exchange, type GatewayResponse, type Step, afterNext, rejectingThrows } from '../types';
import { isLongRunning, requestLabels } from './metrics';
import type { ResourceIndex } from '../resource-index';

/** Upstream's retryAfter for a refused request. */
const RETRY_AFTER_SECONDS = 1;
const READ_ONLY_VERBS = new Set(['get', 'list', 'watch', 'proxy']);
const PRIVILEGED_GROUP = 'system:masters';

export interface LimitsOptions {
  /** `--max-requests-inflight`: read-only requests at once (0: no limit). */
  maxReadOnly: number;
  /** `--max-mutating-requests-inflight` (0: no limit). */
  maxMutating: number;
  /** `--request-timeout` in milliseconds (0: none). */
  requestTimeoutMs: number;
  /** The time the request timeout runs on (default the system clock). */
  clock?: Clock;
  codecs: Codecs;
  index: ResourceIndex;
  metrics?: ServerMetrics;
}

/** Upstream's `?timeout=` for non-watch requests: a Go duration, which may only shorten the server's timeout. */
export function requestedTimeoutMs(query: URLSearchParams): number | undefined {
  const raw = query.get('timeout');
  if (!raw) return undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(raw);
  if (!m) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * unit;
}

export function limitsStep(options: LimitsOptions): Step {
  // The counts live on the metrics when there are any, which read them at scrape.
  const inflight = options.metrics?.inflightNow ?? { readOnly: 0, mutating: 0 };
  // The request timeouts, on one timer (clock/deadlines.ts says why not a node timer each).
  const deadlines = new Deadlines<Exchange>(options.clock ?? systemClock, (exchange) => expire(exchange, options));
  // A request answered within the call whose answer counts as sent (a small one: `whenFlushed`)
  // goes through with no promise of this step's own.
  return (next) =>
    rejectingThrows((exchange) => {
      const info = exchange.info!;
      if (isLongRunning(info)) return next(exchange);
      const isReadOnly = READ_ONLY_VERBS.has(info.verb);
      const limit = isReadOnly ? options.maxReadOnly : options.maxMutating;
      const current = isReadOnly ? inflight.readOnly : inflight.mutating;
      if (limit > 0 && current >= limit && !exchange.user?.groups.includes(PRIVILEGED_GROUP)) {
        refuse(exchange, options);
        return;
      }
      // The request timeout: nothing is wrapped unless the timer fires; then the 504 goes out on
      // the real response and `exchange.response` is swapped for one that drops whatever the
      // handler writes later.
      const ms = timeoutMs(exchange, options);
      if (isReadOnly) inflight.readOnly++;
      else inflight.mutating++;
      const deadline = ms > 0 ? deadlines.add(ms, exchange) : undefined;
      const release = (): void => {
        if (isReadOnly) inflight.readOnly--;
        else inflight.mutating--;
      };
      return afterNext(next, exchange, (err) => {
        if (deadline) deadlines.cancel(deadline);
        return releaseWhenFlushed(exchange, err, release);
      });
    });
}

/**
 * The end of a request that holds a slot or seats: `release` once its response has left the
 * process, as a Go handler blocks on its writes (otherwise a burst of large answers to slow
 * readers piles up in memory), at once when it failed; the outcome stays the request's. With
 * no promise when the response is already out.
 */
export function releaseWhenFlushed(exchange: Exchange, err: unknown, release: () => void): Promise<void> | void {
  if (err !== undefined) {
    release();
    throw err;
  }
  let flushed: Promise<void> | undefined;
  try {
    flushed = exchange.response.whenFlushed();
  } catch (e) {
    release();
    throw e;
  }
  if (!flushed) return release();
  return flushed.then(release, (e: unknown) => {
    release();
    throw e;
  });
}

function refuse(exchange: Exchange, options: LimitsOptions): void {
  refuseTooManyRequests(exchange, RETRY_AFTER_SECONDS, options.index, options.metrics);
}

/**
 * Upstream's tooManyRequests: 429 with `Retry-After` and Go's http.Error text, not a Status (the
 * max-in-flight and the priority-and-fairness filters both answer so), counted as a termination.
 */
export function refuseTooManyRequests(exchange: Exchange, retryAfterSeconds: number, index: ResourceIndex, metrics?: ServerMetrics): void {
  const error = tooManyRequests('Too many requests, please try again later.', retryAfterSeconds);
  if (metrics) {
    const labels = requestLabels(exchange.info!, exchange.request.query, exchange.request.headers['content-type'], index);
    metrics.terminations.inc({ ...labels, code: String(error.code) });
  }
  exchange.response.setHeader('Retry-After', String(retryAfterSeconds));
  writeText(exchange, error.code, `${error.status.message}\n`);
}

/** The request's timeout: the server's, or the request's shorter `?timeout=` (0: none). */
function timeoutMs(exchange: Exchange, options: LimitsOptions): number {
  const requested = requestedTimeoutMs(exchange.request.query);
  return requested !== undefined && (options.requestTimeoutMs === 0 || requested < options.requestTimeoutMs) ? requested : options.requestTimeoutMs;
}

function expire(exchange: Exchange, options: LimitsOptions): void {
  const real = exchange.response;
  if (real.headersSent) {
    // Too late for a Status: end what was started.
    exchange.response = droppingWrites(real);
    real.end();
    return;
  }
  const error = timeout('Timeout: request did not complete within requested timeout - context deadline exceeded');
  writeError(exchange, error, options.codecs);
  exchange.response = droppingWrites(real);
  if (options.metrics) {
    const labels = requestLabels(exchange.info!, exchange.request.query, exchange.request.headers['content-type'], options.index);
    options.metrics.terminations.inc({ ...labels, code: String(error.code) });
  }
}

/** What the handler of a timed-out request writes to: nothing reaches the client any more. */
function droppingWrites(real: GatewayResponse): GatewayResponse {
  return {
    headersSent: true,
    get statusCode() {
      return real.statusCode;
    },
    setHeader: () => {},
    writeHead: () => {},
    flushHeaders: () => {},
    write: () => true,
    drain: () => Promise.resolve(),
    end: () => {},
    abort: () => {},
    whenFlushed: () => real.whenFlushed(),
  };
}
