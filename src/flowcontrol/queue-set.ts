/**
 * One priority level's queues, as upstream's `fairqueuing/queueset` serves them: fair queuing
 * for server requests, where a request's cost is its work in seat-seconds.
 *
 * - An exempt level never waits or refuses; a `Reject` level runs a request if its seats fit
 *   under the level's current limit and refuses it (`concurrency-limit`) otherwise.
 * - A `Queue` level puts each request in the least loaded queue of its flow's hand (shuffle
 *   sharding), refusing it (`queue-full`) when the level is at its limit and that queue holds
 *   `queueLengthLimit` requests already; then dispatches while seats are free, each time from
 *   the queue whose oldest request would finish first in virtual time: the queue's next
 *   dispatch time R plus that request's work. R advances at the rate each active queue is served
 *   (min(seats asked for, limit) / active queues seat-seconds per second), and a queue's R moves
 *   on by each dispatched request's work and back by what it overestimated once it finishes:
 *   a light flow's queue is served in turn while a heavy one's piles up.
 * - A request that waits past its wait limit (upstream: a quarter of the request's deadline)
 *   leaves its queue refused (`time-out`); one whose client went away, `cancelled`.
 * - A request's seats are held while it runs and, for a write that wakes many watchers, its
 *   final seats for a while after (`additionalLatencyMs`), as upstream's two-phase estimate.
 *
 * A request that can start at once starts within `start`, with no promise, timer or listener:
 * only a request that waits costs those.
 */
import type { Clock } from '../clock';
import { Deadlines } from '../clock/deadlines';
import type { FlowRequest } from './classify';
import { Integrator } from './integrator';
import { dealHand } from './shuffle-sharding';

/** Upstream's guess at how long a request runs, which it corrects once the request finishes. */
const ESTIMATED_SERVICE_SECONDS = 0.003;
/** Flows whose hands are remembered per level before the memory starts over. */
const MAX_REMEMBERED_HANDS = 10_000;

/** The seats a request takes, as upstream's WorkEstimate. */
export interface WorkEstimate {
  /** Seats while it runs. */
  initialSeats: number;
  /** Seats held after it ran, for `additionalLatencyMs` (watchers being notified); 0 for none. */
  finalSeats: number;
  additionalLatencyMs: number;
}

/** How a level queues: exempt (never limited), reject, or queue with shuffle sharding. */
export type QueuingConfig = { type: 'Exempt' } | { type: 'Reject' } | { type: 'Queue'; queues: number; handSize: number; queueLengthLimit: number };

export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

/** A request of the level: waiting, running, or done. */
export class QueuedRequest {
  state: 'waiting' | 'executing' | 'finished' | 'rejected' = 'waiting';
  queue: Queue | undefined;
  readonly arrivalMs: number;
  arrivalR: number;
  startMs = 0;
  /** The request's whole work in seat-seconds. */
  totalWork: number;
  /** Told once whether it runs or was refused while it waited. */
  onDecision?: (outcome: 'execute' | RejectReason) => void;
  deadline?: ReturnType<Deadlines<QueuedRequest>['add']>;
  stopListening?: () => void;

  constructor(
    readonly flowSchema: string,
    readonly flowDistinguisher: string,
    public estimate: WorkEstimate,
    /** The request, for the dumps. */
    readonly origin: FlowRequest,
    now: number,
    currentR: number,
  ) {
    this.arrivalMs = now;
    this.arrivalR = currentR;
    this.totalWork = workOf(estimate);
  }

  get maxSeats(): number {
    return Math.max(this.estimate.initialSeats, this.estimate.finalSeats);
  }
}

function workOf(estimate: WorkEstimate): number {
  return estimate.initialSeats * ESTIMATED_SERVICE_SECONDS + (estimate.finalSeats * estimate.additionalLatencyMs) / 1000;
}

