/**
 * The store's limit as one Node process sees it: raw `etcd3` calls (no Keelson code): unguarded
 * puts of given bytes; guarded creates, the transaction an API server's create sends (put if
 * the key's create revision is 0, as upstream's etcd3 storage does it); and writers contending
 * for one key with mod-revision-guarded transactions, retrying on a failed guard.
 */
import { Etcd3 } from 'etcd3';
import { type Operation, type RunResult, runLoop } from './run-loop';

export interface PutSpec {
  /** `put`: unguarded puts; `create`: each put in a transaction guarded on the key being absent. */
  op: 'put' | 'create';
  concurrency: number;
  value: Uint8Array;
  /** Unique per run. */
  keyPrefix: string;
}

export interface EtcdContendSpec {
  op: 'contend';
  writers: number;
  key: string;
  value: Uint8Array;
}

export type EtcdSpec = PutSpec | EtcdContendSpec;

/** Bulk loading: this many puts per transaction (etcd's default --max-txn-ops is 128). */
const PUTS_PER_TXN = 100;

export class EtcdLoad {
  private constructor(readonly client: Etcd3) {}

  static open(endpoint: string): EtcdLoad {
    return new EtcdLoad(new Etcd3({ hosts: endpoint }));
  }

  run(spec: EtcdSpec, durationMs: number): Promise<RunResult> {
    return spec.op === 'contend' ? this.runContention(spec, durationMs) : this.runPuts(spec, durationMs);
  }

  private runPuts(spec: PutSpec, durationMs: number): Promise<RunResult> {
    const value = Buffer.from(spec.value);
    const op: Operation = async (w, i) => {
      const key = Buffer.from(`${spec.keyPrefix}${w}/${i}`);
      if (spec.op === 'put') {
        await this.client.kv.put({ key, value });
        return { ok: true };
      }
      const res = await this.client.kv.txn({
        compare: [{ key, target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key, value } }],
        failure: [{ request_range: { key } }],
      });
      return res.succeeded ? { ok: true } : { ok: false, label: 'exists' };
    };
    return runLoop(spec.concurrency, durationMs, op);
  }

  private async runContention(spec: EtcdContendSpec, durationMs: number): Promise<RunResult> {
    const key = Buffer.from(spec.key);
    const base = Buffer.from(spec.value).toString('utf8');
    const put = await this.client.kv.put({ key, value: Buffer.from(base) });
    const revisions = Array.from({ length: spec.writers }, () => Number(put.header.revision));
    const counters = { conflicts: 0, attempts: 0 };
    const op: Operation = async (w, i) => {
      // Same work as an API client: change the object, serialise it, write it guarded.
      const object = JSON.parse(base) as { metadata: { annotations?: Record<string, string> } };
      object.metadata.annotations = { ...object.metadata.annotations, [`bench.example.com/writer-${w}`]: String(i) };
      counters.attempts++;
      const res = await this.client.kv.txn({
        compare: [{ key, target: 'Mod', result: 'Equal', mod_revision: revisions[w] }],
        success: [{ request_put: { key, value: Buffer.from(JSON.stringify(object)) } }],
        failure: [{ request_range: { key } }],
      });
      if (res.succeeded) {
        revisions[w] = Number(res.header.revision);
        return { ok: true, label: 'ok' };
      }
      counters.conflicts++;
      revisions[w] = Number(res.responses[0].response_range.kvs[0].mod_revision);
      return { ok: false, label: 'conflict' };
    };
    return runLoop(spec.writers, durationMs, op, counters);
  }

  /** Write entries fast: PUTS_PER_TXN puts per transaction, a few transactions in flight. */
  async load(entries: Iterable<{ key: string; value: Buffer }>): Promise<number> {
    let batch: Array<{ key: string; value: Buffer }> = [];
    let written = 0;
    const inFlight = new Set<Promise<void>>();
    const flush = async (items: Array<{ key: string; value: Buffer }>) => {
      await this.client.kv.txn({ success: items.map((e) => ({ request_put: { key: Buffer.from(e.key), value: e.value } })) });
      written += items.length;
    };
    for (const entry of entries) {
      batch.push(entry);
      if (batch.length === PUTS_PER_TXN) {
        const p: Promise<void> = flush(batch).finally(() => inFlight.delete(p));
        inFlight.add(p);
        batch = [];
        if (inFlight.size >= 4) await Promise.race(inFlight);
      }
    }
    if (batch.length) await flush(batch);
    await Promise.all(inFlight);
    return written;
  }

  close(): void {
    this.client.close();
  }
}
