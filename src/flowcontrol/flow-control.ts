/**
 * API Priority and Fairness's dispatcher, as upstream's configuration controller and filter
 * (`apf_controller.go`, `apf_filter.go`): it digests the FlowSchemas and priority levels into
 * one state — the schemas in matching order, a queue set per level with its limits — and admits
 * each request: classified, estimated in seats, then run at once, queued, or refused.
 *
 * Digesting: a level whose spec is broken is ignored, a schema naming a missing level too; the
 * mandatory `exempt` and `catch-all` are imagined while their objects are missing. A level that
 * left the configuration keeps serving what it holds (quiescing) and goes once idle. Shares
 * give each level its nominal, lower and upper limits (allocation.ts); every 10 s of the clock
 * the current limits are shared out again by seat demand (borrowing).
 */
import type { Clock } from '../clock';
import {
  type CoreApi,
  FLOW_SCHEMA_CATCH_ALL,
  FLOW_SCHEMA_EXEMPT,
  type FlowSchema,
  Informer,
  PRIORITY_LEVEL_CATCH_ALL,
  PRIORITY_LEVEL_EXEMPT,
  type PriorityLevelConfiguration,
  type RequestContext,
  flowControlBootstrap,
} from '../core';
import type { Naming } from '../naming';
import type { FlowSeries, FlowcontrolMetrics, PriorityLevelGauges } from '../metrics';
import { type AllocationItem, type LevelLimits, computeAllocation, levelLimits, maxSeatsOf } from './allocation';
import { type FlowRequest, bySchemaPrecedence, flowDistinguisher, matchesFlowSchema } from './classify';
import { type QueueSetEvents, type QueuedRequest, QueueSet, type QueuingConfig, type RejectReason } from './queue-set';
import { RetryAfter } from './retry-after';
import { hashFlowId, validDeal } from './shuffle-sharding';
import { type ListHints, WatchTracker, estimateWork } from './work-estimate';

/** Upstream's borrowingAdjustmentPeriod. */
export const BORROWING_ADJUSTMENT_MS = 10_000;
/** Upstream's seatDemandSmoothingCoefficient: a half-life of 5 minutes at one adjustment per 10 s. */
const SEAT_DEMAND_SMOOTHING = 0.977;
/** A request waits at most a quarter of its deadline, and never more than a minute (upstream's getRequestWaitContext). */
const MAX_WAIT_MS = 60_000;

export interface FlowControlOptions {
  /** The server's concurrency limit: `--max-requests-inflight` + `--max-mutating-requests-inflight`. */
  serverConcurrencyLimit: number;
  /** `--request-timeout`: a request without a deadline of its own waits at most a quarter of it. */
  requestTimeoutMs: number;
  clock: Clock;
  /** The profile whose mandatory objects (upstream's `exempt` and `catch-all`) stand in while missing. */
  naming: Naming;
  metrics?: FlowcontrolMetrics;
  /** Objects stored per type (`resource` or `resource.group`), for the cost of lists. */
  objectCounts?: () => Iterable<{ resource: string; objects: number }>;
  log?: (message: string) => void;
}

/** The schema and level a request was classified into. */
export interface Classification {
  flowSchema: FlowSchema;
  priorityLevel: PriorityLevelConfiguration;
  distinguisher: string;
}

/** A request that runs: hand it back to `finish` once its answer has left. */
export interface Ticket {
  readonly level: LevelState;
  readonly request: QueuedRequest;
}

export type Admission =
  | { outcome: 'execute'; classification: Classification; ticket: Ticket }
  | { outcome: 'wait'; classification: Classification; ticket: Ticket; decided: Promise<'execute' | RejectReason> }
  | { outcome: 'reject'; classification: Classification; reason: RejectReason; retryAfterSeconds: number };

