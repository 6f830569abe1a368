/**
 * The lease endpoint reconciler: servers on one store each keep a lease of their address, and
 * `default/kubernetes` Endpoints and EndpointSlice list every live one on the secure port; a
 * server that stops renewing drops out once its lease has gone a TTL unrenewed, one that stops
 * cleanly at once. On the embedded store with a ManualClock, and on a real etcd shared by two
 * cores with the real clock.
 */
import { createCore, type ApiObject, type Core, type ResourceTarget } from '../../src/core';
import { LeaseEndpointReconciler, MASTER_LEASES_PREFIX, MASTER_LEASE_RENEW_MS, MASTER_LEASE_TTL_MS } from '../../src/controllers';
import { createStore, type Store } from '../../src/store';
import { createNaming } from '../../src/naming';
import { buildFeatureGates } from '../../src/features';
import { ManualClock, systemClock, type Clock } from '../../src/clock';
import { startEtcd, type EtcdInstance } from '../support/etcd';
import { ctx, eventually, getOrUndefined, openCore, type TestCore } from './support';

const naming = createNaming('kubernetes');
const PORT = 6443;
const target = (resource: string, group = ''): ResourceTarget => ({ group, version: 'v1', resource, namespace: 'default', name: 'kubernetes' });
const endpointsOf = (core: Core) => getOrUndefined(core, target('endpoints'));
const sliceOf = (core: Core) => getOrUndefined(core, target('endpointslices', 'discovery.k8s.io'));
const listed = (ep: ApiObject | undefined) =>
  ((ep as { subsets?: Array<{ addresses?: Array<{ ip: string }> }> } | undefined)?.subsets?.[0]?.addresses ?? []).map((a) => a.ip);

async function kubernetesService(core: Core): Promise<void> {
  const spec = { ports: [{ name: 'https', port: 443, targetPort: PORT }] };
  await core.create({ ...target('services'), name: undefined }, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'kubernetes' }, spec }, {}, ctx);
}

function reconciler(core: Core, store: Store, clock: Clock, address: string, timing: { ttlMs?: number; renewMs?: number } = {}) {
  return new LeaseEndpointReconciler({ core, store, naming, clock, user: ctx.user, address, port: PORT, ...timing });
}

