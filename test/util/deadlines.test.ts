/**
 * Many deadlines on one clock timer (src/clock/deadlines.ts): each fires at its time and not
 * before, cancelled ones never, and coming and going in numbers costs no timer each.
 */
import { type Clock, ManualClock } from '../../src/clock';
import { Deadlines } from '../../src/clock/deadlines';

/** A manual clock that counts the timers set on it. */
function countingClock(): { clock: Clock & { advance(ms: number): void }; timersSet: () => number } {
  const manual = new ManualClock();
  let set = 0;
  const clock = {
    now: () => manual.now(),
    setTimeout: (fn: () => void, ms: number) => {
      set++;
      return manual.setTimeout(fn, ms);
    },
    setInterval: (fn: () => void, ms: number) => manual.setInterval(fn, ms),
    advance: (ms: number) => manual.advance(ms),
  };
  return { clock, timersSet: () => set };
}

test('a deadline expires at its time, not a millisecond before', () => {
  const { clock } = countingClock();
  const deadlines = new Deadlines<() => void>(clock, (f) => f());
  const expired: string[] = [];
  deadlines.add(1000, () => expired.push('a'));
  clock.advance(999);
  expect(expired).toEqual([]);
  clock.advance(1);
  expect(expired).toEqual(['a']);
  expect(deadlines.size).toBe(0);
});

test('a cancelled deadline never expires; the others still do', () => {
  const { clock } = countingClock();
  const deadlines = new Deadlines<() => void>(clock, (f) => f());
  const expired: string[] = [];
  const a = deadlines.add(1000, () => expired.push('a'));
  clock.advance(10);
  deadlines.add(1000, () => expired.push('b'));
  deadlines.cancel(a);
  deadlines.cancel(a);
  clock.advance(1000);
  expect(expired).toEqual(['b']);
});

test('deadlines coming and going by the thousand set one timer, not one each', () => {
  const { clock, timersSet } = countingClock();
  const deadlines = new Deadlines<() => void>(clock, (f) => f());
  for (let i = 0; i < 1000; i++) {
    const entry = deadlines.add(60_000, () => {
      throw new Error('cancelled, must not expire');
    });
    clock.advance(1);
    deadlines.cancel(entry);
  }
  expect(timersSet()).toBe(1);
  // The timer fires with nothing due and nothing left: no timer is set again.
  clock.advance(60_000);
  expect(timersSet()).toBe(1);
  expect(deadlines.size).toBe(0);
});

test('a timer that fires early for what is left is set again for the earliest left', () => {
  const { clock, timersSet } = countingClock();
  const deadlines = new Deadlines<() => void>(clock, (f) => f());
  const expired: number[] = [];
  const first = deadlines.add(1000, () => expired.push(1));
  clock.advance(500);
  deadlines.add(1000, () => expired.push(2));
  deadlines.cancel(first);
  clock.advance(500);
  expect(expired).toEqual([]);
  expect(timersSet()).toBe(2);
  clock.advance(499);
  expect(expired).toEqual([]);
  clock.advance(1);
  expect(expired).toEqual([2]);
});

test('a shorter deadline added later moves the timer earlier', () => {
  const { clock } = countingClock();
  const deadlines = new Deadlines<() => void>(clock, (f) => f());
  const expired: string[] = [];
  deadlines.add(60_000, () => expired.push('long'));
  deadlines.add(1_000, () => expired.push('short'));
  clock.advance(1_000);
  expect(expired).toEqual(['short']);
  clock.advance(59_000);
  expect(expired).toEqual(['short', 'long']);
});

test('an expiry may add a deadline of its own', () => {
  const { clock } = countingClock();
  const deadlines = new Deadlines<() => void>(clock, (f) => f());
  const expired: string[] = [];
  deadlines.add(100, () => {
    expired.push('first');
    deadlines.add(100, () => expired.push('second'));
  });
  clock.advance(100);
  expect(expired).toEqual(['first']);
  clock.advance(100);
  expect(expired).toEqual(['first', 'second']);
});
