/**
 * The server's Prometheus metrics (`/metrics`), through prom-client: upstream's names, labels
 * and buckets where upstream has the metric, so existing dashboards work, and `keelson_*` for
 * the store's health, which upstream does not show (docs/OPERATIONS.md, "Metrics").
 *
 * The gateway and the server feed the counters as requests pass; the gauges that describe state
 * (objects stored, watch-cache sizes, the store's revision and size) are read when scraped, from
 * the `StateSource` the server registers.
 */
import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, Gauge, Registry } from 'prom-client';
import { FastCounter, FastHistogram } from './series';

export { FlowcontrolMetrics, type FlowSeries, type FlowSchemaGauges, type FlowcontrolState, type PriorityLevelGauges } from './flowcontrol';

/** Upstream's request-latency buckets (apiserver_request_duration_seconds). */
const REQUEST_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** Upstream's etcd request-latency buckets (etcd_request_duration_seconds). */
const STORAGE_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** Upstream's watch-event size buckets (apiserver_watch_events_sizes): 1 KiB doubling to 128 KiB. */
const WATCH_SIZE_BUCKETS = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072];

/** The labels upstream puts on a request's metrics. */
export interface RequestLabels {
  /** Upstream's reported verb: GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION, CONNECT, or the HTTP method of a non-resource request. */
  verb: string;
  /** `All` for a dry run, else empty. */
  dry_run: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  /** `resource` (one named object), `namespace`, `cluster`, or empty for non-resource requests. */
  scope: string;
  component: string;
}

/** One type's numbers, as the watch cache and the store hold them. */
export interface ResourceState {
  /** `<resource>` or `<resource>.<group>`, as upstream labels storage metrics. */
  resource: string;
  objects: number;
  /** Events the watch cache keeps for resuming watches. */
  cachedEvents: number;
  /** Their estimated memory (`--watch-cache-max-bytes` bounds the sum). */
  cachedEventBytes: number;
}

/** The store's health, read when scraped. */
export interface StoreState {
  revision: number;
  compactedRevision: number;
  /** Bytes on disk: etcd's database size, or the embedded store's file and write-ahead log. */
  sizeBytes?: number;
  /** The watch cache's revision (every change up to it applied). */
  cacheRevision: number;
  /** When this process last compacted the store (ms since the epoch), if it has. */
  lastCompactionMs?: number;
}

export interface StateSource {
  resources(): ResourceState[];
  store(): Promise<StoreState>;
}

export interface ConfigReload {
  status: 'success' | 'failure';
  atMs: number;
}

/** A registry with every metric the server keeps; one per server, so tests and embedded servers stay apart. */
export class ServerMetrics {
  readonly registry = new Registry();
  readonly requests: FastCounter<keyof RequestLabels | 'code'>;
  readonly requestDuration: FastHistogram<keyof RequestLabels>;
  /** Requests in flight by kind, counted by the limits step and read into the gauge at scrape. */
  readonly inflightNow = { readOnly: 0, mutating: 0 };
  readonly longRunning: Gauge<keyof Omit<RequestLabels, 'dry_run'>>;
  readonly terminations: Counter<keyof RequestLabels | 'code'>;
  readonly watchEvents: FastCounter<'group' | 'version' | 'kind'>;
  readonly watchEventSizes: FastHistogram<'group' | 'version' | 'kind'>;
  readonly storageDuration: FastHistogram<'operation' | 'type'>;
  readonly deprecatedApis: Gauge<'group' | 'version' | 'resource' | 'subresource' | 'removed_release'>;
  /** Audit: events handed to the backends, events a backend failed to record (by plugin), policy levels (one per request), requests refused for want of their first event. */
  readonly audit: {
    events: Counter;
    errors: Counter<'plugin'>;
    levels: Counter<'level'>;
    rejected: Counter;
  };
  private readonly reloads: Record<
    'authentication' | 'authorization',
    { last: Gauge<'status' | 'apiserver_id_hash'>; total: Counter<'status' | 'apiserver_id_hash'> }
  >;
  private source?: StateSource;
  private stopDelay?: () => void;

