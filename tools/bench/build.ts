/**
 * Compile the server (src/), the bench's own child processes (tools/bench/) and the test
 * helpers they reuse (test/support/) to plain CommonJS in a temporary directory with swc.
 *
 * Why: children then start as `node file.js`, as `npm start` runs the server, instead of
 * transpiling every module on load through @swc-node/register, which adds ~0.6 s and ~70 MB
 * of RSS to a start-up and would be charged to the server in the start-up and idle rows.
 * Compiling the tree takes about a second. `NODE_PATH` points the children at the checkout's
 * node_modules.
 *
 * With `rev`, the server (src/, test/support/) comes from that git revision instead of the
 * working tree (`git archive`): a stable build while others edit the checkout, or a
 * before/after comparison.
 */
import { transformFile } from '@swc/core';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');
/** Trees compiled from the checkout or, with a revision, from git; the bench itself always from the checkout. */
const SERVER_TREES = ['src', 'test/support'];
const BENCH_TREE = 'tools/bench';

export interface Build {
  /** Directory mirroring the checkout's layout (`<dir>/src/server/main.js`). */
  dir: string;
  /** Absolute path of a compiled file, given its checkout path without extension. */
  file(relative: string): string;
  /** Environment for children: NODE_PATH set to the checkout's node_modules. */
  env: NodeJS.ProcessEnv;
  remove(): Promise<void>;
}

async function* typescriptFiles(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* typescriptFiles(full);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield full;
  }
}

export async function buildForBench(rev?: string): Promise<Build> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-bench-build-'));
  let sourceRoot = ROOT;
  if (rev) {
    sourceRoot = path.join(dir, '.source');
    await mkdir(sourceRoot);
    const tar = execFileSync('git', ['archive', '--format=tar', rev, ...SERVER_TREES], { cwd: ROOT, maxBuffer: 1 << 30 });
    execFileSync('tar', ['-x', '-C', sourceRoot], { input: tar });
  }
  const jobs: Promise<void>[] = [];
  const trees = [...SERVER_TREES.map((tree) => ({ root: sourceRoot, tree })), { root: ROOT, tree: BENCH_TREE }];
  for (const { root, tree } of trees) {
    for await (const file of typescriptFiles(path.join(root, tree))) {
      const out = path.join(dir, path.relative(root, file)).replace(/\.ts$/, '.js');
      jobs.push(
        (async () => {
          const { code } = await transformFile(file, {
            swcrc: false,
            jsc: {
              parser: { syntax: 'typescript', decorators: true },
              transform: { legacyDecorator: true, decoratorMetadata: true },
              target: 'es2022',
              keepClassNames: true,
            },
            module: { type: 'commonjs' },
          });
          await mkdir(path.dirname(out), { recursive: true });
          await writeFile(out, code);
        })(),
      );
    }
  }
  await Promise.all(jobs);
  if (rev) await rm(sourceRoot, { recursive: true, force: true });
  const nodePath = [path.join(ROOT, 'node_modules'), process.env.NODE_PATH].filter(Boolean).join(path.delimiter);
  return {
    dir,
    file: (relative) => path.join(dir, `${relative}.js`),
    env: { ...process.env, NODE_PATH: nodePath },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
