import { serverHealthChecks } from '../../src/server/health';
import type { Store } from '../../src/store';

const names = (checks: readonly { name: string }[]) => checks.map((c) => c.name);

describe('server health checks', () => {
  it('lists upstream-named checks per endpoint', () => {
    const store = { kind: 'embedded', currentRevision: async () => 1 } as unknown as Store;
    const checks = serverHealthChecks({ coreReady: true, shuttingDown: false }, store);
    expect(names(checks.livez)).toEqual(['ping', 'log', 'etcd']);
    expect(names(checks.readyz)).toEqual(['ping', 'log', 'etcd', 'core-ready', 'shutdown']);
    expect(names(checks.healthz)).toEqual(['ping', 'log', 'etcd']);
    expect(names(serverHealthChecks({ coreReady: true, shuttingDown: false }, undefined).readyz)).toEqual(['ping', 'log', 'core-ready', 'shutdown']);
  });

  it('is not ready before the core bootstrapped or once shutting down', async () => {
    const state = { coreReady: false, shuttingDown: false };
    const checks = serverHealthChecks(state, undefined);
    const check = (name: string) => checks.readyz.find((c) => c.name === name)!.check();
    expect(() => check('core-ready')).toThrow('the core has not finished bootstrapping');
    state.coreReady = true;
    expect(() => check('core-ready')).not.toThrow();
    state.shuttingDown = true;
    expect(() => check('shutdown')).toThrow('process is shutting down');
  });

  it('fails the etcd check when the store fails or hangs', async () => {
    const failing = { kind: 'etcd', currentRevision: async () => Promise.reject(new Error('unavailable')) } as unknown as Store;
    await expect(serverHealthChecks({ coreReady: true, shuttingDown: false }, failing).livez[2].check()).rejects.toThrow('unavailable');
    jest.useFakeTimers();
    const hanging = { kind: 'etcd', currentRevision: () => new Promise(() => {}) } as unknown as Store;
    const p = serverHealthChecks({ coreReady: true, shuttingDown: false }, hanging).livez[2].check();
    jest.advanceTimersByTime(2001);
    await expect(p).rejects.toThrow('the etcd store did not answer within 2000ms');
    jest.useRealTimers();
  });
});
