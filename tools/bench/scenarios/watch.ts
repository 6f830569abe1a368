/**
 * Scenario 3: watch fan-out. 100 and 1,000 watches (one HTTPS connection each, in the load
 * generator), then writes one at a time: latency from sending the write to each watcher's
 * receipt (the acknowledgement may come before or after the fan-out), every delivery accounted for, and the server's memory per watcher. The
 * references are a bare node:https server fanning the same event out to as many TLS streams
 * (bare-server.ts), and etcd's own delivery of a write to one raw etcd3 watcher, timed the same
 * way; full runs also time etcd's delivery to as many raw etcd3 watchers in one process.
 * Writer and watchers share the generator process (load/watchers.ts says why).
 */
import type { Context } from '../context';
import { storedBytes } from '../context';
import { createBodyTemplate, objectTextTemplate, replicaSetsPath } from '../fixtures';
import { Histogram } from '../histogram';
import type { Child } from '../ipc';
import type { Delivery, WatchCounts } from '../load/watchers';
import { startBare } from '../processes';
import { bytes, micros, ms } from '../report';
import type { Served } from './served';

const SIZES = [100, 1000];
const DELIVERY_TIMEOUT_MS = 5000;

interface FanOut {
  latency: Histogram;
  expected: number;
  received: number;
  /** Deliveries seen before the write's acknowledgement. */
  early: number;
  counts: WatchCounts;
  /** Server CPU per delivered event, µs (Keelson only). */
  cpuPerEvent?: number;
  rssPerWatcher?: number;
  heapPerWatcher?: number;
}

/** Writes one at a time, each delivered to every watcher (also what `--profile=watch` drives). */
export async function deliver(worker: Child, watchers: number, writes: number, seqBase: number): Promise<Omit<FanOut, 'counts'>> {
  const latency = new Histogram();
  let received = 0;
  let early = 0;
  let expected = 0;
  for (let i = 1; i <= writes; i++) {
    const d = await worker.call<Delivery & { watchers?: number }>('watchRound', { watchers, seq: seqBase + i, timeoutMs: DELIVERY_TIMEOUT_MS });
    received += d.received;
    early += d.beforeAck;
    for (const us of d.latenciesUs) latency.record(Math.max(0, us));
    // A short gap so that one write's deliveries never overlap the next's.
    await new Promise((r) => setTimeout(r, 5));
  }
  const counts = await worker.call<WatchCounts>('watchCounts', { watchers });
  expected = writes * counts.watchers;
  return { latency, expected, received, early };
}

async function keelsonFanOut(ctx: Context, served: Served, n: number, writes: number, seqBase: number): Promise<FanOut> {
  const namespace = `bench-watch-${n}`;
  await served.api.namespace(namespace);
  const before = await served.server.gc();
  const create = { path: replicaSetsPath(namespace), ...createBodyTemplate(namespace) };
  const watchers = await ctx.worker.call<number>('watchOpen', {
    kind: 'https',
    target: served.server.target,
    n,
    path: `${replicaSetsPath(namespace)}?watch=1`,
    create,
  });
  try {
    const opened = await served.server.gc();
    const result = await deliver(ctx.worker, watchers, writes, seqBase);
    const cpu1 = (await served.server.stats()).cpuUs;
    return {
      ...result,
      counts: await ctx.worker.call<WatchCounts>('watchCounts', { watchers }),
      cpuPerEvent: (cpu1 - opened.cpuUs) / Math.max(1, result.received),
      rssPerWatcher: (opened.rss - before.rss) / n,
      heapPerWatcher: (opened.heapUsed + opened.external - before.heapUsed - before.external) / n,
    };
  } finally {
    await ctx.worker.call('watchClose', { watchers });
  }
}

/** The same fan-out from a bare node:https server (bare-server.ts, `/bare-watch`): the floor for HTTPS watchers. */
async function bareFanOut(ctx: Context, served: Served, n: number, writes: number, seqBase: number): Promise<FanOut> {
  const bare = await startBare(ctx.build, served.server.dataDir, served.server.target.tls);
  try {
    // The event Keelson sends carries the stored object (uid, timestamps, managedFields, status),
    // not the create body: the reference writes an object of the same shape and size.
    const create = { path: '/bare-watch', ...objectTextTemplate(ctx.template!) };
    const watchers = await ctx.worker.call<number>('watchOpen', { kind: 'https', target: bare.target, n, path: '/bare-watch', create });
    try {
      const opened = await bare.gc();
      const result = await deliver(ctx.worker, watchers, writes, seqBase);
      const cpu1 = (await bare.stats()).cpuUs;
      return {
        ...result,
        counts: await ctx.worker.call<WatchCounts>('watchCounts', { watchers }),
        cpuPerEvent: (cpu1 - opened.cpuUs) / Math.max(1, result.received),
      };
    } finally {
      await ctx.worker.call('watchClose', { watchers });
    }
  } finally {
    await bare.stop();
  }
}

async function etcdFanOut(ctx: Context, served: Served, value: Buffer, n: number, writes: number, seqBase: number): Promise<FanOut> {
  const watchers = await ctx.worker.call<number>('watchOpen', { kind: 'etcd', endpoint: served.etcd.endpoint, n, prefix: `/bench-watch-raw-${n}/`, value });
  try {
    const result = await deliver(ctx.worker, watchers, writes, seqBase);
    return { ...result, counts: await ctx.worker.call<WatchCounts>('watchCounts', { watchers }) };
  } finally {
    await ctx.worker.call('watchClose', { watchers });
  }
}

