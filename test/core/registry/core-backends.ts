/**
 * Cores on both backends for the read-semantics tests: embedded (a fresh data dir per core) and
 * etcd (one real etcd per test file, a new client per core, as separate API servers would have).
 * Every core runs on a ManualClock; nothing here sleeps.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  createCore,
  type Core,
  type CoreOptions,
  type RequestContext,
  type ResourceTarget,
  type ApiObject,
  type WatchEvent,
  type WatchStream,
} from '../../../src/core';
import { createStore, type Store, type StoreKind } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import { ManualClock } from '../../../src/clock';
import { StatusError } from '../../../src/status';
import { startEtcd, type EtcdInstance } from '../../support/etcd';

export const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, userAgent: 'kubectl/v1.32.4 (linux/amd64) kubernetes/abc' };
export const naming = createNaming('kubernetes');

export const cm = (ns: string | undefined, name?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'configmaps', namespace: ns, name });
export const nsTarget = (name?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'namespaces', name });
export const pods = (ns: string | undefined, name?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'pods', namespace: ns, name });

export interface TestCore {
  core: Core;
  store: Store;
  clock: ManualClock;
}

export interface CoreBackend {
  readonly name: StoreKind;
  /** A new core (own store client, own cache) on this backend; with `shareWith`, on that core's data. */
  open(options?: Partial<CoreOptions> & { clock?: ManualClock; shareWith?: TestCore }): Promise<TestCore>;
  /** Close every core opened so far (call in afterEach). */
  closeAll(): Promise<void>;
  /** Stop etcd / remove data dirs (call in afterAll). */
  teardown(): Promise<void>;
}

function backend(name: StoreKind): CoreBackend {
  let etcd: EtcdInstance | undefined;
  const dirs: string[] = [];
  let open: TestCore[] = [];
  return {
    name,
    async open(options = {}) {
      const clock = options.clock ?? new ManualClock(Date.UTC(2026, 0, 1, 12));
      let store: Store;
      if (name === 'etcd') {
        etcd ??= await startEtcd();
        store = createStore({ kind: 'etcd', endpoints: [etcd.endpoint] });
      } else if (options.shareWith) {
        store = options.shareWith.store;
      } else {
        const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-reads-'));
        dirs.push(dir);
        store = createStore({ kind: 'embedded', dataDir: dir });
      }
      const { shareWith: _s, ...coreOptions } = options;
      const core = createCore({ compactionIntervalMs: 0, naming, ...coreOptions, store, clock });
      await core.ready();
      const opened = { core, store, clock };
      open.push(opened);
      return opened;
    },
    async closeAll() {
      const closing = open;
      open = [];
      // Embedded cores may share a store: a second close of it is allowed to fail.
      for (const t of closing) await t.core.close().catch(() => undefined);
    },
    async teardown() {
      await etcd?.stop();
      await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
    },
  };
}

export const BACKENDS: readonly StoreKind[] = ['embedded', 'etcd'];

export function coreBackend(name: StoreKind): CoreBackend {
  return backend(name);
}

/** Lets promises, I/O callbacks and immediates run a few turns; not a sleep. */
export async function flush(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** The StatusError a promise rejects with, checked against code and reason. */
export async function statusOf(p: Promise<unknown>, code: number, reason: string): Promise<StatusError> {
  try {
    await p;
  } catch (err) {
    if (!(err instanceof StatusError)) throw err;
    expect({ code: err.code, reason: err.reason, message: err.status.message }).toMatchObject({ code, reason });
    return err;
  }
  throw new Error(`expected a ${code} ${reason} error`);
}

export async function createNamespace(core: Core, name: string): Promise<void> {
  await core.create(nsTarget(), { metadata: { name } }, {}, ctx);
}

export async function createConfigMap(core: Core, ns: string, name: string, labels?: Record<string, string>): Promise<ApiObject> {
  return (await core.create(cm(ns), { metadata: { name, labels }, data: { v: '1' } }, {}, ctx)).object;
}

export const rvOf = (obj: { metadata?: { resourceVersion?: string } }): number => Number(obj.metadata!.resourceVersion);
export const namesOf = (items: ApiObject[]): string[] => items.map((i) => i.metadata!.name!);

/** A watch consumer that records what arrives, for assertions without blocking on iteration. */
export class Recorder {
  readonly events: WatchEvent[] = [];
  ended = false;
  private waiters: Array<() => void> = [];

  constructor(readonly stream: WatchStream) {
    void (async () => {
      for await (const event of stream) {
        this.events.push(event);
        this.wake();
      }
      this.ended = true;
      this.wake();
    })();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Resolves once `n` events arrived or the stream ended (gives up after 10 s of I/O: a failing test, not a timing rule). */
  async waitFor(n: number): Promise<WatchEvent[]> {
    const giveUp = Date.now() + 10_000;
    while (this.events.length < n && !this.ended && Date.now() < giveUp) {
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setImmediate(resolve);
      });
    }
    return this.events;
  }

  async waitEnded(): Promise<void> {
    const giveUp = Date.now() + 10_000;
    while (!this.ended && Date.now() < giveUp) await new Promise<void>((resolve) => setImmediate(resolve));
    expect(this.ended).toBe(true);
  }

  /** `TYPE name` (or `TYPE rv` for bookmarks) of every event so far. */
  summary(): string[] {
    return this.events.map((e) =>
      e.type === 'BOOKMARK'
        ? `BOOKMARK ${e.object.metadata?.resourceVersion}`
        : e.type === 'ERROR'
          ? `ERROR ${e.object.code}`
          : `${e.type} ${(e.object as ApiObject).metadata?.name}`,
    );
  }
}
