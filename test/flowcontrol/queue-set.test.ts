import { ManualClock } from '../../src/clock';
import type { FlowRequest } from '../../src/flowcontrol/classify';
import { type QueuedRequest, QueueSet, type RejectReason, type WorkEstimate } from '../../src/flowcontrol/queue-set';

const ONE_SEAT: WorkEstimate = { initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 };

function origin(user: string): FlowRequest {
  return {
    user: { username: user, groups: [] },
    isResourceRequest: true,
    verb: 'list',
    path: '/api/v1/pods',
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'pods',
    subresource: '',
    namespace: '',
    name: '',
  };
}

/** A flow whose hand (one queue of 64) is the queue numbered `queue`. */
function flow(user: string, queue: number) {
  return { flowSchema: 'fs', distinguisher: user, hash: () => BigInt(queue) };
}

const queuing = { type: 'Queue' as const, queues: 64, handSize: 1, queueLengthLimit: 50 };

describe('queue set', () => {
  it('serves a light flow in turn while a heavy one has piled up (fair queuing by virtual finish time)', () => {
    const clock = new ManualClock();
    const qs = new QueueSet('level', clock, queuing, 1);
    const order: string[] = [];
    const running: QueuedRequest[] = [];
    const submit = (user: string, queue: number, i: number) => {
      const started = qs.start(flow(user, queue), ONE_SEAT, origin(user), 60_000);
      if (started.outcome === 'reject') throw new Error(started.reason);
      const label = `${user}${i}`;
      if (started.outcome === 'execute') {
        order.push(label);
        running.push(started.request);
      } else
        started.request.onDecision = (outcome) => {
          if (outcome === 'execute') {
            order.push(label);
            running.push(started.request);
          }
        };
    };
    for (let i = 0; i < 8; i++) submit('heavy', 0, i);
    submit('light', 1, 0);
    submit('light', 1, 1);
    // One seat: each request runs 10 ms, then the next is dispatched.
    while (running.length > 0) {
      clock.advance(10);
      qs.finish(running.shift()!);
    }
    expect(order).toHaveLength(10);
    expect(order.slice(0, 4)).toEqual(['heavy0', 'light0', 'heavy1', 'light1']);
    expect(order.slice(4)).toEqual(['heavy2', 'heavy3', 'heavy4', 'heavy5', 'heavy6', 'heavy7']);
    expect(qs.isIdle).toBe(true);
    expect(qs.totals.dispatched).toBe(10);
  });

  it('refuses with queue-full when the level is busy and the flow’s queue is at its length limit', () => {
    const clock = new ManualClock();
    const qs = new QueueSet('level', clock, { ...queuing, queueLengthLimit: 2 }, 1);
    const outcomes = [0, 1, 2, 3].map(() => qs.start(flow('a', 0), ONE_SEAT, origin('a'), 60_000).outcome);
    expect(outcomes).toEqual(['execute', 'wait', 'wait', 'reject']);
    // Another flow has its own queue.
    expect(qs.start(flow('b', 5), ONE_SEAT, origin('b'), 60_000).outcome).toBe('wait');
    expect(qs.totals.rejected).toBe(1);
  });

  it('refuses with time-out a request that waited past its wait limit, on the clock', () => {
    const clock = new ManualClock();
    const qs = new QueueSet('level', clock, queuing, 1);
    const first = qs.start(flow('a', 0), ONE_SEAT, origin('a'), 15_000);
    const second = qs.start(flow('a', 0), ONE_SEAT, origin('a'), 15_000);
    expect(first.outcome).toBe('execute');
    expect(second.outcome).toBe('wait');
    const decisions: Array<'execute' | RejectReason> = [];
    if (second.outcome === 'wait') second.request.onDecision = (o) => decisions.push(o);
    clock.advance(14_999);
    expect(decisions).toEqual([]);
    clock.advance(1);
    expect(decisions).toEqual(['time-out']);
    expect(qs.totRequestsWaiting).toBe(0);
    expect(qs.totals).toEqual({ dispatched: 1, rejected: 1, timedOut: 1, cancelled: 0 });
  });

  it('takes a waiting request out as cancelled when its client goes away', () => {
    const clock = new ManualClock();
    const qs = new QueueSet('level', clock, queuing, 1);
    qs.start(flow('a', 0), ONE_SEAT, origin('a'), 15_000);
    const abort = new AbortController();
    const waiting = qs.start(flow('a', 0), ONE_SEAT, origin('a'), 15_000, () => abort.signal);
    const decisions: string[] = [];
    if (waiting.outcome === 'wait') waiting.request.onDecision = (o) => decisions.push(o);
    abort.abort();
    expect(decisions).toEqual(['cancelled']);
    expect(qs.totals.cancelled).toBe(1);
  });

  it("asks for the client's signal only once a request must wait, and takes it out at once when the client had already gone", async () => {
    const clock = new ManualClock();
    const qs = new QueueSet('level', clock, queuing, 1);
    let asked = 0;
    const gone = () => {
      asked++;
      const abort = new AbortController();
      abort.abort();
      return abort.signal;
    };
    expect(qs.start(flow('a', 0), ONE_SEAT, origin('a'), 15_000, gone).outcome).toBe('execute');
    expect(asked).toBe(0);
    const waiting = qs.start(flow('a', 0), ONE_SEAT, origin('a'), 15_000, gone);
    expect(asked).toBe(1);
    const decisions: string[] = [];
    if (waiting.outcome === 'wait') waiting.request.onDecision = (o) => decisions.push(o);
    await Promise.resolve();
    expect(decisions).toEqual(['cancelled']);
    expect(qs.totals.cancelled).toBe(1);
  });

  it('a Reject level runs what fits and refuses the rest with concurrency-limit; an exempt level never refuses', () => {
    const clock = new ManualClock();
    const reject = new QueueSet('reject', clock, { type: 'Reject' }, 2);
    const wide: WorkEstimate = { initialSeats: 2, finalSeats: 0, additionalLatencyMs: 0 };
    expect(reject.start(flow('a', 0), ONE_SEAT, origin('a'), 0).outcome).toBe('execute');
    expect(reject.start(flow('a', 0), wide, origin('a'), 0)).toEqual({ outcome: 'reject', reason: 'concurrency-limit' });
    expect(reject.start(flow('a', 0), ONE_SEAT, origin('a'), 0).outcome).toBe('execute');
    const exempt = new QueueSet('exempt', clock, { type: 'Exempt' }, 0);
    for (let i = 0; i < 100; i++) expect(exempt.start(flow('a', 0), wide, origin('a'), 0).outcome).toBe('execute');
    expect(exempt.totSeatsInUse).toBe(200);
  });

  it('holds a write’s final seats for its additional latency after it finished', () => {
    const clock = new ManualClock();
    const qs = new QueueSet('level', clock, queuing, 4);
    const write: WorkEstimate = { initialSeats: 1, finalSeats: 3, additionalLatencyMs: 5 };
    const started = qs.start(flow('a', 0), write, origin('a'), 60_000);
    expect(qs.totSeatsInUse).toBe(3);
    if (started.outcome !== 'execute') throw new Error('expected to run');
    qs.finish(started.request);
    expect(qs.totRequestsExecuting).toBe(0);
    expect(qs.totSeatsInUse).toBe(3);
    clock.advance(5);
    expect(qs.totSeatsInUse).toBe(0);
  });
});
