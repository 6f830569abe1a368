/**
 * Scenario 16 (not in the default set: `--only 16`; about 5 minutes, 2 with --quick): issue 54's
 * reliability goal (docs/BENCHMARKS.md, "Priority and fairness under a flood"). One user sends
 * 100 concurrent lists of 10,000 ConfigMaps without pause; another user's gets are timed
 * before and during the flood; the controllers, scheduler and three simulated nodes run in a
 * process of their own against the core's gRPC door (`tools/bench/load/flood.ts`). Each run has
 * its own etcd and server, with the server's default limits (400 + 200 seats), in three
 * configurations: priority and fairness (the default), priority and fairness with the other user
 * given a priority level of its own, and today's counters (`--enable-priority-and-fairness=false`).
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from '../context';
import { forkChild } from '../ipc';
import { FLOOD_TOKEN_FILE, type FloodResult, runFlood } from '../load/flood';
import { startKeelson } from '../processes';
import { freePort } from '../../../test/support/free-port';

interface Variant {
  name: string;
  serverArgs: string[];
  ownLevelForCalm: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'priority and fairness (default)', serverArgs: [], ownLevelForCalm: false },
  { name: 'priority and fairness, the other user in a level of its own', serverArgs: [], ownLevelForCalm: true },
  { name: 'in-flight counters (--enable-priority-and-fairness=false)', serverArgs: ['--enable-priority-and-fairness=false'], ownLevelForCalm: false },
];

export async function runFloodScenario(ctx: Context): Promise<void> {
  const quick = ctx.options.quick;
  const objects = quick ? 2_000 : 10_000;
  for (const variant of VARIANTS) {
    ctx.log(`16. flood, ${variant.name}`);
    const result = await runVariant(ctx, variant, objects);
    const ratio = result.flood.p99Ms / result.baseline.p99Ms;
    const others429 = result.flood.byStatus['429'] ?? 0;
    const oldestLease = Math.max(...result.leases.map((l) => l.ageSeconds));
    const renewed = result.leases.filter((l) => Date.parse(l.after) > Date.parse(l.before)).length;
    ctx.rows.push({
      scenario: 16,
      name: `flood: another user's gets during 100 concurrent lists of ${objects.toLocaleString('en-US')}, ${variant.name}`,
      keelson: `p99 ${result.flood.p99Ms.toFixed(1)} ms`,
      reference: `p99 ${result.baseline.p99Ms.toFixed(1)} ms without the flood`,
      ratio: `${ratio.toFixed(2)}×`,
      cpu: '',
      latency: `${result.flood.p50Ms.toFixed(1)} ms / ${result.flood.p99Ms.toFixed(1)} ms; ${result.baseline.p50Ms.toFixed(2)} ms / ${result.baseline.p99Ms.toFixed(2)} ms`,
      note: [
        `other user: ${statusText(result.flood.byStatus)} in ${result.floodSeconds.toFixed(0)} s (max ${result.flood.maxMs.toFixed(0)} ms)`,
        `flooder: ${statusText(result.flooder.byStatus)}`,
        `rejected by schema: ${statusText(result.rejectedBySchema) || 'none'}`,
        `leases renewed ${renewed}/${result.leases.length}, oldest ${oldestLease.toFixed(1)} s of 40`,
        `ReplicaSet 1 → 10 ${result.replicaSet.converged ? `Ready in ${result.replicaSet.seconds.toFixed(1)} s` : `not converged (${result.replicaSet.readyReplicas} Ready)`}`,
      ].join('; '),
    });
    ctx.budgets.push({
      budget: `flood, ${variant.name}: another user's get p99 vs without the flood; nobody but the flooder refused; leases renewed; controllers converge`,
      target: '≤ 2×; 0; all; yes',
      measured: `${ratio.toFixed(3)}×; ${others429}; ${renewed}/${result.leases.length}; ${result.replicaSet.converged ? 'yes' : 'no'}`,
      met: ratio <= 2 && others429 === 0 && renewed === result.leases.length && oldestLease < 40 && result.replicaSet.converged,
    });
  }
}

function statusText(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([k, v]) => `${k}: ${v.toLocaleString('en-US')}`)
    .join(', ');
}

async function runVariant(ctx: Context, variant: Variant, objects: number): Promise<FloodResult> {
  const etcd = await ctx.etcd();
  const dataDir = await ctx.tmpDir('flood');
  const tokens = path.join(dataDir, 'flood-tokens.csv');
  await writeFile(tokens, FLOOD_TOKEN_FILE);
  // The bench's server child logs nothing, so the gRPC door gets a port chosen here.
  const grpcPort = await freePort();
  const server = await startKeelson(ctx.build, {
    store: { kind: 'etcd', endpoint: etcd.endpoint },
    dataDir,
    serverArgs: [
      '--vendor',
      'kubernetes',
      '--grpc-port',
      String(grpcPort),
      '--controllers=',
      '--authorization-mode',
      'Node,RBAC',
      '--token-auth-file',
      tokens,
      ...variant.serverArgs,
    ],
  });
  const grpcAddress = `127.0.0.1:${grpcPort}`;
  const controllers = await startControllersProcess(ctx, dataDir, grpcAddress);
  try {
    return await runFlood({
      target: server.target,
      objects,
      concurrency: 100,
      baselineMs: ctx.options.quick ? 5_000 : 15_000,
      floodMs: ctx.options.quick ? 15_000 : 45_000,
      replicas: 10,
      ownLevelForCalm: variant.ownLevelForCalm,
      forkFlooder: () => forkChild(ctx.build.file('tools/bench/load/flood-worker'), 'flooder', { env: ctx.build.env }),
      log: ctx.log,
    });
  } finally {
    await controllers.stop();
    await server.stop();
    await etcd.stop();
  }
}

/** The controllers, scheduler and three simulated nodes in their own process (`--controllers-only`), as the fault suite runs them. */
async function startControllersProcess(ctx: Context, coreDir: string, grpcAddress: string): Promise<{ stop(): Promise<void> }> {
  const dataDir = await ctx.tmpDir('flood-controllers');
  const child = spawn(
    process.execPath,
    [
      ctx.build.file('src/server/main'),
      '--vendor',
      'kubernetes',
      '--data-dir',
      dataDir,
      '--controllers-only',
      '--core-address',
      grpcAddress,
      '--kubeconfig',
      path.join(coreDir, 'controller-manager.kubeconfig'),
      '--use-service-account-credentials',
      '--cluster-signing-cert-file',
      path.join(coreDir, 'ca.crt'),
      '--cluster-signing-key-file',
      path.join(coreDir, 'ca.key'),
      '--simulated-nodes',
      '3',
    ],
    { env: ctx.build.env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const keep = (chunk: Buffer) => {
      out = (out + chunk.toString()).slice(-8192);
      if (out.includes('keelson: ready')) resolve();
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    void exited.then(() => reject(new Error(`the controllers process exited:\n${out}`)));
  });
  return {
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
