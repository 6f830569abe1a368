import { defaultCodecs } from '../../../src/gateway/codecs';
import { limitsStep } from '../../../src/gateway/steps/limits';
import { metricsStep, requestLabels } from '../../../src/gateway/steps/metrics';
import { requestInfoStep } from '../../../src/gateway/steps/request-info';
import { ResourceIndex } from '../../../src/gateway/resource-index';
import { builtinResources } from '../../../src/core/resources';
import { createNaming } from '../../../src/naming';
import { ServerMetrics } from '../../../src/metrics';
import { compose } from '../../../src/gateway/pipeline';
import type { Exchange, Handler } from '../../../src/gateway/types';
import { fakeExchange } from '../support/http';
import { ManualClock } from '../../../src/clock';

const index = new ResourceIndex(builtinResources(createNaming('kubernetes')));
const alice = { username: 'alice', groups: ['system:authenticated'] };
const admin = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

/** Request info, then a stand-in for authentication (the user), then the step under test. */
function pipeline(step: ReturnType<typeof limitsStep>, handler: Handler, user = alice): (e: Exchange) => Promise<void> {
  const run = compose([requestInfoStep, (next) => (e) => next(Object.assign(e, { user })), step], handler);
  return async (e) => run(e);
}

/** Lets promises run a few turns, so the pipeline reaches the handler; not a sleep. */
async function flush(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

describe('limits step', () => {
  const options = { maxReadOnly: 2, maxMutating: 1, requestTimeoutMs: 0, codecs: defaultCodecs, index };

  it('answers 429 with Retry-After: 1 and upstream’s plain text past the read-only limit, and serves again once one finishes', async () => {
    const hold = gate();
    const metrics = new ServerMetrics();
    const run = pipeline(limitsStep({ ...options, metrics }), async (e) => {
      await hold.wait;
      e.response.writeHead(200);
      e.response.end('ok');
    });
    const a = fakeExchange({ url: '/api/v1/namespaces/default/pods' });
    const b = fakeExchange({ url: '/api/v1/namespaces/default/pods/x' });
    const c = fakeExchange({ url: '/api/v1/configmaps' });
    const pending = [run(a.exchange), run(b.exchange)];
    await run(c.exchange);
    expect(c.response.status).toBe(429);
    expect(c.response.header('retry-after')).toBe('1');
    expect(c.response.text).toBe('Too many requests, please try again later.\n');
    expect(c.response.header('content-type')).toBe('text/plain; charset=utf-8');
    expect((await metrics.registry.getSingleMetric('apiserver_current_inflight_requests')!.get()).values).toContainEqual(
      expect.objectContaining({ labels: { request_kind: 'readOnly' }, value: 2 }),
    );
    const terminated = (await metrics.terminations.get()).values;
    expect(terminated).toEqual([
      expect.objectContaining({ labels: expect.objectContaining({ verb: 'LIST', resource: 'configmaps', scope: 'cluster', code: '429' }), value: 1 }),
    ]);

    // A mutating request counts against its own limit; a watch and system:masters are never refused.
    const post = fakeExchange({ method: 'POST', url: '/api/v1/namespaces/default/configmaps' });
    const postRun = run(post.exchange);
    const watch = fakeExchange({ url: '/api/v1/pods?watch=true' });
    const watchRun = run(watch.exchange);
    const masters = fakeExchange({ url: '/api/v1/pods' });
    const mastersRun = pipeline(limitsStep(options), async (e) => void e.response.end('ok'), admin)(masters.exchange);
    await mastersRun;
    expect(masters.response.status).not.toBe(429);
    const post2 = fakeExchange({ method: 'POST', url: '/api/v1/namespaces/default/configmaps' });
    await run(post2.exchange);
    expect(post2.response.status).toBe(429);

    hold.open();
    await Promise.all([...pending, postRun, watchRun]);
    expect(a.response.status).toBe(200);
    expect(watch.response.status).toBe(200);
    const again = fakeExchange({ url: '/api/v1/configmaps' });
    await run(again.exchange);
    expect(again.response.status).toBe(200);
  });

  it('answers 504 with upstream’s Timeout Status when a request outlives the timeout, dropping the handler’s late writes', async () => {
    const clock = new ManualClock();
    const hold = gate();
    let finished = false;
    const run = pipeline(limitsStep({ ...options, requestTimeoutMs: 50, clock }), async (e) => {
      await hold.wait;
      e.response.writeHead(200);
      e.response.end('late');
      finished = true;
    });
    const slow = fakeExchange({ url: '/api/v1/namespaces/default/pods/x' });
    // The 504 goes out when the timer fires; the step itself waits for the handler.
    const slowRun = run(slow.exchange);
    await flush();
    clock.advance(49);
    expect(slow.response.status).toBe(0);
    clock.advance(1);
    expect(slow.response.status).toBe(504);
    expect(slow.response.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Timeout: request did not complete within requested timeout - context deadline exceeded',
      reason: 'Timeout',
      code: 504,
    });
    hold.open();
    await slowRun;
    expect(finished).toBe(true);
    expect(slow.response.text).not.toContain('late');

    // A shorter ?timeout= wins; a watch is never cut short.
    const quick = gate();
    const short = fakeExchange({ url: '/api/v1/pods?timeout=20ms' });
    const longTimeout = pipeline(limitsStep({ ...options, requestTimeoutMs: 60_000, clock }), async () => quick.wait);
    const shortRun = longTimeout(short.exchange);
    await flush();
    clock.advance(20);
    expect(short.response.status).toBe(504);
    const watch = fakeExchange({ url: '/api/v1/pods?watch=true' });
    const events = gate();
    const watching = pipeline(limitsStep({ ...options, requestTimeoutMs: 10, clock }), async (e) => {
      await events.wait;
      e.response.end('events');
    })(watch.exchange);
    await flush();
    clock.advance(60_000);
    events.open();
    await watching;
    expect(watch.response.text).toBe('events');
    quick.open();
    await shortRun;
  });
});

