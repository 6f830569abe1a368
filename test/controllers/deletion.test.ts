/**
 * The delete request the garbage collector builds on (docs/API.md, "Object deletion" and "Dry
 * run"), through an in-process core: preconditions, dry run, graceful pod
 * deletion, finalizers, deletecollection, and the unsafe deletion of undecodable objects.
 */
import type { ApiObject } from '../../src/core';
import type { Status } from '../../src/status';
import { cms, ctx, getOrUndefined, openCore, pod, pods, replicaSet, rs, statusOf, type TestCore } from './support';

describe('delete', () => {
  let t: TestCore;
  beforeEach(async () => {
    t = await openCore();
  });
  afterEach(async () => {
    await t.close();
  });

  it('preconditions that do not match are 409 worded by kind, and nothing is deleted', async () => {
    const obj = (await t.core.create(rs('default'), replicaSet('pre'), {}, ctx)).object;
    const uid = await statusOf(t.core.delete(rs('default', 'pre'), { preconditions: { uid: 'other' } }, ctx));
    expect(uid.code).toBe(409);
    expect(uid.status.message).toBe(
      `Operation cannot be fulfilled on ReplicaSet.apps "pre": the UID in the precondition (other) does not match the UID in record (${obj.metadata!.uid}). The object might have been deleted and then recreated`,
    );
    expect(uid.status.details).toEqual({ name: 'pre', group: 'apps', kind: 'ReplicaSet' });
    const rv = await statusOf(t.core.delete(rs('default', 'pre'), { preconditions: { resourceVersion: '1' } }, ctx));
    expect(rv.status.message).toBe(
      `Operation cannot be fulfilled on ReplicaSet.apps "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${obj.metadata!.resourceVersion}). The object might have been modified`,
    );
    expect(await getOrUndefined(t.core, rs('default', 'pre'))).toBeDefined();
    const ok = await t.core.delete(rs('default', 'pre'), { preconditions: { uid: obj.metadata!.uid, resourceVersion: obj.metadata!.resourceVersion } }, ctx);
    expect(ok.httpStatus).toBe(200);
  });

  it('dryRun=All answers as the real request would and stores nothing', async () => {
    await t.core.create(rs('default'), replicaSet('dry'), {}, ctx);
    const plain = await t.core.delete(rs('default', 'dry'), { dryRun: ['All'] }, ctx);
    expect(plain.object).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'dry', kind: 'replicasets' } });
    const orphan = await t.core.delete(rs('default', 'dry'), { dryRun: ['All'], propagationPolicy: 'Orphan' }, ctx);
    expect((orphan.object as ApiObject).metadata).toMatchObject({ finalizers: ['orphan'], deletionGracePeriodSeconds: 0 });
    const stored = await getOrUndefined(t.core, rs('default', 'dry'));
    expect(stored?.metadata?.deletionTimestamp).toBeUndefined();
    expect(stored?.metadata?.finalizers).toBeUndefined();

    await t.core.create(pods('default'), pod('dry-pod', [], { nodeName: 'node-1' }), {}, ctx);
    const graceful = await t.core.delete(pods('default', 'dry-pod'), { dryRun: ['All'] }, ctx);
    expect((graceful.object as ApiObject).metadata?.deletionGracePeriodSeconds).toBe(30);
    expect((await getOrUndefined(t.core, pods('default', 'dry-pod')))?.metadata?.deletionTimestamp).toBeUndefined();
  });

  it('a pod bound to a node is deleted gracefully; unbound, at once; a shorter grace period finishes it', async () => {
    const unbound = await t.core.create(pods('default'), pod('unbound'), {}, ctx);
    const gone = await t.core.delete(pods('default', 'unbound'), {}, ctx);
    expect((gone.object as ApiObject).metadata).toMatchObject({ uid: unbound.object.metadata!.uid, deletionGracePeriodSeconds: 0 });
    expect(await getOrUndefined(t.core, pods('default', 'unbound'))).toBeUndefined();

    await t.core.create(pods('default'), pod('bound', [], { nodeName: 'node-1' }), {}, ctx);
    const marked = await t.core.delete(pods('default', 'bound'), { gracePeriodSeconds: 60 }, ctx);
    const meta = (marked.object as ApiObject).metadata!;
    expect(meta.deletionGracePeriodSeconds).toBe(60);
    expect(Date.parse(meta.deletionTimestamp!) - Date.now()).toBeGreaterThan(55_000);
    // Asking again with the same or a longer period changes nothing.
    const again = await t.core.delete(pods('default', 'bound'), { gracePeriodSeconds: 90 }, ctx);
    expect((again.object as ApiObject).metadata!.deletionTimestamp).toBe(meta.deletionTimestamp);
    expect(await getOrUndefined(t.core, pods('default', 'bound'))).toBeDefined();
    await t.core.delete(pods('default', 'bound'), { gracePeriodSeconds: 0 }, ctx);
    expect(await getOrUndefined(t.core, pods('default', 'bound'))).toBeUndefined();
  });

  it('an object with finalizers becomes Terminating and goes with its last finalizer', async () => {
    await t.core.create(cms('default'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/a'] } }, {}, ctx);
    const first = await t.core.delete(cms('default', 'held'), {}, ctx);
    expect((first.object as ApiObject).metadata).toMatchObject({ finalizers: ['example.com/a'], deletionGracePeriodSeconds: 0 });
    const second = await t.core.delete(cms('default', 'held'), {}, ctx);
    expect((second.object as ApiObject).metadata!.resourceVersion).toBe((first.object as ApiObject).metadata!.resourceVersion);
    await t.core.patch(cms('default', 'held'), { type: 'merge', body: { metadata: { finalizers: null } } }, {}, ctx);
    expect(await getOrUndefined(t.core, cms('default', 'held'))).toBeUndefined();
  });

  it('deletecollection deletes what the selectors pick and answers with the list as read; limit deletes one page', async () => {
    for (const [name, tier] of [
      ['a', 'x'],
      ['b', 'x'],
      ['c', 'y'],
    ]) {
      await t.core.create(cms('default'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { tier } } }, {}, ctx);
    }
    const dry = await t.core.deleteCollection(cms('default'), { labelSelector: 'tier=x' }, { dryRun: ['All'] }, ctx);
    expect(dry.items.map((i) => i.metadata!.name)).toEqual(['a', 'b']);
    expect(await getOrUndefined(t.core, cms('default', 'a'))).toBeDefined();
    const listed = await t.core.deleteCollection(cms('default'), { labelSelector: 'tier=x' }, {}, ctx);
    expect(listed.kind).toBe('ConfigMapList');
    expect(listed.items.map((i) => i.metadata!.name)).toEqual(['a', 'b']);
    expect(await getOrUndefined(t.core, cms('default', 'a'))).toBeUndefined();
    expect(await getOrUndefined(t.core, cms('default', 'c'))).toBeDefined();
    await t.core.create(cms('default'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'd' } }, {}, ctx);
    const page = await t.core.deleteCollection(cms('default'), { limit: 1 }, {}, ctx);
    expect(page.items).toHaveLength(1);
    expect(page.metadata.continue).toBeTruthy();
  });
});

