/**
 * The controllers' work queue and upstream's workqueue metrics it reports: adds (an item queued
 * twice counts once), retries, the wait before an item is picked and the time its work takes,
 * depth and the work in progress read when scraped, through a real prom-client registry; items
 * added later on the queue's clock.
 */
import { Registry } from 'prom-client';
import { WorkQueue, type WorkQueueMetrics } from '../../src/controllers/work-queue';
import { workQueueMetrics } from '../../src/server/workqueue-metrics';
import { ManualClock } from '../../src/clock';
import { eventually } from '../support/eventually';

/** One sample of `name{name="q"}` in the exposition text. */
async function sample(registry: Registry, line: string): Promise<number | undefined> {
  const text = await registry.metrics();
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

test('a queue reports its adds, retries, waits and work; depth and work in progress are read when scraped', async () => {
  const registry = new Registry();
  const metrics: WorkQueueMetrics = workQueueMetrics(registry);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let failedOnce = false;
  const queue = new WorkQueue<string>(
    (k) => k,
    async (k) => {
      if (k === 'flaky' && !failedOnce) {
        failedOnce = true;
        throw new Error('not yet');
      }
      if (k === 'slow') await held;
    },
    { name: 'q', metrics, workers: 1, baseBackoffMs: 1 },
  );
  queue.add('slow');
  queue.add('flaky');
  queue.add('flaky');
  queue.start();
  // `slow` runs (one worker), `flaky` waits; the gauges read the time `slow` has been running.
  await eventually(async () => ((await sample(registry, 'workqueue_longest_running_processor_seconds{name="q"}')) ?? 0) > 0.01);
  expect(await sample(registry, 'workqueue_depth{name="q"}')).toBe(1);
  expect(await sample(registry, 'workqueue_longest_running_processor_seconds{name="q"}')).toBeGreaterThan(0.01);
  expect(await sample(registry, 'workqueue_unfinished_work_seconds{name="q"}')).toBeGreaterThan(0.01);
  release();
  await queue.idle();
  expect(await sample(registry, 'workqueue_adds_total{name="q"}')).toBe(3);
  expect(await sample(registry, 'workqueue_retries_total{name="q"}')).toBe(1);
  expect(await sample(registry, 'workqueue_queue_duration_seconds_count{name="q"}')).toBe(3);
  expect(await sample(registry, 'workqueue_work_duration_seconds_count{name="q"}')).toBe(3);
  expect(await sample(registry, 'workqueue_work_duration_seconds_bucket{le="10",name="q"}')).toBe(3);
  expect(await sample(registry, 'workqueue_depth{name="q"}')).toBe(0);
  expect(await sample(registry, 'workqueue_unfinished_work_seconds{name="q"}')).toBe(0);
  queue.stop();
});

test('a queue without a name or metrics reports nothing', async () => {
  const queue = new WorkQueue<string>(
    (k) => k,
    async () => {},
  );
  queue.add('a');
  queue.start();
  await queue.idle();
  queue.stop();
});

test('addAfter adds an item when its time comes on the clock, an item waiting twice at the earlier time; idle does not wait for it, stop cancels it', async () => {
  const clock = new ManualClock();
  const handled: string[] = [];
  const queue = new WorkQueue<string>(
    (k) => k,
    async (k) => void handled.push(k),
    { clock },
  );
  queue.start();
  queue.addAfter('a', 5_000);
  queue.addAfter('a', 2_000);
  queue.addAfter('a', 8_000);
  queue.addAfter('b', 3_000);
  await queue.idle();
  expect(handled).toEqual([]);
  clock.advance(1_999);
  await queue.idle();
  expect(handled).toEqual([]);
  clock.advance(1);
  await queue.idle();
  expect(handled).toEqual(['a']);
  // `a` waited once, at 2 s: nothing more at 5 s or 8 s.
  clock.advance(8_000);
  await queue.idle();
  expect(handled).toEqual(['a', 'b']);
  queue.addAfter('c', 1_000);
  expect(clock.pending()).toBe(1);
  queue.stop();
  expect(clock.pending()).toBe(0);
});
