/**
 * Before/after for a change to start-up: Keelson built from two git revisions, started in turns
 * on one etcd holding 100,000 ReplicaSets (`--objects N`), each start measured from fork to the
 * first `/readyz` 200, with its CPU to ready and peak RSS. Taking turns on one store puts both
 * builds under the same drift of this machine's speed; the order within a pair alternates, so
 * neither build always starts right after the other's exit.
 *
 *   node -r @swc-node/register tools/bench/ab-startup.ts <rev-before> <rev-after> [--starts 8] [--objects 100000] [--before-server-args '…'] [--after-server-args '…'] [--before-node-flags '…'] [--after-node-flags '…']
 *
 * `.` as a revision is the working tree. etcd's own CPU per start is read from /proc. The
 * server-args flags add Keelson flags to one build's starts (one revision given twice, e.g.
 * `--after-server-args '--controllers *,-replicaset,-garbagecollector'`); the node-flags ones
 * start one build's servers with flags for node itself (a V8 setting against none).
 */
import { ApiClient } from './api';
import { abArguments, abRun, median, runTool } from './ab';
import { learnTemplate } from './context';
import { startKeelson } from './processes';
import { processCpuUs } from './proc-stats';
import { bytes, count } from './report';

interface Start {
  readyMs: number;
  cpuMs: number;
  etcdCpuMs: number;
  peakRss: number;
}

runTool(async () => {
  const { revs, flag, words } = abArguments('ab-startup.ts <rev-before> <rev-after> [--starts N] [--objects N]');
  const starts = flag('--starts', 8);
  const objects = flag('--objects', 100_000);
  const serverArgs = [words('--before-server-args'), words('--after-server-args')];
  const nodeFlags = [words('--before-node-flags'), words('--after-node-flags')];
  await abRun(revs, 'etcd', { warmupMs: 0, measureMs: 0, rounds: starts }, async ({ builds, ctx }) => {
    const etcd = await ctx.etcd();
    const store = { kind: 'etcd' as const, endpoint: etcd.endpoint };
    const first = await startKeelson(builds[1]!, { store, dataDir: await ctx.tmpDir('ab-startup-template') });
    try {
      const api = new ApiClient(first.target);
      await learnTemplate(ctx, api, 'bench-template').finally(() => api.close());
    } finally {
      await first.stop();
    }
    ctx.log(`preloading ${objects.toLocaleString('en-US')} ReplicaSets`);
    await ctx.worker.call('preload', { store, template: ctx.template, groups: [{ namespace: 'bench-startup', count: objects }] });
    const results: Start[][] = [[], []];
    const etcdCpu = () => (etcd.pid !== undefined ? (processCpuUs(etcd.pid) ?? NaN) : NaN);
    for (let round = 0; round < starts; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const which of order) {
        const etcdBefore = etcdCpu();
        const server = await startKeelson(builds[which]!, {
          store,
          dataDir: await ctx.tmpDir(`ab-startup-${which}-${round}`),
          serverArgs: serverArgs[which],
          nodeFlags: nodeFlags[which],
        });
        const etcdAfter = etcdCpu();
        try {
          const ready = await server.stats();
          const start: Start = {
            readyMs: server.startMs,
            cpuMs: ready.cpuUs / 1000,
            etcdCpuMs: (etcdAfter - etcdBefore) / 1000,
            peakRss: server.peakRss() ?? ready.maxRss,
          };
          results[which]!.push(start);
          ctx.log(
            `round ${round + 1}, ${revs[which]}: ready ${count(start.readyMs)} ms, CPU ${count(start.cpuMs)} ms, etcd ${count(start.etcdCpuMs)} ms, peak RSS ${bytes(start.peakRss)}`,
          );
        } finally {
          await server.stop();
        }
      }
    }
    const line = (which: number) => {
      const r = results[which]!;
      return `| ${[revs[which], ...nodeFlags[which]!, ...serverArgs[which]!].join(' ')} | ${count(median(r.map((s) => s.readyMs)))} ms (${count(Math.min(...r.map((s) => s.readyMs)))}–${count(Math.max(...r.map((s) => s.readyMs)))}) | ${count(median(r.map((s) => s.cpuMs)))} ms | ${count(median(r.map((s) => s.etcdCpuMs)))} ms | ${bytes(median(r.map((s) => s.peakRss)))} |`;
    };
    process.stdout.write(
      `Start-up on ${objects.toLocaleString('en-US')} ReplicaSets in etcd, ${starts} starts each, taking turns (medians):\n\n` +
        '| revision | to ready (lowest–highest) | CPU to ready | etcd CPU | peak RSS |\n|---|---:|---:|---:|---:|\n' +
        `${line(0)}\n${line(1)}\n\nafter / before, time to ready: ${(median(results[1]!.map((s) => s.readyMs)) / median(results[0]!.map((s) => s.readyMs))).toFixed(3)}×\n`,
    );
  });
});
