/**
 * A randomized run (issue 4, "Done when"): concurrent writers on two cores, chunked listers and
 * watchers of every kind, checked against a model built from the store's own change log (the
 * store conformance suite vouches for it). No watcher may miss, repeat or reorder a change, and
 * no chunked list may mix revisions.
 */
import type { ApiObject, ListOptions, WatchEvent } from '../../../src/core';
import type { Store, StoreEvent } from '../../../src/store';
import { StatusError } from '../../../src/status';
import { BACKENDS, coreBackend, cm, createNamespace, ctx, Recorder, type TestCore } from '../registry/core-backends';
import { seededRandom } from '../../../src/util/seeded-random';

const seeded = seededRandom;

interface LogEntry {
  revision: number;
  key: string;
  name: string;
  /** Undefined for a deletion. */
  labels?: Record<string, string>;
}

type Filter = (labels: Record<string, string>) => boolean;

/** The store's history under a prefix, from `from` through `through`. */
async function storeLog(store: Store, prefix: string, from: number, through: number): Promise<LogEntry[]> {
  const events: StoreEvent[] = [];
  await new Promise<void>((resolve, reject) => {
    const w = store.watch(
      prefix,
      { startRevision: from },
      {
        onEvents: (batch) => {
          events.push(...batch);
          if (events[events.length - 1]!.revision >= through) {
            w.cancel();
            resolve();
          }
        },
        onError: reject,
      },
    );
  });
  return events.map((e) => ({
    revision: e.revision,
    key: e.kv.key,
    name: e.kv.key.slice(prefix.length),
    labels: e.type === 'put' ? ((JSON.parse(Buffer.from(e.kv.value).toString()) as ApiObject).metadata?.labels ?? {}) : undefined,
  }));
}

function stateAt(log: LogEntry[], revision: number): Map<string, LogEntry> {
  const state = new Map<string, LogEntry>();
  for (const e of log) {
    if (e.revision > revision) break;
    if (e.labels) state.set(e.name, e);
    else state.delete(e.name);
  }
  return state;
}

function sortedState(log: LogEntry[], revision: number): LogEntry[] {
  return [...stateAt(log, revision).values()].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}

/** What a watcher starting after `after` with `filter` must see, in upstream's rules. */
function expectedStream(log: LogEntry[], after: number, filter: Filter): string[] {
  const state = stateAt(log, after);
  const out: string[] = [];
  for (const e of log) {
    if (e.revision <= after) continue;
    const prev = state.get(e.name);
    const before = prev !== undefined && filter(prev.labels!);
    if (e.labels) {
      const now = filter(e.labels);
      if (now && before) out.push(`MODIFIED ${e.name} ${e.revision}`);
      else if (now) out.push(`ADDED ${e.name} ${e.revision}`);
      else if (before) out.push(`DELETED ${e.name} ${e.revision}`);
      state.set(e.name, e);
    } else {
      if (before) out.push(`DELETED ${e.name} ${e.revision}`);
      state.delete(e.name);
    }
  }
  return out;
}

const describeEvent = (e: WatchEvent): string => `${e.type} ${(e.object as ApiObject).metadata!.name} ${(e.object as ApiObject).metadata!.resourceVersion}`;