/** One queue: its waiting requests in arrival order and what runs from it. */
export class Queue {
  readonly requests: QueuedRequest[] = [];
  nextDispatchR = 0;
  requestsExecuting = 0;
  seatsInUse = 0;
  initialSeatsSum = 0;
  maxSeatsSum = 0;
  totalWorkSum = 0;

  constructor(readonly index: number) {}

  get active(): boolean {
    return this.requests.length > 0 || this.requestsExecuting > 0;
  }

  push(request: QueuedRequest): void {
    this.requests.push(request);
    this.initialSeatsSum += request.estimate.initialSeats;
    this.maxSeatsSum += request.maxSeats;
    this.totalWorkSum += request.totalWork;
  }

  /** Take `request` out (the head when dispatched; anywhere when it gives up waiting). */
  remove(request: QueuedRequest): boolean {
    const at = this.requests[0] === request ? 0 : this.requests.indexOf(request);
    if (at < 0) return false;
    if (at === 0) this.requests.shift();
    else this.requests.splice(at, 1);
    this.initialSeatsSum -= request.estimate.initialSeats;
    this.maxSeatsSum -= request.maxSeats;
    this.totalWorkSum -= request.totalWork;
    return true;
  }
}

/** What a level's numbers are per FlowSchema, read by the gauges at scrape. */
export interface FlowSchemaCounts {
  waiting: number;
  waitingSeats: number;
  executing: number;
  seatsInUse: number;
}

/** The level's events, for the counters and histograms (src/metrics/flowcontrol.ts). */
export interface QueueSetEvents {
  dispatched(flowSchema: string, waitedMs: number): void;
  rejected(flowSchema: string, reason: RejectReason, waitedMs: number): void;
  enqueued(flowSchema: string, queueLength: number): void;
  executed(flowSchema: string, ranMs: number): void;
}

export type StartResult =
  | { outcome: 'execute'; request: QueuedRequest }
  | { outcome: 'wait'; request: QueuedRequest }
  | { outcome: 'reject'; reason: RejectReason };

/** The flow a request belongs to: its hand is dealt only if it must queue. */
export interface FlowKey {
  flowSchema: string;
  distinguisher: string;
  /** The flow's hash (upstream's hashFlowID), asked for only when the hand is not remembered. */
  hash(): bigint;
}

export class QueueSet {
  config: QueuingConfig;
  concurrencyLimit: number;
  readonly queues: Queue[] = [];
  currentR = 0;
  private lastRealMs: number;
  private robinIndex = -1;
  private enqueues = 0;
  private activeQueues = 0;
  totRequestsWaiting = 0;
  totRequestsExecuting = 0;
  totSeatsInUse = 0;
  totSeatsWaiting = 0;
  /** Since the level was made, for dump_priority_levels. */
  readonly totals = { dispatched: 0, rejected: 0, timedOut: 0, cancelled: 0 };
  readonly perFlowSchema = new Map<string, FlowSchemaCounts>();
  /** Seats in use plus seats waiting over time, which borrowing reads. */
  readonly seatDemand: Integrator;
  private hands = new Map<string, number[]>();
  private readonly waitDeadlines: Deadlines<QueuedRequest>;
  private readonly finalPhases: Deadlines<QueuedRequest>;

  constructor(
    readonly name: string,
    private readonly clock: Clock,
    config: QueuingConfig,
    concurrencyLimit: number,
    private readonly events?: QueueSetEvents,
  ) {
    this.config = config;
    this.concurrencyLimit = concurrencyLimit;
    this.lastRealMs = clock.now();
    this.seatDemand = new Integrator(clock);
    this.waitDeadlines = new Deadlines(clock, (request) => this.giveUp(request, 'time-out'));
    this.finalPhases = new Deadlines(clock, (request) => {
      this.syncTime();
      this.releaseSeats(request);
      this.dispatchAsMuchAsPossible();
    });
    this.setConfiguration(config, concurrencyLimit);
  }

