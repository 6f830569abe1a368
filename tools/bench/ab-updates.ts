/**
 * Before/after for the update path: two revisions built, each running updates-child.ts in turns
 * (`--runs`, the order alternating), on one etcd (or the embedded store with `--store
 * embedded`): status updates of 200 pods, each read from the watch cache and replaced, as a
 * kubelet writes them. Medians over every round of CPU per update and updates per second, in
 * the process holding the core (etcd's own CPU is not counted).
 *
 *   node -r @swc-node/register tools/bench/ab-updates.ts <rev-before> <rev-after> [--runs 2] [--store etcd|embedded]
 *
 * `.` as a revision is the working tree. The table (Markdown) goes to stdout.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { abArguments, median, runTool } from './ab';
import { type Build, buildForBench } from './build';
import { startEtcd } from '../../test/support/etcd';

interface Round {
  cpuUs: number;
  perSecond: number;
}

const run = promisify(execFile);

runTool(async () => {
  const { revs, flag } = abArguments('ab-updates.ts <rev-before> <rev-after> [--runs N] [--store etcd|embedded]');
  const runs = flag('--runs', 2);
  const storeAt = process.argv.indexOf('--store');
  const embedded = storeAt > 0 && process.argv[storeAt + 1] === 'embedded';
  const etcd = embedded ? undefined : await startEtcd();
  const builds: Build[] = [];
  try {
    for (const rev of revs) builds.push(await buildForBench(rev === '.' ? undefined : rev));
    const results: Round[][] = [[], []];
    let conflicts = [0, 0];
    for (let r = 0; r < runs; r++) {
      for (const which of r % 2 === 0 ? [0, 1] : [1, 0]) {
        const env = { ...builds[which]!.env, ...(etcd ? { UPDATES_ETCD: etcd.endpoint } : {}) };
        const { stdout } = await run(process.execPath, [builds[which]!.file('tools/bench/updates-child')], { env, maxBuffer: 1 << 20 });
        const out = JSON.parse(stdout.trim().split('\n').pop()!) as { rounds: Round[]; conflicts: number };
        results[which]!.push(...out.rounds);
        conflicts[which]! += out.conflicts;
        process.stderr.write(`[ab-updates] ${revs[which]} run ${r + 1}: ${JSON.stringify(out)}\n`);
      }
    }
    process.stdout.write(`status updates of 200 pods on ${etcd ? 'etcd' : 'the embedded store'}, ${runs} runs each in turns, medians of their rounds\n\n`);
    process.stdout.write('| revision | CPU per update | updates/s | 409s retried |\n|---|---:|---:|---:|\n');
    revs.forEach((rev, i) => {
      const r = results[i]!;
      process.stdout.write(`| ${rev} | ${Math.round(median(r.map((x) => x.cpuUs)))} µs | ${Math.round(median(r.map((x) => x.perSecond))).toLocaleString('en-US')} | ${conflicts[i]} |\n`);
    });
  } finally {
    for (const build of builds) await build.remove();
    await etcd?.stop();
  }
});
