/**
 * The cells of upstream's pod printer (printPod): READY as ready/total containers (restartable
 * init containers count), STATUS as kubectl shows it (`Init:1/2`, `CrashLoopBackOff`,
 * `Completed`, `Terminating`, ...), RESTARTS with the age of the last restart, and the wide
 * columns (IP, node, nominated node, readiness gates).
 */
import type { TableRowCondition } from './types';
import { since } from './format';

interface ContainerState {
  waiting?: { reason?: string };
  running?: object;
  terminated?: { exitCode?: number; signal?: number; reason?: string; finishedAt?: string | null };
}

interface ContainerStatus {
  name?: string;
  ready?: boolean;
  started?: boolean;
  restartCount?: number;
  state?: ContainerState;
  lastState?: ContainerState;
}

export interface PrintablePod {
  metadata?: { deletionTimestamp?: string | null };
  spec?: {
    containers?: unknown[];
    initContainers?: { name?: string; restartPolicy?: string }[];
    nodeName?: string;
    readinessGates?: { conditionType?: string }[];
  };
  status?: {
    phase?: string;
    reason?: string;
    nominatedNodeName?: string;
    podIPs?: { ip?: string }[];
    conditions?: { type?: string; status?: string; reason?: string }[];
    initContainerStatuses?: ContainerStatus[];
    containerStatuses?: ContainerStatus[];
  };
}

export interface PodCells {
  ready: string;
  status: string;
  restarts: string;
  ip: string;
  node: string;
  nominatedNode: string;
  readinessGates: string;
  conditions?: TableRowCondition[];
}

const NODE_UNREACHABLE_POD_REASON = 'NodeLost';

function time(value: string | null | undefined): number {
  const t = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isNaN(t) ? 0 : t;
}

function conditionTrue(status: PrintablePod['status'], type: string): boolean {
  return (status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

/** upstream printPod, the cells after NAME and before AGE, plus the wide ones. */
export function podCells(pod: PrintablePod, now: number): PodCells {
  const spec = pod.spec ?? {};
  const status = pod.status ?? {};
  let restarts = 0;
  let restartableRestarts = 0;
  let totalContainers = (spec.containers ?? []).length;
  let readyContainers = 0;
  let lastRestart = 0;
  let lastRestartableRestart = 0;
  const phase = status.phase ?? '';
  let reason = status.reason || phase;
  for (const c of status.conditions ?? []) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }
  let conditions: TableRowCondition[] | undefined;
  if (phase === 'Succeeded') conditions = [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }];
  else if (phase === 'Failed') conditions = [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }];

  const restartable = new Set<string>();
  for (const c of spec.initContainers ?? []) {
    if (c.restartPolicy === 'Always') {
      restartable.add(c.name ?? '');
      totalContainers++;
    }
  }

  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i]!;
    const isRestartable = restartable.has(c.name ?? '');
    restarts += c.restartCount ?? 0;
    const finished = time(c.lastState?.terminated?.finishedAt);
    if (c.lastState?.terminated && finished > lastRestart) lastRestart = finished;
    if (isRestartable) {
      restartableRestarts += c.restartCount ?? 0;
      if (c.lastState?.terminated && finished > lastRestartableRestart) lastRestartableRestart = finished;
    }
    const terminated = c.state?.terminated;
    const waiting = c.state?.waiting;
    if (terminated && (terminated.exitCode ?? 0) === 0) continue;
    if (isRestartable && c.started) {
      if (c.ready) readyContainers++;
      continue;
    }
    if (terminated) {
      if (!terminated.reason) {
        reason = terminated.signal ? `Init:Signal:${terminated.signal}` : `Init:ExitCode:${terminated.exitCode ?? 0}`;
      } else {
        reason = `Init:${terminated.reason}`;
      }
    } else if (waiting?.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${(spec.initContainers ?? []).length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || conditionTrue(status, 'Initialized')) {
    restarts = restartableRestarts;
    lastRestart = lastRestartableRestart;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i]!;
      restarts += c.restartCount ?? 0;
      const finished = time(c.lastState?.terminated?.finishedAt);
      if (c.lastState?.terminated && finished > lastRestart) lastRestart = finished;
      const terminated = c.state?.terminated;
      if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
      else if (terminated?.reason) reason = terminated.reason;
      else if (terminated) reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode ?? 0}`;
      else if (c.ready && c.state?.running) {
        hasRunning = true;
        readyContainers++;
      }
    }
    // Back to Running (or NotReady) while any container still runs.
    if (reason === 'Completed' && hasRunning) reason = conditionTrue(status, 'Ready') ? 'Running' : 'NotReady';
  }

  const deleting = pod.metadata?.deletionTimestamp != null;
  if (deleting && status.reason === NODE_UNREACHABLE_POD_REASON) reason = 'Unknown';
  else if (deleting && phase !== 'Failed' && phase !== 'Succeeded') reason = 'Terminating';

  let restartsText = String(restarts);
  if (restarts !== 0 && lastRestart !== 0) restartsText = `${restarts} (${since(new Date(lastRestart).toISOString(), now)} ago)`;

  let readinessGates = '<none>';
  const gates = spec.readinessGates ?? [];
  if (gates.length) {
    let trueConditions = 0;
    for (const gate of gates) {
      const condition = (status.conditions ?? []).find((c) => c.type === gate.conditionType);
      if (condition?.status === 'True') trueConditions++;
    }
    readinessGates = `${trueConditions}/${gates.length}`;
  }

  const cells: PodCells = {
    ready: `${readyContainers}/${totalContainers}`,
    status: reason,
    restarts: restartsText,
    ip: status.podIPs?.[0]?.ip || '<none>',
    node: spec.nodeName || '<none>',
    nominatedNode: status.nominatedNodeName || '<none>',
    readinessGates,
  };
  if (conditions) cells.conditions = conditions;
  return cells;
}
