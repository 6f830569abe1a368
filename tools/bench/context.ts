/**
 * What every scenario gets: the options, the compiled build, the load generator, the timing,
 * the rows and budget checks it adds to, scratch directories and etcd instances that are
 * cleaned up at the end, and the ReplicaSet as Keelson stores it (learnt from the server).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type EtcdInstance, startEtcd } from '../../test/support/etcd';
import type { ApiClient } from './api';
import type { Build } from './build';
import { createBodyTemplate, replicaSet, replicaSetsPath, storedFormOf } from './fixtures';
import type { Child } from './ipc';
import type { Timing } from './measure';
import { findPid } from './proc-stats';
import type { BudgetCheck, Row } from './report';

export interface Options {
  quick: boolean;
  /** The store for scenarios 2-5, 14 and 15 (scenario 1 always measures both). */
  store: 'etcd' | 'embedded';
  /** Scenario numbers to run. */
  only: Set<number>;
  /**
   * Also profile a hot path with --cpu-prof and summarise it; `custom-resources` profiles
   * scenarios 14 and 15's servers instead (their creates, gets, lists, patches and the 1,000 definitions).
   */
  profile: false | 'create' | 'get' | 'cached-get' | 'list' | 'watch' | 'startup' | 'custom-resources';
  /** Build the server from this git revision instead of the working tree. */
  rev?: string;
  /** Keep the .cpuprofile here. */
  profileOut?: string;
}

export interface Etcd extends EtcdInstance {
  pid?: number;
}

export interface Context {
  options: Options;
  build: Build;
  worker: Child;
  timing: Timing;
  rows: Row[];
  budgets: BudgetCheck[];
  /** Extra sections printed after the table (profile summary, encodings detail). */
  sections: string[];
  log(line: string): void;
  tmpDir(label: string): Promise<string>;
  etcd(): Promise<Etcd>;
  /** A ReplicaSet as the API returns it (resourceVersion included); set by the first scenario that creates one. */
  template?: Record<string, unknown>;
  cleanup(): Promise<void>;
}

export function createContext(options: Options, build: Build, worker: Child, timing: Timing, log: (line: string) => void): Context {
  const dirs: string[] = [];
  const etcds: EtcdInstance[] = [];
  return {
    options,
    build,
    worker,
    timing,
    rows: [],
    budgets: [],
    sections: [],
    log,
    async tmpDir(label) {
      const dir = await mkdtemp(path.join(os.tmpdir(), `keelson-bench-${label}-`));
      dirs.push(dir);
      return dir;
    },
    async etcd() {
      const etcd = await startEtcd();
      etcds.push(etcd);
      return { ...etcd, pid: findPid(`--data-dir ${etcd.dataDir}`) };
    },
    async cleanup() {
      await Promise.all(etcds.map((e) => e.stop().catch(() => {})));
      await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    },
  };
}

/**
 * Create `namespace` and one ReplicaSet in it through the API, and remember the object as the
 * template for stored copies and raw-store writes (so they carry the bytes Keelson writes).
 */
export async function learnTemplate(ctx: Context, api: ApiClient, namespace: string): Promise<Record<string, unknown>> {
  await api.namespace(namespace);
  await api.expect('POST', replicaSetsPath(namespace), replicaSet('template', namespace), [201, 409]);
  const object = await api.expect('GET', `${replicaSetsPath(namespace)}/template`, undefined, [200]);
  ctx.template ??= object;
  return object;
}

/** The bytes Keelson stores for the template object. */
export function storedBytes(template: Record<string, unknown>): Buffer {
  return Buffer.from(JSON.stringify(storedFormOf(template)));
}

export { createBodyTemplate };
