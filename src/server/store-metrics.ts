/**
 * The store, timed: every call's latency goes to `etcd_request_duration_seconds` (upstream's
 * name, kept for either backend so dashboards work), labelled with the operation and the type
 * its key belongs to (the resource segment of `/registry/<resource>/…`).
 */
import type { ServerMetrics } from '../metrics';
import type { HistogramSeries } from '../metrics/series';
import type { Store } from '../store';

function typeOf(key: string): string {
  const rest = key.startsWith('/registry/') ? key.slice('/registry/'.length) : key;
  const slash = rest.indexOf('/');
  return slash < 0 ? rest : rest.slice(0, slash);
}

/** One operation's histograms by key type; the last type's is kept at hand (requests come in runs of one type). */
class OperationSeries {
  private readonly byType = new Map<string, HistogramSeries>();
  /** `/registry/<type>/` of the last key, and its histogram. */
  private lastPrefix = '\u0000';
  private last: HistogramSeries | undefined;

  constructor(
    private readonly operation: string,
    private readonly metrics: ServerMetrics,
  ) {}

  of(key: string): HistogramSeries {
    if (this.last && key.startsWith(this.lastPrefix)) return this.last;
    const type = typeOf(key);
    let histogram = this.byType.get(type);
    if (!histogram) {
      histogram = this.metrics.storageDuration.labels({ operation: this.operation, type });
      this.byType.set(type, histogram);
    }
    // Only keys of the `/registry/<type>/<...>` form are matched by prefix.
    const prefix = `/registry/${type}/`;
    if (key.startsWith(prefix)) {
      this.lastPrefix = prefix;
      this.last = histogram;
    }
    return histogram;
  }
}

export function timedStore(store: Store, metrics: ServerMetrics): Store {
  // Not async, and one settle handler: a store call costs the request one promise here. The
  // start is read before the call (arguments are evaluated in order), so its encoding counts.
  const timer = (operation: string) => {
    const series = new OperationSeries(operation, metrics);
    return <T>(key: string, start: number, call: Promise<T>): Promise<T> => {
      const histogram = series.of(key);
      const observe = () => histogram.observe((performance.now() - start) / 1000);
      return call.then(
        (value) => {
          observe();
          return value;
        },
        (err: unknown) => {
          observe();
          throw err;
        },
      );
    };
  };
  const timed = {
    get: timer('get'),
    list: timer('list'),
    count: timer('count'),
    create: timer('create'),
    update: timer('update'),
    delete: timer('delete'),
    currentRevision: timer('currentRevision'),
    compactedRevision: timer('compactedRevision'),
    compact: timer('compact'),
  };
  return {
    kind: store.kind,
    get: (key, options) => timed.get(key, performance.now(), store.get(key, options)),
    list: (prefix, options) => timed.list(prefix, performance.now(), store.list(prefix, options)),
    count: (prefix) => timed.count(prefix, performance.now(), store.count(prefix)),
    create: (key, value) => timed.create(key, performance.now(), store.create(key, value)),
    update: (key, value, expected) => timed.update(key, performance.now(), store.update(key, value, expected)),
    delete: (key, expected) => timed.delete(key, performance.now(), store.delete(key, expected)),
    watch: (prefix, options, handlers) => store.watch(prefix, options, handlers),
    currentRevision: () => timed.currentRevision('', performance.now(), store.currentRevision()),
    compactedRevision: () => timed.compactedRevision('', performance.now(), store.compactedRevision()),
    compact: (revision) => timed.compact('', performance.now(), store.compact(revision)),
    sizeBytes: () => store.sizeBytes(),
    close: () => store.close(),
  };
}
