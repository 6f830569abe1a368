/**
 * `--profile[=create|get|cached-get|list|watch|startup]`: one hot path under `node --cpu-prof`, beside its reference
 * (bare https serving the same bytes for gets and lists, or fanning out the same events to as many
 * watchers; the floor for creates). Keelson on etcd takes
 * creates from 64 keep-alive clients (or gets by name from 16, consistent or from the cache, or
 * consistent lists of 1,000 ReplicaSets from 2, or 100 writes each delivered to
 * 1,000 HTTPS watchers, or starts on 100,000 stored ReplicaSets) for one measuring period, then stops (V8
 * writes the profile on exit), and the profile, cut to the measured window (start-up and
 * warm-up excluded), is summarised by area and function.
 */
import { copyFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { StoreOptions } from '../../../src/store';
import { ApiClient } from '../api';
import { type Context, learnTemplate } from '../context';
import { createBodyTemplate, objectTextTemplate, replicaSet, replicaSetsPath } from '../fixtures';
import { type Cell, cpuPerOp, perSecond, sideBySide } from '../measure';
import { FLOOR_CREATE_PATH, type KeelsonServer, type StoreChoice, startBare, startKeelson } from '../processes';
import { renderProfileSummary, summarizeProfile } from '../profile-summary';
import { deliver } from './watch';
import { micros, rate } from '../report';

export type ProfiledPath = 'create' | 'get' | 'cached-get' | 'list' | 'watch' | 'startup';

/** Items in the profiled list (created through the API before the profile's window). */
const LIST_ITEMS = 1000;

const NAMESPACE = 'bench-profile';

export async function runProfile(ctx: Context, which: ProfiledPath = 'create'): Promise<void> {
  if (which === 'watch') return runWatchProfile(ctx);
  if (which === 'startup') return runStartupProfile(ctx);
  const clients = which === 'create' ? 64 : which === 'list' ? 2 : 16;
  ctx.log(`profile: ${which} from ${clients} clients under --cpu-prof`);
  // `--store embedded` profiles the same path on the embedded store.
  const store: StoreChoice = ctx.options.store === 'embedded' ? { kind: 'embedded' } : { kind: 'etcd', endpoint: (await ctx.etcd()).endpoint };
  const profDir = await ctx.tmpDir('cpu-prof');
  const server = await startKeelson(ctx.build, { store, dataDir: await ctx.tmpDir('profile'), cpuProfDir: profDir });
  let summaryLine = '';
  const window: number[] = [];
  // Gets are profiled beside the bare node:https reference serving the same bytes, creates
  // beside the floor (the bare server creating through a store of the same kind), so what Node
  // and TLS cost per request is read off a profile of the same run.
  const bareProfDir = await ctx.tmpDir('cpu-prof-bare');
  const bare = await startBare(ctx.build, server.dataDir, server.target.tls, bareProfDir);
  const bareWindow: number[] = [];
  let bareLine = '';
  const ops: { keelson?: number; bare?: number } = {};
  try {
    const api = new ApiClient(server.target);
    const template = await learnTemplate(ctx, api, NAMESPACE).finally(() => api.close());
    if (which === 'create') {
      const floorStore: StoreOptions =
        store.kind === 'etcd' ? { kind: 'etcd', endpoints: [store.endpoint] } : { kind: 'embedded', dataDir: await ctx.tmpDir('profile-floor') };
      await bare.floorCreates(floorStore, template);
    }
    if (which === 'list') {
      const writer = new ApiClient(server.target);
      try {
        for (let i = 0; i < LIST_ITEMS; i++) await writer.expect('POST', replicaSetsPath(NAMESPACE), replicaSet(`listed-${i}`, NAMESPACE), [201]);
      } finally {
        writer.close();
      }
    }
    const getPath =
      which === 'list' ? replicaSetsPath(NAMESPACE) : `${replicaSetsPath(NAMESPACE)}/template${which === 'cached-get' ? '?resourceVersion=0' : ''}`;
    if (which !== 'create') {
      const reader = new ApiClient(server.target);
      const res = await reader.request('GET', getPath).finally(() => reader.close());
      await bare.route(getPath, res.body, res.headers['content-type'] ?? 'application/json');
    }
    await server.settle();
    let run = 0;
    const cell: Cell = {
      worker: ctx.worker,
      open: { kind: 'https', target: server.target, connections: clients },
      spec: () =>
        which === 'create'
          ? { op: 'request', method: 'POST', paths: [replicaSetsPath(NAMESPACE)], body: createBodyTemplate(NAMESPACE), namePrefix: `p${++run}`, expect: 201 }
          : { op: 'request', method: 'GET', paths: [getPath], expect: 200 },
      serverCpu: async () => {
        const stats = await server.stats();
        window.push(stats.hrtimeUs);
        return stats.cpuUs;
      },
    };
    const cells: Cell[] = [
      cell,
      {
        ...cell,
        open: { kind: 'https', target: bare.target, connections: clients },
        spec: () =>
          which === 'create'
            ? {
                op: 'request',
                method: 'POST',
                paths: [`${FLOOR_CREATE_PATH}${NAMESPACE}`],
                body: createBodyTemplate(NAMESPACE),
                namePrefix: `f${++run}`,
                expect: 201,
              }
            : { op: 'request', method: 'GET', paths: [getPath], expect: 200 },
        serverCpu: async () => {
          const stats = await bare.stats();
          bareWindow.push(stats.hrtimeUs);
          return stats.cpuUs;
        },
      },
    ];
    const [k, b] = await sideBySide(cells, { ...ctx.timing, rounds: 1 });
    ops.keelson = k.ops;
    ops.bare = b.ops;
    summaryLine = `${rate(perSecond(k))} ${which}s/s, ${micros(cpuPerOp(k))} µs server CPU each while profiled (the profiler adds some)`;
    if (which === 'create') {
      bareLine = `${rate(perSecond(b))} creates/s, ${micros(cpuPerOp(b))} µs server CPU each while profiled, the floor (bare node:https creating through an ${store.kind} store)`;
    } else {
      bareLine = `${rate(perSecond(b))} ${which === 'list' ? 'lists' : 'gets'}/s, ${micros(cpuPerOp(b))} µs server CPU each while profiled, bare node:https serving the same bytes`;
      // The bare server again, slowed by a busy-wait to about Keelson's rate: its CPU beyond the
      // busy-wait is what Node, TLS and the kernel cost a request at that rate.
      const spinUs = Math.max(0, cpuPerOp(k) - cpuPerOp(b));
      await bare.spin(spinUs);
      const [slowed] = await sideBySide([cells[1]], { ...ctx.timing, rounds: 1 });
      bareLine += `; with ${micros(spinUs)} µs of busy-wait per request: ${rate(perSecond(slowed))} ${which === 'list' ? 'lists' : 'gets'}/s, ${micros(cpuPerOp(slowed))} µs CPU each, so Node, TLS and the kernel cost ${micros(cpuPerOp(slowed) - spinUs)} µs per request at that rate`;
    }
  } finally {
    await server.stop();
    await bare.stop();
  }
  await summarize(ctx, profDir, window, `Profile of the ${which} path (${store.kind}, ${clients} clients, measured window only)`, summaryLine, '', ops.keelson);
  const bareTitle =
    which === 'create'
      ? `Profile of the create floor (${store.kind}, ${clients} clients, measured window only)`
      : `Profile of bare node:https serving the same ${which} bytes (${clients} clients, measured window only)`;
  await summarize(ctx, bareProfDir, bareWindow, bareTitle, bareLine, '-bare', ops.bare);
}

/**
 * Summarise one profile; with `--profile-out`, copy it there beside `<file>.window.json`: the
 * measured window (µs on the profiled process's clock) and the operations in it, so a profile
 * can be read per operation later.
 */
async function summarize(ctx: Context, profDir: string, window: number[], title: string, summaryLine: string, outSuffix = '', ops?: number): Promise<void> {
  const file = (await readdir(profDir)).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no .cpuprofile written');
  const full = path.join(profDir, file);
  const out = ctx.options.profileOut?.replace(/(\.cpuprofile)?$/, `${outSuffix}$1`);
  if (out) {
    await copyFile(full, out);
    await writeFile(`${out}.window.json`, `${JSON.stringify({ startUs: window[0], endUs: window[1], ops })}\n`);
  }
  const summary = summarizeProfile(full, { startUs: window[0], endUs: window[1] }, 25);
  ctx.sections.push(`${renderProfileSummary(summary, title)}\n\n${summaryLine}${out ? `; profile saved to ${out}` : ''}`);
}

/**
 * Watch fan-out under the profiler: 1,000 HTTPS watchers, 100 creates one at a time, each
 * delivered to all; then the bare node:https fan-out of the same event bytes (bare-server.ts,
 * `/bare-watch`) under the profiler too, so that a delivery's cost in Node and TLS is read off
 * the same run.
 */
async function runWatchProfile(ctx: Context): Promise<void> {
  const watchers = 1000;
  const writes = 100;
  ctx.log(`profile: ${writes} writes fanned out to ${watchers} watchers under --cpu-prof`);
  const etcd = await ctx.etcd();
  const profDir = await ctx.tmpDir('cpu-prof');
  const server = await startKeelson(ctx.build, { store: { kind: 'etcd', endpoint: etcd.endpoint }, dataDir: await ctx.tmpDir('profile'), cpuProfDir: profDir });
  let measured: FanOutWindow;
  try {
    const api = new ApiClient(server.target);
    await learnTemplate(ctx, api, NAMESPACE).finally(() => api.close());
    await server.settle();
    const create = { path: replicaSetsPath(NAMESPACE), ...createBodyTemplate(NAMESPACE) };
    measured = await profiledFanOut(ctx, server, { n: watchers, path: `${replicaSetsPath(NAMESPACE)}?watch=1`, create }, writes);
  } finally {
    await server.stop();
  }
  const title = `Profile of watch fan-out (etcd, ${watchers} watchers, ${writes} writes, measured window only)`;
  await summarize(ctx, profDir, measured.window, title, `${measured.line} (the profiler adds some)`, '', measured.deliveries);

  const bareProfDir = await ctx.tmpDir('cpu-prof-bare');
  const bare = await startBare(ctx.build, server.dataDir, server.target.tls, bareProfDir);
  try {
    measured = await profiledFanOut(
      ctx,
      bare,
      { n: watchers, path: '/bare-watch', create: { path: '/bare-watch', ...objectTextTemplate(ctx.template!) } },
      writes,
    );
  } finally {
    await bare.stop();
  }
  const bareTitle = `Profile of bare node:https fanning out the same events (${watchers} watchers, ${writes} writes, measured window only)`;
  await summarize(ctx, bareProfDir, measured.window, bareTitle, `${measured.line}, bare node:https writing the same event bytes`, '-bare', measured.deliveries);
}

interface FanOutWindow {
  window: number[];
  deliveries: number;
  line: string;
}

/** `writes` writes fanned out to watchers of `server` opened as `watch` asks, timed on the server's clock. */
async function profiledFanOut(
  ctx: Context,
  server: { target: KeelsonServer['target']; stats: KeelsonServer['stats'] },
  watch: { n: number; path: string; create: unknown },
  writes: number,
): Promise<FanOutWindow> {
  const id = await ctx.worker.call<number>('watchOpen', { kind: 'https', target: server.target, ...watch });
  try {
    const before = await server.stats();
    const { received } = await deliver(ctx.worker, id, writes, 0);
    const after = await server.stats();
    const line = `${received.toLocaleString('en-US')} deliveries, ${micros((after.cpuUs - before.cpuUs) / Math.max(1, received))} µs server CPU each while profiled`;
    return { window: [before.hrtimeUs, after.hrtimeUs], deliveries: received, line };
  } finally {
    await ctx.worker.call('watchClose', { watchers: id });
  }
}

/** Start-up under the profiler: Keelson starting on an etcd holding 100,000 ReplicaSets (10,000 with --quick), up to ready. */
async function runStartupProfile(ctx: Context): Promise<void> {
  const objects = ctx.options.quick ? 10_000 : 100_000;
  ctx.log(`profile: start-up on ${objects.toLocaleString('en-US')} ReplicaSets under --cpu-prof`);
  const etcd = await ctx.etcd();
  const first = await startKeelson(ctx.build, { store: { kind: 'etcd', endpoint: etcd.endpoint }, dataDir: await ctx.tmpDir('profile-template') });
  try {
    const api = new ApiClient(first.target);
    await learnTemplate(ctx, api, NAMESPACE).finally(() => api.close());
  } finally {
    await first.stop();
  }
  await ctx.worker.call('preload', {
    store: { kind: 'etcd', endpoint: etcd.endpoint },
    template: ctx.template,
    groups: [{ namespace: 'bench-startup', count: objects }],
  });
  const profDir = await ctx.tmpDir('cpu-prof');
  const server = await startKeelson(ctx.build, { store: { kind: 'etcd', endpoint: etcd.endpoint }, dataDir: await ctx.tmpDir('profile'), cpuProfDir: profDir });
  const ready = await server.stats();
  await server.stop();
  const line = `${objects.toLocaleString('en-US')} ReplicaSets: ready in ${server.startMs.toFixed(0)} ms, ${(ready.cpuUs / 1000).toFixed(0)} ms CPU`;
  await summarize(
    ctx,
    profDir,
    [0, ready.hrtimeUs],
    `Profile of start-up (etcd, ${objects.toLocaleString('en-US')} ReplicaSets, process start to ready)`,
    line,
  );
}
