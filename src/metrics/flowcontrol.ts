/**
 * API Priority and Fairness's metrics, upstream's `apiserver_flowcontrol_*` names, labels and
 * buckets (docs/OPERATIONS.md, "Priority and fairness"). Counters and histograms are fed as
 * requests pass, through series asked for once per label set (series.ts); the gauges of state
 * (requests and seats waiting and running, each level's limits and seat demand) are read from
 * the filter when scraped.
 */
import { Gauge, type Registry } from 'prom-client';
import { type CounterSeries, FastCounter, FastHistogram, type HistogramSeries } from './series';

/** Upstream's queue-wait and execution buckets. */
const WAIT_BUCKETS = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];
const QUEUE_LENGTH_BUCKETS = [0, 10, 25, 50, 100, 250, 500, 1000];
const SEATS_BUCKETS = [1, 2, 4, 10];

/** One FlowSchema's numbers within a level. */
export interface FlowSchemaGauges {
  waiting: number;
  waitingSeats: number;
  executing: number;
  seatsInUse: number;
}

/** One priority level as the gauges read it. */
export interface PriorityLevelGauges {
  name: string;
  nominal: number;
  lower: number;
  upper: number;
  current: number;
  target: number;
  demand: { highWatermark: number; average: number; stdDev: number; smoothed: number };
  currentR: number;
  flowSchemas: Iterable<[string, FlowSchemaGauges]>;
}

export interface FlowcontrolState {
  levels(): Iterable<PriorityLevelGauges>;
  /** The fair proportion of the last borrowing adjustment. */
  fairFrac(): number;
}

type FlowLabels = 'priority_level' | 'flow_schema';

/** The series of one priority level and FlowSchema, kept by the filter for the requests of that pair. */
export interface FlowSeries {
  dispatched: CounterSeries;
  waitExecuted: HistogramSeries;
  waitRejected: HistogramSeries;
  execution: HistogramSeries;
  queueLength: HistogramSeries;
  seats: HistogramSeries;
  rejected(reason: string): CounterSeries;
}

export class FlowcontrolMetrics {
  private readonly dispatched: FastCounter<FlowLabels>;
  private readonly rejected: FastCounter<FlowLabels | 'reason'>;
  private readonly waitDuration: FastHistogram<FlowLabels | 'execute'>;
  private readonly execution: FastHistogram<FlowLabels | 'type'>;
  private readonly queueLength: FastHistogram<FlowLabels>;
  private readonly seats: FastHistogram<FlowLabels>;
  private source?: FlowcontrolState;

