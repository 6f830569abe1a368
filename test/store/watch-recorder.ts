/**
 * Records what a store watch delivers and lets a test await a condition on it (no sleeps: each
 * delivery re-checks the waiting conditions). The timeout only turns a hang into a clear failure.
 */
import type { StoreError, StoreEvent, WatchHandlers } from '../../src/store';

interface Waiter {
  done(): boolean;
  resolve(): void;
}

export class WatchRecorder {
  readonly events: StoreEvent[] = [];
  error?: StoreError;
  /** How many onEvents calls there were (several events may come in one call). */
  deliveries = 0;
  private waiters: Waiter[] = [];

  readonly handlers: WatchHandlers = {
    onEvents: (events) => {
      if (this.error) throw new Error('onEvents after onError');
      this.deliveries++;
      this.events.push(...events);
      this.check();
    },
    onError: (err) => {
      if (this.error) throw new Error('onError called twice');
      this.error = err;
      this.check();
    },
  };

  /** Resolves once `condition` holds (checked now and after every delivery). */
  until(condition: (recorder: this) => boolean, description: string, timeoutMs = 20_000): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(
          new Error(
            `timed out waiting for ${description}; saw ${this.events.length} events` +
              ` (last revision ${this.lastRevision()})${this.error ? `, error ${this.error.code}: ${this.error.message}` : ''}`,
          ),
        );
      }, timeoutMs);
      const waiter: Waiter = {
        done: () => condition(this),
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.waiters.push(waiter);
      this.check();
    });
  }

  /** Resolves once an event at `revision` or later has arrived; rejects early on a watch error. */
  async untilRevision(revision: number): Promise<void> {
    await this.until((r) => r.error !== undefined || r.lastRevision() >= revision, `revision ${revision}`);
    if (this.error) throw this.error;
  }

  async untilError(): Promise<StoreError> {
    await this.until((r) => r.error !== undefined, 'a watch error');
    return this.error as StoreError;
  }

  lastRevision(): number {
    return this.events.length === 0 ? 0 : this.events[this.events.length - 1].revision;
  }

  private check(): void {
    const ready = this.waiters.filter((w) => w.done());
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const waiter of ready) waiter.resolve();
  }
}