describe('unsafe deletion of undecodable objects', () => {
  const garbage = Buffer.from('\u0000not json at all');

  async function corrupt(t: TestCore, name: string): Promise<string> {
    const obj = (await t.core.create(rs('default'), replicaSet(name), {}, ctx)).object;
    const key = `/registry/replicasets/default/${name}`;
    await t.store.update(key, garbage, Number(obj.metadata!.resourceVersion));
    return key;
  }

  it('without the gate: the option is dropped, and the undecodable object answers 500', async () => {
    const t = await openCore();
    try {
      await corrupt(t, 'bad');
      const err = await statusOf(t.core.delete(rs('default', 'bad'), { ignoreStoreReadErrorWithClusterBreakingPotential: true, dryRun: ['All'] }, ctx));
      expect(err.code).toBe(500);
      expect(err.status.message).toMatch(/^Internal error occurred: unable to decode an object stored at \/registry\/replicasets\/default\/bad: /);
    } finally {
      await t.close();
    }
  });

  it('with AllowUnsafeMalformedObjectDeletion: refused with other options or on a readable object; removes an undecodable one', async () => {
    const t = await openCore({ AllowUnsafeMalformedObjectDeletion: true });
    try {
      const key = await corrupt(t, 'bad');
      const normal = await statusOf(t.core.delete(rs('default', 'bad'), {}, ctx));
      expect(normal.code).toBe(500);
      expect(normal.reason).toBe('InternalError');
      expect(normal.status.message).toMatch(
        /^Internal error occurred: StorageError: corrupt object, Code: 7, Key: \/registry\/replicasets\/default\/bad, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=\d+: /,
      );

      const combined = await statusOf(
        t.core.delete(
          rs('default', 'bad'),
          {
            ignoreStoreReadErrorWithClusterBreakingPotential: true,
            dryRun: ['All'],
            gracePeriodSeconds: 0,
            propagationPolicy: 'Orphan',
            preconditions: { uid: 'x' },
          },
          ctx,
        ),
      );
      expect(combined.code).toBe(422);
      expect(combined.status.message).toBe(
        'DeleteOptions.meta.k8s.io "" is invalid: [ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .dryRun, ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .propagationPolicy, ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .gracePeriodSeconds, ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .preconditions]',
      );

      await t.core.create(rs('default'), replicaSet('fine'), {}, ctx);
      const healthy = await statusOf(t.core.delete(rs('default', 'fine'), { ignoreStoreReadErrorWithClusterBreakingPotential: true }, ctx));
      expect(healthy.code).toBe(422);
      expect(healthy.status.message).toBe(
        'replicasets.apps "fine" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option',
      );

      const collection = await statusOf(t.core.deleteCollection(rs('default'), {}, { ignoreStoreReadErrorWithClusterBreakingPotential: true }, ctx));
      expect(collection.status.message).toBe(
        'DeleteOptions.meta.k8s.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option',
      );

      const removed = await t.core.delete(rs('default', 'bad'), { ignoreStoreReadErrorWithClusterBreakingPotential: true }, ctx);
      expect(removed.httpStatus).toBe(200);
      expect(removed.object as Status).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'bad', kind: 'ReplicaSet' } });
      expect((await t.store.get(key)).kv).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
