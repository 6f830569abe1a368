import { MAX_IN_FLIGHT, SharedRevision } from '../../../src/core/cache/shared-revision';
import { bulkWriting } from '../../../src/util/bulk-writes';

/** A store whose revision requests the test answers one by one; each answers the revision at the moment it was sent. */
function controlledStore() {
  let revision = 1;
  const pending: Array<{ at: number; resolve: (r: number) => void; reject: (e: Error) => void }> = [];
  return {
    write: () => ++revision,
    read: () => new Promise<number>((resolve, reject) => pending.push({ at: revision, resolve, reject })),
    answer: (index = 0) => {
      const [p] = pending.splice(index, 1);
      p!.resolve(p!.at);
    },
    fail: () => pending.shift()!.reject(new Error('store down')),
    get pending() {
      return pending.length;
    },
  };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('shared revision requests', () => {
  it('readers arriving in one turn share one request, sent once they have all arrived', async () => {
    const store = controlledStore();
    const shared = new SharedRevision(store.read);
    const first = shared.get();
    // A write acknowledged after the first reader arrived, then more readers in the same turn.
    store.write();
    const later = Array.from({ length: 15 }, () => shared.get());
    expect(store.pending).toBe(0);
    await turn();
    expect(store.pending).toBe(1);
    store.answer();
    expect(await Promise.all([first, ...later])).toEqual(Array(16).fill(2));
    expect(shared.requests).toBe(1);
  });

  it('a reader never joins a request already sent: it gets one of its own, sent while the first is out', async () => {
    const store = controlledStore();
    const shared = new SharedRevision(store.read);
    const first = shared.get();
    await turn();
    expect(store.pending).toBe(1);
    store.write(); // acknowledged after the first request was sent
    const second = shared.get();
    await turn();
    expect(store.pending).toBe(2);
    store.answer(1);
    expect(await second).toBe(2);
    store.answer();
    expect(await first).toBe(1);
    expect(shared.requests).toBe(2);
  });

  it(`at most ${MAX_IN_FLIGHT} requests overlap; the next waits for one to end and is shared meanwhile`, async () => {
    const store = controlledStore();
    const shared = new SharedRevision(store.read);
    const early: Promise<number>[] = [];
    for (let i = 0; i < MAX_IN_FLIGHT; i++) {
      early.push(shared.get());
      await turn();
    }
    expect(store.pending).toBe(MAX_IN_FLIGHT);
    store.write();
    const waiting = [shared.get()];
    await turn();
    store.write();
    waiting.push(shared.get()); // arrives later, still before the request is sent
    await turn();
    expect(store.pending).toBe(MAX_IN_FLIGHT);
    store.answer();
    await turn();
    expect(store.pending).toBe(MAX_IN_FLIGHT);
    for (let i = 0; i < MAX_IN_FLIGHT; i++) store.answer();
    expect(await Promise.all(waiting)).toEqual([3, 3]);
    expect(await Promise.all(early)).toEqual(Array(MAX_IN_FLIGHT).fill(1));
  });

  it('a failed request fails only its own readers; later readers still get an answer', async () => {
    const store = controlledStore();
    const shared = new SharedRevision(store.read);
    const first = shared.get();
    await turn();
    const later = shared.get();
    await turn();
    store.fail();
    await expect(first).rejects.toThrow('store down');
    store.answer();
    expect(await later).toBe(1);
  });

  it("while bulk writes are pending (write turns), a reader sends its request at once instead of at the turn's end", async () => {
    const store = controlledStore();
    const shared = new SharedRevision(store.read);
    bulkWriting(true);
    try {
      const first = shared.get();
      expect(store.pending).toBe(1);
      // Still never joined once sent: the next reader has a request of its own.
      store.write();
      const second = shared.get();
      expect(store.pending).toBe(2);
      store.answer();
      store.answer();
      expect(await Promise.all([first, second])).toEqual([1, 2]);
    } finally {
      bulkWriting(false);
    }
    // Without them, readers share the turn's request again.
    const a = shared.get();
    const b = shared.get();
    expect(store.pending).toBe(0);
    await turn();
    expect(store.pending).toBe(1);
    store.answer();
    expect(await Promise.all([a, b])).toEqual([2, 2]);
  });
});
