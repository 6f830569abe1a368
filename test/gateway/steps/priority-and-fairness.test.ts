import { ManualClock } from '../../../src/clock';
import type { FlowSchema, PriorityLevelConfiguration } from '../../../src/core';
import { builtinResources } from '../../../src/core/resources';
import { FlowControl } from '../../../src/flowcontrol';
import { compose } from '../../../src/gateway/pipeline';
import { ResourceIndex } from '../../../src/gateway/resource-index';
import { priorityAndFairnessStep, serveFlowControlDump } from '../../../src/gateway/steps/priority-and-fairness';
import { requestInfoStep } from '../../../src/gateway/steps/request-info';
import type { Exchange, Handler } from '../../../src/gateway/types';
import { FlowcontrolMetrics, ServerMetrics } from '../../../src/metrics';
import { createNaming } from '../../../src/naming';
import { fakeExchange } from '../support/http';

const index = new ResourceIndex(builtinResources(createNaming('kubernetes')));
const alice = { username: 'alice', groups: ['system:authenticated'] };
const carol = { username: 'carol', groups: ['system:authenticated'] };

/** One level, one queue per flow (alice's and carol's hands differ: 42 and 26 of 64), 1 request per queue; everyone ByUser. */
const level: PriorityLevelConfiguration = {
  metadata: { name: 'tenants', uid: 'pl-uid' },
  spec: {
    type: 'Limited',
    limited: {
      nominalConcurrencyShares: 100,
      lendablePercent: 0,
      borrowingLimitPercent: 0,
      limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 1, queueLengthLimit: 1 } },
    },
  },
};
const schema: FlowSchema = {
  metadata: { name: 'tenants', uid: 'fs-uid' },
  spec: {
    matchingPrecedence: 500,
    priorityLevelConfiguration: { name: 'tenants' },
    distinguisherMethod: { type: 'ByUser' },
    rules: [
      {
        subjects: [{ kind: 'Group', group: { name: 'system:authenticated' } }],
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
        nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      },
    ],
  },
};

function setup() {
  const clock = new ManualClock();
  const metrics = new ServerMetrics();
  // The level has 2 seats of 2 (catch-all's 5 shares round up to 1 more, exempt 0).
  const flowControl = new FlowControl({
    serverConcurrencyLimit: 2,
    requestTimeoutMs: 60_000,
    clock,
    naming: createNaming('kubernetes'),
    metrics: new FlowcontrolMetrics(metrics.registry),
  });
  flowControl.apply([level], [schema]);
  return { clock, naming: createNaming('kubernetes'), metrics, flowControl };
}

