/**
 * The reliability goal of priority and fairness (issue 54; docs/RELIABILITY.md, "Priority and
 * fairness"; docs/BENCHMARKS.md, scenario 16): one user floods the server with concurrent lists
 * of every seeded ConfigMap, without pause, while
 *
 * - another user reads one ConfigMap at a time (its latency measured before and during the
 *   flood, every answer counted by status),
 * - the simulated nodes renew their Leases and the controllers scale a ReplicaSet (they run in
 *   their own process, so their calls pass the core's door and its limits as anyone's do).
 *
 * The fault suite asserts what does not depend on timing (who got 429s, leases renewed within
 * their duration by the server's clock, the ReplicaSet converged); the bench reports the
 * latencies. The caller starts the servers and forks the flooder (`flood-worker.ts`).
 */
import { ApiClient } from '../api';
import { Histogram } from '../histogram';
import { HttpsConnection, type Target, requestHead } from '../https-client';
import type { Child } from '../ipc';
import type { FloodCounts, FloodStart } from './flood-worker';

/** The two users, for a `--token-auth-file`. */
export const FLOOD_TOKENS = { flooder: 'flooder-token-5f1c9e', calm: 'calm-token-8a2d4b' };
export const FLOOD_TOKEN_FILE = `${FLOOD_TOKENS.flooder},flooder,201\n${FLOOD_TOKENS.calm},calm,202\n`;

const FLOOD_NS = 'flood';
const WORK_NS = 'work';
const RS_PATH = `/apis/apps/v1/namespaces/${WORK_NS}/replicasets`;

export interface FloodOptions {
  /** The admin (system:masters) of the server under test. */
  target: Target;
  /** ConfigMaps seeded; each list of the flood returns all of them. */
  objects: number;
  /** Lists in flight at once. */
  concurrency: number;
  baselineMs: number;
  /** How long the flood lasts at least (past the nodes' 10 s renew interval, so each renews during it). */
  floodMs: number;
  /** The ReplicaSet is scaled from 1 to this during the flood; the flood lasts until it converges, or 4 × floodMs. */
  replicas: number;
  /**
   * Give the other user a priority level of its own (docs/OPERATIONS.md, "A tenant's own priority
   * level"); by default both users fall in `global-default`, in flows of their own.
   */
  ownLevelForCalm?: boolean;
  /** Fork `flood-worker.ts` (compiled in the bench, through swc in tests). */
  forkFlooder(): Child;
  log?(line: string): void;
}

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  byStatus: Record<string, number>;
}

export interface LeaseCheck {
  node: string;
  /** renewTime when the flood began and when it ended (RFC 3339, microseconds). */
  before: string;
  after: string;
  /** Seconds from the last renewal to the server's clock (its Date header) at the flood's end. */
  ageSeconds: number;
  leaseDurationSeconds: number;
}

export interface FloodResult {
  baseline: LatencySummary;
  flood: LatencySummary;
  flooder: FloodCounts;
  /** `apiserver_flowcontrol_rejected_requests_total` by flow schema (empty with priority and fairness off). */
  rejectedBySchema: Record<string, number>;
  leases: LeaseCheck[];
  replicaSet: { replicas: number; readyReplicas: number; converged: boolean; seconds: number };
  floodSeconds: number;
}