/** What a door knows of a request beyond its classification digest. */
export interface AdmitOptions {
  /** The list options of a list or watch (their cost). */
  list?: ListHints;
  /** How long it may wait in a queue (default: a quarter of the request timeout, at most a minute). */
  waitLimitMs?: number;
  /**
   * The client went away: a waiting request leaves its queue. Asked for only when the request
   * must wait: the gateway makes a request's signal when first read, at a listener per request.
   */
  signal?: () => AbortSignal;
}

/** One priority level's state. */
export class LevelState {
  limits: LevelLimits = { nominal: 0, min: 0, max: 0, lendable: 0 };
  current = 0;
  target = 0;
  maxSeats = 0;
  quiescing = false;
  readonly demand = { average: 0, stdDev: 0, highWatermark: 0, smoothed: 0 };
  /** The metric series of each FlowSchema seen at this level. */
  readonly series = new Map<string, FlowSeries>();
  queues!: QueueSet;

  constructor(public config: PriorityLevelConfiguration) {}

  get name(): string {
    return this.config.metadata?.name ?? '';
  }
}

export class FlowControl {
  private schemas: FlowSchema[] = [];
  private levels = new Map<string, LevelState>();
  private nominalSum = 0;
  private fairFrac = 0;
  private lastConfig: { levels: readonly PriorityLevelConfiguration[]; schemas: readonly FlowSchema[] } = { levels: [], schemas: [] };
  readonly watches = new WatchTracker();
  private readonly retryAfter: RetryAfter;
  private counts = new Map<string, number>();
  private countsAtMs = Number.NEGATIVE_INFINITY;
  private readonly stops: Array<() => void> = [];
  /** Upstream's mandatory objects, imagined while their API objects are missing. */
  private readonly mandatory: { exempt: FlowSchema; catchAll: FlowSchema; levels: readonly PriorityLevelConfiguration[] };

  constructor(private readonly options: FlowControlOptions) {
    const { flowSchemas, priorityLevels } = flowControlBootstrap(options.naming);
    const schema = (name: string) => flowSchemas.mandatory.find((fs) => fs.metadata?.name === name)!;
    this.mandatory = { exempt: schema(FLOW_SCHEMA_EXEMPT), catchAll: schema(FLOW_SCHEMA_CATCH_ALL), levels: priorityLevels.mandatory };
    this.retryAfter = new RetryAfter(options.clock);
    this.apply([], []);
    this.stops.push(options.clock.setInterval(() => this.adjustBorrowing(), BORROWING_ADJUSTMENT_MS));
    options.metrics?.setSource({ levels: () => this.gauges(), fairFrac: () => this.fairFrac });
  }

  /**
   * Follow the configuration objects through `core` (informers, as upstream's controller follows
   * them), digesting them again on every change.
   */
  follow(core: CoreApi, group: string, ctx: RequestContext): void {
    let levels: Informer | undefined;
    let schemas: Informer | undefined;
    const digest = () => {
      if (!levels || !schemas) return;
      this.apply([...levels.objects.values()] as PriorityLevelConfiguration[], [...schemas.objects.values()] as FlowSchema[]);
    };
    levels = new Informer(core, { group, version: 'v1', resource: 'prioritylevelconfigurations' }, ctx, digest, this.options.clock);
    schemas = new Informer(core, { group, version: 'v1', resource: 'flowschemas' }, ctx, digest, this.options.clock);
    // Both informers exist now; the first lists call digest when they arrive.
    this.stops.push(
      () => levels?.stop(),
      () => schemas?.stop(),
    );
  }

