/**
 * Scenario 2: get by name and lists of 1,000 and 10,000 objects (served from the watch cache
 * once it is in place; the 10,000 also in protobuf), in requests/s and bytes/s, side by side with a bare node:https server
 * holding the very bytes Keelson answered in memory (same certificate, client certificates
 * requested, keep-alive). Then the memory a list costs while its client is slow, against the
 * response size, and the get once more through the node listener instead of Express.
 *
 * On etcd, the consistent get has two more cells, its floors (bare-server.ts): the bare server
 * reading each object from etcd with one linearizable Range per get and answering the stored
 * bytes, as upstream serves a consistent get; and the bare server answering the bytes it holds
 * once a revision read shared with the gets around it is back, as Keelson serves one. A row
 * after them splits a consistent get's mean time into bare https's own and the floor's wait for
 * its revision read, against what the goal allows (consistentGetTime).
 */
import type { Context } from '../context';
import { replicaSetsPath } from '../fixtures';
import type { Target } from '../https-client';
import { type Cell, type Sample, bytesPerSecond, cpuPerOp, etcdRpcsPerOp, perSecond, sideBySide } from '../measure';
import { objectKey } from '../../../src/core/storage/keys';
import { type BareServer, type KeelsonServer, startBare } from '../processes';
import { bytes, micros, ms, rate, ratio } from '../report';
import { LIST_SIZES, type Served, listNamespace } from './served';
import { createNaming } from '../../../src/naming';

const GET_CLIENTS = 16;
const GET_NAMES = 100;
const LIST_CLIENTS: Record<number, number> = { 1000: 4, 10000: 2 };
/** Slow clients held open at once for the list memory reading. */
const STALLED_LISTS = 4;

interface ReadCase {
  name: string;
  paths: string[];
  clients: number;
  /** The Accept header (default JSON). */
  accept?: string;
}

/** The protobuf media type of the bench's server (it runs with the default vendor). */
const PROTOBUF = createNaming('platform').mediaTypes.protobuf;

function readCell(ctx: Context, server: { target: Target; stats(): Promise<{ cpuUs: number }> }, c: ReadCase): Cell {
  return {
    worker: ctx.worker,
    open: { kind: 'https', target: server.target, connections: c.clients },
    spec: () => ({ op: 'request', method: 'GET', paths: c.paths, expect: 200, accept: c.accept }),
    serverCpu: async () => (await server.stats()).cpuUs,
  };
}

/**
 * The largest list again in protobuf (as client-go's informers in upstream's controllers ask):
 * Keelson at the list's path, bare https at a path of its own holding the protobuf bytes.
 */
async function protobufList(ctx: Context, served: Served, bare: BareServer): Promise<void> {
  const size = LIST_SIZES[LIST_SIZES.length - 1];
  const path = replicaSetsPath(listNamespace(size));
  const res = await served.api.request('GET', path, undefined, { accept: PROTOBUF });
  if (res.status !== 200) throw new Error(`GET ${path} (protobuf): ${res.status}`);
  const barePath = `${path}?bench-format=protobuf`;
  await bare.route(barePath, res.body, res.headers['content-type'] ?? PROTOBUF);
  const name = `list ${size.toLocaleString('en-US')} ReplicaSets (consistent), protobuf, ${LIST_CLIENTS[size]} clients`;
  ctx.log(`2. ${name}`);
  const c: ReadCase = { name, paths: [path], clients: LIST_CLIENTS[size], accept: PROTOBUF };
  const [k, b] = await sideBySide([readCell(ctx, served.server, c), readCell(ctx, bare, { ...c, paths: [barePath] })], ctx.timing);
  row(ctx, name, k, b, `response ${bytes(res.body.length)}`);
}

const latency = (s: Sample) => `${ms(s.latency.percentile(50))} / ${ms(s.latency.percentile(99))}`;

