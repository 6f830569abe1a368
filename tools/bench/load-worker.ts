/**
 * The load generator: a separate process the orchestrator drives over IPC, so that the client
 * side of every scenario runs outside the processes being measured. It holds open "loads"
 * (an HTTPS connection pool, an etcd3 client, a Keelson store) between calls, so warm-up and
 * measurement run over the same connections.
 */
import { measureEncodings } from './encodings';
import { storedReplicaSets } from './fixtures';
import { HttpsConnection, type Target, requestHead } from './https-client';
import { serveCalls } from './ipc';
import { StoreLoad, type StoreSpec, type StoreTarget } from './load/store-load';
import { EtcdLoad, type EtcdSpec } from './load/etcd-load';
import { HttpsLoad, type HttpsSpec } from './load/https-load';
import { EtcdWatchers, HttpsWatchers } from './load/watchers';

export type OpenArgs = { kind: 'https'; target: Target; connections: number } | { kind: 'etcd'; endpoint: string } | StoreTarget;

export type RunSpec = HttpsSpec | EtcdSpec | StoreSpec;

export interface PreloadArgs {
  store: { kind: 'etcd'; endpoint: string } | { kind: 'embedded'; dataDir: string };
  template: Record<string, unknown>;
  groups: Array<{ namespace: string; count: number }>;
}

type Load = HttpsLoad | EtcdLoad | StoreLoad;
type Watchers = HttpsWatchers | EtcdWatchers;

const loads = new Map<number, Load>();
const watchers = new Map<number, Watchers>();
const stalled = new Map<number, HttpsConnection[]>();
let nextId = 1;

serveCalls({
  open: async (args: OpenArgs) => {
    const load =
      args.kind === 'https' ? await HttpsLoad.open(args.target, args.connections) : args.kind === 'etcd' ? EtcdLoad.open(args.endpoint) : StoreLoad.open(args);
    loads.set(nextId, load);
    return nextId++;
  },
  run: (args: { load: number; spec: RunSpec; durationMs: number }) => {
    const load = loads.get(args.load);
    if (!load) throw new Error(`no load ${args.load}`);
    return (load as { run(spec: RunSpec, ms: number): unknown }).run(args.spec, args.durationMs);
  },
  close: async (args: { load: number }) => {
    await loads.get(args.load)?.close();
    loads.delete(args.load);
  },

  /** Write many ReplicaSets straight into a store (the server must not be running on an embedded one). */
  preload: async (args: PreloadArgs) => {
    const load = args.store.kind === 'etcd' ? EtcdLoad.open(args.store.endpoint) : StoreLoad.open(args.store);
    try {
      let written = 0;
      for (const group of args.groups) written += await load.load(storedReplicaSets(args.template, group.namespace, group.count));
      return written;
    } finally {
      await load.close();
    }
  },

  watchOpen: async (
    args:
      | { kind: 'https'; target: Target; n: number; path: string; create: { path: string; before: string; after: string } }
      | { kind: 'etcd'; endpoint: string; n: number; prefix: string; value: Uint8Array },
  ) => {
    const w =
      args.kind === 'https'
        ? await HttpsWatchers.open(args.target, args.n, args.path, args.create)
        : await EtcdWatchers.open(args.endpoint, args.n, args.prefix, args.value);
    watchers.set(nextId, w);
    return nextId++;
  },
  /** One write and its deliveries (see load/watchers.ts). */
  watchRound: (args: { watchers: number; seq: number; timeoutMs: number }) => watchers.get(args.watchers)!.round(args.seq, args.timeoutMs),
  watchCounts: (args: { watchers: number }) => watchers.get(args.watchers)!.counts(),
  watchClose: async (args: { watchers: number }) => {
    await watchers.get(args.watchers)?.close();
    watchers.delete(args.watchers);
  },

  /**
   * Start `k` requests for `path` and stop reading each once its headers are in, so the server
   * holds whatever it has not been able to send: what a slow client costs it.
   */
  stallOpen: async (args: { target: Target; k: number; path: string }) => {
    const conns = await Promise.all(Array.from({ length: args.k }, () => HttpsConnection.connect(args.target)));
    const head = requestHead('GET', args.path, args.target);
    await Promise.all(
      conns.map(
        (conn) =>
          new Promise<void>((resolve, reject) => {
            conn
              .request(head, undefined, {
                onHead: () => {
                  conn.socket.pause();
                  resolve();
                },
                onBody: () => {},
              })
              .catch(reject);
          }),
      ),
    );
    stalled.set(nextId, conns);
    return nextId++;
  },
  stallClose: (args: { id: number }) => {
    for (const conn of stalled.get(args.id) ?? []) conn.close();
    stalled.delete(args.id);
  },

  encodings: (args: { template: Record<string, unknown>; minMs: number }) => measureEncodings(args.template, args.minMs),
});
