#!/usr/bin/env node
/**
 * `npm start`: the compiled server (tools/build.js compiles only when the sources changed, and
 * `npm install` already did), run in this process from its own build directory, so a later
 * rebuild never changes the files under a running server.
 */

const fs = require('node:fs');
const path = require('node:path');
const { ensureBuilt } = require('./build.js');

const ROOT = path.resolve(__dirname, '..');
let dir;
try {
  // An installed package carries its build in lib/ and no sources.
  dir = fs.existsSync(path.join(ROOT, 'src')) ? ensureBuilt() : path.join(ROOT, 'lib');
} catch (err) {
  process.stderr.write(`keelson: cannot build the server: ${err.message}\n`);
  process.exit(1);
}
require(path.join(dir, 'src', 'server', 'main.js'));
