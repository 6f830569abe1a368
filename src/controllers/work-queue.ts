/**
 * A rate-limited work queue in the manner of client-go's workqueue: an item is queued at most
 * once, never processed by two workers at once (added again while running, it runs again
 * afterwards), retried with exponential backoff when processing fails, and added later on the
 * clock with `addAfter` (client-go's delaying queue).
 */
import { type Clock, systemClock } from '../clock';

/** Where a queue reports what it does (upstream's workqueue metrics, by queue name). */
export interface WorkQueueMetrics {
  /**
   * A queue by its name: told of each add, retry, the wait before an item was picked and the
   * time it took; `state` is read when scraped (depth, and when each running item started).
   */
  queue(
    name: string,
    state: () => { depth: number; runningSince: number[] },
  ): {
    added(): void;
    retried(): void;
    waited(seconds: number): void;
    worked(seconds: number): void;
  };
}

export interface WorkQueueOptions {
  /** The queue's name in the metrics (upstream's queue names). */
  name?: string;
  metrics?: WorkQueueMetrics;
  workers?: number;
  /** First retry delay; doubles per failure up to `maxBackoffMs`. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** The time `addAfter` waits on (default the system clock). */
  clock?: Clock;
}

export class WorkQueue<T> {
  private readonly queued = new Map<string, T>();
  private readonly running = new Set<string>();
  /** Added again while running: queue once more when done. */
  private readonly dirty = new Map<string, T>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Items `addAfter` waits to add, by key: when and how to stop waiting. */
  private readonly delayed = new Map<string, { due: number; cancel: () => void }>();
  private started = false;
  private stopped = false;
  private active = 0;
  private idleWaiters: (() => void)[] = [];
  /** What processing waits for (the controller's informers listing); `idle` waits for it too. */
  private ready: Promise<unknown> = Promise.resolve();

  /** When each queued item was added, and each running one picked (performance.now()), for the metrics. */
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private readonly report?: ReturnType<WorkQueueMetrics['queue']>;

  constructor(
    private readonly keyOf: (item: T) => string,
    private readonly handle: (item: T) => Promise<void>,
    private readonly options: WorkQueueOptions = {},
  ) {
    if (options.metrics && options.name) {
      this.report = options.metrics.queue(options.name, () => ({ depth: this.queued.size, runningSince: [...this.startedAt.values()] }));
    }
  }

  add(item: T): void {
    if (this.stopped) return;
    const key = this.keyOf(item);
    if (this.running.has(key)) {
      this.dirty.set(key, item);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.set(key, item);
    if (this.report) {
      this.report.added();
      this.addedAt.set(key, performance.now());
    }
    this.pump();
  }

  /**
   * Add `item` once `ms` of the queue's clock have passed. As client-go's delaying queue, an item
   * already waiting keeps the earlier of its two times. A delayed item does not keep `idle` from
   * resolving: nothing is to be done until its time comes.
   */
  addAfter(item: T, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) {
      this.add(item);
      return;
    }
    const key = this.keyOf(item);
    const clock = this.options.clock ?? systemClock;
    const due = clock.now() + ms;
    const waiting = this.delayed.get(key);
    if (waiting && waiting.due <= due) return;
    waiting?.cancel();
    const cancel = clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(item);
    }, ms);
    this.delayed.set(key, { due, cancel });
  }

  /** Begin processing (items added before are kept). */
  start(): void {
    this.started = true;
    this.pump();
  }

  /**
   * Begin processing once `ready` resolves (the informers the work reads from have listed), then
   * run `onStart`; `onFailure` hears why it never did.
   */
  startWhen(ready: Promise<unknown>, onFailure: (err: Error) => void, onStart?: () => void): void {
    this.ready = ready;
    void ready
      .then(() => {
        this.start();
        onStart?.();
      })
      .catch(onFailure);
  }

  stop(): void {
    this.stopped = true;
    this.queued.clear();
    this.addedAt.clear();
    this.dirty.clear();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const { cancel } of this.delayed.values()) cancel();
    this.delayed.clear();
    this.notifyIdle();
  }

  /** Resolves when what `startWhen` waits for is done and nothing is queued, running or waiting for a retry. */
  async idle(): Promise<void> {
    await this.ready;
    if (this.isIdle()) return;
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.stopped || (this.queued.size === 0 && this.active === 0 && this.timers.size === 0);
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private pump(): void {
    if (!this.started || this.stopped) return;
    const workers = this.options.workers ?? 4;
    while (this.active < workers && this.queued.size > 0) {
      const [key, item] = this.queued.entries().next().value as [string, T];
      this.queued.delete(key);
      this.running.add(key);
      this.active++;
      if (this.report) {
        const now = performance.now();
        this.report.waited((now - (this.addedAt.get(key) ?? now)) / 1000);
        this.addedAt.delete(key);
        this.startedAt.set(key, now);
      }
      void this.run(key, item);
    }
  }

  private async run(key: string, item: T): Promise<void> {
    let failed = false;
    try {
      await this.handle(item);
      this.failures.delete(key);
    } catch {
      failed = true;
    }
    if (this.report) {
      this.report.worked((performance.now() - (this.startedAt.get(key) ?? performance.now())) / 1000);
      this.startedAt.delete(key);
    }
    // In process a whole sync can complete in the microtask queue; give requests and timers a
    // turn between items, so a controller with endless work never starves the server.
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.running.delete(key);
    this.active--;
    const again = this.dirty.get(key);
    this.dirty.delete(key);
    if (failed && !this.stopped) this.retryLater(key, again ?? item);
    else if (again) this.add(again);
    this.pump();
    this.notifyIdle();
  }

  private retryLater(key: string, item: T): void {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    this.report?.retried();
    const delay = Math.min((this.options.baseBackoffMs ?? 50) * 2 ** (n - 1), this.options.maxBackoffMs ?? 5000);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.add(item);
      this.notifyIdle();
    }, delay);
    timer.unref?.();
    this.timers.add(timer);
  }
}
