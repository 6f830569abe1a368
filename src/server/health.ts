/**
 * The server's health checks, named as upstream names its own where they mean the same thing:
 * `ping`, `log`, `etcd` (the backing store answers, whichever backend it is), `shutdown`
 * (readyz fails once the server is stopping) and `core-ready` (readyz fails until the core
 * has bootstrapped the system namespaces).
 */
import type { HealthCheck, HealthChecks } from '../gateway';
import type { Store } from '../store';

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

export function serverHealthChecks(state: ServerHealthState, store: Store | undefined): HealthChecks {
  const ping: HealthCheck = { name: 'ping', check: () => {} };
  const log: HealthCheck = { name: 'log', check: () => {} };
  const storeChecks: HealthCheck[] = store
    ? [{ name: 'etcd', check: async () => void (await withTimeout(store.currentRevision(), STORE_TIMEOUT_MS, `the ${store.kind} store`)) }]
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
    readyz: [ping, log, ...storeChecks, coreReady, shutdown],
    healthz: [ping, log, ...storeChecks],
  };
}
