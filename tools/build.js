#!/usr/bin/env node
/**
 * The server's compiled tree, built only when its sources changed and never rewritten under a
 * running server: each build goes to `.build/<hash of the inputs>/` (compiled into a temporary
 * directory, renamed into place when complete), and `dist` is a symbolic link swapped to the
 * newest one. Two processes that start at once take a lock file; the second waits and finds the
 * build done. `npm install` builds once (the `prepare` script); `npm start` (tools/start.js) only
 * checks the hash when nothing changed.
 *
 *   node tools/build.js          build when stale, print the build directory
 *   node tools/build.js --pack   the same, then copy it to lib/ (a real directory, for `npm pack`)
 */

const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const BUILDS = path.join(ROOT, '.build');
const LOCK = path.join(BUILDS, '.lock');
/** Builds kept besides the current one, for servers still running from them. */
const KEEP_OLD = 2;
const LOCK_WAIT_MS = 10 * 60_000;

function filesUnder(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(full));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

/** A hash of everything the compiled tree depends on: the sources, the compiler settings, the lockfile. */
function inputsHash(root = ROOT) {
  const hash = crypto.createHash('sha256');
  const inputs = [
    ...filesUnder(path.join(root, 'src')),
    ...['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'].map((f) => path.join(root, f)),
  ].sort();
  for (const file of inputs) {
    hash.update(path.relative(root, file));
    hash.update('\0');
    hash.update(fs.readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

function isComplete(dir) {
  return fs.existsSync(path.join(dir, '.complete'));
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Run `fn` holding the build lock; a lock left by a process that died is taken over. */
function withLock(fn) {
  fs.mkdirSync(BUILDS, { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = fs.openSync(LOCK, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const holder = Number(fs.readFileSync(LOCK, 'utf8').trim() || '0');
      if (holder && !alive(holder)) {
        fs.rmSync(LOCK, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`another build (pid ${holder}) holds ${LOCK}`);
      sleep(100);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(LOCK, { force: true });
  }
}

/** Point `dist` at `target`: a new link renamed over the old one, so readers never see it missing. */
function pointDist(target) {
  const dist = path.join(ROOT, 'dist');
  const relative = path.relative(ROOT, target);
  try {
    if (fs.readlinkSync(dist) === relative) return;
  } catch {
    // Not a link (absent, or a directory from an older layout).
  }
  const stat = fs.lstatSync(dist, { throwIfNoEntry: false });
  if (stat && !stat.isSymbolicLink()) fs.rmSync(dist, { recursive: true, force: true });
  const temporary = `${dist}.${process.pid}.tmp`;
  fs.rmSync(temporary, { force: true });
  fs.symlinkSync(relative, temporary);
  fs.renameSync(temporary, dist);
}

function prune(current) {
  const entries = fs.readdirSync(BUILDS, { withFileTypes: true }).filter((e) => e.isDirectory());
  const complete = [];
  for (const e of entries) {
    const dir = path.join(BUILDS, e.name);
    const tmp = /\.tmp-(\d+)$/.exec(e.name);
    // A half-written build of a process that died goes at once.
    if (tmp) {
      if (!alive(Number(tmp[1]))) fs.rmSync(dir, { recursive: true, force: true });
    } else if (dir !== current) {
      complete.push({ dir, mtime: fs.statSync(dir).mtimeMs });
    }
  }
  complete.sort((a, b) => b.mtime - a.mtime);
  for (const old of complete.slice(KEEP_OLD)) fs.rmSync(old.dir, { recursive: true, force: true });
}

/** The directory of a complete build of the current sources, building it when there is none. */
function ensureBuilt(options = {}) {
  const log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  const target = path.join(BUILDS, inputsHash());
  if (isComplete(target)) {
    withLock(() => {
      pointDist(target);
      prune(target);
    });
    return target;
  }
  withLock(() => {
    if (isComplete(target)) return;
    const started = Date.now();
    const temporary = `${target}.tmp-${process.pid}`;
    fs.rmSync(temporary, { recursive: true, force: true });
    log('keelson: compiling the server (sources changed since the last build)…');
    const tsc = require.resolve('typescript/bin/tsc');
    const run = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', temporary], { cwd: ROOT, stdio: 'inherit' });
    if (run.status !== 0) {
      fs.rmSync(temporary, { recursive: true, force: true });
      throw new Error(`tsc failed (exit ${run.status})`);
    }
    fs.writeFileSync(path.join(temporary, '.complete'), `${new Date().toISOString()}\n`);
    fs.renameSync(temporary, target);
    log(`keelson: compiled in ${((Date.now() - started) / 1000).toFixed(1)}s into ${path.relative(ROOT, target)}`);
  });
  withLock(() => {
    pointDist(target);
    prune(target);
  });
  return target;
}

module.exports = { ensureBuilt, inputsHash };

/** Copy a build into lib/, which the published package carries (npm packs no symbolic links). */
function pack(dir) {
  const lib = path.join(ROOT, 'lib');
  fs.rmSync(lib, { recursive: true, force: true });
  fs.cpSync(dir, lib, { recursive: true, filter: (src) => path.basename(src) !== '.complete' });
  return lib;
}

if (require.main === module) {
  try {
    const dir = ensureBuilt();
    process.stdout.write(`${process.argv.includes('--pack') ? pack(dir) : dir}\n`);
  } catch (err) {
    process.stderr.write(`build: ${err.message}\n`);
    process.exit(1);
  }
}
