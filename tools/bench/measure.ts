/**
 * Side-by-side measurement: a subject and its reference run in alternating rounds in the same
 * bench run (A B A B ...), each round over fresh connections with its own warm-up, so that
 * the machine's drift touches both alike. CPU time is read from the serving process before and
 * after each measured window.
 */
import http from 'node:http';
import { Histogram } from './histogram';
import type { Child } from './ipc';
import type { RunResult } from './load/run-loop';
import type { OpenArgs, RunSpec } from './load-worker';
import { kernelCounters, processCpuUs } from './proc-stats';

export interface Timing {
  warmupMs: number;
  measureMs: number;
  /** Rounds per subject; the measured time is split between them. */
  rounds: number;
}

export interface Cell {
  worker: Child;
  open: OpenArgs;
  /** The run's spec; called per round, so names can be fresh. */
  spec: () => RunSpec;
  /** CPU time of the serving process, µs; absent when the generator itself is the process measured (raw store calls). */
  serverCpu?: () => Promise<number>;
  /** etcd's pid, to report its CPU per operation as well. */
  etcdPid?: number;
  /** etcd's client URL, to count the RPCs it handled per operation (from its /metrics). */
  etcdEndpoint?: string;
  /**
   * Processes whose kernel counters (proc-stats.ts `kernelCounters`) are added up over the
   * measured windows, into the sample's `counters` as `<label> <counter>`: label → pid.
   */
  kernelCounters?: Record<string, number>;
  /** Counters the server reports (the bare server's revision reads), read before and after each measured window; their growth is added into the sample's `counters`. */
  serverCounters?: () => Promise<Record<string, number>>;
}

export interface Sample {
  ops: number;
  failed: number;
  outcomes: Record<string, number>;
  bytes: number;
  elapsedMs: number;
  serverCpuUs: number;
  etcdCpuUs?: number;
  generatorCpuUs: number;
  latency: Histogram;
  counters: Record<string, number>;
  /** gRPC calls etcd handled during the measured windows, by method (Range, Txn, Put, ...). */
  etcdRpcs?: Record<string, number>;
  /** Each round's own figures, in order: cells measured side by side share round numbers. */
  rounds: { ops: number; elapsedMs: number; serverCpuUs: number }[];
}

/** etcd's grpc_server_handled_total summed per method. */
export function etcdRpcCounts(endpoint: string): Promise<Map<string, number>> {
  return new Promise((resolve, reject) => {
    http
      .get(`${endpoint}/metrics`, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const counts = new Map<string, number>();
          for (const m of text.matchAll(/^grpc_server_handled_total\{[^}]*grpc_method="(\w+)"[^}]*\} (\S+)$/gm))
            counts.set(m[1], (counts.get(m[1]) ?? 0) + Number(m[2]));
          resolve(counts);
        });
      })
      .on('error', reject);
  });
}

function emptySample(): Sample {
  return { ops: 0, failed: 0, outcomes: {}, bytes: 0, elapsedMs: 0, serverCpuUs: 0, generatorCpuUs: 0, latency: new Histogram(), counters: {}, rounds: [] };
}

function add(into: Sample, run: RunResult, serverCpuUs: number, etcdCpuUs: number | undefined): void {
  into.ops += run.ops;
  into.failed += run.failed;
  into.bytes += run.bytes;
  into.elapsedMs += run.elapsedMs;
  into.serverCpuUs += serverCpuUs;
  into.rounds.push({ ops: run.ops, elapsedMs: run.elapsedMs, serverCpuUs });
  into.generatorCpuUs += run.generatorCpuUs;
  if (etcdCpuUs !== undefined) into.etcdCpuUs = (into.etcdCpuUs ?? 0) + etcdCpuUs;
  into.latency.merge(run.latency);
  for (const [k, v] of Object.entries(run.outcomes)) into.outcomes[k] = (into.outcomes[k] ?? 0) + v;
  for (const [k, v] of Object.entries(run.counters)) into.counters[k] = (into.counters[k] ?? 0) + v;
}

function readKernelCounters(pids: Record<string, number> | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [label, pid] of Object.entries(pids ?? {})) {
    for (const [name, value] of Object.entries(kernelCounters(pid) ?? {})) out[`${label} ${name}`] = value;
  }
  return out;
}

/** Add to `into` how much each counter read in both `before` and `after` grew between them. */
function addGrowth(into: Record<string, number>, before: Record<string, number>, after: Record<string, number>): void {
  for (const [key, end] of Object.entries(after)) {
    if (before[key] !== undefined) into[key] = (into[key] ?? 0) + end - before[key]!;
  }
}