function row(ctx: Context, name: string, k: Sample, b: Sample, note = ''): number {
  const r = perSecond(k) / perSecond(b);
  const failed = k.failed + b.failed ? ` failed: ${k.failed} / ${b.failed}` : '';
  ctx.rows.push({
    scenario: 2,
    name,
    keelson: `${rate(perSecond(k))}, ${bytes(bytesPerSecond(k))}/s`,
    reference: `${rate(perSecond(b))}, ${bytes(bytesPerSecond(b))}/s bare https`,
    ratio: ratio(perSecond(k), perSecond(b)),
    cpu: `${micros(cpuPerOp(k))} / ${micros(cpuPerOp(b))}`,
    latency: `${latency(k)}; ${latency(b)}`,
    note: `${note}${failed}`.trim(),
  });
  return r;
}

/**
 * Bare https serving the same bytes again, a busy-wait in each get making up the CPU Keelson
 * spent beyond it: at Keelson's rate, its CPU beyond the busy-wait is what Node, TLS and the
 * kernel cost a get there (more than at bare https's own rate: fewer requests share each turn
 * of the event loop and each wakeup), and Keelson's CPU less that is Keelson's own work (for a
 * consistent get, with its share of the etcd Range before it).
 */
async function slowedBareRow(ctx: Context, bare: BareServer, c: ReadCase, keelson: Sample, ownIncludes: string): Promise<void> {
  ctx.log(`2. bare https slowed to Keelson's rate: ${c.name}`);
  const timing = { ...ctx.timing, rounds: 1 };
  const measure = async (us: number): Promise<Sample> => {
    await bare.spin(us);
    try {
      return (await sideBySide([readCell(ctx, bare, c)], timing))[0];
    } finally {
      await bare.spin(0);
    }
  };
  const alone = (await sideBySide([readCell(ctx, bare, c)], timing))[0];
  // Node's cost per get grows as the rate falls, so a busy-wait of Keelson's CPU beyond bare
  // https's own overshoots: measured once, the wait is corrected by the overshoot and measured again.
  let spinUs = Math.max(0, cpuPerOp(keelson) - cpuPerOp(alone));
  const first = await measure(spinUs);
  spinUs = Math.max(0, spinUs - (cpuPerOp(first) - cpuPerOp(keelson)));
  const slowed = await measure(spinUs);
  const around = cpuPerOp(slowed) - spinUs;
  ctx.rows.push({
    scenario: 2,
    name: `bare https slowed to Keelson's rate (${micros(spinUs)} µs busy-wait per get): ${c.name}`,
    keelson: rate(perSecond(slowed)),
    reference: `${rate(perSecond(keelson))} Keelson gets`,
    ratio: ratio(perSecond(slowed), perSecond(keelson)),
    cpu: `${micros(cpuPerOp(slowed))} / ${micros(cpuPerOp(keelson))}`,
    latency: `${latency(slowed)}; ${latency(keelson)}`,
    note: `at this rate Node, TLS and the kernel cost ${micros(around)} µs per get (${micros(cpuPerOp(alone))} at bare https's own rate), so Keelson's own work, ${ownIncludes}its JavaScript, is ${micros(cpuPerOp(keelson) - around)} µs of its ${micros(cpuPerOp(keelson))}`,
  });
}

/**
 * How steady the machine was during the gets: bare https serving the same bytes, round by round,
 * in the cached and the consistent get's cells. Each row's ratio is side by side, but a wide
 * spread here means the run's rows swing more than usual (other work on the shared cores), and
 * that a row's verdict in this run says less.
 */
function steadinessRow(ctx: Context, bareGets: readonly Sample[]): void {
  const rates = bareGets.flatMap((s) => s.rounds.filter((r) => r.elapsedMs > 0).map((r) => (r.ops * 1000) / r.elapsedMs)).sort((a, b) => a - b);
  if (rates.length < 2) return;
  const [low, high] = [rates[0]!, rates[rates.length - 1]!];
  ctx.rows.push({
    scenario: 2,
    name: `how steady the machine was: bare https's gets, round by round (${rates.length} rounds)`,
    keelson: `${rate(low)}–${rate(high)}`,
    reference: `median ${rate(rates[Math.floor(rates.length / 2)]!)}`,
    ratio: `${(high / low).toFixed(2)}× max/min`,
    cpu: '',
    latency: '',
    note: `the same bytes each round, so the spread is the machine's own drift while scenario 2's gets ran`,
  });
}

