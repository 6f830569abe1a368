/**
 * A store's limit as one Node process sees it: Keelson's `Store` interface called directly (no
 * API server in front), creates of given bytes and guarded updates of one key. On the embedded
 * store, which must not be open in another process (SQLite in exclusive locking mode); or on
 * etcd through Keelson's own etcd client, beside the raw etcd3 calls of etcd-load.ts.
 */
import { type Store, StoreError, createStore } from '../../../src/store';
import { type Operation, type RunResult, runLoop } from './run-loop';

export interface CreateSpec {
  op: 'create';
  concurrency: number;
  value: Uint8Array;
  keyPrefix: string;
}

export interface StoreContendSpec {
  op: 'contend';
  writers: number;
  key: string;
  value: Uint8Array;
}

export type StoreSpec = CreateSpec | StoreContendSpec;

/** The store to open: an embedded one's data directory, or an etcd endpoint. */
export type StoreTarget = { kind: 'embedded'; dataDir: string } | { kind: 'etcd-store'; endpoint: string };

export class StoreLoad {
  private constructor(readonly store: Store) {}

  static open(target: StoreTarget): StoreLoad {
    return new StoreLoad(
      target.kind === 'embedded' ? createStore({ kind: 'embedded', dataDir: target.dataDir }) : createStore({ kind: 'etcd', endpoints: [target.endpoint] }),
    );
  }

  run(spec: StoreSpec, durationMs: number): Promise<RunResult> {
    return spec.op === 'create' ? this.runCreates(spec, durationMs) : this.runContention(spec, durationMs);
  }

  private runCreates(spec: CreateSpec, durationMs: number): Promise<RunResult> {
    const op: Operation = async (w, i) => {
      await this.store.create(`${spec.keyPrefix}${w}/${i}`, spec.value);
      return { ok: true };
    };
    return runLoop(spec.concurrency, durationMs, op);
  }

  private async runContention(spec: StoreContendSpec, durationMs: number): Promise<RunResult> {
    const base = Buffer.from(spec.value).toString('utf8');
    const first = await this.store.create(spec.key, Buffer.from(base)).catch(async () => (await this.store.get(spec.key)).kv!);
    const revisions = Array.from({ length: spec.writers }, () => first.modRevision);
    const counters = { conflicts: 0, attempts: 0 };
    const op: Operation = async (w, i) => {
      const object = JSON.parse(base) as { metadata: { annotations?: Record<string, string> } };
      object.metadata.annotations = { ...object.metadata.annotations, [`bench.example.com/writer-${w}`]: String(i) };
      counters.attempts++;
      try {
        const kv = await this.store.update(spec.key, Buffer.from(JSON.stringify(object)), revisions[w]);
        revisions[w] = kv.modRevision;
        return { ok: true, label: 'ok' };
      } catch (err) {
        if (!StoreError.is(err, 'conflict') || !err.current) throw err;
        counters.conflicts++;
        revisions[w] = err.current.modRevision;
        return { ok: false, label: 'conflict' };
      }
    };
    return runLoop(spec.writers, durationMs, op, counters);
  }

  async load(entries: Iterable<{ key: string; value: Buffer }>): Promise<number> {
    let written = 0;
    for (const entry of entries) {
      await this.store.create(entry.key, entry.value);
      written++;
    }
    return written;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
