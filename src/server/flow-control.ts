/**
 * API Priority and Fairness for the server (`--enable-priority-and-fairness`, default true, as
 * upstream): one dispatcher both doors admit through, sharing `--max-requests-inflight` +
 * `--max-mutating-requests-inflight` seats among the priority levels, following the
 * configuration objects through the core, with its metrics on the server's registry.
 */
import type { Clock } from '../clock';
import type { CoreApi, CoreState, RequestContext } from '../core';
import { FlowControl } from '../flowcontrol';
import { FlowcontrolMetrics, type ServerMetrics } from '../metrics';
import type { Naming } from '../naming';

export interface FlowControlSettings {
  enablePriorityAndFairness: boolean;
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
  requestTimeoutMs: number;
}

/** The dispatcher, or undefined when priority and fairness is off. */
export function buildFlowControl(
  config: FlowControlSettings,
  deps: { core: CoreApi; state?: CoreState; metrics: ServerMetrics; naming: Naming; clock: Clock; ctx: RequestContext; log: (message: string) => void },
): FlowControl | undefined {
  if (!config.enablePriorityAndFairness) return undefined;
  const state = deps.state;
  const flowControl = new FlowControl({
    serverConcurrencyLimit: config.maxRequestsInflight + config.maxMutatingRequestsInflight,
    requestTimeoutMs: config.requestTimeoutMs,
    clock: deps.clock,
    naming: deps.naming,
    metrics: new FlowcontrolMetrics(deps.metrics.registry),
    ...(state ? { objectCounts: () => state.resources() } : {}),
    log: deps.log,
  });
  flowControl.follow(deps.core, deps.naming.group('flowcontrol.apiserver'), deps.ctx);
  return flowControl;
}
