/**
 * Memory under sustained writes (issue 50; docs/BENCHMARKS.md, "Memory under sustained writes"):
 * the default server on the embedded store, 8 writers at 1,000 writes/s in all on ~1 KB
 * ConfigMaps (at most 4,000 alive) and 20 watchers, for `--load-minutes`; then idle for
 * `--after-minutes`. Every `--sample-seconds` the server runs a full GC and reports its heap,
 * external memory and RSS. At the end of the load a watch resumes from a resourceVersion
 * `--resume-minutes` old.
 *
 *   node -r @swc-node/register tools/bench/watch-memory.ts [--rev <git rev>] [--load-minutes 10] [--after-minutes 6]
 *     [--sample-seconds 15] [--resume-minutes 4] [--writes 1000] [-- <server flags>]
 *
 * Prints one line per sample and a JSON summary (the figures docs/BENCHMARKS.md records).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildForBench } from './build';
import { startKeelson } from './processes';
import { runMemoryScenario } from './load/memory-scenario';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const dash = argv.indexOf('--');
  const serverArgs = dash >= 0 ? argv.splice(dash).slice(1) : [];
  const flag = (name: string, fallback: number) => {
    const at = argv.indexOf(name);
    return at >= 0 ? Number(argv[at + 1]) : fallback;
  };
  const revAt = argv.indexOf('--rev');
  const rev = revAt >= 0 ? argv[revAt + 1] : undefined;
  const build = await buildForBench(rev);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keelson-watch-memory-'));
  const server = await startKeelson(build, { store: { kind: 'embedded' }, dataDir, serverArgs });
  try {
    await server.settle();
    const summary = await runMemoryScenario({
      target: server.target,
      writesPerSecond: flag('--writes', 1000),
      gc: () => server.gc(),
      loadMs: flag('--load-minutes', 10) * 60_000,
      afterMs: flag('--after-minutes', 6) * 60_000,
      sampleMs: flag('--sample-seconds', 15) * 1000,
      resumeAgeMs: flag('--resume-minutes', 4) * 60_000,
      onSample: (s) => process.stdout.write(`${JSON.stringify(s)}\n`),
    });
    process.stdout.write(`summary ${JSON.stringify({ rev: rev ?? 'working tree', serverArgs, ...summary })}\n`);
  } finally {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
    await build.remove();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