  /** Digest a whole configuration (upstream's digestConfigObjects, less the status writes). */
  apply(priorityLevels: readonly PriorityLevelConfiguration[], flowSchemas: readonly FlowSchema[]): void {
    this.lastConfig = { levels: priorityLevels, schemas: flowSchemas };
    const next = new Map<string, LevelState>();
    let shareSum = 0;
    for (const pl of priorityLevels) {
      const name = pl.metadata?.name ?? '';
      const queuing = queuingOf(pl);
      if (!queuing) {
        this.options.log?.(`ignoring PriorityLevelConfiguration ${name}: its spec is broken`);
        continue;
      }
      const state = this.levels.get(name) ?? new LevelState(pl);
      state.config = pl;
      state.quiescing = false;
      next.set(name, state);
      shareSum += sharesOf(pl).nominalConcurrencyShares;
    }
    const schemas = flowSchemas.filter((fs) => next.has(fs.spec?.priorityLevelConfiguration?.name ?? '')).sort(bySchemaPrecedence);
    if (!schemas.some((fs) => fs.metadata?.name === FLOW_SCHEMA_EXEMPT)) schemas.unshift(this.mandatory.exempt);
    if (!schemas.some((fs) => fs.metadata?.name === FLOW_SCHEMA_CATCH_ALL)) schemas.push(this.mandatory.catchAll);
    for (const [name, state] of this.levels) {
      if (next.has(name)) continue;
      const mandatory = name === PRIORITY_LEVEL_EXEMPT || name === PRIORITY_LEVEL_CATCH_ALL;
      if (!mandatory) {
        if (state.queues.isIdle) {
          state.queues.close();
          continue;
        }
        state.quiescing = true;
      }
      next.set(name, state);
      shareSum += sharesOf(state.config).nominalConcurrencyShares;
    }
    for (const proto of this.mandatory.levels) {
      const name = proto.metadata!.name!;
      if (next.has(name)) continue;
      next.set(name, new LevelState(proto));
      shareSum += sharesOf(proto).nominalConcurrencyShares;
    }
    let nominalSum = 0;
    const serverLimit = this.options.serverConcurrencyLimit;
    for (const state of next.values()) {
      const limits = levelLimits(serverLimit, shareSum, sharesOf(state.config));
      state.limits = limits;
      nominalSum += limits.nominal;
      const queuing = queuingOf(state.config)!;
      state.maxSeats = queuing.type === 'Queue' ? maxSeatsOf(limits.nominal, queuing.handSize) : 0;
      if (state.queues) {
        state.queues.setConfiguration(queuing, state.current);
      } else {
        state.current = limits.nominal - Math.trunc(limits.lendable / 2);
        state.queues = new QueueSet(state.name, this.options.clock, queuing, state.current, this.eventsOf(state));
      }
    }
    this.schemas = schemas;
    this.levels = next;
    this.nominalSum = nominalSum;
    this.shareOut(false);
  }

  /** The periodic adjustment of current limits by seat demand (upstream's updateBorrowing). */
  adjustBorrowing(): void {
    this.shareOut(true);
  }

  private shareOut(periodic: boolean): void {
    const states = [...this.levels.values()];
    const items: AllocationItem[] = states.map((state) => {
      const results = state.queues.seatDemand.reset();
      const demand = state.demand;
      demand.highWatermark = results.max;
      if (results.durationSeconds > 0) {
        const deviation = Number.isNaN(results.deviation) ? 0 : results.deviation;
        demand.average = results.average;
        demand.stdDev = deviation;
        const envelope = results.average + deviation;
        demand.smoothed = Math.max(envelope, SEAT_DEMAND_SMOOTHING * demand.smoothed + (1 - SEAT_DEMAND_SMOOTHING) * envelope);
      }
      const lowerBound = Math.max(state.limits.min, Math.min(state.limits.nominal, demand.highWatermark));
      return { lowerBound, upperBound: state.limits.max, target: Math.max(lowerBound, demand.smoothed) };
    });
    let allocs: number[];
    try {
      const allocation = computeAllocation(this.nominalSum, items);
      allocs = allocation.allocs;
      this.fairFrac = allocation.fairProp;
    } catch (err) {
      this.options.log?.(`unable to derive new concurrency limits: ${(err as Error).message}`);
      allocs = states.map((s) => s.current);
    }
    states.forEach((state, i) => {
      state.target = items[i]!.target;
      state.current = Math.round(allocs[i]!);
      const queuing = queuingOf(state.config)!;
      if (periodic || state.queues.concurrencyLimit !== state.current) state.queues.setConfiguration(queuing, state.current);
    });
  }

