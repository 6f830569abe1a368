/**
 * Step 8: API Priority and Fairness (`--enable-priority-and-fairness`, src/flowcontrol), as
 * upstream's WithPriorityAndFairness filter, inside the request timeout of step 7 (so a request's
 * wait counts against it, as upstream's timeout filter wraps this one) and, as upstream's chain
 * has it, before authorization (so a request authorization denies is classified, limited and
 * answered with the headers):
 *
 * - every request but a long-running non-watch one is classified; the answer carries the
 *   `X-Kubernetes-PF-FlowSchema-UID` and `X-Kubernetes-PF-PriorityLevel-UID` headers;
 * - it runs at once, waits in its level's queues (at most a quarter of its timeout), or is
 *   refused 429 with `Retry-After` and upstream's plain-text body (Go's http.Error, as the
 *   max-in-flight filter answers; clients read it as reason TooManyRequests);
 * - a request holds its seats until its answer has left the process (as a Go handler blocks on
 *   its writes), a watch only until it starts streaming (upstream's watch initialization
 *   signal), and is counted as a watcher of its type for the cost of writes meanwhile;
 * - `/debug/api_priority_and_fairness/dump_*` are answered by `serveFlowControlDump`, which the
 *   router calls after authorization (callers authorized for the path only).
 *
 * A request that gets its seats at once passes with no promise of this step's own.
 */
import {
  type Admission,
  type FlowControl,
  type FlowRequest,
  type Ticket,
  dumpPriorityLevels,
  dumpQueues,
  dumpRequests,
  listHintsOfQuery,
} from '../../flowcontrol';
import { RESPONSE_HEADER_FLOW_SCHEMA_UID, RESPONSE_HEADER_PRIORITY_LEVEL_UID } from '../../core';
import type { ServerMetrics } from '../../metrics';
import { writeText } from '../respond';
import type { ResourceIndex } from '../resource-index';
import { type Exchange, type GatewayResponse, type Step, afterNext, rejectingThrows } from '../types';
import { refuseTooManyRequests, releaseWhenFlushed, requestedTimeoutMs } from './limits';

const DEBUG_PREFIX = '/debug/api_priority_and_fairness/';

export interface PriorityAndFairnessOptions {
  flowControl: FlowControl;
  /** `--request-timeout` in milliseconds: a request waits at most a quarter of its timeout. */
  requestTimeoutMs: number;
  index: ResourceIndex;
  metrics?: ServerMetrics;
}

export function priorityAndFairnessStep(options: PriorityAndFairnessOptions): Step {
  const { flowControl } = options;
  return (inner) => {
    return rejectingThrows((exchange) => {
      const info = exchange.info!;
      const request = flowRequestOf(exchange);
      const isWatch = info.isResourceRequest && info.verb === 'watch';
      const listing = info.isResourceRequest && (info.verb === 'list' || isWatch);
      const admission = flowControl.admit(request, {
        ...(listing ? { list: listHintsOfQuery(exchange.request.query) } : {}),
        waitLimitMs: waitLimitMs(exchange, options.requestTimeoutMs, isWatch),
        signal: () => exchange.request.signal,
      });
      setClassificationHeaders(exchange.response, admission);
      switch (admission.outcome) {
        case 'execute':
          return run(exchange, admission.ticket, isWatch ? request : undefined);
        case 'reject':
          return refuse(exchange, admission.retryAfterSeconds, options);
        case 'wait':
          return admission.decided.then((outcome) =>
            outcome === 'execute'
              ? run(exchange, admission.ticket, isWatch ? request : undefined)
              : refuse(exchange, flowControl.retryAfterSeconds(admission.classification.priorityLevel), options),
          );
      }
    });

    function run(exchange: Exchange, ticket: Ticket, watch: FlowRequest | undefined): Promise<void> | void {
      if (watch) return runWatch(exchange, ticket, watch);
      return afterNext(inner, exchange, (err) => releaseWhenFlushed(exchange, err, () => flowControl.finish(ticket)));
    }

    function runWatch(exchange: Exchange, ticket: Ticket, watch: FlowRequest): Promise<void> | void {
      const forget = flowControl.watches.register(watch);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        flowControl.finish(ticket);
      };
      // The seats go back at the end of the turn the watch started streaming in, once the
      // events it sends at once (the initial ones from the cache) are written.
      exchange.response = signallingStart(exchange.response, () => setImmediate(release));
      return afterNext(inner, exchange, (err) => {
        release();
        forget();
        if (err !== undefined) throw err;
      });
    }
  };
}