describe.each(BACKENDS)('randomized writers, listers and watchers on %s', (name) => {
  const backend = coreBackend(name);
  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
  });

  it('keeps every watch gap-free, duplicate-free and in order, and every chunked list at one revision', async () => {
    const random = seeded(name === 'etcd' ? 4242 : 1717);
    const a = await backend.open();
    const b: TestCore = await backend.open({ shareWith: a });
    const cores = [a.core, b.core];
    const ns = 'rnd';
    await createNamespace(a.core, ns);
    const prefix = `/registry/configmaps/${ns}/`;
    const startRevision = await a.store.currentRevision();
    const names = Array.from({ length: 12 }, (_, i) => `o${String(i).padStart(2, '0')}`);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const parity = () => ({ parity: random() < 0.5 ? 'even' : 'odd' });
    const knownRevisions: number[] = [startRevision];

    interface Watched {
      recorder: Recorder;
      after?: number;
      filter: Filter;
      stream?: boolean;
    }
    const watchers: Watched[] = [];
    const lists: Array<{ revision: string; chunks: string[]; items: Array<{ name: string; rv: string }> }> = [];

    const startWatcher = async () => {
      const core = pick(cores);
      const kind = random();
      const everything: Filter = () => true;
      if (kind < 0.35) {
        const after = pick(knownRevisions);
        watchers.push({ recorder: new Recorder(await core.watch(cm(ns), { resourceVersion: String(after) }, ctx)), after, filter: everything });
      } else if (kind < 0.55) {
        const after = pick(knownRevisions);
        const filter: Filter = (l) => l.parity === 'even';
        watchers.push({
          recorder: new Recorder(await core.watch(cm(ns), { resourceVersion: String(after), labelSelector: 'parity=even' }, ctx)),
          after,
          filter,
        });
      } else if (kind < 0.8) {
        watchers.push({ recorder: new Recorder(await core.watch(cm(ns), {}, ctx)), filter: everything });
      } else {
        const options: ListOptions = { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true };
        watchers.push({ recorder: new Recorder(await core.watch(cm(ns), options, ctx)), filter: everything, stream: true });
      }
    };

    const listChunked = async () => {
      const core = pick(cores);
      const limit = 1 + Math.floor(random() * 4);
      const first: ListOptions = random() < 0.3 ? { resourceVersion: '0', limit } : { limit };
      let page = await core.list(cm(ns), first, ctx);
      const record = { revision: page.metadata.resourceVersion!, chunks: [page.metadata.resourceVersion!], items: [] as Array<{ name: string; rv: string }> };
      for (;;) {
        record.items.push(...page.items.map((i) => ({ name: i.metadata!.name!, rv: i.metadata!.resourceVersion! })));
        if (!page.metadata.continue) break;
        page = await pick(cores).list(cm(ns), { limit, continue: page.metadata.continue }, ctx);
        record.chunks.push(page.metadata.resourceVersion!);
      }
      lists.push(record);
    };

    const write = async () => {
      const core = pick(cores);
      const target = pick(names);
      const op = random();
      try {
        let obj: ApiObject | undefined;
        if (op < 0.4) obj = (await core.create(cm(ns), { metadata: { name: target, labels: parity() }, data: { n: String(random()) } }, {}, ctx)).object;
        else if (op < 0.8) {
          const current = await core.get(cm(ns, target), {}, ctx);
          obj = (await core.update(cm(ns, target), { ...current, metadata: { ...current.metadata, labels: parity() }, data: { n: String(random()) } }, {}, ctx))
            .object;
        } else await core.delete(cm(ns, target), {}, ctx);
        if (obj) knownRevisions.push(Number(obj.metadata!.resourceVersion));
      } catch (err) {
        if (!(err instanceof StatusError) || ![404, 409].includes(err.code)) throw err;
      }
    };

    const steps = name === 'etcd' ? 160 : 320;
    const worker = async (share: number) => {
      for (let i = 0; i < share; i++) {
        const r = random();
        if (r < 0.75) await write();
        else if (r < 0.87) await listChunked();
        else await startWatcher();
      }
    };
    await Promise.all([worker(steps / 4), worker(steps / 4), worker(steps / 4), worker(steps / 4)]);
    // A sentinel every watcher selects, so each knows when it has seen everything.
    const sentinel = (await a.core.create(cm(ns), { metadata: { name: 'zz-end', labels: { parity: 'even' } } }, {}, ctx)).object;
    const final = Number(sentinel.metadata!.resourceVersion);
    const log = await storeLog(a.store, prefix, startRevision + 1, final);

    expect(watchers.length).toBeGreaterThan(5);
    for (const w of watchers) {
      const events = w.recorder.events;
      const deadline = Date.now() + 10_000;
      while (!events.some((e) => e.type !== 'BOOKMARK' && (e.object as ApiObject).metadata?.name === 'zz-end') && Date.now() < deadline)
        await w.recorder.waitFor(events.length + 1);
      w.recorder.stream.close();
      expect(w.recorder.ended || events.length > 0).toBe(true);
      const seen = events.filter((e) => e.type !== 'BOOKMARK');
      expect(seen.some((e) => e.type === 'ERROR')).toBe(false);
      if (w.after !== undefined) {
        expect(seen.map(describeEvent)).toEqual(expectedStream(log, w.after, w.filter));
        continue;
      }
      // Get State: the synthetic ADDED events are the state at some revision R (in key order), and
      // the rest is exactly the stream after R. A streaming list names R in its bookmark.
      let candidates = Array.from({ length: final - startRevision + 1 }, (_, i) => startRevision + i);
      if (w.stream) {
        const end = events.find((e) => e.type === 'BOOKMARK')!;
        expect((end.object as ApiObject).metadata!.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
        candidates = [Number(end.object.metadata!.resourceVersion)];
      }
      const observed = seen.map(describeEvent);
      const match = candidates.find((r) => {
        const expected = [...sortedState(log, r).map((e) => `ADDED ${e.name} ${e.revision}`), ...expectedStream(log, r, w.filter)];
        return expected.length === observed.length && expected.every((x, i) => x === observed[i]);
      });
      expect({ observed, consistentWithSomeStart: match !== undefined }).toMatchObject({ consistentWithSomeStart: true });
    }

    expect(lists.length).toBeGreaterThan(5);
    for (const l of lists) {
      expect(new Set(l.chunks)).toEqual(new Set([l.revision]));
      expect(l.items).toEqual(sortedState(log, Number(l.revision)).map((e) => ({ name: e.name, rv: String(e.revision) })));
    }
  });
});
