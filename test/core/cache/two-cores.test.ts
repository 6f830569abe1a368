/**
 * Two API server processes on one etcd, each with its own watch cache and compactor
 * (issue 4): they agree on every read, resume each other's versions and
 * tokens, and compact about once per interval between them.
 */
import { Compactor } from '../../../src/core/cache';
import { ManualClock } from '../../../src/clock';
import { coreBackend, cm, createConfigMap, createNamespace, ctx, namesOf, Recorder, rvOf, statusOf, type TestCore } from '../registry/core-backends';

describe('two cores on one etcd', () => {
  const backend = coreBackend('etcd');
  let a: TestCore;
  let b: TestCore;
  const ns = 'shared';

  beforeAll(async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
    a = await backend.open({ clock });
    b = await backend.open({ clock });
    await createNamespace(a.core, ns);
  });
  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
  });

  it("sees the other core's writes in consistent reads at once, and in watches in order", async () => {
    const watcher = new Recorder(await b.core.watch(cm(ns), {}, ctx));
    const created = await createConfigMap(a.core, ns, 'x');
    // No clock advance, no retry: B's consistent read waits until its cache reaches etcd's revision.
    expect((await b.core.get(cm(ns, 'x'), {}, ctx)).metadata!.resourceVersion).toBe(created.metadata!.resourceVersion);
    const updated = (await a.core.update(cm(ns, 'x'), { ...created, data: { v: '2' } }, {}, ctx)).object;
    expect(namesOf((await b.core.list(cm(ns), {}, ctx)).items)).toEqual(['x']);
    expect((await b.core.list(cm(ns), {}, ctx)).items[0]!.metadata!.resourceVersion).toBe(updated.metadata!.resourceVersion);
    await a.core.delete(cm(ns, 'x'), {}, ctx);
    await statusOf(b.core.get(cm(ns, 'x'), {}, ctx), 404, 'NotFound');
    await watcher.waitFor(3);
    expect(watcher.summary()).toEqual(['ADDED x', 'MODIFIED x', 'DELETED x']);
    watcher.stream.close();
  });

  it('serves versions and continue tokens issued by the other core', async () => {
    for (const name of ['p', 'q', 'r']) await createConfigMap(a.core, ns, name);
    const first = await a.core.list(cm(ns), { limit: 2 }, ctx);
    await createConfigMap(a.core, ns, 's');
    const rest = await b.core.list(cm(ns), { limit: 5, continue: first.metadata.continue }, ctx);
    expect([...namesOf(first.items), ...namesOf(rest.items)]).toEqual(['p', 'q', 'r']);
    expect(rest.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    const fromA = await a.core.get(cm(ns, 's'), {}, ctx);
    expect(
      namesOf((await b.core.list(cm(ns), { resourceVersion: fromA.metadata!.resourceVersion, resourceVersionMatch: 'NotOlderThan' }, ctx)).items),
    ).toContain('s');
    const exact = await b.core.list(cm(ns), { resourceVersion: first.metadata.resourceVersion, resourceVersionMatch: 'Exact' }, ctx);
    expect(namesOf(exact.items)).toEqual(['p', 'q', 'r']);
    const resumed = new Recorder(await b.core.watch(cm(ns), { resourceVersion: first.metadata.resourceVersion }, ctx));
    await resumed.waitFor(1);
    expect(resumed.summary()).toEqual(['ADDED s']);
    resumed.stream.close();
  });

  it('compacts once per interval between them, and both answer 410 for what was compacted', async () => {
    const clock = new ManualClock();
    const compactA = jest.spyOn(a.store, 'compact');
    const compactB = jest.spyOn(b.store, 'compact');
    const compactors = [new Compactor({ store: a.store, clock, intervalMs: 60_000 })];
    const advance = async (ms: number) => {
      clock.advance(ms);
      await Promise.all(compactors.map((c) => c.idle()));
    };
    try {
      const old = await createConfigMap(a.core, ns, 'old');
      await createConfigMap(a.core, ns, 'after-old');
      await advance(30_000);
      compactors.push(new Compactor({ store: b.store, clock, intervalMs: 60_000 })); // B's ticks fall 30 s after A's
      await advance(30_000); // A records its first target
      const targetA = await a.store.currentRevision();
      await advance(30_000); // B records its first target
      await createConfigMap(b.core, ns, 'between');
      await advance(30_000); // A: nobody compacted since its last tick, so A compacts to its target
      expect(await a.store.compactedRevision()).toBe(targetA);
      await advance(30_000); // B: A compacted since B's last tick, so B leaves it
      await createConfigMap(a.core, ns, 'later');
      await advance(30_000); // A compacts again, to what it saw one interval ago
      await advance(30_000); // B again sees A's compaction
      expect(compactA).toHaveBeenCalledTimes(2);
      expect(compactB).not.toHaveBeenCalled();
      for (const core of [a.core, b.core]) {
        await statusOf(core.list(cm(ns), { resourceVersion: String(rvOf(old)), resourceVersionMatch: 'Exact' }, ctx), 410, 'Expired');
        expect(namesOf((await core.list(cm(ns), {}, ctx)).items)).toEqual(expect.arrayContaining(['between', 'later']));
      }
    } finally {
      for (const c of compactors) c.stop();
      compactA.mockRestore();
      compactB.mockRestore();
    }
  });
});
