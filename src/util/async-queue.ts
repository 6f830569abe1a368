/**
 * A push-driven async iterable with a bounded buffer: producers `push`, one consumer iterates.
 * When the buffer overflows the queue ends with `onOverflow` (a slow watcher must never stall
 * its producer), and `close()` ends iteration from either side.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private buffer: T[] = [];
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

  /** Returns false when the item was dropped because the queue is closed or overflowed. */
  push(item: T): boolean {
    if (this.closed) return false;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve({ value: item, done: false });
      return true;
    }
    if (this.buffer.length >= this.limit) {
      this.close();
      return false;
    }
    this.buffer.push(item);
    return true;
  }

  /** End the stream; buffered items are still delivered. An error is thrown to the consumer after them. */
  close(error?: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.failure = error;
    this.onClose?.();
    if (this.waiting && this.buffer.length === 0) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve({ value: undefined as never, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: (): Promise<IteratorResult<T>> => {
        if (this.buffer.length > 0) return Promise.resolve({ value: this.buffer.shift()!, done: false });
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
        return Promise.resolve({ value: undefined as never, done: true });
      },
    };
  }
}
