/**
 * The controllers' work queue metrics, upstream's `workqueue_*` (names, labels, buckets and
 * help as client-go's workqueue exports them in kube-controller-manager): adds, retries, depth,
 * the wait before an item is picked, the time its work takes, the work in progress.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { WorkQueueMetrics } from '../controllers/work-queue';

/** client-go's workqueue buckets: 10 ns to 10 s, ten per decade boundary. */
const BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

export function workQueueMetrics(registry: Registry): WorkQueueMetrics {
  const registers = [registry];
  const states = new Map<string, () => { depth: number; runningSince: number[] }>();
  const adds = new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name'], registers });
  const retries = new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name'], registers });
  const waited = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested.',
    labelNames: ['name'],
    buckets: BUCKETS,
    registers,
  });
  const worked = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes.',
    labelNames: ['name'],
    buckets: BUCKETS,
    registers,
  });
  new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    labelNames: ['name'],
    registers,
    collect() {
      for (const [name, state] of states) this.set({ name }, state().depth);
    },
  });
  new Gauge({
    name: 'workqueue_unfinished_work_seconds',
    help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    labelNames: ['name'],
    registers,
    collect() {
      const now = performance.now();
      for (const [name, state] of states)
        this.set(
          { name },
          state().runningSince.reduce((sum, t) => sum + (now - t) / 1000, 0),
        );
    },
  });
  new Gauge({
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames: ['name'],
    registers,
    collect() {
      const now = performance.now();
      for (const [name, state] of states)
        this.set(
          { name },
          state().runningSince.reduce((longest, t) => Math.max(longest, (now - t) / 1000), 0),
        );
    },
  });
  return {
    queue(name, state) {
      states.set(name, state);
      return {
        added: () => adds.inc({ name }),
        retried: () => retries.inc({ name }),
        waited: (seconds) => waited.observe({ name }, seconds),
        worked: (seconds) => worked.observe({ name }, seconds),
      };
    },
  };
}