/** Serve `/debug/api_priority_and_fairness/*` (the router, after authorization); false for any other path. */
export function serveFlowControlDump(exchange: Exchange, flowControl: FlowControl): boolean {
  const info = exchange.info!;
  if (info.isResourceRequest || !info.path.startsWith(DEBUG_PREFIX)) return false;
  writeDump(exchange, flowControl, info.path);
  return true;
}

function writeDump(exchange: Exchange, flowControl: FlowControl, path: string): void {
  const method = exchange.request.method;
  if (method !== 'GET' && method !== 'HEAD') return writeText(exchange, 405, 'Method Not Allowed\n');
  switch (path.slice(DEBUG_PREFIX.length)) {
    case 'dump_priority_levels':
      return writeText(exchange, 200, dumpPriorityLevels(flowControl));
    case 'dump_queues':
      return writeText(exchange, 200, dumpQueues(flowControl));
    case 'dump_requests':
      return writeText(exchange, 200, dumpRequests(flowControl, (exchange.request.query.get('includeRequestDetails') ?? '').length > 0));
    default:
      return writeText(exchange, 404, '404 page not found\n');
  }
}

/** What classification reads of an exchange: the request info and the user. */
export function flowRequestOf(exchange: Exchange): FlowRequest {
  const info = exchange.info!;
  const user = exchange.user ?? { username: '', groups: [] };
  if (!info.isResourceRequest) {
    return {
      user,
      isResourceRequest: false,
      verb: info.verb,
      path: info.path,
      apiGroup: '',
      apiVersion: '',
      resource: '',
      subresource: '',
      namespace: '',
      name: '',
    };
  }
  return {
    user,
    isResourceRequest: true,
    verb: info.verb,
    path: info.path,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
  };
}

/** A quarter of the request's deadline (its `?timeout=` or the server's), as upstream's getRequestWaitContext. */
function waitLimitMs(exchange: Exchange, serverTimeoutMs: number, isWatch: boolean): number {
  const requested = isWatch ? undefined : requestedTimeoutMs(exchange.request.query);
  const timeout = requested !== undefined && (serverTimeoutMs === 0 || requested < serverTimeoutMs) ? requested : serverTimeoutMs;
  // No deadline at all: upstream's default wait limit, 15 s.
  return timeout > 0 ? timeout / 4 : 15_000;
}

function setClassificationHeaders(response: GatewayResponse, admission: Admission): void {
  response.setHeader(RESPONSE_HEADER_FLOW_SCHEMA_UID, admission.classification.flowSchema.metadata?.uid ?? '');
  response.setHeader(RESPONSE_HEADER_PRIORITY_LEVEL_UID, admission.classification.priorityLevel.metadata?.uid ?? '');
}

function refuse(exchange: Exchange, retryAfterSeconds: number, options: PriorityAndFairnessOptions): void {
  refuseTooManyRequests(exchange, retryAfterSeconds, options.index, options.metrics);
}

/** The response, telling `started` the first time anything of it is sent. */
function signallingStart(real: GatewayResponse, started: () => void): GatewayResponse {
  let signalled = false;
  const signal = () => {
    if (signalled) return;
    signalled = true;
    started();
  };
  return {
    get headersSent() {
      return real.headersSent;
    },
    get statusCode() {
      return real.statusCode;
    },
    setHeader: (name, value) => real.setHeader(name, value),
    writeHead: (status) => real.writeHead(status),
    flushHeaders: () => {
      signal();
      real.flushHeaders();
    },
    write: (chunk) => {
      signal();
      return real.write(chunk);
    },
    ...(real.chunkWriter
      ? {
          chunkWriter: () => {
            signal();
            return real.chunkWriter!();
          },
        }
      : {}),
    drain: () => real.drain(),
    end: (chunk) => {
      signal();
      real.end(chunk);
    },
    abort: () => real.abort(),
    whenFlushed: () => real.whenFlushed(),
  };
}
