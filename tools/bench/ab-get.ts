/**
 * Before/after for a hot-path change: a cached GET (`?resourceVersion=0`, 16 keep-alive clients)
 * against Keelson built from two git revisions (Express listener), the second revision once more
 * with the node listener, and the bare https reference, all four side by side in alternating
 * rounds on embedded stores.
 *
 *   node -r @swc-node/register tools/bench/ab-get.ts <rev-before> <rev-after> [--rounds 4] [--ms 10000]
 */
import { ApiClient } from './api';
import { abArguments, abRun, runTool, spread } from './ab';
import { learnTemplate } from './context';
import { replicaSetsPath } from './fixtures';
import type { Target } from './https-client';
import { type Cell, cpuPerOp, perSecond, sideBySide } from './measure';
import { startBare, startKeelson } from './processes';
import { micros, ms, rate, ratio } from './report';

runTool(async () => {
  const { revs, flag } = abArguments('ab-get.ts <rev-before> <rev-after> [--rounds N] [--ms N]');
  const [before, after] = revs;
  const timing = { warmupMs: 500, measureMs: flag('--ms', 10_000), rounds: flag('--rounds', 4) };
  await abRun(revs, 'embedded', timing, async ({ builds, ctx, servers }) => {
    const labels = [`${before}, Express listener`, `${after}, Express listener`, `${after}, node listener`, 'bare node:https'];
    servers.push(await startKeelson(builds[0]!, { store: { kind: 'embedded' }, dataDir: await ctx.tmpDir('ab-before') }));
    servers.push(await startKeelson(builds[1]!, { store: { kind: 'embedded' }, dataDir: await ctx.tmpDir('ab-after') }));
    servers.push(await startKeelson(builds[1]!, { store: { kind: 'embedded' }, dataDir: await ctx.tmpDir('ab-node'), adapter: 'node' }));
    for (const server of servers) {
      const api = new ApiClient(server.target);
      await learnTemplate(ctx, api, 'bench-ab').finally(() => api.close());
      await server.settle();
    }
    const path = `${replicaSetsPath('bench-ab')}/template?resourceVersion=0`;
    const bare = await startBare(builds[1]!, servers[1]!.dataDir, servers[1]!.target.tls);
    const api = new ApiClient(servers[1]!.target);
    const body = await api.request('GET', path).finally(() => api.close());
    await bare.route(path, body.body, 'application/json');
    const cell = (target: Target, stats: () => Promise<{ cpuUs: number }>): Cell => ({
      worker: ctx.worker,
      open: { kind: 'https', target, connections: 16 },
      spec: () => ({ op: 'request', method: 'GET', paths: [path], expect: 200 }),
      serverCpu: async () => (await stats()).cpuUs,
    });
    const samples = await sideBySide([...servers.map((server) => cell(server.target, server.stats)), cell(bare.target, bare.stats)], timing);
    await bare.stop();
    const reference = samples[samples.length - 1]!;
    process.stdout.write(`| server | GET/s | vs bare | vs ${before} per round (min, median, max) | server CPU µs/op | p50 |\n|---|---:|---:|---:|---:|---:|\n`);
    samples.forEach((s, i) => {
      process.stdout.write(
        `| ${labels[i]} | ${rate(perSecond(s))} | ${ratio(perSecond(s), perSecond(reference))} | ${spread(samples[0]!, s)} | ${micros(cpuPerOp(s))} | ${ms(s.latency.percentile(50))} |\n`,
      );
    });
  });
});