async function round(cell: Cell, warmupMs: number, measureMs: number, into: Sample): Promise<void> {
  const load = await cell.worker.call<number>('open', cell.open);
  try {
    if (warmupMs > 0) await cell.worker.call('run', { load, spec: cell.spec(), durationMs: warmupMs });
    // Read outside the CPU window: asking costs the server CPU of its own.
    const reported0 = await cell.serverCounters?.();
    const rpcs0 = cell.etcdEndpoint ? await etcdRpcCounts(cell.etcdEndpoint) : undefined;
    const cpu0 = await cell.serverCpu?.();
    const etcd0 = cell.etcdPid ? processCpuUs(cell.etcdPid) : undefined;
    const kernel0 = readKernelCounters(cell.kernelCounters);
    const run = await cell.worker.call<RunResult>('run', { load, spec: cell.spec(), durationMs: measureMs });
    const kernel1 = readKernelCounters(cell.kernelCounters);
    const cpu1 = await cell.serverCpu?.();
    const etcd1 = cell.etcdPid ? processCpuUs(cell.etcdPid) : undefined;
    const reported1 = await cell.serverCounters?.();
    addGrowth(into.counters, reported0 ?? {}, reported1 ?? {});
    addGrowth(into.counters, kernel0, kernel1);
    if (cell.etcdEndpoint && rpcs0) {
      const rpcs1 = await etcdRpcCounts(cell.etcdEndpoint);
      into.etcdRpcs ??= {};
      for (const [method, n] of rpcs1) {
        const d = n - (rpcs0.get(method) ?? 0);
        if (d > 0) into.etcdRpcs[method] = (into.etcdRpcs[method] ?? 0) + d;
      }
    }
    const serverCpu = cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : run.generatorCpuUs;
    add(into, run, serverCpu, etcd0 !== undefined && etcd1 !== undefined ? etcd1 - etcd0 : undefined);
  } finally {
    await cell.worker.call('close', { load });
  }
}

/** Measure every cell for `timing.measureMs` in total, alternating between them round by round. */
export async function sideBySide(cells: Cell[], timing: Timing): Promise<Sample[]> {
  const samples = cells.map(() => emptySample());
  const perRound = timing.measureMs / timing.rounds;
  for (let r = 0; r < timing.rounds; r++) {
    // Alternate which goes first, so neither always follows the other's after-effects (GC, compaction).
    const order = r % 2 === 0 ? cells.map((_, i) => i) : cells.map((_, i) => cells.length - 1 - i);
    for (const i of order) await round(cells[i], timing.warmupMs, perRound, samples[i]);
  }
  return samples;
}

export const perSecond = (s: Sample): number => (s.elapsedMs > 0 ? s.ops / (s.elapsedMs / 1000) : 0);

/**
 * `b`'s rate over `a`'s round by round (cells of one sideBySide run, so each pair was measured
 * minutes apart at most): the lowest, the median and the highest. How far a change's ratio moves
 * within one run says how much of it the machine's moments could account for.
 */
export function roundRatios(a: Sample, b: Sample): { min: number; median: number; max: number } | undefined {
  const ratios: number[] = [];
  for (let r = 0; r < Math.min(a.rounds.length, b.rounds.length); r++) {
    const x = a.rounds[r]!;
    const y = b.rounds[r]!;
    if (x.ops > 0 && y.ops > 0 && x.elapsedMs > 0 && y.elapsedMs > 0) ratios.push(y.ops / y.elapsedMs / (x.ops / x.elapsedMs));
  }
  if (ratios.length === 0) return undefined;
  ratios.sort((p, q) => p - q);
  const mid = ratios.length >> 1;
  const median = ratios.length % 2 ? ratios[mid]! : (ratios[mid - 1]! + ratios[mid]!) / 2;
  return { min: ratios[0]!, median, max: ratios[ratios.length - 1]! };
}
export const bytesPerSecond = (s: Sample): number => (s.elapsedMs > 0 ? s.bytes / (s.elapsedMs / 1000) : 0);
export const cpuPerOp = (s: Sample): number => (s.ops > 0 ? s.serverCpuUs / s.ops : NaN);
/** `Range 1.00, Txn 1.00`: etcd RPCs per completed operation. */
export function etcdRpcsPerOp(s: Sample): string {
  if (!s.etcdRpcs || s.ops === 0) return '-';
  const parts = Object.entries(s.etcdRpcs)
    .sort((a, b) => b[1] - a[1])
    .map(([method, n]) => `${method} ${(n / s.ops).toFixed(2)}`);
  return parts.length ? parts.join(', ') : '0';
}

export const etcdCpuPerOp = (s: Sample): number | undefined => (s.etcdCpuUs !== undefined && s.ops > 0 ? s.etcdCpuUs / s.ops : undefined);