/** Seed, measure the other user alone, then flood and measure it again with the nodes and controllers at work. */
export async function runFlood(options: FloodOptions): Promise<FloodResult> {
  const log = options.log ?? (() => {});
  const admin = new ApiClient(options.target);
  const flooder = options.forkFlooder();
  try {
    await setUp(admin, options, log);
    const baseline = await calmReads(options.target, () => true, options.baselineMs);
    log(`baseline: ${baseline.count} gets, p99 ${baseline.p99Ms.toFixed(2)} ms`);

    const leasesBefore = await leases(admin);
    const start: FloodStart = {
      target: options.target,
      token: FLOOD_TOKENS.flooder,
      path: `/api/v1/namespaces/${FLOOD_NS}/configmaps`,
      concurrency: options.concurrency,
    };
    await flooder.call('start', start);
    const floodStarted = performance.now();
    const scaled = await admin.request(
      'PATCH',
      `${RS_PATH}/steady`,
      { spec: { replicas: options.replicas } },
      { 'content-type': 'application/merge-patch+json' },
    );
    if (scaled.status !== 200) throw new Error(`scaling the ReplicaSet: ${scaled.status} ${scaled.body.toString('utf8').slice(0, 300)}`);
    const scaledAt = performance.now();
    const converged = waitConverged(admin, options.replicas, floodStarted + 4 * options.floodMs).then((rs) => ({
      ...rs,
      seconds: (performance.now() - scaledAt) / 1000,
    }));
    let rsDone = false;
    void converged.then(() => (rsDone = true));
    // The other user reads through the whole flood, which lasts floodMs and until the ReplicaSet is done.
    const flood = await calmReads(options.target, () => performance.now() - floodStarted < options.floodMs || !rsDone, 4 * options.floodMs);
    const replicaSet = await converged;
    const leasesAfter = await leases(admin);
    const serverNow = leasesAfter.serverNow;
    const floodSeconds = (performance.now() - floodStarted) / 1000;
    const counts = await flooder.call<FloodCounts>('stop');
    log(`flood: ${floodSeconds.toFixed(1)} s; flooder ${JSON.stringify(counts.byStatus)}; other user ${flood.count} gets, p99 ${flood.p99Ms.toFixed(2)} ms`);
    const checks: LeaseCheck[] = [...leasesAfter.renewTimes].map(([node, lease]) => ({
      node,
      before: leasesBefore.renewTimes.get(node)?.renewTime ?? '',
      after: lease.renewTime,
      ageSeconds: (serverNow - Date.parse(lease.renewTime)) / 1000,
      leaseDurationSeconds: lease.durationSeconds,
    }));
    return {
      baseline,
      flood,
      flooder: counts,
      rejectedBySchema: await rejectedBySchema(admin),
      leases: checks,
      replicaSet,
      floodSeconds,
    };
  } finally {
    admin.close();
    await flooder.stop();
  }
}

async function setUp(admin: ApiClient, options: FloodOptions, log: (line: string) => void): Promise<void> {
  await admin.namespace(FLOOD_NS);
  await admin.namespace(WORK_NS);
  for (const user of ['flooder', 'calm'])
    await admin.expect(
      'POST',
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      {
        metadata: { name: `${user}-view` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      },
      [201, 409],
    );
  if (options.ownLevelForCalm) await ownLevel(admin, 'calm');
  const seeders = Array.from({ length: 16 }, () => new ApiClient(options.target));
  let next = 0;
  await Promise.all(
    seeders.map(async (client) => {
      for (let i = next++; i < options.objects; i = next++)
        await client.expect(
          'POST',
          `/api/v1/namespaces/${FLOOD_NS}/configmaps`,
          { metadata: { name: `cm-${i}` }, data: { index: String(i), text: 'x'.repeat(64) } },
          [201, 409],
        );
      client.close();
    }),
  );
  log(`seeded ${options.objects} ConfigMaps`);
  await admin.expect(
    'POST',
    RS_PATH,
    {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'steady' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'steady' } },
        template: { metadata: { labels: { app: 'steady' } }, spec: { containers: [{ name: 'c', image: 'registry.example/steady:1' }] } },
      },
    },
    [201, 409],
  );
  // The controllers and nodes are at work before the flood: one replica Ready, every node's Lease there.
  const deadline = performance.now() + 60_000;
  for (;;) {
    const rs = (await admin.expect('GET', `${RS_PATH}/steady`, undefined, [200])) as { status?: { readyReplicas?: number } };
    const { renewTimes } = await leases(admin);
    if (rs.status?.readyReplicas === 1 && renewTimes.size > 0) break;
    if (performance.now() > deadline) throw new Error(`the controllers and nodes are not at work: ${JSON.stringify(rs.status)}, ${renewTimes.size} leases`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A priority level and a FlowSchema above the defaults for `user` alone. */
async function ownLevel(admin: ApiClient, user: string): Promise<void> {
  const group = '/apis/flowcontrol.apiserver.k8s.io/v1';
  await admin.expect(
    'POST',
    `${group}/prioritylevelconfigurations`,
    {
      metadata: { name: user },
      spec: {
        type: 'Limited',
        limited: {
          nominalConcurrencyShares: 20,
          lendablePercent: 0,
          limitResponse: { type: 'Queue', queuing: { queues: 16, handSize: 4, queueLengthLimit: 50 } },
        },
      },
    },
    [201, 409],
  );
  await admin.expect(
    'POST',
    `${group}/flowschemas`,
    {
      metadata: { name: user },
      spec: {
        priorityLevelConfiguration: { name: user },
        matchingPrecedence: 1000,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: [{ kind: 'User', user: { name: user } }],
            resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
          },
        ],
      },
    },
    [201, 409],
  );
}

