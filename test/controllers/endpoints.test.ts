/**
 * The endpoints and endpointslice controllers over the in-process core (embedded store) with
 * simulated nodes running the pods: a Service's Endpoints and EndpointSlices follow its pods'
 * IPs, readiness, named ports and deletion, as upstream's controllers keep them.
 */
import type { ApiObject, ResourceTarget } from '../../src/core';
import { EndpointsController, EndpointSliceController, Scheduler, SCHEDULER_USER, SimulatedNodes } from '../../src/controllers';
import { createNaming } from '../../src/naming';
import { systemClock } from '../../src/clock';
import { ctx, eventually, getOrUndefined, openCore, pods, type TestCore } from './support';

const naming = createNaming('kubernetes');
const services = (name?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'services', namespace: 'default', name });
const endpoints = (name?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'endpoints', namespace: 'default', name });
const slices = (): ResourceTarget => ({ group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', namespace: 'default' });

type Address = { ip: string; nodeName?: string; hostname?: string; targetRef?: { kind: string; name: string; namespace: string; uid: string } };
type Subset = { addresses?: Address[]; notReadyAddresses?: Address[]; ports?: Array<{ name?: string; port: number; protocol: string }> };
type Slice = ApiObject & {
  addressType: string;
  endpoints: Array<{
    addresses: string[];
    conditions: { ready: boolean; serving: boolean; terminating: boolean };
    nodeName?: string;
    targetRef?: { name: string };
  }> | null;
  ports: Array<{ name: string; port: number; protocol: string }> | null;
};
type RunningPod = ApiObject & { status: { phase?: string; podIP?: string; conditions?: Array<{ type: string; status: string }> } };

/** A Service; its cluster IP is allocated unless it says `None` (headless). */
function service(name: string, spec: Record<string, unknown>, labels?: Record<string, string>): ApiObject {
  const headless = spec.clusterIP === 'None' ? { clusterIPs: ['None'] } : {};
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, ...(labels ? { labels } : {}) }, spec: { ...headless, ...spec } };
}

function webPod(name: string, labels: Record<string, string> = { app: 'web' }, extra: Record<string, unknown> = {}): ApiObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27', ports: [{ name: 'http', containerPort: 8080 }] }], ...extra },
  };
}