/** Counter names for the floor's shared revision reads (see revisionReadTime). */
const READS = 'revision reads';
const READ_SECONDS = 'revision read seconds';

async function bareRevisionReads(bare: BareServer): Promise<Record<string, number>> {
  const { reads, seconds } = await bare.revisionReads();
  return { [READS]: reads, [READ_SECONDS]: seconds };
}

/** Gets per revision read, and a read's mean time from sending it to its answer. */
function revisionReadTime(s: Sample): string {
  const reads = s.counters[READS];
  if (!reads) return 'no revision reads counted';
  return `a revision read every ${(s.ops / reads).toFixed(1)} gets, ${ms(((s.counters[READ_SECONDS] ?? 0) / reads) * 1e6)} from sending it to its answer`;
}

/**
 * Where a consistent get's time goes, by Little's law: with each client keeping one get in
 * flight, the mean time per get is clients ÷ rate. The goal (0.4× bare https's rate) allows 2.5
 * times bare https's own time; the shared-read floor spends bare https's time plus its wait for
 * the revision read. When that wait alone is more than the goal leaves, no server answering from
 * memory after a linearizable etcd read could meet it on this machine. Returns the budget line's
 * summary.
 */
function consistentGetTime(ctx: Context, clients: number, k: Sample, floor: Sample, b: Sample): string {
  const mean = (x: Sample) => clients / perSecond(x);
  const [keelson, shared, bareTime] = [mean(k), mean(floor), mean(b)];
  const allowed = bareTime / 0.4;
  const wait = shared - bareTime;
  ctx.rows.push({
    scenario: 2,
    name: `where a consistent get's time goes, ${clients} clients (mean time per get: clients ÷ rate)`,
    keelson: `${ms(keelson * 1e6)} per get`,
    reference: `${ms(shared * 1e6)} shared-read floor; ${ms(bareTime * 1e6)} bare https`,
    ratio: '',
    cpu: '',
    latency: '',
    note:
      `the goal (0.4× bare https) allows ${ms(allowed * 1e6)} per get, ${ms((allowed - bareTime) * 1e6)} beyond bare https; ` +
      `the floor's wait for its shared etcd revision read is ${ms(wait * 1e6)} (${revisionReadTime(floor)}); ` +
      `Keelson's time beyond the floor is ${ms((keelson - shared) * 1e6)}`,
  });
  return `the goal allows ${ms((allowed - bareTime) * 1e6)} per get beyond bare https, the floor waits ${ms(wait * 1e6)} for its revision read`;
}

async function copyResponses(served: Served, bare: BareServer, paths: string[]): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  for (const path of paths) {
    const res = await served.api.request('GET', path);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
    await bare.route(path, res.body, res.headers['content-type'] ?? 'application/json');
    sizes.set(path, res.body.length);
  }
  return sizes;
}

/** Extra memory (heap + external, after GC) per list in flight to a client that stopped reading. */
async function listMemory(ctx: Context, server: KeelsonServer, path: string): Promise<number> {
  const before = await server.gc();
  const id = await ctx.worker.call<number>('stallOpen', { target: server.target, k: STALLED_LISTS, path });
  try {
    // Let the server fill the sockets and whatever it buffers above them.
    await new Promise((r) => setTimeout(r, 1500));
    const during = await server.gc();
    return (during.heapUsed + during.external - (before.heapUsed + before.external)) / STALLED_LISTS;
  } finally {
    await ctx.worker.call('stallClose', { id });
  }
}

/**
 * The consistent get's floor: the same objects read by the bare server from Keelson's etcd, one
 * linearizable Range per get, under paths of their own.
 */
