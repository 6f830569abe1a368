/**
 * The publishable package: `npm pack` carries the compiled library with its types and no
 * sources or tests, and the unpacked package starts a server through its `exports`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** `@types/x` for `x`, `@types/a__b` for `@a/b`. */
function typesPackage(name: string): string {
  return `@types/${name.startsWith('@') ? name.slice(1).replace('/', '__') : name}`;
}

/** The packages (not node: builtins) the compiled files under `dir` require or their declarations import. */
async function packagesUsedBy(dir: string): Promise<string[]> {
  const names = new Set<string>();
  for (const file of (await readdir(dir, { recursive: true })).map(String)) {
    if (!file.endsWith('.js') && !file.endsWith('.d.ts')) continue;
    // Comments left out (the declarations' examples import 'keelson' itself).
    const text = (await readFile(path.join(dir, file), 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    for (const m of text.matchAll(/(?:require\(|import\(|from )["']([@a-z0-9][\w.@/:-]*)["']/g)) {
      const spec = m[1]!;
      if (spec.startsWith('node:')) {
        names.add('node');
        continue;
      }
      names.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  }
  return [...names].sort();
}
const ROOT = path.resolve(__dirname, '../..');

test('npm pack holds the built library and its types; the package starts a server', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-pack-'));
  try {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, maxBuffer: 1 << 26 });
    const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = info!.files.map((f) => f.path);
    expect(files).toEqual(
      expect.arrayContaining(['package.json', 'lib/src/library/index.js', 'lib/src/library/index.d.ts', 'lib/src/server/main.js', 'tools/start.js']),
    );
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/') || (f.endsWith('.ts') && !f.endsWith('.d.ts')))).toEqual([]);
    await run('tar', ['-xzf', path.join(dir, info!.filename), '-C', dir]);
    const pkg = JSON.parse(await readFile(path.join(dir, 'package/package.json'), 'utf8'));
    expect(pkg.exports['.']).toEqual({ types: './lib/src/library/index.d.ts', default: './lib/src/library/index.js' });
    // What an installed package loads is in its dependencies, and nothing else is: no build
    // toolchain (TypeScript, buf, ts-proto) and no test-only library lands in a user's install.
    const used = await packagesUsedBy(path.join(dir, 'package/lib'));
    const dependencies = Object.keys(pkg.dependencies).sort();
    expect(used.filter((name) => !dependencies.includes(name) && !dependencies.includes(typesPackage(name)))).toEqual([]);
    expect(dependencies.filter((name) => !used.includes(name) && !(name.startsWith('@types/') && used.some((u) => typesPackage(u) === name)))).toEqual([]);
    // The unpacked package, its dependencies found through NODE_PATH as an installed package's would be.
    const script = `require(${JSON.stringify(path.join(dir, 'package'))}).startServer().then(async (s) => { process.stdout.write(s.url); await s.stop(); })`;
    const started = await run(process.execPath, ['-e', script], { env: { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') } });
    expect(started.stdout).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 120_000);
