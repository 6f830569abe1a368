/**
 * `--profile[=create|get]`: one hot path under `node --cpu-prof`. Keelson on etcd takes creates
 * from 64 keep-alive clients (or gets by name from 16) for one measuring period, then stops (V8
 * writes the profile on exit), and the profile, cut to the measured window (start-up and
 * warm-up excluded), is summarised by area and function.
 */
import { copyFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { ApiClient } from '../api';
import { type Context, learnTemplate } from '../context';
import { createBodyTemplate, replicaSetsPath } from '../fixtures';
import { type Cell, cpuPerOp, perSecond, sideBySide } from '../measure';
import { startKeelson } from '../processes';
import { renderProfileSummary, summarizeProfile } from '../profile-summary';
import { micros, rate } from '../report';

export type ProfiledPath = 'create' | 'get';

const NAMESPACE = 'bench-profile';

export async function runProfile(ctx: Context, which: ProfiledPath = 'create'): Promise<void> {
  const clients = which === 'create' ? 64 : 16;
  ctx.log(`profile: ${which} from ${clients} clients under --cpu-prof`);
  const etcd = await ctx.etcd();
  const profDir = await ctx.tmpDir('cpu-prof');
  const server = await startKeelson(ctx.build, { store: { kind: 'etcd', endpoint: etcd.endpoint }, dataDir: await ctx.tmpDir('profile'), cpuProfDir: profDir });
  let summaryLine = '';
  const window: number[] = [];
  try {
    const api = new ApiClient(server.target);
    await learnTemplate(ctx, api, NAMESPACE).finally(() => api.close());
    await server.settle();
    let run = 0;
    const cell: Cell = {
      worker: ctx.worker,
      open: { kind: 'https', target: server.target, connections: clients },
      spec: () =>
        which === 'create'
          ? { op: 'request', method: 'POST', paths: [replicaSetsPath(NAMESPACE)], body: createBodyTemplate(NAMESPACE), namePrefix: `p${++run}`, expect: 201 }
          : { op: 'request', method: 'GET', paths: [`${replicaSetsPath(NAMESPACE)}/template`], expect: 200 },
      serverCpu: async () => {
        const stats = await server.stats();
        window.push(stats.hrtimeUs);
        return stats.cpuUs;
      },
    };
    const [k] = await sideBySide([cell], { ...ctx.timing, rounds: 1 });
    summaryLine = `${rate(perSecond(k))} ${which}s/s, ${micros(cpuPerOp(k))} µs server CPU each while profiled (the profiler adds some)`;
  } finally {
    await server.stop();
  }
  const file = (await readdir(profDir)).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no .cpuprofile written');
  const full = path.join(profDir, file);
  if (ctx.options.profileOut) await copyFile(full, ctx.options.profileOut);
  const summary = summarizeProfile(full, { startUs: window[0], endUs: window[1] }, 25);
  ctx.sections.push(
    `${renderProfileSummary(summary, `Profile of the ${which} path (etcd, ${clients} clients, measured window only)`)}\n\n${summaryLine}${ctx.options.profileOut ? `; profile saved to ${ctx.options.profileOut}` : ''}`,
  );
}
