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

export function timedStore(store: Store, metrics: ServerMetrics): Store {
  const series = new Map<string, HistogramSeries>();
  const timed = async <T>(operation: string, key: string, call: () => Promise<T>): Promise<T> => {
    const type = typeOf(key);
    const id = `${operation}\u0000${type}`;
    let histogram = series.get(id);
    if (!histogram) {
      histogram = metrics.storageDuration.labels({ operation, type });
      series.set(id, histogram);
    }
    const start = performance.now();
    try {
      return await call();
    } finally {
      histogram.observe((performance.now() - start) / 1000);
    }
  };
  return {
    kind: store.kind,
    get: (key, options) => timed('get', key, () => store.get(key, options)),
    list: (prefix, options) => timed('list', prefix, () => store.list(prefix, options)),
    count: (prefix) => timed('count', prefix, () => store.count(prefix)),
    create: (key, value) => timed('create', key, () => store.create(key, value)),
    update: (key, value, expected) => timed('update', key, () => store.update(key, value, expected)),
    delete: (key, expected) => timed('delete', key, () => store.delete(key, expected)),
    watch: (prefix, options, handlers) => store.watch(prefix, options, handlers),
    currentRevision: () => timed('currentRevision', '', () => store.currentRevision()),
    compactedRevision: () => timed('compactedRevision', '', () => store.compactedRevision()),
    compact: (revision) => timed('compact', '', () => store.compact(revision)),
    sizeBytes: () => store.sizeBytes(),
    close: () => store.close(),
  };
}
