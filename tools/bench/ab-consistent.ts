/**
 * Before/after for a change to the consistent read path: GETs by name with no resourceVersion
 * (each waits for a linearizable etcd revision read, shared with the gets around it) from 16
 * keep-alive clients, against Keelson built from two git revisions on one etcd, beside the bare
 * https floor that shares its revision reads the same way and bare https serving the same bytes
 * from memory, all side by side in alternating rounds. No writes happen while measuring, so the
 * two servers can share the etcd (and its data).
 *
 *   node -r @swc-node/register tools/bench/ab-consistent.ts <rev-before> <rev-after> [--clients 16] [--rounds 4] [--ms 10000]
 *
 * `.` as a revision is the working tree. Besides rates and CPU, the table gives each cell's mean
 * time per get by Little's law (clients ÷ rate), the figure a wait for etcd adds to directly.
 */
import { ApiClient } from './api';
import { abArguments, abRun, runTool, spread } from './ab';
import { learnTemplate } from './context';
import { replicaSetsPath } from './fixtures';
import { sharedReadPath } from './scenarios/reads';
import type { Target } from './https-client';
import { type Cell, cpuPerOp, etcdRpcsPerOp, perSecond, type Sample, sideBySide } from './measure';
import { startBare, startKeelson } from './processes';
import { micros, ms, rate, ratio } from './report';

const NAMESPACE = 'bench-ab';

runTool(async () => {
  const { revs, flag } = abArguments('ab-consistent.ts <rev-before> <rev-after> [--clients N] [--rounds N] [--ms N]');
  const [before, after] = revs;
  const clients = flag('--clients', 16);
  const timing = { warmupMs: 500, measureMs: flag('--ms', 10_000), rounds: flag('--rounds', 4) };
  await abRun(revs, 'etcd', timing, async ({ builds, ctx, servers }) => {
    const etcd = await ctx.etcd();
    for (const [slot, build] of builds.entries()) {
      servers.push(await startKeelson(build, { store: { kind: 'etcd', endpoint: etcd.endpoint }, dataDir: await ctx.tmpDir(`ab-${slot}`) }));
    }
    for (const server of servers) {
      const api = new ApiClient(server.target);
      await learnTemplate(ctx, api, NAMESPACE).finally(() => api.close());
      await server.settle();
    }
    const path = `${replicaSetsPath(NAMESPACE)}/template`;
    const bare = await startBare(builds[1]!, servers[1]!.dataDir, servers[1]!.target.tls);
    try {
      const api = new ApiClient(servers[1]!.target);
      const body = await api.request('GET', path).finally(() => api.close());
      // The shared-read floor answers the bytes routed for the plain path.
      await bare.route(path, body.body, 'application/json');
      await bare.floor({ store: { kind: 'etcd', endpoints: [etcd.endpoint] } });
      const cell = (target: Target, stats: () => Promise<{ cpuUs: number }>, at: string, viaEtcd: boolean): Cell => ({
        worker: ctx.worker,
        open: { kind: 'https', target, connections: clients },
        spec: () => ({ op: 'request', method: 'GET', paths: [at], expect: 200 }),
        serverCpu: async () => (await stats()).cpuUs,
        etcdEndpoint: viaEtcd ? etcd.endpoint : undefined,
      });
      const labels = [before, after, 'floor: bare https after a shared revision read', 'bare https from memory'];
      const samples = await sideBySide(
        [
          cell(servers[0]!.target, servers[0]!.stats, path, true),
          cell(servers[1]!.target, servers[1]!.stats, path, true),
          cell(bare.target, bare.stats, sharedReadPath(path), true),
          cell(bare.target, bare.stats, path, false),
        ],
        timing,
      );
      const reference = samples[3]!;
      const meanMs = (s: Sample) => ms((clients / perSecond(s)) * 1e6);
      process.stdout.write(
        `| server | GET/s, ${clients} clients | vs bare | vs ${before} per round (min, median, max) | server CPU µs/op | mean time per get | p50 | etcd RPCs/op |\n|---|---:|---:|---:|---:|---:|---:|---|\n`,
      );
      samples.forEach((s, i) => {
        process.stdout.write(
          `| ${labels[i]} | ${rate(perSecond(s))} | ${ratio(perSecond(s), perSecond(reference))} | ${spread(samples[0]!, s)} | ${micros(cpuPerOp(s))} | ${meanMs(s)} | ${ms(s.latency.percentile(50))} | ${s.etcdRpcs ? etcdRpcsPerOp(s) : ''} |\n`,
        );
      });
    } finally {
      await bare.stop();
    }
  });
});