  /** A new queuing configuration or limit; queues are added at once, never taken away while in use. */
  setConfiguration(config: QueuingConfig, concurrencyLimit: number): void {
    this.syncTime();
    if (config.type === 'Queue') {
      while (this.queues.length < config.queues) this.queues.push(new Queue(this.queues.length));
      const previous = this.config;
      if (previous.type !== 'Queue' || previous.queues !== config.queues || previous.handSize !== config.handSize) this.hands = new Map();
    }
    this.config = config;
    this.concurrencyLimit = concurrencyLimit;
    this.dispatchAsMuchAsPossible();
  }

  get isIdle(): boolean {
    return this.totRequestsWaiting === 0 && this.totRequestsExecuting === 0;
  }

  /**
   * Runs, queues or refuses a request. `waitLimitMs` bounds a queued request's wait; `signal`
   * (the client going away, asked for once the request waits) takes it out of its queue.
   */
  start(flow: FlowKey, estimate: WorkEstimate, origin: FlowRequest, waitLimitMs: number, signalOf?: () => AbortSignal): StartResult {
    this.syncTime();
    const config = this.config;
    const request = new QueuedRequest(flow.flowSchema, flow.distinguisher, estimate, origin, this.clock.now(), this.currentR);
    if (config.type !== 'Queue') {
      if (!this.canAccommodate(request.maxSeats)) {
        this.reject(flow.flowSchema, 'concurrency-limit', 0);
        return { outcome: 'reject', reason: 'concurrency-limit' };
      }
      this.beginExecuting(request, undefined);
      return { outcome: 'execute', request };
    }
    const queue = this.queues[this.chooseQueue(flow, config)]!;
    if (this.totSeatsInUse >= this.concurrencyLimit && queue.requests.length >= config.queueLengthLimit) {
      this.reject(flow.flowSchema, 'queue-full', 0);
      return { outcome: 'reject', reason: 'queue-full' };
    }
    this.enqueue(request, queue);
    this.dispatchAsMuchAsPossible();
    if (request.state === 'executing') return { outcome: 'execute', request };
    request.deadline = this.waitDeadlines.add(Math.max(0, waitLimitMs), request);
    if (signalOf) {
      const signal = signalOf();
      const onAbort = () => this.giveUp(request, 'cancelled');
      // Gone already (the signal is made now): out of the queue once the caller awaits the decision.
      if (signal.aborted) queueMicrotask(onAbort);
      else {
        signal.addEventListener('abort', onAbort, { once: true });
        request.stopListening = () => signal.removeEventListener('abort', onAbort);
      }
    }
    return { outcome: 'wait', request };
  }

  /** The request ran: its seats go back (its final seats after their latency) and others may run. */
  finish(request: QueuedRequest): void {
    if (request.state !== 'executing') return;
    this.syncTime();
    request.state = 'finished';
    const now = this.clock.now();
    this.totRequestsExecuting--;
    const counts = this.countsOf(request.flowSchema);
    counts.executing--;
    const ranMs = now - request.startMs;
    this.events?.executed(request.flowSchema, ranMs);
    const queue = request.queue;
    if (queue) {
      queue.requestsExecuting--;
      if (!queue.active) this.activeQueues--;
      // The queue was charged the estimated service time; correct it by what the request took.
      queue.nextDispatchR -= request.estimate.initialSeats * (ESTIMATED_SERVICE_SECONDS - ranMs / 1000);
      this.boundNextDispatch(queue);
    }
    if (request.estimate.additionalLatencyMs > 0) this.finalPhases.add(request.estimate.additionalLatencyMs, request);
    else this.releaseSeats(request);
    this.dispatchAsMuchAsPossible();
  }

