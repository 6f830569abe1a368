/**
 * Before/after for what the in-process controllers' informers cost: two revisions built, each
 * running informers-child.ts in turns (`--rounds`, the order alternating): a core holding
 * `--pods` pods, then the five controllers that follow pods (replicaset, disruption,
 * nodelifecycle, taint-eviction-controller, podgc) started as one group. Medians of the heap
 * their informers hold per pod, the CPU of their start, and the CPU per pod created while they
 * follow.
 *
 *   node -r @swc-node/register tools/bench/ab-informers.ts <rev-before> <rev-after> [--pods 20000] [--rounds 3]
 *
 * `.` as a revision is the working tree. The table (Markdown) goes to stdout.
 */
import { abArguments, childRunsInTurns, median, runTool } from './ab';

interface Cost {
  heapPerPod: number;
  startCpuMs: number;
  cpuPerCreateUs: number;
}

runTool(async () => {
  const { revs, flag } = abArguments('ab-informers.ts <rev-before> <rev-after> [--pods N] [--rounds N]');
  const pods = flag('--pods', 20_000);
  const rounds = flag('--rounds', 3);
  const results = await childRunsInTurns<Cost>(revs, 'informers-child', rounds, { nodeFlags: ['--expose-gc'], env: { INFORMER_PODS: String(pods) } });
  process.stdout.write(`${pods.toLocaleString('en-US')} pods, five controllers following them, medians of ${rounds} runs each\n\n`);
  process.stdout.write('| revision | heap per pod | start CPU | CPU per later pod create |\n|---|---:|---:|---:|\n');
  revs.forEach((rev, i) => {
    const r = results[i]!;
    process.stdout.write(
      `| ${rev} | ${Math.round(median(r.map((c) => c.heapPerPod)))} B | ${Math.round(median(r.map((c) => c.startCpuMs)))} ms | ${Math.round(median(r.map((c) => c.cpuPerCreateUs)))} µs |\n`,
    );
  });
});
