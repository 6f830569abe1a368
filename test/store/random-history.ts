/**
 * A model-checked random history: random creates, guarded updates and deletes on a few keys,
 * mirrored in a plain in-memory model of "the state at each revision". The store must answer
 * every read at every revision exactly as the model does, replay the model's events, and after
 * a compaction keep answering at and above it while refusing below it. This exercises the
 * embedded store's log layout and compaction (superseded rows, tombstones) against the same
 * expectations as etcd.
 */
import type { Store } from '../../src/store';
import { dec, enc, seededRandom, storeError } from './store-test-helpers';
import { WatchRecorder } from './watch-recorder';

interface ModelValue {
  value: string;
  createRevision: number;
  modRevision: number;
}
type State = ReadonlyMap<string, ModelValue>;
interface ModelEvent {
  type: 'put' | 'delete';
  key: string;
  value: string;
  revision: number;
  prev?: ModelValue;
}

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

export async function checkRandomHistory(store: Store, prefix: string, seed: number, steps = 150): Promise<void> {
  const random = seededRandom(seed);
  const snapshots: Array<{ revision: number; state: State }> = [];
  const events: ModelEvent[] = [];
  let state = new Map<string, ModelValue>();

  for (let step = 0; step < steps; step++) {
    const key = prefix + KEYS[Math.floor(random() * KEYS.length)];
    const current = state.get(key);
    const next = new Map(state);
    const value = `${key}@${step}`;
    if (!current) {
      const kv = await store.create(key, enc(value));
      next.set(key, { value, createRevision: kv.createRevision, modRevision: kv.modRevision });
      events.push({ type: 'put', key, value, revision: kv.modRevision });
    } else if (random() < 0.65) {
      const kv = await store.update(key, enc(value), current.modRevision);
      next.set(key, { value, createRevision: current.createRevision, modRevision: kv.modRevision });
      events.push({ type: 'put', key, value, revision: kv.modRevision, prev: current });
    } else {
      const { revision } = await store.delete(key, random() < 0.5 ? current.modRevision : undefined);
      next.delete(key);
      events.push({ type: 'delete', key, value: '', revision, prev: current });
    }
    state = next;
    snapshots.push({ revision: events[events.length - 1].revision, state });
  }

  for (const snapshot of snapshots) await expectStateAt(store, prefix, snapshot.revision, snapshot.state);
  await expectPagedListAt(store, prefix, snapshots[snapshots.length - 1]);
  await expectReplay(store, prefix, snapshots[0].revision, events);

  const compactAt = snapshots[Math.floor(snapshots.length / 2)].revision;
  await store.compact(compactAt);
  for (const snapshot of snapshots) {
    if (snapshot.revision >= compactAt) {
      await expectStateAt(store, prefix, snapshot.revision, snapshot.state);
    } else {
      expect((await storeError(store.list(prefix, { revision: snapshot.revision }))).code).toBe('compacted');
    }
  }
  await expectReplay(
    store,
    prefix,
    compactAt + 1,
    events.filter((e) => e.revision > compactAt),
  );
}

async function expectStateAt(store: Store, prefix: string, revision: number, state: State): Promise<void> {
  const expected = [...state.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  const listed = await store.list(prefix, { revision });
  expect({ revision, kvs: listed.kvs.map((kv) => [kv.key, dec(kv.value), kv.createRevision, kv.modRevision]) }).toEqual({
    revision,
    kvs: expected.map(([key, v]) => [key, v.value, v.createRevision, v.modRevision]),
  });
  expect(listed.count).toBe(expected.length);
  const gets = await Promise.all(KEYS.map((name) => store.get(prefix + name, { revision })));
  expect(gets.map(({ kv }) => [revision, dec(kv?.value)])).toEqual(KEYS.map((name) => [revision, state.get(prefix + name)?.value]));
}

async function expectPagedListAt(store: Store, prefix: string, snapshot: { revision: number; state: State }): Promise<void> {
  const keys: string[] = [];
  let startKey: string | undefined;
  for (;;) {
    const page = await store.list(prefix, { revision: snapshot.revision, limit: 3, startKey });
    keys.push(...page.kvs.map((kv) => kv.key));
    if (!page.more) break;
    startKey = `${page.kvs[page.kvs.length - 1].key}\0`;
  }
  expect(keys).toEqual([...snapshot.state.keys()].sort());
}

async function expectReplay(store: Store, prefix: string, startRevision: number, events: ModelEvent[]): Promise<void> {
  const recorder = new WatchRecorder();
  const watch = store.watch(prefix, { startRevision }, recorder.handlers);
  await recorder.untilRevision(events[events.length - 1].revision);
  watch.cancel();
  const seen = recorder.events.map((e) => ({
    type: e.type,
    key: e.kv.key,
    value: dec(e.kv.value),
    revision: e.revision,
    prev: e.prevKv && { value: dec(e.prevKv.value), createRevision: e.prevKv.createRevision, modRevision: e.prevKv.modRevision },
  }));
  expect(seen).toEqual(events.map((e) => ({ ...e, prev: e.prev && { ...e.prev } })));
}