  private releaseSeats(request: QueuedRequest): void {
    const seats = request.maxSeats;
    this.totSeatsInUse -= seats;
    this.countsOf(request.flowSchema).seatsInUse -= seats;
    if (request.queue) request.queue.seatsInUse -= seats;
    this.seatDemand.set(this.totSeatsInUse + this.totSeatsWaiting);
  }

  /** The queue of the flow's hand with the least work waiting, starting at a rotating offset. */
  private chooseQueue(flow: FlowKey, config: Extract<QueuingConfig, { type: 'Queue' }>): number {
    const key = `${flow.flowSchema}\u0000${flow.distinguisher}`;
    let hand = this.hands.get(key);
    if (!hand) {
      if (this.hands.size >= MAX_REMEMBERED_HANDS) this.hands = new Map();
      hand = dealHand(flow.hash(), config.queues, config.handSize);
      this.hands.set(key, hand);
    }
    const offset = this.enqueues % hand.length;
    this.enqueues++;
    let best = -1;
    let least = Number.POSITIVE_INFINITY;
    for (let i = 0; i < hand.length; i++) {
      const index = hand[(offset + i) % hand.length]!;
      const work = this.queues[index]!.totalWorkSum;
      if (work < least) {
        least = work;
        best = index;
      }
    }
    return best;
  }

  private enqueue(request: QueuedRequest, queue: Queue): void {
    if (!queue.active) {
      // An idle queue starts at the present virtual time.
      queue.nextDispatchR = this.currentR;
      this.activeQueues++;
    }
    request.queue = queue;
    queue.push(request);
    this.totRequestsWaiting++;
    this.totSeatsWaiting += request.maxSeats;
    const counts = this.countsOf(request.flowSchema);
    counts.waiting++;
    counts.waitingSeats += request.maxSeats;
    this.events?.enqueued(request.flowSchema, queue.requests.length);
    this.seatDemand.set(this.totSeatsInUse + this.totSeatsWaiting);
    this.boundNextDispatch(queue);
  }

  private dispatchAsMuchAsPossible(): void {
    while (this.totRequestsWaiting !== 0 && this.totSeatsInUse < this.concurrencyLimit && this.dispatchOne()) {
      // each round dispatched one request
    }
  }

  /** Dispatch the oldest request of the queue that would finish first, if its seats fit. */
  private dispatchOne(): boolean {
    let minFinish = Number.POSITIVE_INFINITY;
    let minQueue: Queue | undefined;
    let minIndex = -1;
    const n = this.queues.length;
    for (let i = 0; i < n; i++) {
      this.robinIndex = (this.robinIndex + 1) % n;
      const queue = this.queues[this.robinIndex]!;
      const oldest = queue.requests[0];
      if (!oldest) continue;
      const finish = queue.nextDispatchR + oldest.totalWork;
      if (finish < minFinish) {
        minFinish = finish;
        minQueue = queue;
        minIndex = this.robinIndex;
      }
    }
    const request = minQueue?.requests[0];
    if (!minQueue || !request) return false;
    if (!this.canAccommodate(request.maxSeats)) return false;
    this.takeFromQueue(request);
    // Final seats wider than the whole level are narrowed, their latency stretched to keep the work.
    if (request.estimate.finalSeats > this.concurrencyLimit && this.concurrencyLimit > 0) {
      const finalWorkMs = request.estimate.finalSeats * request.estimate.additionalLatencyMs;
      request.estimate = { ...request.estimate, finalSeats: this.concurrencyLimit, additionalLatencyMs: finalWorkMs / this.concurrencyLimit };
    }
    // The next round starts after the chosen queue, so that ties go to the others.
    this.robinIndex = minIndex;
    minQueue.requestsExecuting++;
    this.beginExecuting(request, minQueue);
    minQueue.nextDispatchR += request.totalWork;
    this.boundNextDispatch(minQueue);
    return true;
  }

