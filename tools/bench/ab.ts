/**
 * What the before/after tools (ab-get.ts, ab-create.ts, …) share: two revisions built, one load
 * generator, a bench context, the servers they start, and the teardown of all of it; or, for
 * the in-process tools (ab-informers.ts, ab-updates.ts), a child script run from each build in
 * turns.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { type Build, buildForBench } from './build';
import { type Context, createContext } from './context';
import { type Sample, type Timing, roundRatios } from './measure';
import { type KeelsonServer, startWorker } from './processes';

export interface AbRun {
  /** The two revisions' builds, in the order given. */
  builds: Build[];
  ctx: Context;
  /** Servers the tool starts: stopped at the end. */
  servers: KeelsonServer[];
}

/** The two revisions from the command line (`.`: the working tree) and its `--flag value`s. */
export function abArguments(usage: string): { revs: [string, string] } & Omit<ToolArguments, 'revs'> {
  const { revs, ...flags } = toolArguments();
  if (revs.length !== 2) throw new Error(`usage: ${usage}`);
  return { revs: [revs[0]!, revs[1]!], ...flags };
}

/** Flags that take no value (the argument after one is not its value). */
const SWITCHES = new Set(['--both-ways']);

export interface ToolArguments {
  /** The arguments that are not flags or their values. */
  revs: string[];
  /** A numeric `--flag value`; `fallback` when absent. */
  flag(name: string, fallback: number): number;
  /** A `--flag 'a b …'` value split into words (node flags or server arguments); none when absent. */
  words(name: string): string[];
}

export function toolArguments(): ToolArguments {
  const args = process.argv.slice(2);
  const isValue = (i: number) => args[i - 1]?.startsWith('--') === true && !SWITCHES.has(args[i - 1]!);
  const value = (name: string): string | undefined => {
    const at = args.indexOf(name);
    return at >= 0 ? args[at + 1] : undefined;
  };
  return {
    revs: args.filter((a, i) => !a.startsWith('-') && !isValue(i)),
    flag: (name, fallback) => {
      const v = value(name);
      return v !== undefined ? Number(v) : fallback;
    },
    words: (name) => value(name)?.split(/\s+/).filter(Boolean) ?? [],
  };
}

/** Builds the revisions (the load generator from the last) and runs `body`; whatever it started is stopped and removed afterwards. */
export async function abRun(revs: readonly string[], store: 'etcd' | 'embedded', timing: Timing, body: (run: AbRun) => Promise<void>): Promise<void> {
  const builds: Build[] = [];
  for (const rev of revs) builds.push(await buildForBench(rev === '.' ? undefined : rev));
  const last = builds[builds.length - 1]!;
  const worker = startWorker(last);
  const ctx = createContext({ quick: false, store, only: new Set(), profile: false }, last, worker, timing, (l) => process.stderr.write(`${l}\n`));
  const servers: KeelsonServer[] = [];
  try {
    await body({ builds, ctx, servers });
  } finally {
    for (const server of servers) await server.stop();
    await worker.stop();
    await ctx.cleanup();
    for (const b of builds) await b.remove();
  }
}

const execFileAsync = promisify(execFile);

/**
 * A script of the bench tree (`tools/bench/<child>`) run from each revision's build in turns,
 * `runs` times each, the order alternating so that neither build always runs right after the
 * other; with the build's environment and `options.env`. Each run's output is the JSON its last
 * line prints, in order per revision. The builds are removed afterwards; progress goes to stderr.
 */
export async function childRunsInTurns<T>(
  revs: readonly [string, string],
  child: string,
  runs: number,
  options: { nodeFlags?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<[T[], T[]]> {
  const builds: Build[] = [];
  try {
    for (const rev of revs) builds.push(await buildForBench(rev === '.' ? undefined : rev));
    const outputs: [T[], T[]] = [[], []];
    for (let r = 0; r < runs; r++) {
      for (const which of r % 2 === 0 ? [0, 1] : [1, 0]) {
        const build = builds[which]!;
        const { stdout } = await execFileAsync(process.execPath, [...(options.nodeFlags ?? []), build.file(`tools/bench/${child}`)], {
          env: { ...build.env, ...options.env },
          maxBuffer: 1 << 20,
        });
        const out = JSON.parse(stdout.trim().split('\n').pop()!) as T;
        outputs[which]!.push(out);
        process.stderr.write(`[${child}] ${revs[which]} run ${r + 1}: ${JSON.stringify(out)}\n`);
      }
    }
    return outputs;
  } finally {
    for (const build of builds) await build.remove();
  }
}

/** The middle value (the upper one of the two middle values of an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Runs a tool's main, printing its failure and exiting non-zero. */
export function runTool(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}

/** `b`'s rate over `a`'s round by round, as `min, median, max` (`roundRatios`); for `a` itself, a dash. */
export function spread(a: Sample, b: Sample): string {
  if (a === b) return '—';
  const r = roundRatios(a, b);
  return r ? `${r.min.toFixed(2)}, ${r.median.toFixed(2)}, ${r.max.toFixed(2)}×` : '';
}
