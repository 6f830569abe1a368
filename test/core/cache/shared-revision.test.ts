import { SharedRevision } from '../../../src/core/cache/shared-revision';

/** A store whose revision requests the test answers one by one; each answers the revision at the moment it was sent. */
function controlledStore() {
  let revision = 1;
  const pending: Array<{ at: number; resolve: (r: number) => void; reject: (e: Error) => void }> = [];
  return {
    write: () => ++revision,
    read: () => new Promise<number>((resolve, reject) => pending.push({ at: revision, resolve, reject })),
    answer: () => {
      const p = pending.shift()!;
      p.resolve(p.at);
    },
    fail: () => pending.shift()!.reject(new Error('store down')),
    get pending() {
      return pending.length;
    },
  };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('shared revision requests', () => {
  it('a burst costs one request per round, and nobody gets a revision read before it arrived', async () => {
    const store = controlledStore();
    const shared = new SharedRevision(store.read);
    const first = shared.get();
    // A write acknowledged after the first request was sent, then more readers arrive.
    store.write();
    const later = Array.from({ length: 15 }, () => shared.get());
    expect(store.pending).toBe(1);
    store.answer();
    expect(await first).toBe(1);
    await turn();
    // The latecomers share one new request, sent after the first ended: it sees the write.
    expect(store.pending).toBe(1);
    store.answer();
    expect(await Promise.all(later)).toEqual(Array(15).fill(2));
    expect(shared.requests).toBe(2);
    // Idle again: the next reader sends its own request at once.
    const alone = shared.get();
    expect(store.pending).toBe(1);
    store.answer();
    expect(await alone).toBe(2);
  });

  it('a failed request fails only its own readers; those waiting for the next one still get an answer', async () => {
    const store = controlledStore();
    const shared = new SharedRevision(store.read);
    const first = shared.get();
    const waiting = shared.get();
    store.fail();
    await expect(first).rejects.toThrow('store down');
    await turn();
    store.answer();
    expect(await waiting).toBe(1);
  });
});
