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
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { abArguments, median, runTool } from './ab';
import { type Build, buildForBench } from './build';

interface Cost {
  heapPerPod: number;
  startCpuMs: number;
  cpuPerCreateUs: number;
}

const run = promisify(execFile);

async function measure(build: Build, pods: number): Promise<Cost> {
  const { stdout } = await run(process.execPath, ['--expose-gc', build.file('tools/bench/informers-child')], { env: { ...build.env, INFORMER_PODS: String(pods) }, maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Cost;
}

runTool(async () => {
  const { revs, flag } = abArguments('ab-informers.ts <rev-before> <rev-after> [--pods N] [--rounds N]');
  const pods = flag('--pods', 20_000);
  const rounds = flag('--rounds', 3);
  const builds: Build[] = [];
  try {
    for (const rev of revs) builds.push(await buildForBench(rev === '.' ? undefined : rev));
    const results: Cost[][] = [[], []];
    for (let round = 0; round < rounds; round++) {
      for (const which of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const cost = await measure(builds[which]!, pods);
        results[which]!.push(cost);
        process.stderr.write(`[ab-informers] ${revs[which]} round ${round + 1}: ${JSON.stringify(cost)}\n`);
      }
    }
    process.stdout.write(`${pods.toLocaleString('en-US')} pods, five controllers following them, medians of ${rounds} runs each\n\n`);
    process.stdout.write('| revision | heap per pod | start CPU | CPU per later pod create |\n|---|---:|---:|---:|\n');
    revs.forEach((rev, i) => {
      const r = results[i]!;
      process.stdout.write(`| ${rev} | ${Math.round(median(r.map((c) => c.heapPerPod)))} B | ${Math.round(median(r.map((c) => c.startCpuMs)))} ms | ${Math.round(median(r.map((c) => c.cpuPerCreateUs)))} µs |\n`);
    });
  } finally {
    for (const build of builds) await build.remove();
  }
});