  private beginExecuting(request: QueuedRequest, queue: Queue | undefined): void {
    const now = this.clock.now();
    request.state = 'executing';
    request.startMs = now;
    const seats = request.maxSeats;
    this.totRequestsExecuting++;
    this.totSeatsInUse += seats;
    if (queue) queue.seatsInUse += seats;
    const counts = this.countsOf(request.flowSchema);
    counts.executing++;
    counts.seatsInUse += seats;
    this.totals.dispatched++;
    this.seatDemand.set(this.totSeatsInUse + this.totSeatsWaiting);
    this.events?.dispatched(request.flowSchema, now - request.arrivalMs);
    if (request.deadline) this.waitDeadlines.cancel(request.deadline);
    request.stopListening?.();
    request.onDecision?.('execute');
  }

  /** Out of its queue, as waiting no more. */
  private takeFromQueue(request: QueuedRequest): void {
    const queue = request.queue!;
    queue.remove(request);
    this.totRequestsWaiting--;
    this.totSeatsWaiting -= request.maxSeats;
    const counts = this.countsOf(request.flowSchema);
    counts.waiting--;
    counts.waitingSeats -= request.maxSeats;
  }

  /** A waiting request waited too long, or its client went away. */
  private giveUp(request: QueuedRequest, reason: 'time-out' | 'cancelled'): void {
    if (request.state !== 'waiting') return;
    this.syncTime();
    const queue = request.queue!;
    this.takeFromQueue(request);
    if (!queue.active) this.activeQueues--;
    this.boundNextDispatch(queue);
    request.state = 'rejected';
    if (request.deadline) this.waitDeadlines.cancel(request.deadline);
    request.stopListening?.();
    this.seatDemand.set(this.totSeatsInUse + this.totSeatsWaiting);
    this.reject(request.flowSchema, reason, this.clock.now() - request.arrivalMs);
    request.onDecision?.(reason);
  }

  private reject(flowSchema: string, reason: RejectReason, waitedMs: number): void {
    this.totals.rejected++;
    if (reason === 'time-out') this.totals.timedOut++;
    if (reason === 'cancelled') this.totals.cancelled++;
    this.events?.rejected(flowSchema, reason, waitedMs);
  }

  /** Upstream's canAccommodateSeatsLocked: a request wider than the level runs alone. */
  private canAccommodate(seats: number): boolean {
    if (this.config.type === 'Exempt') return true;
    if (seats > this.concurrencyLimit) return this.totRequestsExecuting === 0;
    return this.totSeatsInUse + seats <= this.concurrencyLimit;
  }

  /** A queue's R is never behind its oldest request's arrival (upstream's anti-windup bound). */
  private boundNextDispatch(queue: Queue): void {
    const oldest = queue.requests[0];
    if (oldest && queue.nextDispatchR < oldest.arrivalR) queue.nextDispatchR = oldest.arrivalR;
  }

  /** Advance virtual time by what the present state earned since it was last advanced. */
  private syncTime(): void {
    const now = this.clock.now();
    const elapsed = (now - this.lastRealMs) / 1000;
    this.lastRealMs = now;
    if (elapsed <= 0 || this.activeQueues === 0) return;
    const seatsRequested = this.totSeatsInUse + this.totSeatsWaiting;
    this.currentR += (elapsed * Math.min(seatsRequested, this.concurrencyLimit)) / this.activeQueues;
  }

  private countsOf(flowSchema: string): FlowSchemaCounts {
    let counts = this.perFlowSchema.get(flowSchema);
    if (!counts) {
      counts = { waiting: 0, waitingSeats: 0, executing: 0, seatsInUse: 0 };
      this.perFlowSchema.set(flowSchema, counts);
    }
    return counts;
  }

  /** Stop the level's timers (the server is closing); waiting requests are refused as cancelled. */
  close(): void {
    for (const queue of this.queues) for (const request of [...queue.requests]) this.giveUp(request, 'cancelled');
    this.waitDeadlines.clear();
    this.finalPhases.clear();
  }
}
