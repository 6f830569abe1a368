/**
 * `npm run bench`: Keelson against its limits, side by side in one run (issue 7;
 * docs/BENCHMARKS.md, "Budgets"). Starts what it needs — etcd on loopback, Keelson processes compiled to plain JS,
 * a bare https server, a load-generator process — and prints one Markdown table plus the
 * budget checks. See docs/BENCHMARKS.md.
 *
 *   npm run bench [-- --quick] [--store etcd|embedded] [--only 1,2,...] [--rev <git rev>] [--profile[=create|get|cached-get|list|watch|startup|custom-resources] [--profile-out file]]
 */
import os from 'node:os';
import { buildForBench } from './build';
import { type Context, type Options, createContext } from './context';
import type { Timing } from './measure';
import { startWorker } from './processes';
import { renderBudgets, renderTable } from './report';
import { runCreate } from './scenarios/create';
import { runEncodings } from './scenarios/encodings';
import { runProfile } from './scenarios/profile';
import { runServed } from './scenarios/served';
import { runStartup } from './scenarios/startup';
import { runAuthentication } from './scenarios/authentication';
import { runAuthorization } from './scenarios/authorization';
import { runControllers } from './scenarios/controllers';
import { runOperations } from './scenarios/operations';
import { runLibrary } from './scenarios/library';
import { runAdmission } from './scenarios/admission';
import { runWatchMemory } from './scenarios/watch-memory';
import { runCustomResources } from './scenarios/custom-resources';
import { runValidationRules } from './scenarios/validation-rules';
import { runConversionLists } from './scenarios/conversion-lists';
import { runFloodScenario } from './scenarios/flood';

const USAGE = `usage: npm run bench [-- --quick] [--store etcd|embedded] [--only 1,2,... (default 1-11, 14 and 15; 12, 13 of 17 minutes and 16 of 5, only when named)] [--rev <git rev>] [--profile[=create|get|cached-get|list|watch|startup|custom-resources] [--profile-out file.cpuprofile]]`;

function parseOptions(argv: string[]): Options {
  const options: Options = { quick: false, store: 'etcd', only: new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 15]), profile: false };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--quick':
        options.quick = true;
        break;
      case '--store': {
        const store = value();
        if (store !== 'etcd' && store !== 'embedded') throw new Error(`--store must be etcd or embedded\n${USAGE}`);
        options.store = store;
        break;
      }
      case '--only':
        options.only = new Set(value().split(',').map(Number));
        break;
      case '--profile':
        options.profile =
          inline === 'get' || inline === 'cached-get' || inline === 'list' || inline === 'watch' || inline === 'startup' || inline === 'custom-resources'
            ? inline
            : 'create';
        break;
      case '--rev':
        options.rev = value();
        break;
      case '--profile-out':
        options.profileOut = value();
        options.profile ||= 'create';
        break;
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${argv[i]}\n${USAGE}`);
    }
  }
  return options;
}

/**
 * Six short rounds per cell rather than two long ones: a cell and its reference measured at more,
 * closer points in time share more of the load other processes put on this machine, so their
 * ratio moves less from run to run (docs/BENCHMARKS.md, "How it measures").
 */
function timingFor(options: Options): Timing {
  return options.quick ? { warmupMs: 200, measureMs: 1000, rounds: 2 } : { warmupMs: 500, measureMs: 5000, rounds: 6 };
}

export function machineLine(options: Options): string {
  const cpus = os.cpus();
  const server = options.rev ? `; server built from git ${options.rev}` : '';
  return `machine: ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown'}), ${Math.round(os.totalmem() / 2 ** 30)} GB, Node ${process.version}, ${os.platform()} ${os.release()}; store for scenarios 2-5, 14 and 15: ${options.store}; load generator: Node (tools/bench/load-worker, one process, one request in flight per connection)${server}`;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const started = performance.now();
  const log = (line: string) => process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(3)}s] ${line}\n`);
  const build = await buildForBench(options.rev);
  const worker = startWorker(build);
  const ctx: Context = createContext(options, build, worker, timingFor(options), log);
  try {
    // A scenario that fails leaves a row saying so; the others still run.
    const attempt = async (scenarios: number[], run: () => Promise<unknown>) => {
      if (!scenarios.some((n) => options.only.has(n))) return;
      try {
        await run();
      } catch (err) {
        log(`scenario ${scenarios.join('/')} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        ctx.rows.push({
          scenario: scenarios[0],
          name: `scenario ${scenarios.join('/')} FAILED`,
          keelson: '',
          reference: '',
          ratio: '',
          cpu: '',
          latency: '',
          note: String(err instanceof Error ? err.message : err)
            .split('\n')[0]
            .slice(0, 200),
        });
      }
    };
    await attempt([1], () => runCreate(ctx));
    await attempt([2, 3, 4], () => runServed(ctx));
    await attempt([5], () => runStartup(ctx));
    await attempt([6], () => runEncodings(ctx));
    await attempt([7], () => runAuthentication(ctx));
    await attempt([8], () => runAuthorization(ctx));
    await attempt([9], () => runControllers(ctx));
    await attempt([10], () => runOperations(ctx));
    await attempt([11], () => runLibrary(ctx));
    await attempt([12], () => runAdmission(ctx));
    await attempt([13], () => runWatchMemory(ctx));
    await attempt([14], () => runCustomResources(ctx));
    await attempt([15], () => runValidationRules(ctx));
    await attempt([15], () => runConversionLists(ctx));
    await attempt([16], () => runFloodScenario(ctx));
    // Scenarios 14 and 15 profile their own servers (scenarios/custom-resources.ts).
    if (options.profile && options.profile !== 'custom-resources') {
      const which = options.profile;
      options.only.add(0);
      await attempt([0], () => runProfile(ctx, which));
    }
  } finally {
    await worker.stop().catch(() => {});
    await ctx.cleanup();
    await build.remove();
  }
  const seconds = (performance.now() - started) / 1000;
  const out = [
    `# Keelson bench — ${new Date().toISOString().slice(0, 10)}${options.quick ? ' (--quick)' : ''}`,
    '',
    machineLine(options),
    '',
    renderTable(ctx.rows),
    '',
    renderBudgets(ctx.budgets),
    ...ctx.sections.flatMap((s) => ['', s]),
    '',
    `total bench time: ${seconds.toFixed(0)} s`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