describe('the endpoints and endpointslice controllers', () => {
  let t: TestCore;
  let sim: SimulatedNodes;
  let scheduler: Scheduler;
  let eps: EndpointsController;
  let epSlices: EndpointSliceController;

  const get = async (target: ResourceTarget) => getOrUndefined(t.core, target);
  const slicesOf = async (svc: string) =>
    ((await t.core.list(slices(), { labelSelector: `kubernetes.io/service-name=${svc}` }, ctx)).items as Slice[]).sort((a, b) =>
      (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1,
    );
  const running = async (names: string[]) => {
    await eventually(async () => {
      const list = (await t.core.list(pods('default'), {}, ctx)).items as RunningPod[];
      return names.every((n) => list.find((p) => p.metadata?.name === n)?.status?.podIP);
    });
    const list = (await t.core.list(pods('default'), {}, ctx)).items as RunningPod[];
    return new Map(list.map((p) => [p.metadata!.name!, p]));
  };

  beforeEach(async () => {
    t = await openCore();
    sim = new SimulatedNodes({ core: t.core, naming, clock: systemClock, count: 2, watchAs: SCHEDULER_USER });
    scheduler = new Scheduler({ core: t.core, naming, clock: systemClock });
    eps = new EndpointsController({ core: t.core, naming, clock: systemClock, user: ctx.user });
    epSlices = new EndpointSliceController({ core: t.core, naming, clock: systemClock, user: ctx.user, maxEndpointsPerSlice: 2 });
    for (const c of [sim, scheduler, eps, epSlices]) c.start();
  });

  afterEach(async () => {
    for (const c of [eps, epSlices, scheduler, sim]) c.stop();
    await t.close();
  });

  it("lists the selected pods' IPs, nodes and references on the ports each Service port reaches (named and numbered)", async () => {
    await t.core.create(
      services(),
      service(
        'web',
        {
          selector: { app: 'web' },
          ports: [
            { name: 'http', port: 80, targetPort: 'http' },
            { name: 'metrics', port: 9090, targetPort: 9100 },
          ],
        },
        { tier: 'front' },
      ),
      {},
      ctx,
    );
    for (const name of ['web-a', 'web-b']) await t.core.create(pods('default'), webPod(name), {}, ctx);
    await t.core.create(pods('default'), webPod('other', { app: 'other' }), {}, ctx);
    const byName = await running(['web-a', 'web-b', 'other']);
    const ips = ['web-a', 'web-b'].map((n) => byName.get(n)!.status.podIP!).sort();

    await eventually(async () => ((await get(endpoints('web'))) as { subsets?: Subset[] } | undefined)?.subsets?.[0]?.addresses?.length === 2);
    const ep = (await get(endpoints('web'))) as ApiObject & { subsets: Subset[] };
    expect(ep.metadata?.labels).toEqual({ tier: 'front' });
    expect(ep.metadata?.annotations?.['endpoints.kubernetes.io/last-change-trigger-time']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(ep.subsets).toHaveLength(1);
    expect(ep.subsets[0]!.addresses!.map((a) => a.ip)).toEqual(ips);
    expect(ep.subsets[0]!.ports).toEqual([
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'metrics', port: 9100, protocol: 'TCP' },
    ]);
    const a = ep.subsets[0]!.addresses!.find((x) => x.targetRef?.name === 'web-a')!;
    expect(a).toEqual({
      ip: byName.get('web-a')!.status.podIP,
      nodeName: (byName.get('web-a')!.spec as { nodeName: string }).nodeName,
      targetRef: { kind: 'Pod', namespace: 'default', name: 'web-a', uid: byName.get('web-a')!.metadata!.uid },
    });

    await eventually(async () => (await slicesOf('web')).some((s) => (s.endpoints ?? []).length === 2));
    const [slice] = await slicesOf('web');
    const svc = await t.core.get(services('web'), {}, ctx);
    expect(slice!.metadata?.name).toMatch(/^web-[a-z0-9]{5}$/);
    expect(slice!.metadata?.labels).toEqual({
      tier: 'front',
      'kubernetes.io/service-name': 'web',
      'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
    });
    expect(slice!.metadata?.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Service', name: 'web', uid: svc.metadata?.uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(slice!.addressType).toBe('IPv4');
    expect(slice!.ports).toEqual([
      { name: 'http', protocol: 'TCP', port: 8080 },
      { name: 'metrics', protocol: 'TCP', port: 9100 },
    ]);
    expect(slice!.endpoints!.map((e) => e.addresses[0]).sort()).toEqual(ips);
    expect(slice!.endpoints!.every((e) => e.conditions.ready && e.conditions.serving && !e.conditions.terminating && e.nodeName)).toBe(true);
  });

  it('moves a pod that stops being ready to notReadyAddresses and its slice endpoint to ready: false, and back', async () => {
    await t.core.create(services(), service('web', { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] }), {}, ctx);
    await t.core.create(pods('default'), webPod('web-a'), {}, ctx);
    const byName = await running(['web-a']);
    await eventually(async () => ((await get(endpoints('web'))) as { subsets?: Subset[] } | undefined)?.subsets?.[0]?.addresses?.length === 1);

    const setReady = async (status: 'True' | 'False') => {
      const pod = (await t.core.get(pods('default', 'web-a'), {}, ctx)) as RunningPod;
      const conditions = (pod.status.conditions ?? []).map((c) => (c.type === 'Ready' ? { ...c, status } : c));
      await t.core.update({ ...pods('default', 'web-a'), subresource: 'status' }, { ...pod, status: { ...pod.status, conditions } }, {}, ctx);
    };
    await setReady('False');
    await eventually(async () => ((await get(endpoints('web'))) as { subsets?: Subset[] }).subsets?.[0]?.notReadyAddresses?.length === 1);
    const ep = (await get(endpoints('web'))) as { subsets: Subset[] };
    expect(ep.subsets).toEqual([
      {
        notReadyAddresses: [expect.objectContaining({ ip: byName.get('web-a')!.status.podIP })],
        ports: [{ port: 8080, protocol: 'TCP' }],
      },
    ]);
    await eventually(async () => (await slicesOf('web'))[0]?.endpoints?.[0]?.conditions.ready === false);
    expect((await slicesOf('web'))[0]!.endpoints![0]!.conditions).toEqual({ ready: false, serving: false, terminating: false });

    await setReady('True');
    await eventually(async () => ((await get(endpoints('web'))) as { subsets?: Subset[] }).subsets?.[0]?.addresses?.length === 1);
    await eventually(async () => (await slicesOf('web'))[0]?.endpoints?.[0]?.conditions.ready === true);
  });

  it('drops deleted pods, splits slices at the per-slice limit, keeps one empty slice without pods, and deletes Endpoints with their Service', async () => {
    await t.core.create(services(), service('web', { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] }), {}, ctx);
    await eventually(async () => (await slicesOf('web')).length === 1);
    const [placeholder] = await slicesOf('web');
    expect(placeholder!.endpoints ?? []).toEqual([]);
    expect(placeholder!.ports ?? []).toEqual([]);

    for (const name of ['web-a', 'web-b', 'web-c']) await t.core.create(pods('default'), webPod(name), {}, ctx);
    await running(['web-a', 'web-b', 'web-c']);
    // At most two endpoints per slice here (maxEndpointsPerSlice: 2): three pods take two slices.
    await eventually(async () => (await slicesOf('web')).reduce((n, s) => n + (s.endpoints?.length ?? 0), 0) === 3);
    const split = await slicesOf('web');
    expect(split).toHaveLength(2);
    expect(split.map((s) => s.endpoints!.length).sort()).toEqual([1, 2]);

    await t.core.delete(pods('default', 'web-a'), { gracePeriodSeconds: 0 }, ctx);
    await t.core.delete(pods('default', 'web-b'), { gracePeriodSeconds: 0 }, ctx);
    await eventually(async () => ((await get(endpoints('web'))) as { subsets?: Subset[] }).subsets?.[0]?.addresses?.length === 1);
    expect(((await get(endpoints('web'))) as { subsets: Subset[] }).subsets[0]!.addresses![0]!.targetRef?.name).toBe('web-c');
    await eventually(async () => (await slicesOf('web')).flatMap((s) => s.endpoints ?? []).length === 1);
    expect((await slicesOf('web')).flatMap((s) => s.endpoints ?? [])[0]!.targetRef?.name).toBe('web-c');

    await t.core.delete(services('web'), {}, ctx);
    await eventually(async () => (await get(endpoints('web'))) === undefined);
  });

  it("leaves a selector-less Service's Endpoints alone, and lists a headless Service's pods without ports by address", async () => {
    await t.core.create(services(), service('external', { ports: [{ port: 443 }] }), {}, ctx);
    const manual = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'external' },
      subsets: [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ port: 443 }] }],
    };
    await t.core.create(endpoints(), manual, {}, ctx);
    await t.core.create(services(), service('db', { clusterIP: 'None', selector: { app: 'db' } }), {}, ctx);
    await t.core.create(pods('default'), webPod('db-0', { app: 'db' }, { hostname: 'db-0', subdomain: 'db' }), {}, ctx);
    const byName = await running(['db-0']);
    await eventually(async () => ((await get(endpoints('db'))) as { subsets?: Subset[] } | undefined)?.subsets?.length === 1);
    await eps.idle();
    const db = (await get(endpoints('db'))) as ApiObject & { subsets: Subset[] };
    expect(db.metadata?.labels).toEqual({ 'service.kubernetes.io/headless': '' });
    expect(db.subsets).toEqual([{ addresses: [expect.objectContaining({ ip: byName.get('db-0')!.status.podIP, hostname: 'db-0' })] }]);
    const external = (await get(endpoints('external'))) as { subsets: Subset[] };
    expect(external.subsets).toEqual([{ addresses: [{ ip: '192.0.2.10' }], ports: [{ port: 443, protocol: 'TCP' }] }]);
    expect(await slicesOf('external')).toEqual([]);
  });
});
