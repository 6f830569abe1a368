/**
 * The hostile-input run (docs/RELIABILITY.md): start the real server on the embedded store in a
 * child process, send `--count` generated requests (default 20,000) and print the report.
 *
 *   node -r @swc-node/register tools/fuzz.ts [--count 20000] [--seed 1] [--only 12,40] [--door https|grpc|both]
 *
 * `--door both` sends `--count` requests through each door, one after the other, to one server.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { runFuzz } from './fuzz/run';
import { runGrpcFuzz } from './fuzz/grpc';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

async function main(): Promise<void> {
  const count = arg('count', 20_000);
  const seed = arg('seed', 1);
  // --only 12,40: replay those requests of the seed (to triage a failure).
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt > 0 ? process.argv[onlyAt + 1]!.split(',').map(Number) : undefined;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'keelson-fuzz-'));
  const root = path.resolve(__dirname, '..');
  const doorAt = process.argv.indexOf('--door');
  const door = doorAt > 0 ? process.argv[doorAt + 1]! : 'https';
  if (!['https', 'grpc', 'both'].includes(door)) throw new Error(`--door takes https, grpc or both, not ${door}`);
  const child = spawn(
    process.execPath,
    // No ReplicaSet controller or nodes: a fuzzed ReplicaSet may ask for 2^31-1 pods, which a
    // controller would rightly go on creating; the run is about how requests are handled.
    [
      '-r',
      '@swc-node/register',
      'src/server/main.ts',
      '--secure-port',
      '0',
      '--grpc-port',
      '0',
      '--data-dir',
      dataDir,
      '--vendor',
      'kubernetes',
      '--feature-gates',
      'CBORServingAndStorage=true',
      '--controllers',
      '*,-replicaset',
      '--simulated-nodes',
      '0',
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  while (!/keelson: ready/.test(out)) {
    if (child.exitCode !== null) throw new Error(`server exited:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = /on (https:\/\/[^ ]+:\d+) /.exec(out)![1]!;
  const read = (f: string) => readFileSync(path.join(dataDir, f), 'utf8');
  const tls = { ca: read('ca.crt'), cert: read('admin.crt'), key: read('admin.key') };
  const onProgress = (n: number) => {
    if (n % 1000 === 0) process.stderr.write(`${n} requests\n`);
  };
  const reports: Array<Record<string, unknown>> = [];
  let failed = false;
  if (door !== 'grpc') {
    const started = Date.now();
    const report = await runFuzz({ url, pid: child.pid!, tls }, { seed, count, ...(only ? { only } : {}), onProgress });
    reports.push({ door: 'https', seed, seconds: Math.round((Date.now() - started) / 1000), ...report });
    failed ||= report.serverErrors.length > 0 || !report.alive;
  }
  if (door !== 'https' && !failed) {
    const address = /serving the core over gRPC on (\S+)/.exec(out)![1]!;
    const started = Date.now();
    const report = await runGrpcFuzz({ address, pid: child.pid!, tls }, { seed, count, ...(only ? { only } : {}), onProgress });
    reports.push({ door: 'grpc', seed, seconds: Math.round((Date.now() - started) / 1000), ...report });
    failed ||= report.serverErrors.length > 0 || !report.alive;
  }
  console.log(JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2));
  child.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
  if (failed) process.exitCode = 1;
}

void main();
