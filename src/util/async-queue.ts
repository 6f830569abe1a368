/**
 * The consumer's side of a queue taken without a promise per item: `poll` what is buffered,
 * then `attach` to be handed each item within the producer's `push`.
 */
export interface DirectConsumer<T> {
  readonly isClosed: boolean;
  /** The next buffered item, or undefined when none is. */
  poll(): T | undefined;
  /**
   * Take items within `push` from now on: `take` is called with each and returns whether it
   * takes the next one too (false: not for now; items buffer again until the consumer polls
   * and attaches again). `ended` is called once if the queue closes while attached. A throw of
   * `take` closes the queue with that error. Returns false, attaching nothing, while items are
   * buffered (poll them first) or once the queue is closed.
   */
  attach(take: (item: T) => boolean, ended: () => void): boolean;
  /** Stop taking items within `push`. */
  detach(): void;
  /** The error the queue was closed with, once (then undefined). */
  takeFailure(): unknown;
}

/**
 * A push-driven async iterable with a bounded buffer: producers `push`, one consumer iterates,
 * or takes the items directly (`DirectConsumer`: within `push`, with no promise or microtask
 * per item). When the buffer overflows the queue ends (a slow consumer must never stall its
 * producer: upstream closes a watcher that cannot keep up, and the client relists). `close()`
 * ends iteration from either side; items already buffered are still delivered.
 */
export class AsyncQueue<T> implements AsyncIterable<T>, DirectConsumer<T> {
  private buffer: T[] = [];
  private head = 0;
  /** Preloaded items still at the front of the buffer: they do not count against the limit. */
  private preloaded = 0;
  private waiting: ((r: IteratorResult<T>) => void) | undefined;
  private take: ((item: T) => boolean) | undefined;
  private ended: (() => void) | undefined;
  private closed = false;
  private failure: unknown;
  /** Told once the buffer holds at most `items` (or the queue closes): a producer that paces itself. */
  private lowWaiter: { items: number; resolve(): void } | undefined;

  constructor(
    private readonly limit = Number.POSITIVE_INFINITY,
    private readonly onClose?: () => void,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  /** Items waiting for the consumer. */
  get size(): number {
    return this.buffer.length - this.head;
  }

  /**
   * Resolves once at most `items` wait for the consumer, or the queue is closed: how a producer
   * with more to give than the limit allows (a watch replaying history) goes at the consumer's pace.
   */
  whenBelow(items: number): Promise<void> {
    if (this.closed || this.size <= items) return Promise.resolve();
    this.lowWaiter?.resolve();
    return new Promise((resolve) => (this.lowWaiter = { items, resolve }));
  }

  private notifyLow(): void {
    const waiter = this.lowWaiter;
    if (waiter && (this.closed || this.size <= waiter.items)) {
      this.lowWaiter = undefined;
      waiter.resolve();
    }
  }

  /** Queue items ahead of everything else without counting them against the limit (a watch's initial state). */
  preload(items: readonly T[]): void {
    for (const item of items) {
      if (!this.push(item, true)) return;
    }
  }

  /** Returns false when the item was dropped because the queue is closed or overflowed. */
  push(item: T, preload = false): boolean {
    if (this.closed) return false;
    const take = this.take;
    if (take) {
      // Attached only while nothing is buffered, so the item is the next in order.
      let more: boolean;
      try {
        more = take(item);
      } catch (err) {
        // The consumer's failure ends its own queue, not the producer's pass over its consumers.
        this.take = undefined;
        this.close(err);
        return true;
      }
      if (!more) this.detach();
      return true;
    }
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve({ value: item, done: false });
      return true;
    }
    if (!preload && this.size - this.preloaded >= this.limit) {
      this.close();
      return false;
    }
    this.buffer.push(item);
    if (preload) this.preloaded++;
    return true;
  }

  /** End the stream; buffered items are still delivered. An error is thrown to the consumer after them. */
  close(error?: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.failure = error;
    this.onClose?.();
    this.notifyLow();
    const ended = this.ended;
    if (ended) {
      this.detach();
      ended();
    }
    if (this.waiting && this.size === 0) {
      const resolve = this.waiting;
      this.waiting = undefined;
      if (error !== undefined) {
        this.failure = undefined;
        // Reject through a fresh promise chain: the waiting consumer gets the error.
        resolve(Promise.reject(error) as unknown as IteratorResult<T>);
      } else {
        resolve({ value: undefined as never, done: true });
      }
    }
  }

  private shift(): T {
    const item = this.buffer[this.head]!;
    this.buffer[this.head] = undefined as T;
    this.head++;
    if (this.preloaded > 0) this.preloaded--;
    if (this.head === this.buffer.length) {
      this.buffer = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.buffer.length) {
      this.buffer = this.buffer.slice(this.head);
      this.head = 0;
    }
    if (this.lowWaiter) this.notifyLow();
    return item;
  }

  poll(): T | undefined {
    return this.size > 0 ? this.shift() : undefined;
  }

  attach(take: (item: T) => boolean, ended: () => void): boolean {
    if (this.closed || this.size > 0 || this.waiting) return false;
    this.take = take;
    this.ended = ended;
    return true;
  }

  detach(): void {
    this.take = undefined;
    this.ended = undefined;
  }

  takeFailure(): unknown {
    const err = this.failure;
    this.failure = undefined;
    return err;
  }

  /** This queue as a watch stream's `direct` (errorWatch hands the queue out as the stream). */
  get direct(): DirectConsumer<T> {
    return this;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: (): Promise<IteratorResult<T>> => {
        if (this.size > 0) return Promise.resolve({ value: this.shift(), done: false });
        if (this.closed) {
          if (this.failure !== undefined) {
            const err = this.failure;
            this.failure = undefined;
            return Promise.reject(err);
          }
          return Promise.resolve({ value: undefined as never, done: true });
        }
        return new Promise((resolve) => {
          this.waiting = resolve;
        });
      },
      return: (): Promise<IteratorResult<T>> => {
        this.close();
        this.buffer = [];
        this.head = 0;
        this.preloaded = 0;
        return Promise.resolve({ value: undefined as never, done: true });
      },
    };
  }
}
