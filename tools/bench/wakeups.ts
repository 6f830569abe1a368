/**
 * What the kernel does per cached GET (`?resourceVersion=0`, 16 keep-alive clients), Keelson
 * built from one revision against the bare https reference, side by side in alternating rounds
 * on an embedded store: per request, the server's write and read system calls and bytes written,
 * how often the server and the load generator went to sleep (voluntary context switches) or were
 * preempted, and CPU. A server slower than its client answers a client that went to sleep, and
 * the write that wakes it pays for the wake-up (docs/BENCHMARKS.md, "What the mechanisms
 * save"): the profile shows that only as a dearer `writev`; these counts show why.
 *
 *   node -r @swc-node/register tools/bench/wakeups.ts [<rev>] [--rounds 4] [--ms 8000]
 */
import { ApiClient } from './api';
import { abRun, runTool, toolArguments } from './ab';
import { learnTemplate } from './context';
import { replicaSetsPath } from './fixtures';
import type { Target } from './https-client';
import { type Cell, type Sample, cpuPerOp, perSecond, sideBySide } from './measure';
import { startBare, startKeelson } from './processes';
import { micros, rate } from './report';

runTool(async () => {
  const { revs, flag } = toolArguments();
  if (revs.length > 1) throw new Error('usage: wakeups.ts [<rev>] [--rounds N] [--ms N]');
  const timing = { warmupMs: 500, measureMs: flag('--ms', 8000), rounds: flag('--rounds', 4) };
  await abRun([revs[0] ?? '.'], 'embedded', timing, async ({ builds, ctx, servers }) => {
    const server = await startKeelson(builds[0]!, { store: { kind: 'embedded' }, dataDir: await ctx.tmpDir('wakeups') });
    servers.push(server);
    const api = new ApiClient(server.target);
    await learnTemplate(ctx, api, 'bench-wakeups').finally(() => api.close());
    await server.settle();
    const path = `${replicaSetsPath('bench-wakeups')}/template?resourceVersion=0`;
    const bare = await startBare(builds[0]!, server.dataDir, server.target.tls);
    const reader = new ApiClient(server.target);
    const body = await reader.request('GET', path).finally(() => reader.close());
    await bare.route(path, body.body, 'application/json');
    const cell = (target: Target, pid: number, stats: () => Promise<{ cpuUs: number }>): Cell => ({
      worker: ctx.worker,
      open: { kind: 'https', target, connections: 16 },
      spec: () => ({ op: 'request', method: 'GET', paths: [path], expect: 200 }),
      serverCpu: async () => (await stats()).cpuUs,
      kernelCounters: { server: pid, generator: ctx.worker.pid },
    });
    const samples = await sideBySide([cell(server.target, server.child.pid, server.stats), cell(bare.target, bare.child.pid, bare.stats)], timing);
    await bare.stop();
    const per = (s: Sample, key: string) => ((s.counters[key] ?? 0) / Math.max(1, s.ops)).toFixed(2);
    const bytes = (s: Sample, key: string) => ((s.counters[key] ?? 0) / Math.max(1, s.ops)).toFixed(0);
    process.stdout.write(
      '| server | GET/s | server CPU µs/op | server writes / reads per get | bytes written per get | server sleeps / preempted per get | generator sleeps / preempted per get |\n|---|---:|---:|---:|---:|---:|---:|\n',
    );
    ['Keelson', 'bare node:https'].forEach((label, i) => {
      const s = samples[i]!;
      process.stdout.write(
        `| ${label} | ${rate(perSecond(s))} | ${micros(cpuPerOp(s))} | ${per(s, 'server syscw')} / ${per(s, 'server syscr')} | ${bytes(s, 'server wchar')} | ` +
          `${per(s, 'server voluntary_ctxt_switches')} / ${per(s, 'server nonvoluntary_ctxt_switches')} | ${per(s, 'generator voluntary_ctxt_switches')} / ${per(s, 'generator nonvoluntary_ctxt_switches')} |\n`,
      );
    });
  });
});
