/**
 * Write turns (src/gateway/write-turns.ts): writers of large bodies take turns in the order they
 * asked, and once a slice is spent the event loop's other work (an I/O callback, another
 * request's `setImmediate`) runs before the next turn. The slice's time is a counter the test
 * moves, so nothing depends on how fast the machine is.
 */
import { CONTENDED_WRITERS, FLOOD_PAUSE_MS, SHORT_REQUEST_WINDOW_MS, WriteTurns } from '../../src/gateway/write-turns';
import { bulkWritesPending } from '../../src/util/bulk-writes';

/** A writer that takes `batches` turns, recording each in `log` and spending `costMs` of the test's time in it. */
async function writer(turns: WriteTurns, name: string, batches: number, log: string[], clock: { ms: number }, costMs: number): Promise<void> {
  for (let i = 0; i < batches; i++) {
    await turns.take();
    try {
      log.push(`${name}${i}`);
      clock.ms += costMs;
    } finally {
      turns.release();
    }
  }
}

describe('write turns', () => {
  it('passes turns round-robin between writers while the slice lasts', async () => {
    const clock = { ms: 0 };
    const turns = new WriteTurns(1_000, () => clock.ms);
    const log: string[] = [];
    await Promise.all([writer(turns, 'a', 3, log, clock, 0), writer(turns, 'b', 3, log, clock, 0), writer(turns, 'c', 2, log, clock, 0)]);
    expect(log).toEqual(['a0', 'b0', 'c0', 'a1', 'b1', 'c1', 'a2', 'b2']);
    expect(turns.queued).toBe(0);
  });

  it('lets the event loop run other callbacks once a slice is spent', async () => {
    const clock = { ms: 0 };
    const turns = new WriteTurns(2, () => clock.ms);
    const log: string[] = [];
    // Each batch costs 1 ms of the slice's 2: two batches per slice, then the loop's turn.
    let done = false;
    const writers = Promise.all([writer(turns, 'a', 4, log, clock, 1), writer(turns, 'b', 4, log, clock, 1)]).then(() => {
      done = true;
    });
    // Another request's work, queued as I/O would queue it, again and again: it runs between slices, not after the lists.
    const other = new Promise<void>((resolve) => {
      const again = () => {
        log.push('other');
        if (done) resolve();
        else setImmediate(again);
      };
      setImmediate(again);
    });
    await Promise.all([writers, other]);
    const runs = log
      .join(' ')
      .split('other')
      .map((run) => run.trim().split(' ').filter(Boolean).length);
    expect(Math.max(...runs)).toBe(2);
    expect(log.filter((e) => e !== 'other')).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'b2', 'a3', 'b3']);
  });

  it('a lone writer still yields to the event loop between slices', async () => {
    const clock = { ms: 0 };
    const turns = new WriteTurns(1, () => clock.ms);
    const log: string[] = [];
    let immediates = 0;
    const tick = () => {
      immediates++;
      if (log.length < 6) setImmediate(tick);
    };
    setImmediate(tick);
    await writer(turns, 'a', 6, log, clock, 1);
    // Every batch spends the whole slice: the loop turns between any two.
    expect(immediates).toBeGreaterThanOrEqual(5);
  });

  it('a writer that fails mid-batch gives its turn back (the finally), and the others go on', async () => {
    const clock = { ms: 0 };
    const turns = new WriteTurns(1_000, () => clock.ms);
    const log: string[] = [];
    const failing = (async () => {
      await turns.take();
      try {
        throw new Error('client went away');
      } finally {
        turns.release();
      }
    })();
    const others = Promise.all([writer(turns, 'b', 2, log, clock, 0), writer(turns, 'c', 2, log, clock, 0)]);
    await expect(failing).rejects.toThrow('client went away');
    await others;
    expect(log).toEqual(['b0', 'c0', 'b1', 'c1']);
  });

  it('counts as bulk writes pending from the first turn asked until the last writer is done', async () => {
    const clock = { ms: 0 };
    const turns = new WriteTurns(1_000, () => clock.ms);
    const log: string[] = [];
    // The other tests' turns have passed on their last turn by now.
    await new Promise((r) => setImmediate(r));
    expect(bulkWritesPending()).toBe(false);
    const writing = Promise.all([writer(turns, 'a', 2, log, clock, 0), writer(turns, 'b', 1, log, clock, 0)]);
    expect(bulkWritesPending()).toBe(true);
    await writing;
    await new Promise((r) => setImmediate(r));
    expect(bulkWritesPending()).toBe(false);
  });

  it('with lists contending and a short request just in, a spent slice waits for a timer (the process may sleep for I/O); otherwise setImmediate', async () => {
    const clock = { ms: 0 };
    const timers = jest.spyOn(global, 'setTimeout');
    const yields = () => timers.mock.calls.filter(([, ms]) => ms === FLOOD_PAUSE_MS).length;
    const flood = (turns: WriteTurns, batches: number) =>
      Promise.all(Array.from({ length: CONTENDED_WRITERS + 2 }, (_, i) => writer(turns, `w${i}`, batches, [], clock, 2)));
    try {
      // Lists alone, however many: setImmediate.
      const alone = new WriteTurns(1, () => clock.ms);
      await flood(alone, 3);
      expect(yields()).toBe(0);
      // A short request, but too few lists to contend: setImmediate.
      const few = new WriteTurns(1, () => clock.ms);
      few.shortRequestArrived();
      await Promise.all([writer(few, 'a', 3, [], clock, 2), writer(few, 'b', 3, [], clock, 2)]);
      expect(yields()).toBe(0);

      const turns = new WriteTurns(1, () => clock.ms);
      turns.shortRequestArrived();
      // Within the window, with lists contending: spent slices go on after a timer.
      await flood(turns, 2);
      const yielded = yields();
      expect(yielded).toBeGreaterThan(0);
      // Past it: setImmediate again.
      clock.ms += SHORT_REQUEST_WINDOW_MS;
      await flood(turns, 3);
      expect(yields()).toBe(yielded);
    } finally {
      timers.mockRestore();
    }
  });
});