async function consistentFloor(bare: BareServer, endpoint: string, consistent: ReadCase): Promise<ReadCase> {
  const keys: Record<string, string> = {};
  const paths = consistent.paths.map((p) => {
    const [, namespace, name] = /\/namespaces\/([^/]+)\/replicasets\/([^/?]+)$/.exec(p)!;
    keys[`/bare-get${p}`] = objectKey('replicasets', namespace, name);
    return `/bare-get${p}`;
  });
  await bare.floor({ store: { kind: 'etcd', endpoints: [endpoint] }, keys });
  return { ...consistent, paths };
}

/** Where the bare server answers `path`'s held bytes after a revision read shared with the gets around it. */
export function sharedReadPath(path: string): string {
  return `/bare-shared${path}`;
}

/** The consistent get's shared-read floor: the held bytes of each path, after a shared revision read. */
function sharedReadFloor(consistent: ReadCase): ReadCase {
  return { ...consistent, paths: consistent.paths.map(sharedReadPath) };
}

const names = () => Array.from({ length: GET_NAMES }, (_, i) => `${replicaSetsPath(listNamespace(1000))}/rs-${String(i).padStart(6, '0')}`);

function cachedGet(): ReadCase {
  return {
    name: `get by name from the watch cache (resourceVersion=0), ${GET_CLIENTS} clients`,
    paths: names().map((p) => `${p}?resourceVersion=0`),
    clients: GET_CLIENTS,
  };
}

