/**
 * Scenario 9: the ReplicaSet controller converging, in process on the embedded store: seconds
 * from creating a ReplicaSet of 1,000 replicas (200 with --quick) until its status counts them
 * all, then back to 0, and the process CPU spent (core and controller together; there is no
 * reference process, so the reference column gives the CPU per pod).
 */
import { createCore, type RequestContext } from '../../../src/core';
import { ReplicaSetController } from '../../../src/controllers';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import { systemClock } from '../../../src/clock';
import type { Context } from '../context';
import { micros } from '../report';
import { StatusError } from '../../../src/status';

const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };

export async function runControllers(ctx: Context): Promise<void> {
  const naming = createNaming('kubernetes');
  const dir = await ctx.tmpDir('controllers');
  const core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0 });
  const controller = new ReplicaSetController({ core, naming, user: admin.user, clock: systemClock });
  const target = { group: 'apps', version: 'v1', resource: 'replicasets', namespace: 'default' };
  const replicas = ctx.options.quick ? 200 : 1000;
  try {
    await core.ready();
    controller.start();
    const converge = async (want: number): Promise<{ seconds: number; cpuMs: number }> => {
      const start = performance.now();
      const cpu = process.cpuUsage();
      // The controller writes status meanwhile: retry the scale on a conflict, as kubectl does.
      for (;;) {
        const rs = await core.get({ ...target, name: 'scale' }, {}, admin);
        try {
          await core.update({ ...target, name: 'scale' }, { ...rs, spec: { ...(rs.spec as object), replicas: want } }, {}, admin);
          break;
        } catch (err) {
          if (!StatusError.is(err, 'Conflict')) throw err;
        }
      }
      for (;;) {
        const now = await core.get({ ...target, name: 'scale' }, {}, admin);
        const status = (now.status ?? {}) as { replicas?: number; observedGeneration?: number };
        if ((status.replicas ?? 0) === want && status.observedGeneration === now.metadata?.generation) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      const used = process.cpuUsage(cpu);
      return { seconds: (performance.now() - start) / 1000, cpuMs: (used.user + used.system) / 1000 };
    };
    await core.create(target, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'scale', namespace: 'default' },
      spec: { replicas: 0, selector: { matchLabels: { app: 'scale' } }, template: { metadata: { labels: { app: 'scale' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    }, {}, admin);
    const up = await converge(replicas);
    const down = await converge(0);
    for (const [name, r] of [[`ReplicaSet 0 → ${replicas} pods`, up], [`ReplicaSet ${replicas} → 0 pods`, down]] as const) {
      ctx.rows.push({
        scenario: 9,
        name: `controllers: ${name}`,
        keelson: `${r.seconds.toFixed(2)} s to converge`,
        reference: `${micros((r.cpuMs * 1000) / replicas)} µs CPU per pod`,
        ratio: '',
        cpu: `${micros(r.cpuMs * 1000)}`,
        latency: '',
        note: 'in process, embedded store; CPU of the core and the controller together; pods stay Pending (no nodes yet)',
      });
    }
  } finally {
    controller.stop();
    await core.close();
  }
}
