/**
 * One user floods the server with concurrent lists without pause (issue 54's reliability goal;
 * docs/RELIABILITY.md, "Priority and fairness"). The core runs with its concurrency lowered
 * (`--max-requests-inflight 6 --max-mutating-requests-inflight 3`, 9 seats) and no controllers;
 * the controllers, the scheduler and three simulated nodes run in a process of their own
 * (`--controllers-only`), so their calls pass the core's gRPC door and its priority and
 * fairness like any client's. With priority and fairness on (the default):
 *
 * - only the flooding user gets 429s: another user's gets all succeed, and the core's
 *   `apiserver_flowcontrol_rejected_requests_total` counts rejections in the flooder's flow
 *   schema only (none for the nodes' or the controllers' schemas);
 * - every node's Lease is renewed during the flood, its last renewal within its duration by the
 *   server's clock;
 * - a ReplicaSet scaled during the flood reaches its replicas, all Ready.
 *
 * No timing is asserted: the latencies are the bench's (docs/BENCHMARKS.md, scenario 16, which
 * also runs today's counters, `--enable-priority-and-fairness=false`). `npm test` floods 100
 * concurrent lists of 2,000 ConfigMaps for 15 s; `npm run test:faults` lists of 10,000 for 30 s.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { forkChild } from '../../tools/bench/ipc';
import { FLOOD_TOKEN_FILE, runFlood } from '../../tools/bench/load/flood';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { FAULT_TIMEOUT_MS, FULL, summary } from './support';

jest.setTimeout(FAULT_TIMEOUT_MS);

const ROOT = path.resolve(__dirname, '../..');
const OBJECTS = FULL ? 10_000 : 2_000;
const FLOOD_MS = FULL ? 30_000 : 15_000;

let dir: string;
let core: ServerProcess;
let controllers: ServerProcess;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-flood-'));
  const tokens = path.join(dir, 'tokens.csv');
  await writeFile(tokens, FLOOD_TOKEN_FILE);
  core = await startServerProcess([
    '--vendor',
    'kubernetes',
    '--grpc-port',
    '0',
    '--controllers=',
    '--simulated-nodes',
    '0',
    '--authorization-mode',
    'Node,RBAC',
    '--token-auth-file',
    tokens,
    '--max-requests-inflight',
    '6',
    '--max-mutating-requests-inflight',
    '3',
  ]);
  const grpcAddress = /serving the core over gRPC on (\S+)/.exec(core.output())![1]!;
  controllers = await startServerProcess(
    [
      '--vendor',
      'kubernetes',
      '--controllers-only',
      '--core-address',
      grpcAddress,
      '--kubeconfig',
      path.join(core.dataDir, 'controller-manager.kubeconfig'),
      '--use-service-account-credentials',
      '--cluster-signing-cert-file',
      path.join(core.dataDir, 'ca.crt'),
      '--cluster-signing-key-file',
      path.join(core.dataDir, 'ca.key'),
      '--simulated-nodes',
      '3',
    ],
    { noGateway: true },
  );
});

afterAll(async () => {
  await controllers?.stop();
  await core?.stop();
  await rm(dir, { recursive: true, force: true });
});

test(`100 concurrent lists of ${OBJECTS.toLocaleString('en-US')} ConfigMaps without pause: only the flooder is refused, leases renewed, controllers converge`, async () => {
  const url = new URL(core.url);
  const result = await runFlood({
    target: { host: url.hostname, port: Number(url.port), tls: core.admin },
    objects: OBJECTS,
    concurrency: 100,
    baselineMs: 2_000,
    floodMs: FLOOD_MS,
    replicas: 10,
    forkFlooder: () =>
      forkChild(path.join(ROOT, 'tools/bench/load/flood-worker.ts'), 'flooder', { execArgv: ['-r', '@swc-node/register'], env: { ...process.env } }),
  });
  summary('priority-and-fairness', {
    objects: OBJECTS,
    floodSeconds: +result.floodSeconds.toFixed(1),
    flooder: result.flooder.byStatus,
    other: { baseline: result.baseline, flood: result.flood },
    rejectedBySchema: result.rejectedBySchema,
    leases: result.leases.map((l) => ({ node: l.node, ageSeconds: l.ageSeconds })),
    replicaSet: result.replicaSet,
  });

  // The flooder was served (past its share it waits in its level's queues, and is refused once they overflow or it waits too long).
  expect(result.flooder.byStatus['200']).toBeGreaterThan(0);
  expect(Object.keys(result.flooder.byStatus).every((s) => s === '200' || s === '429')).toBe(true);
  // Nobody else was: the other user's gets all succeeded, alone and during the flood...
  expect(Object.keys(result.baseline.byStatus)).toEqual(['200']);
  expect(Object.keys(result.flood.byStatus)).toEqual(['200']);
  expect(result.flood.count).toBeGreaterThan(0);
  // ...and the filter rejected in the flooder's schema alone (the nodes', controllers' and scheduler's are others).
  for (const [schema, rejected] of Object.entries(result.rejectedBySchema)) if (schema !== 'global-default') expect([schema, rejected]).toEqual([schema, 0]);

  // Every node renewed its Lease during the flood, the last time within the lease's duration by the server's clock.
  expect(result.leases).toHaveLength(3);
  for (const lease of result.leases) {
    expect(Date.parse(lease.after)).toBeGreaterThan(Date.parse(lease.before));
    expect(lease.ageSeconds).toBeLessThan(lease.leaseDurationSeconds);
  }
  // The controllers kept converging: the ReplicaSet scaled during the flood got all its replicas Ready.
  expect(result.replicaSet).toMatchObject({ converged: true, replicas: 10, readyReplicas: 10 });
});
