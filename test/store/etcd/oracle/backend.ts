/**
 * The conformance suite's backend for the differential oracle: the etcd store whose every call
 * goes through its own client and through etcd3 against the same etcd (differential-calls.ts).
 * After each case the suite asks `check()`, which fails on any disagreement.
 */
import { EtcdClient } from '../../../../src/store/etcd/client';
import { EtcdStore } from '../../../../src/store/etcd/store';
import { seededRandom } from '../../../../src/util/seeded-random';
import { startEtcd, type EtcdInstance } from '../../../support/etcd';
import type { BackendUnderTest } from '../../backends';
import { DifferentialCalls, type OracleFigures } from './differential-calls';
import { Etcd3Calls } from './etcd3-calls';

/** The seed of the coin that picks which client makes each write (printed; KEELSON_ORACLE_SEED replays). */
export const ORACLE_SEED = Number(process.env.KEELSON_ORACLE_SEED ?? 56);

/** A store on `endpoint` whose calls are checked against etcd3's. */
export function differentialStore(
  endpoint: string,
  seed: number,
  tls?: { ca: string; cert: string; key: string },
): { store: EtcdStore; calls: DifferentialCalls } {
  const own = new EtcdClient({ endpoints: [endpoint], tls, timeoutMs: 30_000, keepaliveMs: 0 });
  const calls = new DifferentialCalls(own, new Etcd3Calls({ endpoint, tls }), seededRandom(seed));
  return { store: new EtcdStore({ endpoints: [endpoint], client: calls }), calls };
}

export function etcdDifferentialBackend(): BackendUnderTest {
  let etcd: EtcdInstance | undefined;
  const opened: ReturnType<typeof differentialStore>[] = [];
  const open = (endpoint: string) => {
    const pair = differentialStore(endpoint, ORACLE_SEED + opened.length);
    opened.push(pair);
    return pair;
  };
  const connect = async () => {
    etcd ??= await startEtcd();
    return open(etcd.endpoint).store;
  };
  return {
    name: 'etcd',
    open: connect,
    peer: connect,
    async breakable() {
      const own = await startEtcd();
      const { store } = open(own.endpoint);
      return {
        store,
        cut: () => own.stop(),
        cleanup: async () => {
          await store.close();
          await own.stop();
        },
      };
    },
    async check() {
      for (const { calls } of opened) await calls.settled();
      const mismatches = opened.flatMap(({ calls }) => calls.mismatches.splice(0));
      if (mismatches.length > 0) throw new Error(`the own client and etcd3 disagree:\n${mismatches.join('\n')}`);
    },
    async teardown() {
      const figures: Partial<Record<keyof OracleFigures, number>> = {};
      for (const { calls } of opened)
        for (const [k, v] of Object.entries(calls.figures)) figures[k as keyof OracleFigures] = (figures[k as keyof OracleFigures] ?? 0) + v;
      process.stdout.write(`etcd differential oracle (seed ${ORACLE_SEED}): ${JSON.stringify(figures)}\n`);
      await Promise.all(opened.map(({ store }) => store.close()));
      await etcd?.stop();
    },
  };
}
