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
import { abArguments, childRunsInTurns, median, runTool } from './ab';
import { startEtcd } from '../../test/support/etcd';

interface Round {
  cpuUs: number;
  perSecond: number;
}

runTool(async () => {
  const { revs, flag, words } = abArguments('ab-updates.ts <rev-before> <rev-after> [--runs N] [--store etcd|embedded]');
  const runs = flag('--runs', 2);
  const embedded = words('--store')[0] === 'embedded';
  const etcd = embedded ? undefined : await startEtcd();
  try {
    const outputs = await childRunsInTurns<{ rounds: Round[]; conflicts: number }>(revs, 'updates-child', runs, {
      env: etcd ? { UPDATES_ETCD: etcd.endpoint } : {},
    });
    process.stdout.write(`status updates of 200 pods on ${etcd ? 'etcd' : 'the embedded store'}, ${runs} runs each in turns, medians of their rounds\n\n`);
    process.stdout.write('| revision | CPU per update | updates/s | 409s retried |\n|---|---:|---:|---:|\n');
    revs.forEach((rev, i) => {
      const rounds = outputs[i]!.flatMap((o) => o.rounds);
      const conflicts = outputs[i]!.reduce((sum, o) => sum + o.conflicts, 0);
      process.stdout.write(
        `| ${rev} | ${Math.round(median(rounds.map((x) => x.cpuUs)))} µs | ${Math.round(median(rounds.map((x) => x.perSecond))).toLocaleString('en-US')} | ${conflicts} |\n`,
      );
    });
  } finally {
    await etcd?.stop();
  }
});