/** The other user's gets of one ConfigMap, one at a time, while `more()` holds (at most `capMs`). */
async function calmReads(target: Target, more: () => boolean, capMs: number): Promise<LatencySummary> {
  const head = requestHead('GET', `/api/v1/namespaces/${FLOOD_NS}/configmaps/cm-0`, target, { authorization: `Bearer ${FLOOD_TOKENS.calm}` });
  const latency = new Histogram();
  const byStatus: Record<string, number> = {};
  const started = performance.now();
  let conn: HttpsConnection | undefined;
  while (more() && performance.now() - started < capMs) {
    const sent = performance.now();
    try {
      conn ??= await HttpsConnection.connect(target);
      const res = await conn.request(head, undefined, { keepBody: false });
      byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
    } catch {
      byStatus.transport = (byStatus.transport ?? 0) + 1;
      conn?.close();
      conn = undefined;
    }
    latency.record((performance.now() - sent) * 1000);
  }
  conn?.close();
  return { count: latency.total, p50Ms: latency.percentile(50) / 1000, p99Ms: latency.percentile(99) / 1000, maxMs: latency.max / 1000, byStatus };
}

async function waitConverged(admin: ApiClient, replicas: number, deadline: number): Promise<{ replicas: number; readyReplicas: number; converged: boolean }> {
  for (;;) {
    const rs = (await admin.expect('GET', `${RS_PATH}/steady`, undefined, [200])) as {
      metadata: { generation?: number };
      status?: { replicas?: number; readyReplicas?: number; observedGeneration?: number };
    };
    const status = { replicas: rs.status?.replicas ?? 0, readyReplicas: rs.status?.readyReplicas ?? 0 };
    const converged = status.replicas === replicas && status.readyReplicas === replicas && rs.status?.observedGeneration === rs.metadata.generation;
    if (converged || performance.now() > deadline) return { ...status, converged };
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The node Leases' renew times and durations, and the server's clock (its Date header) when read. */
async function leases(admin: ApiClient): Promise<{ renewTimes: Map<string, { renewTime: string; durationSeconds: number }>; serverNow: number }> {
  const res = await admin.request('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases');
  if (res.status !== 200) throw new Error(`listing the node leases: ${res.status}`);
  const list = JSON.parse(res.body.toString('utf8')) as {
    items: Array<{ metadata: { name: string }; spec: { renewTime?: string; leaseDurationSeconds?: number } }>;
  };
  const renewTimes = new Map(
    list.items.map((l) => [l.metadata.name, { renewTime: l.spec.renewTime ?? '', durationSeconds: l.spec.leaseDurationSeconds ?? 0 }]),
  );
  return { renewTimes, serverNow: Date.parse(res.headers.date ?? '') };
}

async function rejectedBySchema(admin: ApiClient): Promise<Record<string, number>> {
  const res = await admin.request('GET', '/metrics', undefined, { accept: 'text/plain' });
  const out: Record<string, number> = {};
  for (const line of res.body.toString('utf8').split('\n')) {
    if (!line.startsWith('apiserver_flowcontrol_rejected_requests_total{')) continue;
    const schema = /flow_schema="([^"]*)"/.exec(line)?.[1] ?? '';
    out[schema] = (out[schema] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return out;
}
