/**
 * Injectable time. Everything that reads the time (timestamps, TTLs, expiry, bookmarks,
 * compaction) takes a Clock, so tests move time forward instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Run `fn` after `ms` of this clock's time; returns a cancel function. */
  setTimeout(fn: () => void, ms: number): () => void;
  /** Run `fn` every `ms` of this clock's time; returns a cancel function. */
  setInterval(fn: () => void, ms: number): () => void;
}

/** A wait on a clock that its owner can end early (a loop that is stopping does not wait for the clock). */
export interface Pause {
  /** Resolves when the time is up or `wake` is called. */
  readonly done: Promise<void>;
  wake(): void;
}

export function pause(clock: Clock, ms: number): Pause {
  let wake = () => {};
  const done = new Promise<void>((resolve) => {
    const cancel = clock.setTimeout(resolve, ms);
    wake = () => {
      cancel();
      resolve();
    };
  });
  return { done, wake: () => wake() };
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return () => clearTimeout(t);
  },
  setInterval(fn, ms) {
    const t = setInterval(fn, ms);
    t.unref?.();
    return () => clearInterval(t);
  },
};

interface Timer {
  due: number;
  fn: () => void;
  every?: number;
  cancelled: boolean;
}

/** A clock that only moves when told to; timers fire in due order during `advance`. */
export class ManualClock implements Clock {
  private current: number;
  private timers: Timer[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): () => void {
    const timer: Timer = { due: this.current + ms, fn, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  setInterval(fn: () => void, ms: number): () => void {
    const timer: Timer = { due: this.current + ms, fn, every: Math.max(1, ms), cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Timers set and not yet fired or cancelled (a test waits for real I/O to set one). */
  pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  /** Move time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cancelled);
      const next = this.timers.filter((t) => t.due <= target).sort((a, b) => a.due - b.due)[0];
      if (!next) break;
      this.current = next.due;
      if (next.every !== undefined) next.due += next.every;
      else next.cancelled = true;
      next.fn();
    }
    this.current = target;
  }
}

/** RFC 3339 with second precision, as upstream serialises metav1.Time. */
export function rfc3339(ms: number): string {
  const second = Math.floor(ms / 1000);
  // Writes come many to a second: the text of the last second asked for is kept.
  if (second !== lastSecond) {
    lastText = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
    lastSecond = second;
  }
  return lastText;
}

/** rfc3339's last answer. Shared by every server in the process: a second's text is the same for every one. */
let lastSecond = Number.NaN;
let lastText = '';

/** RFC 3339 with microsecond precision, as upstream serialises metav1.MicroTime. */
export function rfc3339Micro(ms: number): string {
  const iso = new Date(ms).toISOString(); // ...SS.mmmZ
  return iso.replace(/\.(\d{3})Z$/, '.$1000Z');
}