  constructor(private readonly serverIdHash = '') {
    const registers = [this.registry];
    this.processGauges(registers);
    const requestLabels = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;
    // The per-request ones are FastCounter/FastHistogram (series.ts): no label hashing per call.
    this.requests = new FastCounter(
      'apiserver_request_total',
      'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      [...requestLabels, 'code'],
      this.registry,
    );
    this.requestDuration = new FastHistogram(
      'apiserver_request_duration_seconds',
      'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      requestLabels,
      REQUEST_BUCKETS,
      this.registry,
    );
    const inflightNow = this.inflightNow;
    new Gauge({
      name: 'apiserver_current_inflight_requests',
      help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      labelNames: ['request_kind'],
      registers,
      collect() {
        this.set({ request_kind: 'readOnly' }, inflightNow.readOnly);
        this.set({ request_kind: 'mutating' }, inflightNow.mutating);
      },
    });
    this.longRunning = new Gauge({
      name: 'apiserver_longrunning_requests',
      help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
      registers,
    });
    this.terminations = new Counter({
      name: 'apiserver_request_terminations_total',
      help: 'Number of requests which apiserver terminated in self-defense.',
      labelNames: [...requestLabels, 'code'],
      registers,
    });
    this.watchEvents = new FastCounter('apiserver_watch_events_total', 'Number of events sent in watch clients', ['group', 'version', 'kind'], this.registry);
    this.watchEventSizes = new FastHistogram(
      'apiserver_watch_events_sizes',
      'Watch event size distribution in bytes',
      ['group', 'version', 'kind'],
      WATCH_SIZE_BUCKETS,
      this.registry,
    );
    this.storageDuration = new FastHistogram(
      'etcd_request_duration_seconds',
      'Etcd request latency in seconds for each operation and object type.',
      ['operation', 'type'],
      STORAGE_BUCKETS,
      this.registry,
    );
    this.deprecatedApis = new Gauge({
      name: 'apiserver_requested_deprecated_apis',
      help: 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
      labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'],
      registers,
    });
    this.audit = {
      events: new Counter({ name: 'apiserver_audit_event_total', help: 'Counter of audit events generated and sent to the audit backend.', registers }),
      errors: new Counter({
        name: 'apiserver_audit_error_total',
        help: 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.',
        labelNames: ['plugin'],
        registers,
      }),
      levels: new Counter({
        name: 'apiserver_audit_level_total',
        help: 'Counter of policy levels for audit events (1 per request).',
        labelNames: ['level'],
        registers,
      }),
      rejected: new Counter({
        name: 'apiserver_audit_requests_rejected_total',
        help: 'Counter of apiserver requests rejected due to an error in audit logging backend.',
        registers,
      }),
    };
    const reloadMetrics = (what: 'authentication' | 'authorization') => ({
      last: new Gauge({
        name: `apiserver_${what}_config_controller_automatic_reload_last_timestamp_seconds`,
        help: `Timestamp of the last automatic reload of ${what} configuration split by status and apiserver identity.`,
        labelNames: ['status', 'apiserver_id_hash'],
        registers,
      }),
      total: new Counter({
        name: `apiserver_${what}_config_controller_automatic_reloads_total`,
        help: `Total number of automatic reloads of ${what} configuration split by status and apiserver identity.`,
        labelNames: ['status', 'apiserver_id_hash'],
        registers,
      }),
    });
    this.reloads = { authentication: reloadMetrics('authentication'), authorization: reloadMetrics('authorization') };
    this.stateGauges(registers);
  }

  /** Stop sampling the event loop (the server is closing). */
  close(): void {
    this.stopDelay?.();
  }

  /** Where the state gauges read from (the in-process core and its store); without one they stay empty. */
  setStateSource(source: StateSource): void {
    this.source = source;
  }

  /** A configuration file was reloaded (or failed to). */
  configReloaded(what: 'authentication' | 'authorization', reload: ConfigReload): void {
    const labels = { status: reload.status, apiserver_id_hash: this.serverIdHash };
    this.reloads[what].last.set(labels, reload.atMs / 1000);
    this.reloads[what].total.inc(labels);
  }

