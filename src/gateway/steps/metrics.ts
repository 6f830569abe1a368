/**
 * Step 3: request metrics, as upstream's endpoint instrumentation reports them
 * (`apiserver_request_total`, `apiserver_request_duration_seconds`,
 * `apiserver_longrunning_requests`): every request that got past request info, refused ones
 * included, labelled with upstream's reported verb, dry-run value, group, version, resource,
 * subresource, scope and component. Resource labels are used only for types the server serves,
 * so made-up paths cannot grow the label sets without bound.
 */
import type { RequestLabels, ServerMetrics } from '../../metrics';
import type { CounterSeries, HistogramSeries } from '../../metrics/series';
import { thenWithCode } from './answered';
import type { ResourceIndex } from '../resource-index';
import { type Exchange, type Handler, type RequestInfo, type Step, rejectingThrows } from '../types';

const COMPONENT = 'apiserver';
const APPLY_PATCH = 'application/apply-patch+yaml';

const REPORTED_VERBS: Record<string, string> = {
  get: 'GET',
  list: 'LIST',
  watch: 'WATCH',
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
  deletecollection: 'DELETECOLLECTION',
  proxy: 'CONNECT',
};

/** Upstream's long-running requests: watches (exec, attach, port-forward and proxy are not served). */
export function isLongRunning(info: RequestInfo): boolean {
  return info.isResourceRequest && info.verb === 'watch';
}

/** The labels upstream's MonitorRequest gives this request. */
export function requestLabels(info: RequestInfo, query: URLSearchParams, contentType: string | undefined, index: ResourceIndex): RequestLabels {
  const dryRun = query.getAll('dryRun').includes('All') ? 'All' : '';
  if (!info.isResourceRequest) {
    return { verb: info.verb.toUpperCase(), dry_run: dryRun, group: '', version: '', resource: '', subresource: '', scope: '', component: COMPONENT };
  }
  let verb = REPORTED_VERBS[info.verb] ?? info.verb.toUpperCase();
  if (verb === 'PATCH' && contentType?.split(';')[0]?.trim().toLowerCase() === APPLY_PATCH) verb = 'APPLY';
  const served = info.resource !== '' && index.lookup(info.apiGroup, info.apiVersion, info.resource) !== undefined;
  const scope = info.name !== '' || info.verb === 'create' ? 'resource' : info.namespace !== '' ? 'namespace' : 'cluster';
  return {
    verb,
    dry_run: dryRun,
    group: served ? info.apiGroup : '',
    version: served ? info.apiVersion : '',
    resource: served ? info.resource : '',
    subresource: served ? info.subresource : '',
    scope,
    component: COMPONENT,
  };
}

/** One label set's series, found by a joined key; the metric objects are not asked again. */
interface Series {
  duration: HistogramSeries;
  byCode: Map<number, CounterSeries>;
}

/** Whether two label sets name the same duration series (the component is the same for all). */
function sameSeries(a: RequestLabels, b: RequestLabels): boolean {
  return (
    a.verb === b.verb &&
    a.resource === b.resource &&
    a.group === b.group &&
    a.version === b.version &&
    a.subresource === b.subresource &&
    a.scope === b.scope &&
    a.dry_run === b.dry_run
  );
}

export function metricsStep(metrics: ServerMetrics, index: ResourceIndex): Step {
  const series = new Map<string, Series>();
  // The last request's labels and series: a client's requests come in runs of one kind, and
  // comparing seven short strings costs less than joining them into the map's key.
  let lastLabels: RequestLabels | undefined;
  let lastSeries: Series | undefined;
  const seriesOf = (labels: RequestLabels): Series => {
    if (lastSeries && lastLabels && sameSeries(lastLabels, labels)) return lastSeries;
    const key = `${labels.verb}\0${labels.dry_run}\0${labels.group}\0${labels.version}\0${labels.resource}\0${labels.subresource}\0${labels.scope}`;
    let found = series.get(key);
    if (!found) {
      found = { duration: metrics.requestDuration.labels(labels), byCode: new Map() };
      series.set(key, found);
    }
    lastLabels = labels;
    lastSeries = found;
    return found;
  };
  // It hands back the rest of the pipeline's outcome, with the recording attached (no promise
  // of its own).
  return (next) => rejectingThrows((exchange) => measured(next, exchange));

  function measured(next: Handler, exchange: Exchange): Promise<void> | void {
    const info = exchange.info!;
    const { request } = exchange;
    const labels = requestLabels(info, request.query, request.headers['content-type'], index);
    const start = performance.now();
    const longRunning = isLongRunning(info);
    let longRunningLabels: Omit<RequestLabels, 'dry_run'> | undefined;
    if (longRunning) {
      const { dry_run: _dryRun, ...rest } = labels;
      longRunningLabels = rest;
      metrics.longRunning.inc(longRunningLabels);
    }
    return thenWithCode(next, exchange, (status) => {
      if (longRunningLabels) metrics.longRunning.dec(longRunningLabels);
      const one = seriesOf(labels);
      let counter = one.byCode.get(status);
      if (!counter) {
        counter = metrics.requests.labels({ ...labels, code: String(status) });
        one.byCode.set(status, counter);
      }
      counter.inc();
      one.duration.observe((performance.now() - start) / 1000);
    });
  }
}
