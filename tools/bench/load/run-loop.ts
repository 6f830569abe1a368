/**
 * The closed-loop driver every load uses: `concurrency` loops, each issuing one operation at a
 * time until the deadline, recording each operation's latency. The generator's own CPU time
 * over the run is reported too (the reference rows' "server" is sometimes this very process).
 */
import { Histogram, type HistogramSnapshot } from '../histogram';

export interface OpOutcome {
  /** Counted as a completed operation (e.g. the expected HTTP status). */
  ok: boolean;
  /** Response bytes, for bytes/s. */
  bytes?: number;
  /** A label for the outcome (HTTP status, "conflict", ...), tallied in `outcomes`. */
  label?: string;
}

export interface RunResult {
  ops: number;
  failed: number;
  outcomes: Record<string, number>;
  bytes: number;
  elapsedMs: number;
  /** This generator process's CPU time over the run, µs. */
  generatorCpuUs: number;
  latency: HistogramSnapshot;
  /** Extra counters a load reports (conflicts, attempts). */
  counters: Record<string, number>;
}

export type Operation = (worker: number, iteration: number) => Promise<OpOutcome>;

export async function runLoop(concurrency: number, durationMs: number, op: Operation, counters: Record<string, number> = {}): Promise<RunResult> {
  const latency = new Histogram();
  const outcomes: Record<string, number> = {};
  let ops = 0;
  let failed = 0;
  let bytes = 0;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const deadline = start + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const t0 = performance.now();
        let outcome: OpOutcome;
        try {
          outcome = await op(worker, i);
        } catch (err) {
          outcome = { ok: false, label: err instanceof Error ? err.message.slice(0, 80) : 'error' };
        }
        latency.record((performance.now() - t0) * 1000);
        if (outcome.ok) ops++;
        else failed++;
        bytes += outcome.bytes ?? 0;
        if (outcome.label) outcomes[outcome.label] = (outcomes[outcome.label] ?? 0) + 1;
      }
    }),
  );
  const elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  return { ops, failed, outcomes, bytes, elapsedMs, generatorCpuUs: cpu.user + cpu.system, latency: latency.snapshot(), counters };
}
