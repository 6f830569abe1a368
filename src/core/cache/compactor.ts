/**
 * Periodic compaction of the store, as upstream's etcd compactor does it
 * (`--etcd-compaction-interval`, default 5 minutes, here for both backends): at each tick the
 * store is compacted up to the revision seen at the previous tick, so at least one interval of
 * history survives. Compaction is what makes old versions answer 410 (Exact lists, continue
 * tokens, store watches); the watch cache keeps its own window.
 *
 * Several API server processes on one store coordinate through its compacted revision, as
 * upstream does through its compact key: a process compacts only when nobody has compacted
 * since its own previous tick, so the cluster compacts about once per interval. The store's
 * compaction is monotonic, so a rare double compaction is harmless.
 */
import type { Clock } from '../../clock';
import type { Store } from '../../store';

export const DEFAULT_COMPACTION_INTERVAL_MS = 5 * 60_000;

export interface CompactorOptions {
  store: Store;
  clock: Clock;
  /** 0 disables compaction. */
  intervalMs?: number;
  /** Failures are retried at the next tick; this only reports them. */
  onError?: (err: unknown) => void;
}

export class Compactor {
  /** The store's revision at the previous tick: the next compaction target. */
  private candidate?: number;
  /** The store's compacted revision as this process last saw it. */
  private seenCompacted?: number;
  private running?: Promise<void>;
  private readonly stopTimer: () => void;
  /** When this process last compacted the store (ms since the epoch, the injected clock's). */
  lastCompactionMs?: number;

  constructor(private readonly options: CompactorOptions) {
    const interval = options.intervalMs ?? DEFAULT_COMPACTION_INTERVAL_MS;
    this.stopTimer = interval > 0 ? options.clock.setInterval(() => void this.tick(), interval) : () => undefined;
  }

  /** One round (the timer calls it; tests may too). Rounds never overlap. */
  tick(): Promise<void> {
    this.running ??= this.round().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Resolves when no round is in progress. */
  async idle(): Promise<void> {
    await this.running;
  }

  stop(): void {
    this.stopTimer();
  }

  private async round(): Promise<void> {
    const { store } = this.options;
    try {
      const compacted = await store.compactedRevision();
      const current = await store.currentRevision();
      const nobodyElse = this.seenCompacted === compacted;
      if (nobodyElse && this.candidate !== undefined && this.candidate > compacted) {
        await store.compact(this.candidate);
        this.lastCompactionMs = this.options.clock.now();
        this.seenCompacted = await store.compactedRevision();
      } else {
        this.seenCompacted = compacted;
      }
      this.candidate = current;
    } catch (err) {
      this.options.onError?.(err);
    }
  }
}
