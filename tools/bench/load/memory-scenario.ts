/**
 * The phases of the memory-under-sustained-writes measurement, shared by the bench tool
 * (watch-memory.ts) and the fault suite: an idle reading, the load with a reading every
 * `sampleMs` (each after a full GC in the server), a watch resumed from a resourceVersion
 * `resumeAgeMs` old at the end of the load, the objects it left deleted, the watchers drained,
 * then idle readings for `afterMs`.
 */
import type { Target } from '../https-client';
import { SustainedWrites, type WatcherTally } from './sustained-writes';

export interface MemoryReading {
  heapUsed: number;
  external: number;
  rss: number;
}

export interface MemorySample {
  phase: 'idle' | 'load' | 'after';
  /** Seconds since the load started (negative before). */
  t: number;
  heapMb: number;
  externalMb: number;
  /** Heap plus external: the live memory after GC. */
  liveMb: number;
  rssMb: number;
  acked?: number;
}

export interface MemorySummary {
  idle: MemorySample;
  /** Live memory after GC over the last half of the load: min, max, and the spread around their mean. */
  lastHalfLiveMb: { min: number; max: number; spreadPct: number };
  maxRssMb: number;
  maxLiveMb: number;
  /** The last idle reading after the load, and how far it is from the idle figure. */
  after?: MemorySample & { liveVsIdlePct: number };
  writes: number;
  /** Objects the load had left, deleted once it stopped (part of `writes`). */
  deletedAtEnd: number;
  writeErrors: number;
  writesPerSecond: number;
  watchers: { all: number; complete: number; outOfOrder: number; ended: number; errors: string[] };
  resume: Awaited<ReturnType<SustainedWrites['resume']>>;
  samples: MemorySample[];
}

export interface MemoryScenario {
  /** The server, as the admin. */
  target: Target;
  /** The load: 8 writers at this rate in all, at most 4,000 ConfigMaps of ~1 KB alive, 20 watchers. */
  writesPerSecond: number;
  /** A full GC in the server, then its memory. */
  gc(): Promise<MemoryReading>;
  loadMs: number;
  afterMs: number;
  sampleMs: number;
  resumeAgeMs: number;
  onSample?: (sample: MemorySample) => void;
}

const MB = 1024 * 1024;
const round = (n: number) => Math.round(n * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runMemoryScenario(s: MemoryScenario): Promise<MemorySummary> {
  const load = new SustainedWrites({
    target: s.target,
    namespace: 'load',
    clients: 8,
    writesPerSecond: s.writesPerSecond,
    objects: 4000,
    watchers: 20,
    valueBytes: 1024,
  });
  const samples: MemorySample[] = [];
  let startedAt = Date.now();
  const read = async (phase: MemorySample['phase']): Promise<MemorySample> => {
    const m = await s.gc();
    const sample: MemorySample = {
      phase,
      t: Math.round((Date.now() - startedAt) / 1000),
      heapMb: round(m.heapUsed / MB),
      externalMb: round(m.external / MB),
      liveMb: round((m.heapUsed + m.external) / MB),
      rssMb: round(m.rss / MB),
      ...(phase === 'load' ? { acked: load.acked } : {}),
    };
    samples.push(sample);
    s.onSample?.(sample);
    return sample;
  };
  await load.prepare();
  const idle = await read('idle');
  startedAt = Date.now();
  load.start();
  const loadEnd = startedAt + s.loadMs;
  while (Date.now() + s.sampleMs <= loadEnd) {
    await sleep(s.sampleMs);
    await read('load');
  }
  await sleep(Math.max(0, loadEnd - Date.now()));
  const resume = await load.resume(s.resumeAgeMs);
  await load.stop();
  const writesPerSecond = Math.round(load.acked / ((Date.now() - startedAt) / 1000));
  // The load leaves nothing behind, so that memory after it compares with the idle figure.
  const deletedAtEnd = await load.deleteAll();
  await load.drain(60_000);
  const tallies: WatcherTally[] = load.tallies();
  const afterEnd = Date.now() + s.afterMs;
  let after: MemorySample | undefined;
  while (Date.now() + s.sampleMs <= afterEnd) {
    await sleep(s.sampleMs);
    after = await read('after');
  }
  load.close();
  const loadSamples = samples.filter((x) => x.phase === 'load');
  const lastHalf = loadSamples.filter((x) => x.t * 1000 >= s.loadMs / 2);
  const lives = lastHalf.map((x) => x.liveMb);
  const min = Math.min(...lives);
  const max = Math.max(...lives);
  const mean = (min + max) / 2;
  return {
    idle,
    lastHalfLiveMb: { min, max, spreadPct: round(((max - mean) / mean) * 100) },
    maxRssMb: Math.max(...samples.map((x) => x.rssMb)),
    maxLiveMb: Math.max(...samples.map((x) => x.liveMb)),
    ...(after ? { after: { ...after, liveVsIdlePct: round(((after.liveMb - idle.liveMb) / idle.liveMb) * 100) } } : {}),
    writes: load.acked,
    deletedAtEnd,
    writeErrors: load.errors,
    writesPerSecond,
    watchers: {
      all: tallies.length,
      complete: tallies.filter((t) => t.events === load.acked && t.outOfOrder === 0).length,
      outOfOrder: tallies.reduce((n, t) => n + t.outOfOrder, 0),
      ended: tallies.filter((t) => t.ended).length,
      errors: [...new Set(tallies.flatMap((t) => (t.error ? [t.error] : [])))],
    },
    resume,
    samples,
  };
}