/**
 * The floor under "memory per watcher": what an idle keep-alive TLS connection costs the bare
 * https server (RSS and heap+external per connection, after GC).
 */
async function connectionMemory(ctx: Context, served: Served, n: number): Promise<{ rss: number; heap: number }> {
  const bare = await startBare(ctx.build, served.server.dataDir, served.server.target.tls);
  try {
    const before = await bare.gc();
    const load = await ctx.worker.call<number>('open', { kind: 'https', target: bare.target, connections: n });
    try {
      const after = await bare.gc();
      return { rss: (after.rss - before.rss) / n, heap: (after.heapUsed + after.external - before.heapUsed - before.external) / n };
    } finally {
      await ctx.worker.call('close', { load });
    }
  } finally {
    await bare.stop();
  }
}

const p = (h: Histogram, q: number) => h.percentile(q);
const signed = (us: number) => `${us >= 0 ? '+' : '−'}${ms(Math.abs(us))}`;
const pct = (part: number, whole: number) => `${((part / Math.max(1, whole)) * 100).toFixed(0)}%`;

export async function runWatch(ctx: Context, served: Served): Promise<void> {
  const writes = ctx.options.quick ? 20 : 100;
  const value = storedBytes(ctx.template!);
  let seqBase = 0;
  // Per-connection memory hardly depends on the count: measure the floor once.
  const floor = await connectionMemory(ctx, served, ctx.options.quick ? 100 : 500);
  ctx.log(`3. etcd delivery to one raw etcd3 watcher, ${writes} writes`);
  const single = await etcdFanOut(ctx, served, value, 1, writes, seqBase);
  seqBase += writes;
  for (const n of SIZES) {
    ctx.log(`3. watch fan-out to ${n} watchers, ${writes} writes`);
    const k = await keelsonFanOut(ctx, served, n, writes, seqBase);
    seqBase += writes;
    const e = ctx.options.quick ? undefined : await etcdFanOut(ctx, served, value, n, writes, seqBase);
    seqBase += writes;
    ctx.log(`3. bare node:https fan-out to ${n} watchers, ${writes} writes`);
    const b = await bareFanOut(ctx, served, n, writes, seqBase);
    seqBase += writes;
    const bareDropped = b.expected - b.received + b.counts.outOfOrder + b.counts.ended;
    const dropped = k.expected - k.received + k.counts.outOfOrder + k.counts.ended;
    const extra = p(k.latency, 99) - p(single.latency, 99);
    ctx.rows.push({
      scenario: 3,
      name: `watch fan-out: 1 write → ${n.toLocaleString('en-US')} HTTPS watchers (${writes} writes)`,
      keelson: `p50 ${ms(p(k.latency, 50))}, p99 ${ms(p(k.latency, 99))}`,
      reference: `p50 ${ms(p(single.latency, 50))}, p99 ${ms(p(single.latency, 99))} etcd → 1 raw etcd3 watcher`,
      ratio: `p99 ${signed(extra)}`,
      cpu: `${micros(k.cpuPerEvent)} per event delivered`,
      latency: `max ${ms(k.latency.max)}`,
      note:
        `delivered ${k.received}/${k.expected}, out of order ${k.counts.outOfOrder}, streams ended ${k.counts.ended}; ` +
        `${pct(k.early, k.received)} arrived before the ack (${pct(single.early, single.received)} for etcd); ` +
        `RSS ${bytes(k.rssPerWatcher ?? NaN)}/watcher (heap+external ${bytes(k.heapPerWatcher ?? NaN)}), bare https per idle TLS connection ${bytes(floor.rss)} RSS (${bytes(floor.heap)})` +
        (e ? `; etcd → ${n} raw etcd3 watchers in one process: p50 ${ms(p(e.latency, 50))}, p99 ${ms(p(e.latency, 99))}, ${e.received}/${e.expected}` : ''),
    });
    const overBare = p(k.latency, 99) / Math.max(1, p(b.latency, 99));
    ctx.rows.push({
      scenario: 3,
      name: `watch fan-out vs bare node:https: 1 write → ${n.toLocaleString('en-US')} watchers (${writes} writes)`,
      keelson: `p50 ${ms(p(k.latency, 50))}, p99 ${ms(p(k.latency, 99))}`,
      reference: `p50 ${ms(p(b.latency, 50))}, p99 ${ms(p(b.latency, 99))} bare https`,
      ratio: `p99 ${overBare.toFixed(2)}×`,
      cpu: `${micros(k.cpuPerEvent)} / ${micros(b.cpuPerEvent)} per event delivered`,
      latency: `max ${ms(k.latency.max)} / ${ms(b.latency.max)}`,
      note:
        `the reference acknowledges a POST of the stored object's JSON, then writes it as one event line to ${n} held chunked TLS streams (tools/bench/bare-server.ts); ` +
        `delivered ${b.received}/${b.expected}, dropped ${bareDropped}; ${pct(b.early, b.received)} arrived before the ack`,
    });
    if (n === SIZES[SIZES.length - 1]) {
      ctx.budgets.push({
        budget: `watch fan-out to ${n} watchers: p99 vs a bare node:https fan-out of the event, none dropped`,
        target: '≤ 1.25×, 0 dropped',
        measured: `${overBare.toFixed(2)}×, ${dropped} dropped`,
        met: overBare <= 1.25 && dropped === 0,
      });
    }
  }
}
