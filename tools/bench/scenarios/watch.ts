/**
 * Scenario 3: watch fan-out. 100 and 1,000 watches (one HTTPS connection each, in the load
 * generator), then writes one at a time from this process: latency from the write's
 * acknowledgement to each watcher's receipt, every delivery accounted for, and the server's
 * resident memory per watcher. The reference is etcd's own delivery of the same writes to as
 * many raw etcd3 watchers in the same generator process.
 *
 * The writer and the watchers are different processes: their clocks are aligned by measuring
 * the generator's clock offset (NTP-style, best of many round trips).
 */
import { Etcd3 } from 'etcd3';
import type { Context } from '../context';
import { replicaSet, replicaSetsPath } from '../fixtures';
import { Histogram } from '../histogram';
import type { Child } from '../ipc';
import type { Delivery, WatchCounts } from '../load/watchers';
import { bytes, micros, ms } from '../report';
import type { Served } from './served';
import { storedBytes } from '../context';

const SIZES = [100, 1000];
const DELIVERY_TIMEOUT_MS = 5000;

/** worker clock − our clock, ms (from the round trip with the smallest delay). */
async function clockOffset(worker: Child): Promise<number> {
  let best = { rtt: Infinity, offset: 0 };
  for (let i = 0; i < 50; i++) {
    const t1 = performance.timeOrigin + performance.now();
    const tw = await worker.call<number>('clock');
    const t2 = performance.timeOrigin + performance.now();
    if (t2 - t1 < best.rtt) best = { rtt: t2 - t1, offset: tw - (t1 + t2) / 2 };
  }
  return best.offset;
}

interface FanOut {
  latency: Histogram;
  expected: number;
  received: number;
  counts: WatchCounts;
  /** Server CPU per delivered event, µs (Keelson only). */
  cpuPerEvent?: number;
  rssPerWatcher?: number;
  heapPerWatcher?: number;
}

async function deliver(worker: Child, watchers: number, n: number, writes: number, offset: number, write: (seq: number) => Promise<void>, seqBase: number): Promise<Omit<FanOut, 'counts'>> {
  const latency = new Histogram();
  let received = 0;
  for (let i = 1; i <= writes; i++) {
    const seq = seqBase + i;
    await write(seq);
    const ackAt = performance.timeOrigin + performance.now() + offset;
    const d = await worker.call<Delivery>('watchCollect', { watchers, seq, ackAt, timeoutMs: DELIVERY_TIMEOUT_MS });
    received += d.received;
    for (const us of d.latenciesUs) latency.record(Math.max(0, us));
    // A short gap so that one write's deliveries never overlap the next's.
    await new Promise((r) => setTimeout(r, 5));
  }
  return { latency, expected: writes * n, received };
}

async function keelsonFanOut(ctx: Context, served: Served, n: number, writes: number, offset: number, seqBase: number): Promise<FanOut> {
  const namespace = `bench-watch-${n}`;
  await served.api.namespace(namespace);
  const before = await served.server.gc();
  const watchers = await ctx.worker.call<number>('watchOpen', { kind: 'https', target: served.server.target, n, path: `${replicaSetsPath(namespace)}?watch=1` });
  try {
    const opened = await served.server.gc();
    const cpu0 = opened.cpuUs;
    const result = await deliver(ctx.worker, watchers, n, writes, offset, async (seq) => {
      await served.api.expect('POST', replicaSetsPath(namespace), replicaSet(`fanout-${seq}`, namespace), [201]);
    }, seqBase);
    const cpu1 = (await served.server.stats()).cpuUs;
    const counts = await ctx.worker.call<WatchCounts>('watchCounts', { watchers });
    return {
      ...result,
      counts,
      cpuPerEvent: (cpu1 - cpu0) / Math.max(1, result.received),
      rssPerWatcher: (opened.rss - before.rss) / n,
      heapPerWatcher: (opened.heapUsed + opened.external - before.heapUsed - before.external) / n,
    };
  } finally {
    await ctx.worker.call('watchClose', { watchers });
  }
}

async function etcdFanOut(ctx: Context, served: Served, value: Buffer, n: number, writes: number, offset: number, seqBase: number): Promise<FanOut> {
  const prefix = `/bench-watch-raw-${n}/`;
  const client = new Etcd3({ hosts: served.etcd.endpoint });
  const watchers = await ctx.worker.call<number>('watchOpen', { kind: 'etcd', endpoint: served.etcd.endpoint, n, prefix });
  try {
    const result = await deliver(ctx.worker, watchers, n, writes, offset, async (seq) => {
      await client.put(`${prefix}fanout-${seq}`).value(value).exec();
    }, seqBase);
    return { ...result, counts: await ctx.worker.call<WatchCounts>('watchCounts', { watchers }) };
  } finally {
    await ctx.worker.call('watchClose', { watchers });
    client.close();
  }
}

const p = (h: Histogram, q: number) => h.percentile(q);

const signed = (us: number) => `${us >= 0 ? '+' : '−'}${ms(Math.abs(us))}`;

export async function runWatch(ctx: Context, served: Served): Promise<void> {
  const writes = ctx.options.quick ? 20 : 100;
  const offset = await clockOffset(ctx.worker);
  const value = storedBytes(ctx.template!);
  let seqBase = 0;
  // The reference: etcd's own delivery to one raw etcd3 watcher.
  ctx.log(`3. etcd delivery to one raw etcd3 watcher, ${writes} writes`);
  const single = await etcdFanOut(ctx, served, value, 1, writes, offset, seqBase);
  seqBase += writes;
  for (const n of SIZES) {
    ctx.log(`3. watch fan-out to ${n} watchers, ${writes} writes`);
    const k = await keelsonFanOut(ctx, served, n, writes, offset, seqBase);
    seqBase += writes;
    // Context, not the reference: etcd's delivery to as many etcd3 watchers in one process (full runs only).
    const e = ctx.options.quick ? undefined : await etcdFanOut(ctx, served, value, n, writes, offset, seqBase);
    seqBase += writes;
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
        `RSS ${bytes(k.rssPerWatcher ?? NaN)}/watcher (heap+external ${bytes(k.heapPerWatcher ?? NaN)}); ` +
        (e ? `etcd → ${n} raw etcd3 watchers in one process: p50 ${ms(p(e.latency, 50))}, p99 ${ms(p(e.latency, 99))}, ${e.received}/${e.expected}` : ''),
    });
    if (n === SIZES[SIZES.length - 1]) {
      ctx.budgets.push({
        budget: `watch fan-out to ${n} watchers: p99 over etcd's own delivery, none dropped`,
        target: '≤ +5 ms, 0 dropped',
        measured: `${signed(extra)}, ${dropped} dropped`,
        met: extra <= 5000 && dropped === 0,
      });
    }
  }
}
