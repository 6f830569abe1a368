/**
 * Scenario 9: the ReplicaSet controller converging, in process on the embedded store, with the
 * scheduler and enough simulated nodes (110 pods each): seconds from scaling a ReplicaSet to
 * 1,000 replicas (200 with --quick) until its status counts them all Ready (created, bound,
 * Running), then back to 0 (every pod gracefully deleted and finished by its node), and the
 * process CPU spent (core, controller, scheduler and nodes together; there is no reference
 * process, so the reference column gives the CPU per pod).
 */
import { createCore, type RequestContext } from '../../../src/core';
import { ReplicaSetController, SCHEDULER_USER, Scheduler, SimulatedNodes, SIMULATED_NODE_MAX_PODS } from '../../../src/controllers';
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
  const nodeCount = Math.ceil(replicas / SIMULATED_NODE_MAX_PODS);
  const nodes = new SimulatedNodes({ core, naming, clock: systemClock, count: nodeCount, watchAs: SCHEDULER_USER });
  const scheduler = new Scheduler({ core, naming, clock: systemClock });
  try {
    await core.ready();
    nodes.start();
    scheduler.start();
    await nodes.idle();
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
        const status = (now.status ?? {}) as { replicas?: number; readyReplicas?: number; observedGeneration?: number };
        if ((status.replicas ?? 0) === want && (status.readyReplicas ?? 0) === want && status.observedGeneration === now.metadata?.generation) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      const used = process.cpuUsage(cpu);
      return { seconds: (performance.now() - start) / 1000, cpuMs: (used.user + used.system) / 1000 };
    };
    await core.create(
      target,
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'scale', namespace: 'default' },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'scale' } },
          template: { metadata: { labels: { app: 'scale' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      },
      {},
      admin,
    );
    const up = await converge(replicas);
    const down = await converge(0);
    for (const [name, r] of [
      [`ReplicaSet 0 → ${replicas} pods Ready`, up],
      [`ReplicaSet ${replicas} → 0 pods`, down],
    ] as const) {
      ctx.rows.push({
        scenario: 9,
        name: `controllers: ${name}`,
        keelson: `${r.seconds.toFixed(2)} s to converge`,
        reference: `${micros((r.cpuMs * 1000) / replicas)} µs CPU per pod`,
        ratio: '',
        cpu: `${micros(r.cpuMs * 1000)}`,
        latency: '',
        note: `in process, embedded store, ${nodeCount} simulated nodes; CPU of the core, controller, scheduler and nodes together`,
      });
    }
  } finally {
    controller.stop();
    scheduler.stop();
    nodes.stop();
    await core.close();
  }
}