  /** Classify a request: the first matching schema, `catch-all` should none match. */
  classify(request: FlowRequest): { schema: FlowSchema; level: LevelState } {
    let catchAll: FlowSchema | undefined;
    for (const schema of this.schemas) {
      if (matchesFlowSchema(request, schema)) return { schema, level: this.levelOf(schema) };
      if (schema.metadata?.name === FLOW_SCHEMA_CATCH_ALL) catchAll = schema;
    }
    const schema = catchAll ?? this.mandatory.catchAll;
    return { schema, level: this.levelOf(schema) };
  }

  private levelOf(schema: FlowSchema): LevelState {
    return this.levels.get(schema.spec?.priorityLevelConfiguration?.name ?? '') ?? this.levels.get(PRIORITY_LEVEL_CATCH_ALL)!;
  }

  /**
   * Classify, estimate and start a request. `execute` runs now (within this call, no promise);
   * `wait` runs or is refused once `decided` settles; `reject` is refused now.
   */
  admit(request: FlowRequest, options: AdmitOptions = {}): Admission {
    const { schema, level } = this.classify(request);
    const flowSchemaName = schema.metadata?.name ?? '';
    const queuing = level.queues.config;
    const distinguisher = queuing.type === 'Queue' && queuing.queues > 1 ? flowDistinguisher(request, schema) : '';
    const classification: Classification = { flowSchema: schema, priorityLevel: level.config, distinguisher };
    const estimate = estimateWork(request, options.list, level.maxSeats, this.estimatorSources);
    const series = this.seriesOf(level, flowSchemaName);
    series?.seats.observe(Math.max(estimate.initialSeats, estimate.finalSeats));
    const waitLimitMs = Math.min(options.waitLimitMs ?? this.options.requestTimeoutMs / 4, MAX_WAIT_MS);
    const flow = { flowSchema: flowSchemaName, distinguisher, hash: () => hashFlowId(flowSchemaName, distinguisher) };
    const started = level.queues.start(flow, estimate, request, waitLimitMs, options.signal);
    switch (started.outcome) {
      case 'execute':
        return { outcome: 'execute', classification, ticket: { level, request: started.request } };
      case 'reject':
        this.retryAfter.dropped(level.name);
        return { outcome: 'reject', classification, reason: started.reason, retryAfterSeconds: this.retryAfter.seconds(level.name) };
      case 'wait': {
        const queued = started.request;
        const decided = new Promise<'execute' | RejectReason>((resolve) => {
          queued.onDecision = (outcome) => {
            if (outcome !== 'execute') this.retryAfter.dropped(level.name);
            resolve(outcome);
          };
        });
        return { outcome: 'wait', classification, ticket: { level, request: queued }, decided };
      }
    }
  }

  /** The `Retry-After` for a request of `level` refused after it waited. */
  retryAfterSeconds(level: PriorityLevelConfiguration): number {
    return this.retryAfter.seconds(level.metadata?.name ?? '');
  }

  /** A request that ran has finished: its seats go back. */
  finish(ticket: Ticket): void {
    ticket.level.queues.finish(ticket.request);
    if (ticket.level.quiescing && ticket.level.queues.isIdle) queueMicrotask(() => this.apply(this.lastConfig.levels, this.lastConfig.schemas));
  }

  private readonly estimatorSources = {
    objectCount: (group: string, resource: string) => this.objectCount(group, resource),
    watchCount: (request: FlowRequest) => this.watches.count(request),
  };

  /** Counts read at most once a second (upstream's tracker reads them once a minute). */
  private objectCount(group: string, resource: string): number | undefined {
    const read = this.options.objectCounts;
    if (!read) return undefined;
    const now = this.options.clock.now();
    if (now - this.countsAtMs >= 1_000) {
      this.countsAtMs = now;
      const counts = new Map<string, number>();
      for (const r of read()) counts.set(r.resource, r.objects);
      this.counts = counts;
    }
    return this.counts.get(group ? `${resource}.${group}` : resource);
  }