  /** The Prometheus text exposition of every metric. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /**
   * The process's numbers, read when scraped (prom-client's default collectors watch every GC,
   * which measurably slowed each request): CPU, memory, open files, start time, event-loop delay.
   */
  private processGauges(registers: Registry[]): void {
    const gauge = (name: string, help: string, read: () => number | undefined) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const value = read();
          if (value !== undefined) this.set(value);
        },
      });
    // Totals are counters (their TYPE line says so), set from the process's own count at scrape.
    const total = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    const cpu = () => process.cpuUsage();
    total('process_cpu_user_seconds_total', 'Total user CPU time spent in seconds.', () => cpu().user / 1e6);
    total('process_cpu_system_seconds_total', 'Total system CPU time spent in seconds.', () => cpu().system / 1e6);
    total('process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.', () => {
      const used = cpu();
      return (used.user + used.system) / 1e6;
    });
    gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () => process.memoryUsage.rss());
    gauge('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', () => Math.round(Date.now() / 1000 - process.uptime()));
    gauge('process_open_fds', 'Number of open file descriptors.', () => {
      try {
        return readdirSync('/proc/self/fd').length;
      } catch {
        return undefined;
      }
    });
    gauge('nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', () => process.memoryUsage().heapUsed);
    gauge('nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', () => process.memoryUsage().heapTotal);
    gauge('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', () => process.memoryUsage().external);
    // Sampled by libuv's own timer, not per request.
    const delay = monitorEventLoopDelay({ resolution: 20 });
    delay.enable();
    this.stopDelay = () => delay.disable();
    gauge('nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the event loop delay since the last scrape.', () => {
      const p99 = delay.percentile(99) / 1e9;
      delay.reset();
      return Number.isFinite(p99) ? p99 : 0;
    });
  }

  private stateGauges(registers: Registry[]): void {
    const metrics = this;
    const perResource = (name: string, help: string, pick: (r: ResourceState) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['resource'],
        registers,
        collect() {
          this.reset();
          for (const r of metrics.source?.resources() ?? []) this.set({ resource: r.resource }, pick(r));
        },
      });
    perResource('apiserver_storage_objects', 'Number of stored objects at the time of last check split by kind.', (r) => r.objects);
    perResource('apiserver_watch_cache_capacity', 'Total capacity of watch cache broken by resource type.', (r) => r.cachedEvents);
    // The store's numbers are read once per scrape and shared by the gauges below.
    let pending: Promise<StoreState | undefined> | undefined;
    const storeState = (): Promise<StoreState | undefined> => {
      pending ??= (metrics.source ? metrics.source.store().catch(() => undefined) : Promise.resolve(undefined)).finally(() => {
        setImmediate(() => (pending = undefined));
      });
      return pending;
    };
    const fromStore = (
      name: string,
      help: string,
      pick: (s: StoreState) => number | undefined,
      labelNames: string[] = [],
      labels: Record<string, string> = {},
    ) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          this.reset();
          const state = await storeState();
          const value = state && pick(state);
          if (value !== undefined) this.set(labels, value);
        },
      });
    fromStore('apiserver_storage_size_bytes', 'Size of the storage database file physically allocated in bytes.', (s) => s.sizeBytes, ['storage_cluster_id'], {
      storage_cluster_id: 'keelson',
    });
    fromStore('keelson_storage_revision', "The store's current revision.", (s) => s.revision);
    fromStore('keelson_storage_compacted_revision', "The store's compacted revision: older versions answer 410.", (s) => s.compactedRevision);
    fromStore('keelson_storage_last_compaction_timestamp_seconds', 'When this server last compacted the store.', (s) =>
      s.lastCompactionMs === undefined ? undefined : s.lastCompactionMs / 1000,
    );
    fromStore('keelson_watch_cache_revision', 'The revision up to which the watch cache has applied every change.', (s) => s.cacheRevision);
    fromStore('keelson_watch_cache_lag_revisions', "How far the watch cache is behind the store's revision.", (s) => Math.max(0, s.revision - s.cacheRevision));
  }
}