function pipeline(flowControl: FlowControl, metrics: ServerMetrics, handler: Handler): (e: Exchange, user?: typeof alice) => Promise<void> | void {
  return (e, user = alice) =>
    compose(
      [requestInfoStep, (next) => (x) => next(Object.assign(x, { user })), priorityAndFairnessStep({ flowControl, requestTimeoutMs: 60_000, index, metrics })],
      handler,
    )(e);
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

describe('priority and fairness step', () => {
  it('answers a request that gets its seat at once within the call, with the classification headers', () => {
    const { flowControl, metrics } = setup();
    const run = pipeline(flowControl, metrics, (e) => {
      e.response.writeHead(200);
      e.response.end('ok');
    });
    const { exchange, response } = fakeExchange({ url: '/api/v1/namespaces/default/pods/p' });
    expect(run(exchange)).toBeUndefined();
    expect(response.status).toBe(200);
    expect(response.header('x-kubernetes-pf-flowschema-uid')).toBe('fs-uid');
    expect(response.header('x-kubernetes-pf-prioritylevel-uid')).toBe('pl-uid');
    expect(flowControl.priorityLevels().find((l) => l.name === 'tenants')!.queues.totRequestsExecuting).toBe(0);
    flowControl.close();
  });

  it('queues a flooding user’s excess, refuses it 429 with Retry-After and plain text once its queue is full, and serves another user in turn', async () => {
    const { flowControl, metrics } = setup();
    const hold = gate();
    const served: string[] = [];
    const run = pipeline(flowControl, metrics, async (e) => {
      served.push(e.user!.username);
      await hold.wait;
      e.response.writeHead(200);
      e.response.end('ok');
    });
    const tenants = flowControl.priorityLevels().find((l) => l.name === 'tenants')!;
    const limit = tenants.queues.concurrencyLimit;
    const flood = Array.from({ length: limit + 2 }, (_, i) => fakeExchange({ url: `/api/v1/namespaces/default/pods/p${i}` }));
    const pending = flood.map((f) => run(f.exchange));
    // `limit` run, one waits in alice's one queue, the last finds it full.
    const refused = flood[limit + 1]!.response;
    expect(refused.status).toBe(429);
    expect(refused.header('retry-after')).toBe('1');
    expect(refused.text).toBe('Too many requests, please try again later.\n');
    expect(refused.header('x-kubernetes-pf-flowschema-uid')).toBe('fs-uid');
    const other = fakeExchange({ url: '/api/v1/namespaces/default/configmaps/c' });
    const otherDone = run(other.exchange, carol);
    expect(other.response.status).toBe(0);
    hold.open();
    await Promise.all([...pending, otherDone]);
    expect(other.response.status).toBe(200);
    expect(served.filter((u) => u === 'carol')).toHaveLength(1);
    expect(served.filter((u) => u === 'alice')).toHaveLength(limit + 1);
    const rejected = (await metrics.registry.getSingleMetric('apiserver_flowcontrol_rejected_requests_total')!.get()).values;
    expect(rejected).toEqual([expect.objectContaining({ labels: { priority_level: 'tenants', flow_schema: 'tenants', reason: 'queue-full' }, value: 1 })]);
    const dispatched = (await metrics.registry.getSingleMetric('apiserver_flowcontrol_dispatched_requests_total')!.get()).values;
    expect(dispatched).toEqual([expect.objectContaining({ labels: { priority_level: 'tenants', flow_schema: 'tenants' }, value: limit + 2 })]);
    flowControl.close();
  });

  it('refuses 429 a request that waited a quarter of its timeout, on the clock', async () => {
    const { flowControl, metrics, clock } = setup();
    const hold = gate();
    const run = pipeline(flowControl, metrics, async (e) => {
      await hold.wait;
      e.response.end('ok');
    });
    const limit = flowControl.priorityLevels().find((l) => l.name === 'tenants')!.queues.concurrencyLimit;
    const running = Array.from({ length: limit }, (_, i) => run(fakeExchange({ url: `/api/v1/pods/${i}` }).exchange));
    const waiting = fakeExchange({ url: '/api/v1/namespaces/default/pods?timeout=8s' });
    const done = run(waiting.exchange);
    clock.advance(1_999);
    expect(waiting.response.status).toBe(0);
    clock.advance(1);
    await done;
    expect(waiting.response.status).toBe(429);
    hold.open();
    await Promise.all(running);
    const rejected = (await metrics.registry.getSingleMetric('apiserver_flowcontrol_rejected_requests_total')!.get()).values;
    expect(rejected).toEqual([expect.objectContaining({ labels: expect.objectContaining({ reason: 'time-out' }), value: 1 })]);
    flowControl.close();
  });

  it('holds a watch’s seat until it starts streaming, and counts it as a watcher of its type until it ends', async () => {
    const { flowControl, metrics } = setup();
    const hold = gate();
    const run = pipeline(flowControl, metrics, async (e) => {
      e.response.writeHead(200);
      e.response.flushHeaders();
      await hold.wait;
      e.response.end();
    });
    const tenants = flowControl.priorityLevels().find((l) => l.name === 'tenants')!;
    const watch = fakeExchange({ url: '/api/v1/namespaces/default/configmaps?watch=true' });
    const done = run(watch.exchange);
    const write = { ...flowRequestOfUrl('/api/v1/namespaces/default/configmaps', 'create') };
    expect(flowControl.watches.count(write)).toBe(1);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(tenants.queues.totRequestsExecuting).toBe(0);
    expect(flowControl.watches.count(write)).toBe(1);
    hold.open();
    await done;
    expect(flowControl.watches.count(write)).toBe(0);
    flowControl.close();
  });

  it('serves the debug dumps in upstream’s columns (the router calls serveFlowControlDump after authorization)', () => {
    const { flowControl, metrics } = setup();
    const run = pipeline(flowControl, metrics, (exchange) => {
      if (!serveFlowControlDump(exchange, flowControl)) throw new Error('not a dump path');
    });
    const levels = fakeExchange({ url: '/debug/api_priority_and_fairness/dump_priority_levels' });
    run(levels.exchange);
    const lines = levels.response.text.trimEnd().split('\n');
    expect(lines[0]!.split(/,\s*/)).toEqual([
      'PriorityLevelName',
      'ActiveQueues',
      'IsIdle',
      'IsQuiescing',
      'WaitingRequests',
      'ExecutingRequests',
      'DispatchedRequests',
      'RejectedRequests',
      'TimedoutRequests',
      'CancelledRequests',
    ]);
    expect(lines.slice(1).map((l) => l.split(/,\s*/)[0])).toEqual(['catch-all', 'exempt', 'tenants']);
    // The dump request itself is running in tenants.
    expect(lines[3]!.split(/,\s*/)).toEqual(['tenants', '0', 'false', 'false', '0', '1', '1', '0', '0', '0']);
    const queues = fakeExchange({ url: '/debug/api_priority_and_fairness/dump_queues' });
    run(queues.exchange);
    expect(queues.response.text.split('\n').filter((l) => l.startsWith('tenants'))).toHaveLength(64);
    const requests = fakeExchange({ url: '/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1' });
    run(requests.exchange);
    expect(requests.response.text.split('\n')[0]).toContain('UserName');
    flowControl.close();
  });
});

/** What the filter reads of a request to `url` with `verb` by alice. */
function flowRequestOfUrl(url: string, verb: string) {
  const path = url.split('?')[0]!;
  const parts = path.split('/');
  return {
    user: alice,
    isResourceRequest: true,
    verb,
    path,
    apiGroup: '',
    apiVersion: 'v1',
    resource: parts[5]!,
    subresource: '',
    namespace: parts[4]!,
    name: '',
  };
}
