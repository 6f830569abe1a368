/**
 * Scenario 5: start-up. Time from fork to the first `/readyz` 200, CPU spent getting there,
 * peak and idle RSS, with an empty store (both backends; the median of a few starts, each on a
 * fresh store) and with 100,000 ReplicaSets loaded straight into the chosen store. The
 * reference is Node's floor on this machine: the bare https server's own start to its first
 * answer, measured the same way.
 */
import { ApiClient } from '../api';
import { type Context, learnTemplate, storedBytes } from '../context';
import { HttpsConnection, requestHead } from '../https-client';
import { type KeelsonServer, type StoreChoice, startBare, startKeelson } from '../processes';
import { processMemory } from '../proc-stats';
import { bytes, count } from '../report';

const IDLE_MS = 2000;
/** A further wait, for the idle reading once V8's memory reducer has had its turn. */
const SETTLED_MS = 15_000;

interface Start {
  startMs: number;
  cpuMsToReady: number;
  peakRss: number;
  idleRss: number;
  idleRssAfterGc: number;
}

function median<T>(values: T[], key: (v: T) => number): number {
  const sorted = values.map(key).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function measureStart(ctx: Context, server: KeelsonServer): Promise<Start> {
  const atReady = await server.stats();
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const idle = await server.stats();
  const afterGc = await server.gc();
  // The loaded start needs the stored shape; learn it after the idle reading.
  if (!ctx.template) {
    const api = new ApiClient(server.target);
    await learnTemplate(ctx, api, 'bench-template').finally(() => api.close());
  }
  return {
    startMs: server.startMs,
    cpuMsToReady: atReady.cpuUs / 1000,
    peakRss: server.peakRss() ?? atReady.maxRss,
    idleRss: idle.rss,
    idleRssAfterGc: afterGc.rss,
  };
}

async function freshStore(ctx: Context, kind: 'etcd' | 'embedded'): Promise<{ store: StoreChoice; stop(): Promise<void> }> {
  if (kind === 'embedded') return { store: { kind: 'embedded' }, stop: async () => {} };
  const etcd = await ctx.etcd();
  return { store: { kind: 'etcd', endpoint: etcd.endpoint }, stop: () => etcd.stop() };
}

/** The bare https server's start: fork to its first answer. */
async function bareStart(ctx: Context, certDir: string, tls: KeelsonServer['target']['tls']): Promise<{ startMs: number; rss: number }> {
  const t0 = performance.now();
  const bare = await startBare(ctx.build, certDir, tls);
  try {
    const conn = await HttpsConnection.connect(bare.target);
    await conn.request(requestHead('GET', '/', bare.target));
    conn.close();
    const startMs = performance.now() - t0;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    return { startMs, rss: processMemory(bare.child.pid)?.rss ?? NaN };
  } finally {
    await bare.stop();
  }
}

export async function runStartup(ctx: Context): Promise<void> {
  const runs = ctx.options.quick ? 1 : 3;
  let reference: { startMs: number; rss: number } | undefined;
  for (const kind of ['etcd', 'embedded'] as const) {
    const starts: Start[] = [];
    let settled: number | undefined;
    for (let i = 0; i < runs; i++) {
      ctx.log(`5. start-up, empty ${kind} store (${i + 1}/${runs})`);
      const fresh = await freshStore(ctx, kind);
      const server = await startKeelson(ctx.build, { store: fresh.store, dataDir: await ctx.tmpDir(`start-${kind}`) });
      try {
        starts.push(await measureStart(ctx, server));
        reference ??= await bareStart(ctx, server.dataDir, server.target.tls);
        // V8 keeps the heap it grew while loading until its memory reducer runs, some seconds
        // into idleness: read RSS once more after that, on the last start only (full runs).
        if (i === runs - 1 && !ctx.options.quick) {
          await new Promise((r) => setTimeout(r, SETTLED_MS));
          settled = (await server.stats()).rss;
        }
      } finally {
        await server.stop();
        await fresh.stop();
      }
    }
    const startMs = median(starts, (s) => s.startMs);
    const idle = median(starts, (s) => s.idleRss);
    ctx.rows.push({
      scenario: 5,
      name: `start-up, empty ${kind} store (median of ${runs})`,
      keelson: `${count(startMs)} ms to /readyz 200`,
      reference: `${count(reference!.startMs)} ms bare https to first answer`,
      ratio: `${(startMs / reference!.startMs).toFixed(1)}× slower`,
      cpu: `${count(median(starts, (s) => s.cpuMsToReady))} ms CPU to ready`,
      latency: '',
      note:
        `peak RSS ${bytes(median(starts, (s) => s.peakRss))}; idle RSS ${bytes(idle)} (${bytes(median(starts, (s) => s.idleRssAfterGc))} after GC)` +
        (settled !== undefined ? `, ${bytes(settled)} ${SETTLED_MS / 1000} s later` : '') +
        `; bare https idle RSS ${bytes(reference!.rss)}; first start generates the PKI`,
    });
    if (kind === ctx.options.store) {
      ctx.budgets.push({ budget: `start to /readyz, empty ${kind} store`, target: '< 1 s', measured: `${count(startMs)} ms`, met: startMs < 1000 });
      ctx.budgets.push({ budget: `idle RSS, empty ${kind} store`, target: '< 100 MB', measured: bytes(idle), met: idle < 100 * 1024 * 1024 });
    }
  }

  const objects = ctx.options.quick ? 10_000 : 100_000;
  const kind = ctx.options.store;
  ctx.log(`5. start-up with ${objects.toLocaleString('en-US')} objects in the ${kind} store`);
  const fresh = await freshStore(ctx, kind);
  const dataDir = await ctx.tmpDir(`start-loaded-${kind}`);
  try {
    const t0 = performance.now();
    await ctx.worker.call('preload', {
      store: fresh.store.kind === 'etcd' ? fresh.store : { kind: 'embedded', dataDir },
      template: ctx.template,
      groups: [{ namespace: 'bench-startup', count: objects }],
    });
    const loadS = (performance.now() - t0) / 1000;
    const server = await startKeelson(ctx.build, { store: fresh.store, dataDir });
    try {
      const s = await measureStart(ctx, server);
      ctx.rows.push({
        scenario: 5,
        name: `start-up, ${objects.toLocaleString('en-US')} ReplicaSets in the ${kind} store`,
        keelson: `${count(s.startMs)} ms to /readyz 200`,
        reference: `${count(reference!.startMs)} ms bare https`,
        ratio: `${(s.startMs / reference!.startMs).toFixed(1)}× slower`,
        cpu: `${count(s.cpuMsToReady)} ms CPU to ready`,
        latency: '',
        note: `peak RSS ${bytes(s.peakRss)}; idle RSS ${bytes(s.idleRss)} (${bytes(s.idleRssAfterGc)} after GC); loaded directly in ${loadS.toFixed(1)} s`,
      });
      // What the objects weigh as stored JSON: the yardstick for the cache's memory.
      const json = objects * storedBytes(ctx.template!).length;
      const perJson = s.peakRss / json;
      ctx.rows.push({
        scenario: 5,
        name: `start-up memory, ${objects.toLocaleString('en-US')} ReplicaSets in the ${kind} store`,
        keelson: `peak RSS ${bytes(s.peakRss)}`,
        reference: `${bytes(json)} of stored JSON`,
        ratio: `${perJson.toFixed(2)}× the JSON`,
        cpu: '',
        latency: '',
        note: `idle RSS ${bytes(s.idleRss)} (${bytes(s.idleRssAfterGc)} after GC); the whole process, including the ~90 MB of an empty server`,
      });
      if (!ctx.options.quick) {
        ctx.budgets.push({
          budget: `start to /readyz, ${objects.toLocaleString('en-US')} ReplicaSets in ${kind}`,
          target: '≤ 5 s',
          measured: `${count(s.startMs)} ms`,
          met: s.startMs <= 5000,
        });
        ctx.budgets.push({
          budget: `peak RSS at start-up, ${objects.toLocaleString('en-US')} ReplicaSets, vs their JSON`,
          target: '≤ 3×',
          measured: `${perJson.toFixed(2)}×`,
          met: perJson <= 3,
        });
      }
    } finally {
      await server.stop();
    }
  } finally {
    await fresh.stop();
  }
}
