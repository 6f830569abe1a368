/**
 * Scenarios 2-4 against one Keelson on the chosen store, loaded first with 1,000 and 10,000
 * ReplicaSets written straight into the store (its watch cache loads them at start-up):
 * reads, watch fan-out, and writers contending for one object.
 */
import { ApiClient } from '../api';
import { type Context, type Etcd, learnTemplate } from '../context';
import { type KeelsonServer, type StoreChoice, startKeelson } from '../processes';
import { runContention } from './contention';
import { runNodeListenerGet, runReads } from './reads';
import { runWatch } from './watch';

export const LIST_SIZES = [1000, 10000] as const;
export const listNamespace = (size: number) => `bench-list-${size}`;

export interface Served {
  server: KeelsonServer;
  api: ApiClient;
  /** The etcd the references use (the store itself when --store etcd). */
  etcd: Etcd;
  store: StoreChoice;
  /** Stop Keelson and start it again on the same store and data (e.g. with another listener). */
  restart(adapter: 'express' | 'node'): Promise<void>;
}

export async function runServed(ctx: Context): Promise<void> {
  const etcd = await ctx.etcd();
  const store: StoreChoice = ctx.options.store === 'etcd' ? { kind: 'etcd', endpoint: etcd.endpoint } : { kind: 'embedded' };
  const dataDir = await ctx.tmpDir(`served-${store.kind}`);

  // Learn the stored shape from a first server, stop it, load the store directly, start again.
  let server = await startKeelson(ctx.build, { store, dataDir });
  let api = new ApiClient(server.target);
  let template: Record<string, unknown>;
  try {
    for (const size of LIST_SIZES) await api.namespace(listNamespace(size));
    template = await learnTemplate(ctx, api, 'bench-template');
  } finally {
    api.close();
    await server.stop();
  }
  if (ctx.options.only.has(2)) {
    const t0 = performance.now();
    const written = await ctx.worker.call<number>('preload', {
      store: store.kind === 'etcd' ? store : { kind: 'embedded', dataDir },
      template,
      groups: LIST_SIZES.map((size) => ({ namespace: listNamespace(size), count: size })),
    });
    ctx.log(`2. loaded ${written} ReplicaSets into the ${store.kind} store in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }

  server = await startKeelson(ctx.build, { store, dataDir });
  await server.settle();
  api = new ApiClient(server.target);
  const served: Served = {
    get server() {
      return server;
    },
    get api() {
      return api;
    },
    etcd,
    store,
    async restart(adapter) {
      api.close();
      await server.stop();
      server = await startKeelson(ctx.build, { store, dataDir, adapter });
      await server.settle();
      api = new ApiClient(server.target);
    },
  };
  try {
    const scenarios: Array<[number, (c: Context, s: Served) => Promise<void>]> = [
      [2, runReads],
      [3, runWatch],
      [4, runContention],
      [2, runNodeListenerGet],
    ];
    for (const [n, run] of scenarios) {
      if (!ctx.options.only.has(n)) continue;
      try {
        await run(ctx, served);
      } catch (err) {
        // Record it and go on with the next scenario on the same server.
        ctx.log(`scenario ${n} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        ctx.rows.push({
          scenario: n,
          name: `scenario ${n} FAILED`,
          keelson: '',
          reference: '',
          ratio: '',
          cpu: '',
          latency: '',
          note: String(err instanceof Error ? err.message : err)
            .split('\n')[0]
            .slice(0, 200),
        });
      }
    }
  } finally {
    api.close();
    await server.stop();
    await etcd.stop();
  }
}