describe('metrics step', () => {
  it('labels requests as upstream does: reported verb, scope, dry run, and only served types', () => {
    const info = (url: string, method = 'GET') => {
      const { exchange } = fakeExchange({ url, method });
      let seen: Exchange | undefined;
      void requestInfoStep(async (e) => void (seen = e))(exchange);
      return seen!.info!;
    };
    const q = (url: string) => new URLSearchParams(url.split('?')[1] ?? '');
    const labels = (url: string, method = 'GET', contentType?: string) => requestLabels(info(url, method), q(url), contentType, index);
    expect(labels('/api/v1/namespaces/ns/pods')).toMatchObject({ verb: 'LIST', group: '', version: 'v1', resource: 'pods', scope: 'namespace' });
    expect(labels('/apis/apps/v1/replicasets?watch=1')).toMatchObject({ verb: 'WATCH', group: 'apps', resource: 'replicasets', scope: 'cluster' });
    expect(labels('/api/v1/namespaces/ns/pods?dryRun=All', 'POST')).toMatchObject({ verb: 'POST', dry_run: 'All', scope: 'resource' });
    expect(labels('/api/v1/namespaces/ns/pods/p/status', 'PATCH', 'application/apply-patch+yaml')).toMatchObject({
      verb: 'APPLY',
      subresource: 'status',
      scope: 'resource',
    });
    expect(labels('/apis/made.up/v1/things')).toMatchObject({ verb: 'LIST', group: '', version: '', resource: '', scope: 'cluster' });
    expect(labels('/healthz')).toEqual({ verb: 'GET', dry_run: '', group: '', version: '', resource: '', subresource: '', scope: '', component: 'apiserver' });
  });

  it('counts every request with its code, refused and failed ones included, and tracks open watches', async () => {
    const metrics = new ServerMetrics();
    const hold = gate();
    const run = compose([requestInfoStep, metricsStep(metrics, index)], async (e) => {
      if (e.info!.isResourceRequest && e.info!.verb === 'watch') await hold.wait;
      if (e.info!.path.endsWith('/missing')) throw Object.assign(new Error('x'));
      e.response.writeHead(201);
      e.response.end('{}');
    });
    await run(fakeExchange({ method: 'POST', url: '/api/v1/namespaces/default/configmaps' }).exchange);
    await expect(run(fakeExchange({ url: '/api/v1/namespaces/default/configmaps/missing' }).exchange)).rejects.toThrow();
    const watching = run(fakeExchange({ url: '/api/v1/pods?watch=true' }).exchange);
    await new Promise((r) => setImmediate(r));
    const open = (await metrics.longRunning.get()).values;
    expect(open).toEqual([expect.objectContaining({ labels: expect.objectContaining({ verb: 'WATCH', resource: 'pods' }), value: 1 })]);
    hold.open();
    await watching;
    expect((await metrics.longRunning.get()).values[0]!.value).toBe(0);
    const counted = (await metrics.requests.get()).values.map((v) => [v.labels.verb, v.labels.resource, v.labels.code, v.value]);
    expect(counted).toEqual(
      expect.arrayContaining([
        ['POST', 'configmaps', '201', 1],
        ['GET', 'configmaps', '500', 1],
        ['WATCH', 'pods', '201', 1],
      ]),
    );
    const durations = (await metrics.requestDuration.get()).values.filter((v) => v.metricName === 'apiserver_request_duration_seconds_count');
    expect(durations).toHaveLength(3);
  });
});
