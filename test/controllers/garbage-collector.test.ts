/**
 * The garbage collector against an in-process core: propagation policies (Background,
 * Foreground with blocking dependents, Orphan, legacy orphanDependents), owners that are gone
 * while another remains, and owners already gone when the collector starts.
 */
import { GarbageCollector } from '../../src/controllers';
import type { ApiObject } from '../../src/core';
import { ctx, eventually, getOrUndefined, openCore, ownerRef, pod, pods, replicaSet, rs, type TestCore } from './support';

const user = { username: 'system:kube-controller-manager', groups: ['system:masters'] };

describe('garbage collector', () => {
  let t: TestCore;
  let gc: GarbageCollector;

  beforeEach(async () => {
    t = await openCore();
    gc = new GarbageCollector({ core: t.core, resources: t.core.resources, user });
    gc.start();
    await gc.synced;
  });
  afterEach(async () => {
    gc.stop();
    await t.close();
  });

  async function ownerWithPods(name: string, count = 2, block = true): Promise<{ owner: ApiObject; podNames: string[] }> {
    const owner = (await t.core.create(rs('default'), replicaSet(name), {}, ctx)).object;
    const podNames: string[] = [];
    for (let i = 0; i < count; i++) {
      const p = (await t.core.create(pods('default'), pod(`${name}-${i}`, [ownerRef(owner, block)]), {}, ctx)).object;
      podNames.push(p.metadata!.name!);
    }
    return { owner, podNames };
  }

  const gone = (target: Parameters<typeof getOrUndefined>[1]) => async () => (await getOrUndefined(t.core, target)) === undefined;

  it('Background (the default): the owner goes at once, the collector deletes its dependents', async () => {
    const { podNames } = await ownerWithPods('bg');
    const result = await t.core.delete(rs('default', 'bg'), {}, ctx);
    expect(result.httpStatus).toBe(200);
    expect(result.object).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'bg', group: 'apps', kind: 'replicasets' } });
    expect(await getOrUndefined(t.core, rs('default', 'bg'))).toBeUndefined();
    for (const name of podNames) await eventually(gone(pods('default', name)));
  });

  it('Foreground: the owner stays Terminating until its blocking dependents are gone', async () => {
    const { owner } = await ownerWithPods('fg', 1);
    // One more dependent that cannot go yet: it holds a finalizer of its own.
    await t.core.create(pods('default'), pod('fg-held', [ownerRef(owner)], { finalizers: ['example.com/hold'] }), {}, ctx);
    const result = await t.core.delete(rs('default', 'fg'), { propagationPolicy: 'Foreground' }, ctx);
    expect(result.httpStatus).toBe(200);
    const terminating = result.object as ApiObject;
    expect(terminating.metadata).toMatchObject({ finalizers: ['foregroundDeletion'], deletionGracePeriodSeconds: 0, generation: 2 });
    expect(terminating.metadata!.deletionTimestamp).toBeDefined();
    await eventually(gone(pods('default', 'fg-0')));
    await eventually(async () => !!(await getOrUndefined(t.core, pods('default', 'fg-held')))?.metadata?.deletionTimestamp);
    await gc.idle();
    expect(await getOrUndefined(t.core, rs('default', 'fg'))).toBeDefined();
    // Release the held pod: it goes, and then its owner.
    await t.core.patch(pods('default', 'fg-held'), { type: 'merge', body: { metadata: { finalizers: null } } }, {}, ctx);
    await eventually(gone(rs('default', 'fg')));
  });

  it('Foreground does not wait for dependents that do not block their owner (they are still deleted)', async () => {
    await ownerWithPods('nb', 2, false);
    await t.core.delete(rs('default', 'nb'), { propagationPolicy: 'Foreground' }, ctx);
    await eventually(gone(rs('default', 'nb')));
    await eventually(gone(pods('default', 'nb-0')));
    await eventually(gone(pods('default', 'nb-1')));
  });

  it('Orphan: dependents lose their owner reference and stay; then the owner goes', async () => {
    const { podNames } = await ownerWithPods('or');
    const result = await t.core.delete(rs('default', 'or'), { propagationPolicy: 'Orphan' }, ctx);
    expect((result.object as ApiObject).metadata?.finalizers).toEqual(['orphan']);
    await eventually(gone(rs('default', 'or')));
    for (const name of podNames) {
      const p = await getOrUndefined(t.core, pods('default', name));
      expect(p).toBeDefined();
      expect(p!.metadata?.ownerReferences).toBeUndefined();
    }
  });

  it('legacy orphanDependents: true orphans; false cascades in the background (202 while the owner stays)', async () => {
    await ownerWithPods('lo', 1);
    expect(((await t.core.delete(rs('default', 'lo'), { orphanDependents: true }, ctx)).object as ApiObject).metadata?.finalizers).toEqual(['orphan']);
    await eventually(gone(rs('default', 'lo')));
    expect(await getOrUndefined(t.core, pods('default', 'lo-0'))).toBeDefined();

    const { owner } = await ownerWithPods('lc', 1);
    await t.core.patch(rs('default', 'lc'), { type: 'merge', body: { metadata: { finalizers: ['example.com/hold'] } } }, {}, ctx);
    const held = await t.core.delete(rs('default', 'lc'), { orphanDependents: false }, ctx);
    expect(held.httpStatus).toBe(202);
    expect((held.object as ApiObject).metadata?.uid).toBe(owner.metadata!.uid);
    await t.core.patch(rs('default', 'lc'), { type: 'merge', body: { metadata: { finalizers: null } } }, {}, ctx);
    await eventually(gone(rs('default', 'lc')));
    await eventually(gone(pods('default', 'lc-0')));
  });

  it('a dependent with another live owner only loses the reference to the owner that went', async () => {
    const a = (await t.core.create(rs('default'), replicaSet('owner-a'), {}, ctx)).object;
    const b = (await t.core.create(rs('default'), replicaSet('owner-b'), {}, ctx)).object;
    await t.core.create(pods('default'), pod('shared', [ownerRef(a), { ...ownerRef(b), controller: false }]), {}, ctx);
    await t.core.delete(rs('default', 'owner-a'), {}, ctx);
    await eventually(async () => (await getOrUndefined(t.core, pods('default', 'shared')))?.metadata?.ownerReferences?.length === 1);
    expect((await getOrUndefined(t.core, pods('default', 'shared')))!.metadata!.ownerReferences![0]!.uid).toBe(b.metadata!.uid);
  });

  it('collects dependents whose owner was deleted while the collector was not running', async () => {
    gc.stop();
    await ownerWithPods('late', 1);
    await t.core.delete(rs('default', 'late'), {}, ctx);
    const again = new GarbageCollector({ core: t.core, resources: t.core.resources, user });
    again.start();
    try {
      await eventually(gone(pods('default', 'late-0')));
    } finally {
      again.stop();
    }
  });

  it('a dependent whose owner reference names a uid that no longer exists is collected', async () => {
    await t.core.create(
      pods('default'),
      pod('orphaned', [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'never', uid: '00000000-0000-0000-0000-000000000000' }]),
      {},
      ctx,
    );
    await eventually(gone(pods('default', 'orphaned')));
  });
});
