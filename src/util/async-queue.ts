/**
 * A push-driven async iterable with a bounded buffer: producers `push`, one consumer iterates.
 * When the buffer overflows the queue ends (a slow consumer must never stall its producer:
 * upstream closes a watcher that cannot keep up, and the client relists). `close()` ends
 * iteration from either side; items already buffered are still delivered.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private buffer: T[] = [];
  private head = 0;
  /** Preloaded items still at the front of the buffer: they do not count against the limit. */
  private preloaded = 0;
  private waiting: ((r: IteratorResult<T>) => void) | undefined;
  private closed = false;
  private failure: unknown;

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

  /** Queue items ahead of everything else without counting them against the limit (a watch's initial state). */
  preload(items: readonly T[]): void {
    for (const item of items) {
      if (!this.push(item, true)) return;
    }
  }

  /** Returns false when the item was dropped because the queue is closed or overflowed. */
  push(item: T, preload = false): boolean {
    if (this.closed) return false;
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
    return item;
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