  constructor(registry: Registry) {
    const registers = [registry];
    this.dispatched = new FastCounter(
      'apiserver_flowcontrol_dispatched_requests_total',
      'Number of requests executed by API Priority and Fairness subsystem',
      ['priority_level', 'flow_schema'],
      registry,
    );
    this.rejected = new FastCounter(
      'apiserver_flowcontrol_rejected_requests_total',
      'Number of requests rejected by API Priority and Fairness subsystem',
      ['priority_level', 'flow_schema', 'reason'],
      registry,
    );
    this.waitDuration = new FastHistogram(
      'apiserver_flowcontrol_request_wait_duration_seconds',
      'Length of time a request spent waiting in its queue',
      ['priority_level', 'flow_schema', 'execute'],
      WAIT_BUCKETS,
      registry,
    );
    this.execution = new FastHistogram(
      'apiserver_flowcontrol_request_execution_seconds',
      'Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the API Priority and Fairness subsystem',
      ['priority_level', 'flow_schema', 'type'],
      WAIT_BUCKETS,
      registry,
    );
    this.queueLength = new FastHistogram(
      'apiserver_flowcontrol_request_queue_length_after_enqueue',
      'Length of queue in the API Priority and Fairness subsystem, as seen by each request after it is enqueued',
      ['priority_level', 'flow_schema'],
      QUEUE_LENGTH_BUCKETS,
      registry,
    );
    this.seats = new FastHistogram(
      'apiserver_flowcontrol_work_estimated_seats',
      'Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness',
      ['priority_level', 'flow_schema'],
      SEATS_BUCKETS,
      registry,
    );
    const metrics = this;
    const perFlow = (name: string, help: string, pick: (g: FlowSchemaGauges) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['priority_level', 'flow_schema'],
        registers,
        collect() {
          this.reset();
          for (const level of metrics.source?.levels() ?? [])
            for (const [flowSchema, g] of level.flowSchemas) this.set({ priority_level: level.name, flow_schema: flowSchema }, pick(g));
        },
      });
    perFlow(
      'apiserver_flowcontrol_current_inqueue_requests',
      'Number of requests currently pending in queues of the API Priority and Fairness subsystem',
      (g) => g.waiting,
    );
    perFlow(
      'apiserver_flowcontrol_current_inqueue_seats',
      'Number of seats currently pending in queues of the API Priority and Fairness subsystem',
      (g) => g.waitingSeats,
    );
    perFlow(
      'apiserver_flowcontrol_current_executing_requests',
      'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem',
      (g) => g.executing,
    );
    perFlow(
      'apiserver_flowcontrol_current_executing_seats',
      'Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem',
      (g) => g.seatsInUse,
    );
    const perLevel = (name: string, help: string, pick: (l: PriorityLevelGauges) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['priority_level'],
        registers,
        collect() {
          this.reset();
          for (const level of metrics.source?.levels() ?? []) this.set({ priority_level: level.name }, pick(level));
        },
      });
    perLevel('apiserver_flowcontrol_nominal_limit_seats', 'Nominal number of execution seats configured for each priority level', (l) => l.nominal);
    perLevel('apiserver_flowcontrol_lower_limit_seats', 'Configured lower bound on number of execution seats available to each priority level', (l) => l.lower);
    perLevel('apiserver_flowcontrol_upper_limit_seats', 'Configured upper bound on number of execution seats available to each priority level', (l) => l.upper);
    perLevel('apiserver_flowcontrol_current_limit_seats', 'current derived number of execution seats available to each priority level', (l) => l.current);
    perLevel('apiserver_flowcontrol_target_seats', 'Seat allocation targets', (l) => l.target);
    perLevel(
      'apiserver_flowcontrol_demand_seats_high_watermark',
      'High watermark, over last adjustment period, of demand_seats',
      (l) => l.demand.highWatermark,
    );
    perLevel('apiserver_flowcontrol_demand_seats_average', 'Time-weighted average, over last adjustment period, of demand_seats', (l) => l.demand.average);
    perLevel(
      'apiserver_flowcontrol_demand_seats_stdev',
      'Time-weighted standard deviation, over last adjustment period, of demand_seats',
      (l) => l.demand.stdDev,
    );
    perLevel('apiserver_flowcontrol_demand_seats_smoothed', 'Smoothed seat demands', (l) => l.demand.smoothed);
    perLevel('apiserver_flowcontrol_current_r', 'R(time of last change)', (l) => l.currentR);
    new Gauge({
      name: 'apiserver_flowcontrol_seat_fair_frac',
      help: 'Fair fraction of server concurrency to allocate to each priority level that can use it',
      registers,
      collect() {
        this.set(metrics.source?.fairFrac() ?? 0);
      },
    });
  }

  /** Where the gauges read from. */
  setSource(source: FlowcontrolState): void {
    this.source = source;
  }

  /** The series of one pair; keep it, later requests of the pair then cost no lookup. */
  series(priorityLevel: string, flowSchema: string): FlowSeries {
    const labels = { priority_level: priorityLevel, flow_schema: flowSchema };
    const rejected = new Map<string, CounterSeries>();
    return {
      dispatched: this.dispatched.labels(labels),
      waitExecuted: this.waitDuration.labels({ ...labels, execute: 'true' }),
      waitRejected: this.waitDuration.labels({ ...labels, execute: 'false' }),
      execution: this.execution.labels({ ...labels, type: 'regular' }),
      queueLength: this.queueLength.labels(labels),
      seats: this.seats.labels(labels),
      rejected: (reason) => {
        let series = rejected.get(reason);
        if (!series) {
          series = this.rejected.labels({ ...labels, reason });
          rejected.set(reason, series);
        }
        return series;
      },
    };
  }
}
