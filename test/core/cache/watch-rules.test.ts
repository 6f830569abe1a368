/**
 * The watch rules of docs/API.md, "Watch", served by the watch cache, on both backends: event types, Get State vs Start at Exact, resuming, 410 as an
 * ERROR event, bookmarks, streaming lists, timeoutSeconds, selectors, slow watchers.
 */
import type { ApiObject, ListOptions } from '../../../src/core';
import { createNaming } from '../../../src/naming';
import { encodeOnce } from '../../../src/core/cache';
import { BACKENDS, coreBackend, cm, createConfigMap, createNamespace, ctx, flush, Recorder, rvOf, statusOf, type TestCore } from '../registry/core-backends';

describe.each(BACKENDS)('watch rules on %s', (name) => {
  const backend = coreBackend(name);
  let t: TestCore;
  let ns: string;
  let n = 0;
  const watch = async (options: ListOptions, namespace = ns) => new Recorder(await t.core.watch(cm(namespace), options, ctx));

  beforeEach(async () => {
    t = await backend.open({ watchCache: { watcherBuffer: 8 } });
    ns = `w${n++}`;
    await createNamespace(t.core, ns);
  });
  afterEach(() => backend.closeAll());
  afterAll(() => backend.teardown());

  it('reports ADDED, MODIFIED and DELETED from an exact version; DELETED carries the last state at the deletion revision', async () => {
    const a = await createConfigMap(t.core, ns, 'a');
    const w = await watch({ resourceVersion: a.metadata!.resourceVersion });
    const b = await createConfigMap(t.core, ns, 'b', { x: '1' });
    const b2 = (await t.core.update(cm(ns, 'b'), { ...b, data: { v: '2' } }, {}, ctx)).object;
    await t.core.delete(cm(ns, 'b'), {}, ctx);
    await w.waitFor(3);
    expect(w.summary()).toEqual(['ADDED b', 'MODIFIED b', 'DELETED b']);
    const deleted = w.events[2]!.object as ApiObject;
    expect(deleted.data).toEqual({ v: '2' });
    expect(rvOf(deleted)).toBeGreaterThan(rvOf(b2));
    expect(deleted.kind).toBe('ConfigMap');
    w.stream.close();
  });

  it('starts with synthetic ADDED events for unset and 0 ("Get State"), none for an exact version', async () => {
    const a = await createConfigMap(t.core, ns, 'a');
    await createConfigMap(t.core, ns, 'b');
    const mostRecent = await watch({});
    const any = await watch({ resourceVersion: '0' });
    const exact = await watch({ resourceVersion: a.metadata!.resourceVersion });
    await createConfigMap(t.core, ns, 'c');
    await Promise.all([mostRecent.waitFor(3), any.waitFor(3), exact.waitFor(2)]);
    expect(mostRecent.summary()).toEqual(['ADDED a', 'ADDED b', 'ADDED c']);
    expect(any.summary()).toEqual(['ADDED a', 'ADDED b', 'ADDED c']);
    expect(exact.summary()).toEqual(['ADDED b', 'ADDED c']);
    for (const w of [mostRecent, any, exact]) w.stream.close();
  });

  it('resumes from the last version seen, without gaps or repeats', async () => {
    const start = await createConfigMap(t.core, ns, 'start');
    const first = await watch({ resourceVersion: start.metadata!.resourceVersion });
    await createConfigMap(t.core, ns, 'a');
    await createConfigMap(t.core, ns, 'b');
    await first.waitFor(2);
    first.stream.close();
    await createConfigMap(t.core, ns, 'c');
    const resumed = await watch({ resourceVersion: first.events[1]!.object.metadata!.resourceVersion });
    await createConfigMap(t.core, ns, 'd');
    await resumed.waitFor(2);
    expect([...first.summary(), ...resumed.summary()]).toEqual(['ADDED a', 'ADDED b', 'ADDED c', 'ADDED d']);
    resumed.stream.close();
  });

  it("serves a version that left the in-memory window from the store's history, then the live stream; one the store compacted is one ERROR event carrying 410 Expired", async () => {
    const a = await createConfigMap(t.core, ns, 'a');
    const b = await createConfigMap(t.core, ns, 'b');
    await t.core.update(cm(ns, 'b'), { ...b, data: { v: '2' } }, {}, ctx);
    await t.core.list(cm(ns), {}, ctx); // a consistent read: the cache has recorded every change
    t.clock.advance(5 * 60_000 + 1);
    await createConfigMap(t.core, ns, 'c');
    await t.core.delete(cm(ns, 'a'), {}, ctx);
    await flush();
    const fromStore = await watch({ resourceVersion: a.metadata!.resourceVersion });
    await fromStore.waitFor(4);
    await createConfigMap(t.core, ns, 'd');
    await fromStore.waitFor(5);
    expect(fromStore.summary()).toEqual(['ADDED b', 'MODIFIED b', 'ADDED c', 'DELETED a', 'ADDED d']);
    // The deletion carries the last state at the deletion's revision, as from the cache.
    expect(rvOf(fromStore.events[3]!.object as ApiObject)).toBeGreaterThan(rvOf(fromStore.events[2]!.object as ApiObject));
    expect(fromStore.events.map((e) => rvOf(e.object as ApiObject))).toEqual(
      [...fromStore.events.map((e) => rvOf(e.object as ApiObject))].sort((x, y) => x - y),
    );
    fromStore.stream.close();
    // A selector sees the same history filtered: b's changes only.
    const selected = await watch({ resourceVersion: a.metadata!.resourceVersion, fieldSelector: 'metadata.name=b' });
    await selected.waitFor(2);
    expect(selected.summary()).toEqual(['ADDED b', 'MODIFIED b']);
    selected.stream.close();

    await t.store.compact(rvOf(b));
    const w = await watch({ resourceVersion: a.metadata!.resourceVersion });
    await w.waitEnded();
    expect(w.events).toHaveLength(1);
    expect(w.events[0]!.type).toBe('ERROR');
    expect(w.events[0]!.object).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      code: 410,
      reason: 'Expired',
      message: `too old resource version: ${rvOf(a)} (${rvOf(b)})`,
    });
  });

  it('sends bookmarks every minute when allowed, and once right before timeoutSeconds ends the watch', async () => {
    const a = await createConfigMap(t.core, ns, 'a');
    const w = await watch({ resourceVersion: a.metadata!.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 150 });
    const quiet = await watch({ resourceVersion: a.metadata!.resourceVersion, timeoutSeconds: 150 });
    await createConfigMap(t.core, ns, 'b');
    await w.waitFor(1);
    t.clock.advance(60_000);
    await w.waitFor(2);
    const current = String(await t.store.currentRevision());
    expect(w.events[1]).toEqual({ type: 'BOOKMARK', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { resourceVersion: current } } });
    t.clock.advance(60_000);
    t.clock.advance(28_000); // 148 s: two seconds before the deadline
    await w.waitFor(4);
    expect(w.summary()).toEqual(['ADDED b', `BOOKMARK ${current}`, `BOOKMARK ${current}`, `BOOKMARK ${current}`]);
    expect(w.ended).toBe(false);
    t.clock.advance(2_000);
    await w.waitEnded();
    await quiet.waitEnded();
    expect(quiet.summary()).toEqual(['ADDED b']);
  });

  it('serves streaming lists: initial ADDED events, then a BOOKMARK annotated initial-events-end, then changes', async () => {
    await createConfigMap(t.core, ns, 'a');
    await createConfigMap(t.core, ns, 'b');
    const w = await watch({ sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true });
    const current = await t.store.currentRevision();
    await createConfigMap(t.core, ns, 'c');
    await w.waitFor(4);
    expect(w.summary().slice(0, 2)).toEqual(['ADDED a', 'ADDED b']);
    const end = w.events[2]!;
    expect(end.type).toBe('BOOKMARK');
    expect(end.object.metadata).toEqual({ resourceVersion: String(current), annotations: { 'k8s.io/initial-events-end': 'true' } });
    expect(w.summary()[3]).toBe('ADDED c');
    w.stream.close();

    const off = await watch({ sendInitialEvents: false, resourceVersionMatch: 'NotOlderThan' });
    await createConfigMap(t.core, ns, 'd');
    await off.waitFor(1);
    expect(off.summary()).toEqual(['ADDED d']);
    off.stream.close();

    await statusOf(t.core.watch(cm(ns), { sendInitialEvents: true }, ctx), 400, 'BadRequest').then((e) =>
      expect(e.status.message).toBe(
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      ),
    );
    await statusOf(t.core.watch(cm(ns), { resourceVersion: '1', resourceVersionMatch: 'NotOlderThan' }, ctx), 400, 'BadRequest');
  });

  it('names the initial-events-end annotation from the naming profile', async () => {
    const platform = await backend.open({ naming: createNaming('platform'), shareWith: t });
    await createConfigMap(platform.core, ns, 'a');
    const w = new Recorder(
      await platform.core.watch(cm(ns), { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true }, ctx),
    );
    await w.waitFor(2);
    expect((w.events[1]!.object as ApiObject).metadata!.annotations).toEqual({ 'platform.io/initial-events-end': 'true' });
    w.stream.close();
  });

  it('ends a streaming list that cannot reach its version with a 504 ERROR event after the wait', async () => {
    const future = String((await t.store.currentRevision()) + 100);
    const pending = t.core.watch(cm(ns), { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', resourceVersion: future }, ctx);
    await flush();
    t.clock.advance(3_000);
    const w = new Recorder(await pending);
    await w.waitEnded();
    expect(w.events.map((e) => [e.type, (e.object as { code?: number }).code])).toEqual([['ERROR', 504]]);
    // A plain watch from a future version simply waits for it.
    const plain = await watch({ resourceVersion: future });
    expect(plain.ended).toBe(false);
    plain.stream.close();
  });

  it('filters by selectors; an object leaving the selection is DELETED for that watcher, entering is ADDED', async () => {
    const a = await createConfigMap(t.core, ns, 'a', { tier: 'web' });
    const byLabel = await watch({ labelSelector: 'tier in (web)' });
    const byField = await watch({ fieldSelector: 'metadata.name=a' });
    const moved = (await t.core.update(cm(ns, 'a'), { ...a, metadata: { ...a.metadata, labels: { tier: 'db' } } }, {}, ctx)).object;
    const back = (await t.core.update(cm(ns, 'a'), { ...moved, metadata: { ...moved.metadata, labels: { tier: 'web' } } }, {}, ctx)).object;
    await createConfigMap(t.core, ns, 'b', { tier: 'web' });
    await byLabel.waitFor(4);
    expect(byLabel.summary()).toEqual(['ADDED a', 'DELETED a', 'ADDED a', 'ADDED b']);
    const left = byLabel.events[1]!.object as ApiObject;
    expect(left.metadata!.labels).toEqual({ tier: 'web' }); // the previous content...
    expect(left.metadata!.resourceVersion).toBe(moved.metadata!.resourceVersion); // ...at the event's version
    expect(byLabel.events[2]!.object.metadata!.resourceVersion).toBe(back.metadata!.resourceVersion);
    await byField.waitFor(3);
    expect(byField.summary()).toEqual(['ADDED a', 'MODIFIED a', 'MODIFIED a']);
    await statusOf(t.core.watch(cm(ns), { fieldSelector: 'spec.nodeName=x' }, ctx), 400, 'BadRequest');
    await statusOf(t.core.watch(cm(ns), { labelSelector: 'a in (' }, ctx), 400, 'BadRequest');
    byLabel.stream.close();
    byField.stream.close();
  });

  it('watches one object by name, and one namespace without seeing others', async () => {
    await createNamespace(t.core, `${ns}-x`);
    const named = new Recorder(await t.core.watch(cm(ns, 'a'), {}, ctx));
    const inNs = await watch({});
    await createConfigMap(t.core, `${ns}-x`, 'a');
    await createConfigMap(t.core, ns, 'b');
    await createConfigMap(t.core, ns, 'a');
    await Promise.all([named.waitFor(1), inNs.waitFor(2)]);
    expect(named.summary()).toEqual(['ADDED a']);
    expect(inNs.summary()).toEqual(['ADDED b', 'ADDED a']);
    expect((inNs.events[1]!.object as ApiObject).metadata!.namespace).toBe(ns);
    named.stream.close();
    inNs.stream.close();
  });

  it('closes a watcher that falls a buffer behind, without holding up the others', async () => {
    const start = await createConfigMap(t.core, ns, 'start');
    const slow = await t.core.watch(cm(ns), { resourceVersion: start.metadata!.resourceVersion }, ctx);
    const fast = await watch({ resourceVersion: start.metadata!.resourceVersion });
    for (let i = 0; i < 20; i++) await createConfigMap(t.core, ns, `o${String(i).padStart(2, '0')}`);
    await fast.waitFor(20);
    expect(fast.events).toHaveLength(20);
    const slowSeen = new Recorder(slow);
    await slowSeen.waitEnded();
    // What the slow watcher got is a prefix of the stream: its client resumes from the last one.
    expect(slowSeen.summary()).toEqual(fast.summary().slice(0, slowSeen.events.length));
    expect(slowSeen.events.length).toBeLessThan(20);
    fast.stream.close();
  });

  it('hands every watcher the same event object, so a door encodes it once per format', async () => {
    const start = await createConfigMap(t.core, ns, 'start');
    const watchers = await Promise.all([1, 2, 3].map(() => watch({ resourceVersion: start.metadata!.resourceVersion })));
    await createConfigMap(t.core, ns, 'a');
    await Promise.all(watchers.map((w) => w.waitFor(1)));
    const [first, ...others] = watchers.map((w) => w.events[0]!);
    for (const other of others) expect(other).toBe(first);
    let encodings = 0;
    const encode = (e: object) => {
      encodings++;
      return Buffer.from(JSON.stringify(e));
    };
    const bytes = watchers.map((w) => encodeOnce(w.events[0]!, 'application/json', encode));
    expect(encodings).toBe(1);
    expect(bytes[1]).toBe(bytes[0]);
    encodeOnce(first!, 'application/yaml', encode);
    expect(encodings).toBe(2);
    for (const w of watchers) w.stream.close();
  });
});