export async function runReads(ctx: Context, served: Served): Promise<void> {
  const cached = cachedGet();
  const consistent: ReadCase = { name: `get by name, consistent (no resourceVersion), ${GET_CLIENTS} clients`, paths: names(), clients: GET_CLIENTS };
  const lists: ReadCase[] = LIST_SIZES.map((size) => ({
    name: `list ${size.toLocaleString('en-US')} ReplicaSets (consistent), ${LIST_CLIENTS[size]} clients`,
    paths: [replicaSetsPath(listNamespace(size))],
    clients: LIST_CLIENTS[size],
  }));
  const etcdEndpoint = served.store.kind === 'etcd' ? served.etcd.endpoint : undefined;
  const bare = await startBare(ctx.build, served.server.dataDir, served.server.target.tls);
  try {
    const sizes = await copyResponses(served, bare, [...cached.paths, ...consistent.paths, ...lists.flatMap((c) => c.paths)]);
    const floorCase = etcdEndpoint ? await consistentFloor(bare, etcdEndpoint, consistent) : undefined;
    const ratios = new Map<ReadCase, number>();
    const gets = new Map<ReadCase, Sample>();
    const bareGets: Sample[] = [];
    for (const c of [cached, consistent, ...lists]) {
      ctx.log(`2. ${c.name}`);
      const withFloor = c === consistent && floorCase;
      const cells = [{ ...readCell(ctx, served.server, c), etcdEndpoint }, readCell(ctx, bare, c)];
      if (withFloor) {
        cells.push(
          { ...readCell(ctx, bare, floorCase), etcdEndpoint },
          { ...readCell(ctx, bare, sharedReadFloor(consistent)), etcdEndpoint, serverCounters: () => bareRevisionReads(bare) },
        );
      }
      const [k, b, f, s] = await sideBySide(cells, ctx.timing);
      const rpcs = k.etcdRpcs ? `; etcd RPCs/op ${etcdRpcsPerOp(k)}` : '';
      ratios.set(c, row(ctx, c.name, k, b, `response ${bytes(sizes.get(c.paths[0]) ?? NaN)}${rpcs}`));
      if (c === cached || c === consistent) {
        gets.set(c, k);
        bareGets.push(b);
      }
      if (withFloor) {
        row(
          ctx,
          `floor: bare node:https get, one linearizable etcd Range each, ${c.clients} clients`,
          f,
          b,
          `Keelson's consistent get at ${ratio(perSecond(k), perSecond(f))} of the floor; etcd RPCs/op ${etcdRpcsPerOp(f)}`,
        );
        row(
          ctx,
          `floor: bare node:https get, held bytes after a shared etcd revision read (as Keelson shares it), ${c.clients} clients`,
          s,
          b,
          `Keelson's consistent get at ${ratio(perSecond(k), perSecond(s))} of this floor; etcd RPCs/op ${etcdRpcsPerOp(s)}`,
        );
        const time = consistentGetTime(ctx, c.clients, k, s, b);
        ctx.budgets.push({
          budget: 'consistent GET vs bare https, at its floors',
          target: '≥ 0.4×',
          measured: `${(perSecond(k) / perSecond(b)).toFixed(3)}×; floors: one etcd Range per get ${(perSecond(f) / perSecond(b)).toFixed(3)}×, shared revision read ${(perSecond(s) / perSecond(b)).toFixed(3)}×; ${time}`,
          met: perSecond(k) / perSecond(b) >= 0.4,
          // Its floor is the one that does Keelson's I/O: the shared revision read.
          floor: { reaches: perSecond(s) / perSecond(b) >= 0.4, share: perSecond(k) / perSecond(s) },
        });
      }
    }
    steadinessRow(ctx, bareGets);
    for (const [c, k] of gets) await slowedBareRow(ctx, bare, c, k, c === consistent ? 'the shared etcd Range and ' : '');
    ctx.budgets.push({
      budget: 'GET from the watch cache vs bare https',
      target: '≥ 0.6×',
      measured: `${ratios.get(cached)!.toFixed(3)}× (resourceVersion=0); consistent get ${ratios.get(consistent)!.toFixed(2)}×`,
      met: ratios.get(cached)! >= 0.6,
    });
    const largest = lists[lists.length - 1];
    ctx.budgets.push({
      budget: `LIST of ${LIST_SIZES[LIST_SIZES.length - 1].toLocaleString('en-US')}: throughput vs bare https serving the same bytes`,
      target: '≥ 0.6×',
      measured: `${ratios.get(largest)!.toFixed(3)}×`,
      met: ratios.get(largest)! >= 0.6,
    });
    await protobufList(ctx, served, bare);

    const biggest = lists[lists.length - 1].paths[0];
    const responseSize = sizes.get(biggest)!;
    ctx.log('2. list memory with slow clients');
    const extra = await listMemory(ctx, served.server, biggest);
    const share = extra / responseSize;
    ctx.rows.push({
      scenario: 2,
      name: `list ${LIST_SIZES[LIST_SIZES.length - 1].toLocaleString('en-US')}: extra memory per list to a stalled client (${STALLED_LISTS} at once)`,
      keelson: bytes(extra),
      reference: `response ${bytes(responseSize)}`,
      ratio: `${share.toFixed(2)}× of response`,
      cpu: '',
      latency: '',
      note: 'heap + external after GC, while the clients read nothing; the socket buffers take the first MBs',
    });
    ctx.budgets.push({ budget: 'LIST extra memory vs response size', target: '≤ 0.2×', measured: `${share.toFixed(3)}×`, met: share <= 0.2 });
  } finally {
    await bare.stop();
  }
}

/**
 * The cached get once more, on a Keelson restarted with the node listener (no Express at all):
 * what is left of Express' cost on the Express listener. Runs last, as it restarts the server.
 */
export async function runNodeListenerGet(ctx: Context, served: Served): Promise<void> {
  ctx.log('2. get by name through the node listener');
  await served.restart('node');
  const cached = cachedGet();
  const bare = await startBare(ctx.build, served.server.dataDir, served.server.target.tls);
  try {
    await copyResponses(served, bare, cached.paths);
    const [k, b] = await sideBySide([readCell(ctx, served.server, cached), readCell(ctx, bare, cached)], ctx.timing);
    row(ctx, `${cached.name}, node listener (no Express)`, k, b, 'same store and data, StartServerOptions.adapter = node');
  } finally {
    await bare.stop();
  }
}
