/**
 * get semantics (unset = Most recent, 0 = Any, non-zero = Not older than), the 410 paths
 * (Exact on a compacted revision, an expired continue token) and the 504 path (a version the
 * store has not reached: wait briefly on the clock, then `Too large resource version`), on both
 * backends. Time only moves through the ManualClock.
 */
import { CONTINUE_EXPIRED_MESSAGE } from '../../../src/core/storage/continue-token';
import { Compactor } from '../../../src/core/cache';
import { BACKENDS, coreBackend, cm, createConfigMap, createNamespace, ctx, flush, namesOf, rvOf, statusOf, type TestCore } from './core-backends';

describe.each(BACKENDS)('get, 410 and 504 on %s', (name) => {
  const backend = coreBackend(name);
  let t: TestCore;
  let ns: string;
  let n = 0;

  beforeEach(async () => {
    t = await backend.open();
    ns = `ge${n++}`;
    await createNamespace(t.core, ns);
  });
  afterEach(() => backend.closeAll());
  afterAll(() => backend.teardown());

  it('get: unset is Most recent, 0 is Any, non-zero is Not older than; absent is 404', async () => {
    const first = await createConfigMap(t.core, ns, 'a');
    const updated = (await t.core.update(cm(ns, 'a'), { ...first, data: { v: '2' } }, {}, ctx)).object;
    expect((await t.core.get(cm(ns, 'a'), {}, ctx)).metadata!.resourceVersion).toBe(updated.metadata!.resourceVersion);
    expect((await t.core.get(cm(ns, 'a'), { resourceVersion: '0' }, ctx)).data).toEqual({ v: '2' });
    const notOlder = await t.core.get(cm(ns, 'a'), { resourceVersion: first.metadata!.resourceVersion }, ctx);
    expect(rvOf(notOlder)).toBe(rvOf(updated));
    expect(notOlder.kind).toBe('ConfigMap');
    const missing = await statusOf(t.core.get(cm(ns, 'nope'), {}, ctx), 404, 'NotFound');
    expect(missing.status.message).toBe('configmaps "nope" not found');
    await statusOf(t.core.get(cm(ns, 'a'), { resourceVersion: 'x1' }, ctx), 400, 'BadRequest');
  });

  it('answers 504 Too large resource version with Retry-After 1 after waiting 3 s of the clock', async () => {
    await createConfigMap(t.core, ns, 'a');
    const current = await t.store.currentRevision();
    const future = String(current + 1000);
    const reads = [
      t.core.get(cm(ns, 'a'), { resourceVersion: future }, ctx),
      t.core.list(cm(ns), { resourceVersion: future }, ctx),
      t.core.list(cm(ns), { resourceVersion: future, resourceVersionMatch: 'NotOlderThan', limit: 1 }, ctx),
      t.core.list(cm(ns), { resourceVersion: future, resourceVersionMatch: 'Exact' }, ctx),
    ];
    const states = reads.map(() => 'pending');
    reads.forEach((p, i) =>
      p.then(
        () => (states[i] = 'resolved'),
        () => (states[i] = 'rejected'),
      ),
    );
    await flush();
    t.clock.advance(2_999);
    await flush();
    expect(states).toEqual(['pending', 'pending', 'pending', 'pending']);
    t.clock.advance(1);
    for (const read of reads) {
      const err = await statusOf(read, 504, 'Timeout');
      expect(err.status.message).toMatch(new RegExp(`^Too large resource version: ${future}, current: \\d+$`));
      expect(err.status.details).toEqual({ causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 });
    }
  });

  it('serves a version that arrives during the wait', async () => {
    const a = await createConfigMap(t.core, ns, 'a');
    const next = String(rvOf(a) + 1);
    const waiting = t.core.list(cm(ns), { resourceVersion: next }, ctx);
    await flush();
    t.clock.advance(1_000);
    await createConfigMap(t.core, ns, 'b');
    const l = await waiting;
    expect(namesOf(l.items)).toEqual(['a', 'b']);
    expect(rvOf(l)).toBeGreaterThanOrEqual(Number(next));
  });

  it('answers 410 for Exact on a compacted revision and for an expired continue token', async () => {
    const a = await createConfigMap(t.core, ns, 'a');
    await createConfigMap(t.core, ns, 'b');
    await createConfigMap(t.core, ns, 'c');
    const page = await t.core.list(cm(ns), { limit: 1 }, ctx);
    await t.core.update(cm(ns, 'a'), { ...a, data: { v: '2' } }, {}, ctx);
    await t.store.compact(await t.store.currentRevision());

    const exact = await statusOf(t.core.list(cm(ns), { resourceVersion: String(rvOf(a)), resourceVersionMatch: 'Exact' }, ctx), 410, 'Expired');
    expect(exact.status.message).toBe('The resourceVersion for the provided list is too old.');
    await statusOf(t.core.list(cm(ns), { resourceVersion: String(rvOf(a)), limit: 1 }, ctx), 410, 'Expired');

    const expired = await statusOf(t.core.list(cm(ns), { limit: 1, continue: page.metadata.continue }, ctx), 410, 'Expired');
    expect(expired.status.message).toBe(CONTINUE_EXPIRED_MESSAGE);
    // Upstream's Status carries a token that continues at the latest revision (an inconsistent list).
    const resume = (expired.status.metadata as { continue?: string }).continue;
    expect(resume).toBeTruthy();
    const rest = await t.core.list(cm(ns), { limit: 5, continue: resume }, ctx);
    expect(namesOf(rest.items)).toEqual(['b', 'c']);
    expect(rvOf(rest)).toBeGreaterThanOrEqual(await t.store.compactedRevision());

    // The cache keeps serving the newest state after the compaction.
    const latest = await t.core.list(cm(ns), {}, ctx);
    expect(latest.items[0]!.data).toEqual({ v: '2' });
  });

  it('compacts periodically to the revision seen one interval earlier, which expires old versions', async () => {
    const compactor = new Compactor({ store: t.store, clock: t.clock, intervalMs: 60_000 });
    try {
      const a = await createConfigMap(t.core, ns, 'a');
      await createConfigMap(t.core, ns, 'x');
      const page = await t.core.list(cm(ns), { limit: 1 }, ctx);
      await createConfigMap(t.core, ns, 'y');
      const before = await t.store.compactedRevision();
      t.clock.advance(60_000); // first tick: remembers the current revision, compacts nothing
      await compactor.idle();
      expect(await t.store.compactedRevision()).toBe(before);
      const seen = await t.store.currentRevision();
      await createConfigMap(t.core, ns, 'b');
      // Still within one interval: the token and the version are served.
      expect(namesOf((await t.core.list(cm(ns), { resourceVersion: String(rvOf(a)), resourceVersionMatch: 'Exact' }, ctx)).items)).toEqual(['a']);
      t.clock.advance(60_000); // second tick: compacts to what the first tick saw
      await compactor.idle();
      expect(await t.store.compactedRevision()).toBe(seen);
      await statusOf(t.core.list(cm(ns), { resourceVersion: String(rvOf(a)), resourceVersionMatch: 'Exact' }, ctx), 410, 'Expired');
      await statusOf(t.core.list(cm(ns), { limit: 1, continue: page.metadata.continue }, ctx), 410, 'Expired');
      expect(namesOf((await t.core.list(cm(ns), {}, ctx)).items)).toEqual(['a', 'b', 'x', 'y']);
    } finally {
      compactor.stop();
    }
  });
});
