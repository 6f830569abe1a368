/**
 * tools/build.js on a copy of the project: two builds started at once compile once and agree;
 * an unchanged tree is not compiled again; a changed one compiles into a new directory while
 * the old one stays for servers still running from it; `dist` always points at a complete build.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, readlink, rm, symlink, writeFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
let copy: string;

beforeAll(async () => {
  copy = await mkdtemp(path.join(os.tmpdir(), 'keelson-build-'));
  for (const entry of ['src', 'tools', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']) {
    await cp(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
  }
  await symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
});

afterAll(async () => {
  await rm(copy, { recursive: true, force: true });
});

const build = async () => {
  const { stdout, stderr } = await run(process.execPath, [path.join(copy, 'tools/build.js')], { cwd: copy });
  return { dir: stdout.trim(), compiled: stderr.includes('compiled in') };
};

test('concurrent builds compile once; unchanged sources are not compiled again; a change builds beside the old tree', async () => {
  const [a, b] = await Promise.all([build(), build()]);
  expect(a.dir).toBe(b.dir);
  expect([a.compiled, b.compiled].filter(Boolean)).toHaveLength(1);
  expect(path.resolve(copy, await readlink(path.join(copy, 'dist')))).toBe(a.dir);
  expect((await stat(path.join(copy, 'dist/src/server/main.js'))).isFile()).toBe(true);

  const again = await build();
  expect(again).toEqual({ dir: a.dir, compiled: false });

  const file = path.join(copy, 'src/server/main.ts');
  await writeFile(file, `${await readFile(file, 'utf8')}\n// a change\n`);
  const changed = await build();
  expect(changed.compiled).toBe(true);
  expect(changed.dir).not.toBe(a.dir);
  expect((await stat(path.join(a.dir, 'src/server/main.js'))).isFile()).toBe(true);
  expect(path.resolve(copy, await readlink(path.join(copy, 'dist')))).toBe(changed.dir);
}, 300_000);
