/**
 * Before/after for a change to the create path on etcd: ReplicaSet creates over HTTPS from N
 * keep-alive clients (64 by default) against Keelson built from two git revisions, each on an
 * etcd of its own (so that neither server's watch cache takes in the other's writes), side by
 * side in alternating rounds. This machine's speed drifts by more than most changes between
 * two `npm run bench` runs; within one run both servers see the same drift.
 *
 *   node -r @swc-node/register tools/bench/ab-create.ts <rev-before> <rev-after> [--clients 64] [--rounds 6] [--ms 18000] [--store embedded] [--before-node-flags '--flag …'] [--after-node-flags '--flag …'] [--before-server-args '…'] [--after-server-args '…'] [--both-ways]
 *
 * `--store embedded` runs both on embedded stores (each its own data dir) instead of etcd.
 * `.` as a revision is the working tree. `--after-node-flags` starts the second server with
 * those flags for node itself (a V8 setting against none, on one revision given twice);
 * `--before-node-flags` the first (the same comparison the other way round: the second server
 * tends to measure a few percent faster, whatever it runs). `--before-server-args` and
 * `--after-server-args` add Keelson flags to one server's (e.g. `'--controllers *,-disruption'`).
 * `--both-ways` runs it again with the two servers' places swapped and prints the geometric
 * mean of the two ratios.
 */
import { ApiClient } from './api';
import { abArguments, abRun, runTool, spread } from './ab';
import { learnTemplate } from './context';
import { createBodyTemplate, replicaSetsPath } from './fixtures';
import { type Cell, cpuPerOp, perSecond, sideBySide } from './measure';
import { type KeelsonServer, type StoreChoice, startKeelson } from './processes';
import { micros, ms, rate, ratio } from './report';

const NAMESPACE = 'bench-ab';

runTool(async () => {
  const { revs, flag, words } = abArguments('ab-create.ts <rev-before> <rev-after> [--clients N] [--rounds N] [--ms N]');
  const clients = flag('--clients', 64);
  const flags = [words('--before-node-flags'), words('--after-node-flags')];
  const serverArgs = [words('--before-server-args'), words('--after-server-args')];
  const embedded = words('--store')[0] === 'embedded';
  const timing = { warmupMs: 500, measureMs: flag('--ms', 18_000), rounds: flag('--rounds', 6) };
  /** One side-by-side run with the servers in `order` (indexes into the arguments); the second's rate over the first's. */
  const measure = (order: readonly [number, number]): Promise<number> => {
    let after = NaN;
    const runRevs = order.map((i) => revs[i]!);
    return abRun(runRevs, embedded ? 'embedded' : 'etcd', timing, async ({ builds, ctx, servers }) => {
      for (const [slot, build] of builds.entries()) {
        const i = order[slot]!;
        const store: StoreChoice = embedded ? { kind: 'embedded' } : { kind: 'etcd', endpoint: (await ctx.etcd()).endpoint };
        servers.push(await startKeelson(build, { store, dataDir: await ctx.tmpDir(`ab-${slot}`), nodeFlags: flags[i], serverArgs: serverArgs[i] }));
      }
      for (const server of servers) {
        const api = new ApiClient(server.target);
        await learnTemplate(ctx, api, NAMESPACE).finally(() => api.close());
        await server.settle();
      }
      const body = createBodyTemplate(NAMESPACE);
      let run = 0;
      const cell = (server: KeelsonServer): Cell => ({
        worker: ctx.worker,
        open: { kind: 'https', target: server.target, connections: clients },
        spec: () => ({ op: 'request', method: 'POST', paths: [replicaSetsPath(NAMESPACE)], body, namePrefix: `ab${++run}`, expect: 201 }),
        serverCpu: async () => (await server.stats()).cpuUs,
      });
      const samples = await sideBySide(servers.map(cell), timing);
      process.stdout.write(
        `| revision | creates/s, ${clients} clients | vs ${runRevs[0]} | per round (min, median, max) | server CPU µs/op | p50 | p99 |\n|---|---:|---:|---:|---:|---:|---:|\n`,
      );
      samples.forEach((s, slot) => {
        const i = order[slot]!;
        process.stdout.write(
          `| ${revs[i]}${[...flags[i]!, ...serverArgs[i]!].map((f) => ` ${f}`).join('')} | ${rate(perSecond(s))} | ${ratio(perSecond(s), perSecond(samples[0]!))} | ${spread(samples[0]!, s)} | ${micros(cpuPerOp(s))} | ${ms(s.latency.percentile(50))} | ${ms(s.latency.percentile(99))} |\n`,
        );
      });
      const byArgument = order[0] === 0 ? samples : [samples[1]!, samples[0]!];
      after = perSecond(byArgument[1]!) / perSecond(byArgument[0]!);
    }).then(() => after);
  };
  const second = await measure([0, 1]);
  if (!process.argv.includes('--both-ways')) return;
  process.stdout.write('\n');
  const first = await measure([1, 0]);
  process.stdout.write(
    `\n${revs[1]} against ${revs[0]}, both ways round: ${Math.sqrt(second * first).toFixed(3)}× (${second.toFixed(3)}× as the second server, ${first.toFixed(3)}× as the first; the geometric mean cancels the tool's favour for its second server)\n`,
  );
});