describe('the lease endpoint reconciler on the embedded store, ManualClock', () => {
  let t: TestCore;
  let clock: ManualClock;

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 1));
    t = await openCore({}, clock);
  });
  afterEach(async () => t.close());

  it('lists every live server, drops one whose lease went a TTL unrenewed and one that stopped cleanly at once', async () => {
    await kubernetesService(t.core);
    const a = reconciler(t.core, t.store, clock, '10.0.0.1');
    const b = reconciler(t.core, t.store, clock, '10.0.0.2');
    const c = reconciler(t.core, t.store, clock, '10.0.0.3');
    await a.tick();
    await b.tick();
    await c.tick();
    await a.tick();
    expect(listed(await endpointsOf(t.core))).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    const ep = (await endpointsOf(t.core)) as ApiObject & { subsets: unknown[] };
    expect(ep.metadata?.labels).toEqual({ 'endpointslice.kubernetes.io/skip-mirror': 'true' });
    expect(ep.subsets).toEqual([
      { addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }, { ip: '10.0.0.3' }], ports: [{ name: 'https', port: PORT, protocol: 'TCP' }] },
    ]);
    const slice = (await sliceOf(t.core)) as ApiObject & { addressType: string; endpoints: unknown[]; ports: unknown[] };
    expect(slice.metadata?.labels).toEqual({ 'kubernetes.io/service-name': 'kubernetes' });
    expect(slice.addressType).toBe('IPv4');
    expect(slice.endpoints).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3'].map((ip) => ({ addresses: [ip], conditions: { ready: true } })));
    expect(slice.ports).toEqual([{ name: 'https', port: PORT, protocol: 'TCP' }]);

    // c stops cleanly: its lease goes and the endpoints lose it at once.
    await c.stop();
    expect(listed(await endpointsOf(t.core))).toEqual(['10.0.0.1', '10.0.0.2']);
    expect((await t.store.list(MASTER_LEASES_PREFIX)).kvs.map((kv) => kv.key)).toEqual([`${MASTER_LEASES_PREFIX}10.0.0.1`, `${MASTER_LEASES_PREFIX}10.0.0.2`]);

    // b stops renewing (a crash): it stays while its lease is younger than the TTL as a sees it.
    clock.advance(MASTER_LEASE_RENEW_MS);
    await a.tick();
    expect(listed(await endpointsOf(t.core))).toEqual(['10.0.0.1', '10.0.0.2']);
    clock.advance(MASTER_LEASE_TTL_MS - MASTER_LEASE_RENEW_MS);
    await a.tick();
    expect(listed(await endpointsOf(t.core))).toEqual(['10.0.0.1']);
    expect((await t.store.list(MASTER_LEASES_PREFIX)).kvs.map((kv) => kv.key)).toEqual([`${MASTER_LEASES_PREFIX}10.0.0.1`]);
    expect(((await sliceOf(t.core)) as { endpoints: unknown[] }).endpoints).toEqual([{ addresses: ['10.0.0.1'], conditions: { ready: true } }]);

    // b comes back: it renews and is listed again.
    await b.tick();
    await a.tick();
    expect(listed(await endpointsOf(t.core))).toEqual(['10.0.0.1', '10.0.0.2']);
  });

  it('writes nothing before the kubernetes Service exists, and puts back what someone else changed', async () => {
    const a = reconciler(t.core, t.store, clock, '10.0.0.1');
    await a.tick();
    expect(await endpointsOf(t.core)).toBeUndefined();
    await kubernetesService(t.core);
    await a.tick();
    const ep = (await endpointsOf(t.core))!;
    await t.core.update(target('endpoints'), { ...ep, subsets: [{ addresses: [{ ip: '192.0.2.1' }], ports: [{ port: 1 }] }] }, {}, ctx);
    await a.tick();
    expect(listed(await endpointsOf(t.core))).toEqual(['10.0.0.1']);
  });
});

describe('the lease endpoint reconciler: two servers on one etcd, real clock', () => {
  let etcd: EtcdInstance;
  const cores: Array<{ core: Core; store: Store }> = [];

  beforeAll(async () => {
    etcd = await startEtcd();
    for (let i = 0; i < 2; i++) {
      const store = createStore({ kind: 'etcd', endpoints: [etcd.endpoint] });
      const core = createCore({ store, naming, features: buildFeatureGates({}).gates, compactionIntervalMs: 0 });
      await core.ready();
      cores.push({ core, store });
    }
  }, 60_000);
  afterAll(async () => {
    for (const { core } of cores) await core.close();
    await etcd?.stop();
  });

  it('lists both servers; the one that stops renewing drops out after the TTL', async () => {
    const [one, two] = cores as [{ core: Core; store: Store }, { core: Core; store: Store }];
    await kubernetesService(one.core);
    // A short TTL on the real clock: what matters is that the lease expires, not when.
    const timing = { ttlMs: 1_500, renewMs: 300 };
    const a = reconciler(one.core, one.store, systemClock, '10.0.0.1', timing);
    // b registers once and never renews (its clock never moves): a server whose process is gone.
    const b = reconciler(two.core, two.store, new ManualClock(Date.now()), '10.0.0.2', timing);
    a.start();
    b.start();
    try {
      await eventually(async () => listed(await endpointsOf(two.core)).length === 2, { timeoutMs: 20_000 });
      expect(listed(await endpointsOf(one.core))).toEqual(['10.0.0.1', '10.0.0.2']);
      // a drops b once b's lease has aged past the TTL on a's clock.
      await eventually(async () => JSON.stringify(listed(await endpointsOf(one.core))) === '["10.0.0.1"]', { timeoutMs: 20_000 });
      expect((await one.store.list(MASTER_LEASES_PREFIX)).kvs.map((kv) => kv.key)).toEqual([`${MASTER_LEASES_PREFIX}10.0.0.1`]);
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 60_000);
});
