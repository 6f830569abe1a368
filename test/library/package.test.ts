/**
 * The publishable package: `npm pack` carries the compiled library with its types and no
 * sources or tests, and the unpacked package starts a server through its `exports`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

test('npm pack holds the built library and its types; the package starts a server', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-pack-'));
  try {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, maxBuffer: 1 << 26 });
    const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = info!.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'lib/src/library/index.js', 'lib/src/library/index.d.ts', 'lib/src/server/main.js', 'tools/start.js']));
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/') || f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    await run('tar', ['-xzf', path.join(dir, info!.filename), '-C', dir]);
    const pkg = JSON.parse(await readFile(path.join(dir, 'package/package.json'), 'utf8'));
    expect(pkg.exports['.']).toEqual({ types: './lib/src/library/index.d.ts', default: './lib/src/library/index.js' });
    // The unpacked package, its dependencies found through NODE_PATH as an installed package's would be.
    const script = `require(${JSON.stringify(path.join(dir, 'package'))}).startServer().then(async (s) => { process.stdout.write(s.url); await s.stop(); })`;
    const started = await run(process.execPath, ['-e', script], { env: { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') } });
    expect(started.stdout).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 120_000);