  private seriesOf(level: LevelState, flowSchema: string): FlowSeries | undefined {
    const metrics = this.options.metrics;
    if (!metrics) return undefined;
    let series = level.series.get(flowSchema);
    if (!series) {
      series = metrics.series(level.name, flowSchema);
      level.series.set(flowSchema, series);
    }
    return series;
  }

  private eventsOf(level: LevelState): QueueSetEvents | undefined {
    if (!this.options.metrics) return undefined;
    return {
      dispatched: (fs, waitedMs) => {
        const series = this.seriesOf(level, fs)!;
        series.dispatched.inc();
        series.waitExecuted.observe(waitedMs / 1000);
      },
      rejected: (fs, reason, waitedMs) => {
        const series = this.seriesOf(level, fs)!;
        series.rejected(reason).inc();
        series.waitRejected.observe(waitedMs / 1000);
      },
      enqueued: (fs, length) => this.seriesOf(level, fs)!.queueLength.observe(length),
      executed: (fs, ranMs) => this.seriesOf(level, fs)!.execution.observe(ranMs / 1000),
    };
  }

  /** The priority levels, by name, for the dumps and gauges. */
  priorityLevels(): LevelState[] {
    return [...this.levels.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The FlowSchemas in matching order. */
  flowSchemas(): readonly FlowSchema[] {
    return this.schemas;
  }

  private *gauges(): Iterable<PriorityLevelGauges> {
    for (const level of this.levels.values()) {
      yield {
        name: level.name,
        nominal: level.limits.nominal,
        lower: level.limits.min,
        upper: level.limits.max,
        current: level.current,
        target: level.target,
        demand: level.demand,
        currentR: level.queues.currentR,
        flowSchemas: level.queues.perFlowSchema,
      };
    }
  }

  close(): void {
    for (const stop of this.stops.splice(0)) stop();
    for (const level of this.levels.values()) level.queues.close();
  }
}

/** A level's shares, lendable and borrowing percentages (upstream's plSpecCommons). */
function sharesOf(pl: PriorityLevelConfiguration): { nominalConcurrencyShares: number; lendablePercent?: number; borrowingLimitPercent?: number } {
  const limited = pl.spec?.limited;
  if (limited) {
    return {
      nominalConcurrencyShares: limited.nominalConcurrencyShares ?? 30,
      ...(limited.lendablePercent !== undefined ? { lendablePercent: limited.lendablePercent } : {}),
      ...(limited.borrowingLimitPercent !== undefined ? { borrowingLimitPercent: limited.borrowingLimitPercent } : {}),
    };
  }
  const exempt = pl.spec?.exempt;
  return {
    nominalConcurrencyShares: exempt?.nominalConcurrencyShares ?? 0,
    ...(exempt?.lendablePercent !== undefined ? { lendablePercent: exempt.lendablePercent } : {}),
  };
}

/**
 * How a level queues, or undefined when its spec is broken (upstream's queueSetCompleterForPL
 * checks): the union must match its type, only `exempt` may be Exempt, and a queuing
 * configuration must deal.
 */
function queuingOf(pl: PriorityLevelConfiguration): QueuingConfig | undefined {
  const spec = pl.spec;
  if (!spec) return undefined;
  if ((spec.type === 'Limited') !== (spec.limited !== undefined)) return undefined;
  if ((spec.type === 'Exempt') !== (spec.exempt !== undefined)) return undefined;
  if ((spec.type === 'Exempt') !== (pl.metadata?.name === PRIORITY_LEVEL_EXEMPT)) return undefined;
  if (spec.type === 'Exempt') return { type: 'Exempt' };
  const response = spec.limited?.limitResponse;
  if (!response || response.type === 'Reject') return response?.queuing ? undefined : { type: 'Reject' };
  const q = response.queuing;
  if (!q) return undefined;
  const queues = q.queues ?? 64;
  const handSize = q.handSize ?? 8;
  if (!validDeal(queues, handSize)) return undefined;
  return { type: 'Queue', queues, handSize, queueLengthLimit: q.queueLengthLimit ?? 50 };
}
