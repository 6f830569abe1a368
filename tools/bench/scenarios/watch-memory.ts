/**
 * Scenario 13 (not in the default set: `--only 13`; 17 minutes, 2 with --quick): memory under
 * sustained writes (issue 50; docs/BENCHMARKS.md, "Memory under sustained writes"). Keelson on
 * the embedded store, 8 writers at 1,000 writes/s in all on ~1 KB ConfigMaps with 20 watchers
 * for 10 minutes, then 6.5 minutes idle; a full GC before every reading. tools/bench/watch-memory.ts
 * runs the same with other durations, server flags or a revision.
 */
import type { Context } from '../context';
import { runMemoryScenario } from '../load/memory-scenario';
import { startKeelson } from '../processes';

export async function runWatchMemory(ctx: Context): Promise<void> {
  const quick = ctx.options.quick;
  ctx.log(`13. memory under sustained writes (${quick ? '1' : '10'} min of load)`);
  const server = await startKeelson(ctx.build, { store: { kind: 'embedded' }, dataDir: await ctx.tmpDir('watch-memory') });
  try {
    await server.settle();
    const r = await runMemoryScenario({
      target: server.target,
      writesPerSecond: 1000,
      gc: () => server.gc(),
      loadMs: quick ? 60_000 : 600_000,
      afterMs: quick ? 60_000 : 390_000,
      sampleMs: 15_000,
      resumeAgeMs: quick ? 30_000 : 240_000,
    });
    const mb = (n: number) => `${n.toFixed(0)} MB`;
    ctx.rows.push({
      scenario: 13,
      name: `memory: ${r.writesPerSecond.toLocaleString('en-US')} writes/s, 20 watchers, ${quick ? '1' : '10'} min (live after GC, last half)`,
      keelson: `${mb(r.lastHalfLiveMb.min)}–${mb(r.lastHalfLiveMb.max)}`,
      reference: `idle ${mb(r.idle.liveMb)}`,
      ratio: r.after ? `${(r.after.liveMb / r.idle.liveMb).toFixed(2)}× idle after` : '',
      cpu: '',
      latency: '',
      note: `RSS max ${mb(r.maxRssMb)}; ${r.watchers.complete}/20 watchers got every event in order; resume from ${(r.resume.ageMs / 60_000).toFixed(1)} min back ${r.resume.ok ? 'ok' : `failed (${r.resume.error ?? `${r.resume.events}/${r.resume.expected}`})`}`,
    });
    ctx.budgets.push({
      budget: 'live memory after GC, last half of the load',
      target: 'within ±10 %',
      measured: `±${r.lastHalfLiveMb.spreadPct} %`,
      met: r.lastHalfLiveMb.spreadPct <= 10,
    });
    ctx.budgets.push({ budget: 'RSS under sustained writes', target: '≤ 300 MB', measured: mb(r.maxRssMb), met: r.maxRssMb <= 300 });
    if (r.after)
      ctx.budgets.push({
        budget: 'live memory 6 minutes after the load, vs idle',
        target: '≤ 1.2×',
        measured: `${(r.after.liveMb / r.idle.liveMb).toFixed(2)}×`,
        met: r.after.liveMb <= r.idle.liveMb * 1.2,
      });
    ctx.budgets.push({
      budget: 'watchers receiving every event in order; a resume from 4 minutes back',
      target: '20/20; ok',
      measured: `${r.watchers.complete}/20; ${r.resume.ok ? 'ok' : 'failed'}`,
      met: r.watchers.complete === 20 && r.resume.ok,
    });
  } finally {
    await server.stop();
  }
}
