/**
 * The server's health checks, named as upstream names its own where they mean the same thing:
 * `ping`, `log`, `etcd` (the backing store answers, whichever backend it is), `shutdown`
 * (readyz fails once the server is stopping) and `core-ready` (readyz fails until the core
 * has bootstrapped the system namespaces).
 */
import type { HealthCheck, HealthChecks } from '../gateway';
import type { Store } from '../store';
import type { CoreState } from '../core';

const STORE_TIMEOUT_MS = 2000;

export interface ServerHealthState {
  coreReady: boolean;
  shuttingDown: boolean;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} did not answer within ${ms}ms`)), ms);
    t.unref?.();
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/** How long the watch cache may take to reach the store's revision before readyz fails. */
const CACHE_LAG_TIMEOUT_MS = 2000;

export function serverHealthChecks(state: ServerHealthState, store: Store | undefined, cache?: CoreState): HealthChecks {
  const ping: HealthCheck = { name: 'ping', check: () => {} };
  const log: HealthCheck = { name: 'log', check: () => {} };
  const storeChecks: HealthCheck[] = store
    ? [{ name: 'etcd', check: async () => void (await withTimeout(store.currentRevision(), STORE_TIMEOUT_MS, `the ${store.kind} store`)) }]
    : [];
  // Keelson's own: the watch cache follows the store (a stalled store watch shows here, not as stale reads).
  const cacheChecks: HealthCheck[] =
    store && cache
      ? [
          {
            name: 'watch-cache-lag',
            check: async () => {
              if (!state.coreReady) return;
              const revision = await withTimeout(store.currentRevision(), STORE_TIMEOUT_MS, `the ${store.kind} store`);
              if (await cache.cacheFresh(revision, CACHE_LAG_TIMEOUT_MS)) return;
              const { cacheRevision } = await cache.store();
              throw new Error(
                `the watch cache is at revision ${cacheRevision}, ${revision - cacheRevision} behind the store's ${revision} after ${CACHE_LAG_TIMEOUT_MS}ms`,
              );
            },
          },
        ]
      : [];
  const coreReady: HealthCheck = {
    name: 'core-ready',
    check: () => {
      if (!state.coreReady) throw new Error('the core has not finished bootstrapping');
    },
  };
  const shutdown: HealthCheck = {
    name: 'shutdown',
    check: () => {
      if (state.shuttingDown) throw new Error('process is shutting down');
    },
  };
  return {
    livez: [ping, log, ...storeChecks],
    readyz: [ping, log, ...storeChecks, ...cacheChecks, coreReady, shutdown],
    healthz: [ping, log, ...storeChecks],
  };
}
