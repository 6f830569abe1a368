/**
 * Before/after for a hot-path change: a cached GET (`?resourceVersion=0`, 16 keep-alive clients)
 * against Keelson built from two git revisions (Express listener), the second revision once more
 * with the node listener, and the bare https reference, all four side by side in alternating
 * rounds on embedded stores.
 *
 *   node -r @swc-node/register tools/bench/ab-get.ts <rev-before> <rev-after> [--rounds 4] [--ms 10000]
 */
import { ApiClient } from './api';
import { buildForBench } from './build';
import { createContext, learnTemplate } from './context';
import { replicaSetsPath } from './fixtures';
import type { Target } from './https-client';
import { type Cell, cpuPerOp, perSecond, sideBySide } from './measure';
import { type KeelsonServer, startBare, startKeelson, startWorker } from './processes';
import { micros, ms, rate, ratio } from './report';

async function main(): Promise<void> {
  const [before, after] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (!before || !after) throw new Error('usage: ab-get.ts <rev-before> <rev-after> [--rounds N] [--ms N]');
  const flag = (name: string, fallback: number) => {
    const at = process.argv.indexOf(name);
    return at >= 0 ? Number(process.argv[at + 1]) : fallback;
  };
  const builds = [await buildForBench(before), await buildForBench(after)];
  const worker = startWorker(builds[1]);
  const timing = { warmupMs: 500, measureMs: flag('--ms', 10_000), rounds: flag('--rounds', 4) };
  const ctx = createContext({ quick: false, store: 'embedded', only: new Set(), profile: false }, builds[1], worker, timing, (l) => process.stderr.write(`${l}\n`));
  const servers: Array<{ label: string; server: KeelsonServer }> = [];
  try {
    servers.push({ label: `${before}, Express listener`, server: await startKeelson(builds[0], { store: { kind: 'embedded' }, dataDir: await ctx.tmpDir('ab-before') }) });
    servers.push({ label: `${after}, Express listener`, server: await startKeelson(builds[1], { store: { kind: 'embedded' }, dataDir: await ctx.tmpDir('ab-after') }) });
    servers.push({ label: `${after}, node listener`, server: await startKeelson(builds[1], { store: { kind: 'embedded' }, dataDir: await ctx.tmpDir('ab-node'), adapter: 'node' }) });
    for (const { server } of servers) {
      const api = new ApiClient(server.target);
      await learnTemplate(ctx, api, 'bench-ab').finally(() => api.close());
      await server.settle();
    }
    const path = `${replicaSetsPath('bench-ab')}/template?resourceVersion=0`;
    const bare = await startBare(builds[1], servers[1].server.dataDir, servers[1].server.target.tls);
    const api = new ApiClient(servers[1].server.target);
    const body = await api.request('GET', path).finally(() => api.close());
    await bare.route(path, body.body, 'application/json');
    const cell = (target: Target, stats: () => Promise<{ cpuUs: number }>): Cell => ({
      worker,
      open: { kind: 'https', target, connections: 16 },
      spec: () => ({ op: 'request', method: 'GET', paths: [path], expect: 200 }),
      serverCpu: async () => (await stats()).cpuUs,
    });
    const samples = await sideBySide([...servers.map(({ server }) => cell(server.target, server.stats)), cell(bare.target, bare.stats)], timing);
    await bare.stop();
    const reference = samples[samples.length - 1];
    const labels = [...servers.map((s) => s.label), 'bare node:https'];
    process.stdout.write('| server | GET/s | vs bare | server CPU µs/op | p50 |\n|---|---:|---:|---:|---:|\n');
    samples.forEach((s, i) => {
      process.stdout.write(`| ${labels[i]} | ${rate(perSecond(s))} | ${ratio(perSecond(s), perSecond(reference))} | ${micros(cpuPerOp(s))} | ${ms(s.latency.percentile(50))} |\n`);
    });
  } finally {
    for (const { server } of servers) await server.stop();
    await worker.stop();
    await ctx.cleanup();
    for (const b of builds) await b.remove();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
