/**
 * The debug dumps upstream serves under `/debug/api_priority_and_fairness/` (its
 * `apf_controller_debug.go`): one row per priority level, per queue, or per waiting request,
 * cells joined by `,` and aligned as Go's tabwriter aligns them (minimum width 8, padding 1).
 */
import type { FlowControl } from './flow-control';

/** `dump_priority_levels`: each level's queues and counters, by name. */
export function dumpPriorityLevels(flowControl: FlowControl): string {
  const rows: string[][] = [
    [
      'PriorityLevelName',
      'ActiveQueues',
      'IsIdle',
      'IsQuiescing',
      'WaitingRequests',
      'ExecutingRequests',
      'DispatchedRequests',
      'RejectedRequests',
      'TimedoutRequests',
      'CancelledRequests',
    ],
  ];
  for (const level of flowControl.priorityLevels()) {
    const qs = level.queues;
    rows.push([
      level.name,
      String(qs.queues.filter((q) => q.requests.length > 0).length),
      String(qs.isIdle),
      String(level.quiescing),
      String(qs.totRequestsWaiting),
      String(qs.totRequestsExecuting),
      String(qs.totals.dispatched),
      String(qs.totals.rejected),
      String(qs.totals.timedOut),
      String(qs.totals.cancelled),
    ]);
  }
  return tabulate(rows);
}

/** `dump_queues`: every queue of every level. */
export function dumpQueues(flowControl: FlowControl): string {
  const rows: string[][] = [
    ['PriorityLevelName', 'Index', 'PendingRequests', 'ExecutingRequests', 'SeatsInUse', 'NextDispatchR', 'InitialSeatsSum', 'MaxSeatsSum', 'TotalWorkSum'],
  ];
  for (const level of flowControl.priorityLevels()) {
    for (const q of level.queues.queues) {
      rows.push([
        level.name,
        String(q.index),
        String(q.requests.length),
        String(q.requestsExecuting),
        String(q.seatsInUse),
        seatSeconds(q.nextDispatchR),
        String(q.initialSeatsSum),
        String(q.maxSeatsSum),
        seatSeconds(q.totalWorkSum),
      ]);
    }
  }
  return tabulate(rows);
}

/** `dump_requests`: every waiting request; `includeRequestDetails` adds who asked for what. */
export function dumpRequests(flowControl: FlowControl, includeRequestDetails: boolean): string {
  const header = [
    'PriorityLevelName',
    'FlowSchemaName',
    'QueueIndex',
    'RequestIndexInQueue',
    'FlowDistingsher',
    'ArriveTime',
    'InitialSeats',
    'FinalSeats',
    'AdditionalLatency',
  ];
  if (includeRequestDetails) header.push('UserName', 'Verb', 'APIPath', 'Namespace', 'Name', 'APIVersion', 'Resource', 'SubResource');
  const rows: string[][] = [header];
  for (const level of flowControl.priorityLevels()) {
    level.queues.queues.forEach((q, qi) => {
      q.requests.forEach((r, ri) => {
        const row = [
          level.name,
          r.flowSchema,
          String(qi),
          String(ri),
          r.flowDistinguisher,
          rfc3339Nano(r.arrivalMs),
          String(r.estimate.initialSeats),
          String(r.estimate.finalSeats),
          goDuration(r.estimate.additionalLatencyMs),
        ];
        if (includeRequestDetails) {
          const o = r.origin;
          row.push(
            o.user.username,
            o.verb,
            o.path,
            o.namespace,
            o.name,
            o.apiGroup ? `${o.apiGroup}/${o.apiVersion}` : o.apiVersion,
            o.resource,
            o.subresource,
          );
        }
        rows.push(row);
      });
    });
  }
  return tabulate(rows);
}

/** Cells joined by `,` and padded as Go's tabwriter.NewWriter(w, 8, 0, 1, ' ', 0) pads them; the last cell of a row is not padded. */
export function tabulate(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (let i = 0; i < row.length - 1; i++) widths[i] = Math.max(widths[i] ?? 0, Math.max(8, row[i]!.length + 2));
  }
  let out = '';
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) {
      const cell = i < row.length - 1 ? `${row[i]},` : row[i]!;
      out += i < row.length - 1 ? cell.padEnd(widths[i]!, ' ') : cell;
    }
    out += '\n';
  }
  return out;
}

/** Upstream's SeatSeconds printed: nine decimals and `ss`. */
function seatSeconds(value: number): string {
  return `${value.toFixed(9)}ss`;
}

/** Go's RFC3339Nano in UTC: the fraction without trailing zeros. */
function rfc3339Nano(ms: number): string {
  return new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');
}

/** Go's Duration.String for the short durations an estimate holds. */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const trim = (n: number) => String(Number(n.toFixed(6)));
  if (ms < 0.001) return `${trim(ms * 1e6)}ns`;
  if (ms < 1) return `${trim(ms * 1000)}µs`;
  if (ms < 1000) return `${trim(ms)}ms`;
  return `${trim(ms / 1000)}s`;
}
