#!/usr/bin/env node
// Runs jest and ends with the plain line `N passed, N failed` that CI reads.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const out = path.join(__dirname, '..', '.jest-results.json');
fs.rmSync(out, { force: true });
const jest = require.resolve('jest/bin/jest');
const run = spawnSync(process.execPath, [jest, '--json', '--outputFile', out, ...process.argv.slice(2)], { stdio: 'inherit' });
let passed = 0;
let failed = 0;
try {
  const results = JSON.parse(fs.readFileSync(out, 'utf8'));
  passed = results.numPassedTests;
  failed = results.numFailedTests + (results.numRuntimeErrorTestSuites || 0);
} catch {
  failed = failed || 1;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(run.status === 0 && failed === 0 ? 0 : 1);
