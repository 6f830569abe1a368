/**
 * Shared informers against the in-process core (embedded store): controllers of one group follow
 * a resource through one informer (one list, one watch, one map of its objects), each hearing
 * every change; a listener that stops ends only its own interest; one that joins late hears of
 * the list; the lists and watches go as the group's identity.
 */
import type { CoreApi, RequestContext } from '../../src/core';
import { SharedInformers, type InformerChange, followResource } from '../../src/core/informer';
import { systemClock } from '../../src/clock';
import { ctx, openCore, pods, type TestCore } from './support';
import { eventually } from '../support/eventually';

const GROUP: RequestContext = {
  user: { username: 'system:kube-controller-manager', groups: ['system:masters'] },
  userAgent: 'keelson-controller-manager/shared-informers',
};

/** What a listener heard: 'list' for a (re)list, else the change's type and name. */
function recorder(): { heard: string[]; listener: (c?: InformerChange) => void } {
  const heard: string[] = [];
  return { heard, listener: (c) => heard.push(c ? `${c.type} ${c.object.metadata?.name}` : 'list') };
}

async function createPod(core: CoreApi, name: string): Promise<void> {
  await core.create(
    pods('default'),
    { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } },
    {},
    ctx,
  );
}

describe('shared informers', () => {
  let t: TestCore;
  /** The calls that reached the core: who listed and who watched. */
  let calls: string[];
  let api: CoreApi;

  beforeEach(async () => {
    t = await openCore();
    calls = [];
    // The real core; only its list and watch calls are written down on their way.
    api = new Proxy(t.core, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'list' && prop !== 'watch') return typeof value === 'function' ? value.bind(target) : value;
        return (...args: [unknown, unknown, RequestContext]) => {
          calls.push(`${String(prop)} as ${args[2].user.username}`);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as CoreApi;
  });

  afterEach(async () => {
    await t.close();
  });

  it('gives every controller of a group one informer per resource, each told of every change, listing and watching as the group', async () => {
    await createPod(t.core, 'before');
    const informers = new SharedInformers(api, GROUP, systemClock);
    const a = recorder();
    const b = recorder();
    const viewA = followResource({ core: api, clock: systemClock, informers }, pods('default'), ctx, a.listener);
    const viewB = followResource({ core: api, clock: systemClock, informers }, pods('default'), ctx, b.listener);
    await Promise.all([viewA.synced, viewB.synced]);
    expect(informers.size).toBe(1);
    expect(viewA.objects).toBe(viewB.objects);
    expect([...viewA.objects.keys()]).toEqual(['default/before']);
    await createPod(t.core, 'after');
    await eventually(() => a.heard.length === 2 && b.heard.length === 2);
    expect(a.heard).toEqual(['list', 'ADDED after']);
    expect(b.heard).toEqual(['list', 'ADDED after']);
    expect([...viewB.inNamespace('default')].map((p) => p.metadata?.name).sort()).toEqual(['after', 'before']);
    expect(calls).toEqual(['list as system:kube-controller-manager', 'watch as system:kube-controller-manager']);
    viewA.stop();
    viewB.stop();
  });

  it('keeps the informer for the listeners left when one stops, and stops it with the last', async () => {
    const informers = new SharedInformers(api, GROUP, systemClock);
    const a = recorder();
    const b = recorder();
    const viewA = informers.watch(pods('default'), a.listener);
    const viewB = informers.watch(pods('default'), b.listener);
    await viewA.synced;
    viewA.stop();
    await createPod(t.core, 'one');
    await eventually(() => b.heard.includes('ADDED one'));
    // One informer tells all its listeners of a change in one pass: had `a` still listened, it had heard it too.
    expect(a.heard).toEqual(['list']);
    expect(informers.size).toBe(1);
    viewB.stop();
    expect(informers.size).toBe(0);

    // A listener after that starts a new informer, which lists what is there now.
    const c = recorder();
    const viewC = informers.watch(pods('default'), c.listener);
    await viewC.synced;
    expect(c.heard).toEqual(['list']);
    expect([...viewC.objects.keys()]).toEqual(['default/one']);
    expect(calls.filter((call) => call.startsWith('list'))).toHaveLength(2);
    viewC.stop();
  });

  it('tells a listener that joins after the first list of that list, once', async () => {
    await createPod(t.core, 'there');
    const informers = new SharedInformers(api, GROUP, systemClock);
    const first = informers.watch(pods('default'), () => undefined);
    await first.synced;
    const late = recorder();
    const view = informers.watch(pods('default'), late.listener);
    expect(late.heard).toEqual([]);
    await view.synced;
    await Promise.resolve();
    expect(late.heard).toEqual(['list']);
    expect([...view.objects.keys()]).toEqual(['default/there']);
    await createPod(t.core, 'next');
    await eventually(() => late.heard.length === 2);
    expect(late.heard).toEqual(['list', 'ADDED next']);
    expect(calls.filter((call) => call.startsWith('list'))).toHaveLength(1);
    first.stop();
    view.stop();
  });

  it('tells the other listeners of a change when one of them throws', async () => {
    const informers = new SharedInformers(api, GROUP, systemClock);
    const thrower = informers.watch(pods('default'), (c) => {
      if (c) throw new Error('listener failed');
    });
    const b = recorder();
    const view = informers.watch(pods('default'), b.listener);
    await view.synced;
    await createPod(t.core, 'x');
    await eventually(() => b.heard.includes('ADDED x'));
    thrower.stop();
    view.stop();
  });

  it('without a group, gives a controller an informer of its own watching as the controller', async () => {
    const a = recorder();
    const view = followResource({ core: api, clock: systemClock }, pods('default'), ctx, a.listener);
    await view.synced;
    expect(a.heard).toEqual(['list']);
    expect(calls).toEqual([`list as ${ctx.user.username}`, `watch as ${ctx.user.username}`]);
    view.stop();
  });
});
