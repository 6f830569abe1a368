/**
 * Store throughput, both backends side by side, with raw etcd3 puts as the reference the
 * create budgets are measured against (docs/BENCHMARKS.md, "Budgets": a create should cost
 * little more than one guarded etcd txn). Starts its own etcd; runs in well under a minute.
 *
 *   node -r @swc-node/register tools/bench-store.ts [secondsPerCell]
 */
import { Etcd3 } from 'etcd3';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createStore, type Store } from '../src/store';
import { startEtcd } from '../test/support/etcd';

const SECONDS_PER_CELL = Number(process.argv[2] ?? 1.5);
const CONCURRENCY = [1, 64];
const LIST_SIZE = 1000;
const VALUE = Buffer.alloc(1024, 'x'); // about one small object

type Op = (worker: number, i: number) => Promise<unknown>;

/** Runs `op` from `concurrency` loops for the cell's duration; returns completed ops per second. */
async function measure(concurrency: number, op: Op): Promise<number> {
  const warmupEnd = Date.now() + 500; // let the JIT and connections settle
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = 0; Date.now() < warmupEnd; i++) await op(w, -1 - i);
    }),
  );
  let done = 0;
  const start = process.hrtime.bigint();
  const deadline = Date.now() + SECONDS_PER_CELL * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = 0; Date.now() < deadline; i++) {
        await op(w, i);
        done++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return done / seconds;
}

let run = 0;
function createOp(store: Store): Op {
  const tag = ++run;
  return (w, i) => store.create(`/registry/bench/create-${tag}/${w}/${i}`, VALUE);
}

async function seed(store: Store, prefix: string): Promise<string[]> {
  const keys = Array.from({ length: LIST_SIZE }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);
  for (let i = 0; i < keys.length; i += 100) await Promise.all(keys.slice(i, i + 100).map((key) => store.create(key, VALUE)));
  return keys;
}

function format(opsPerSecond: number | undefined): string {
  return opsPerSecond === undefined ? '-' : Math.round(opsPerSecond).toLocaleString('en-US');
}

async function main(): Promise<void> {
  const etcd = await startEtcd();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-bench-'));
  const stores: Record<'etcd' | 'embedded', Store> = {
    etcd: createStore({ kind: 'etcd', endpoints: [etcd.endpoint] }),
    embedded: createStore({ kind: 'embedded', dataDir }),
  };
  const raw = new Etcd3({ hosts: etcd.endpoint });
  const rows: Array<[string, number, number | undefined, number | undefined, number | undefined]> = [];
  try {
    const keys = { etcd: await seed(stores.etcd, '/registry/bench/list/'), embedded: await seed(stores.embedded, '/registry/bench/list/') };
    for (const concurrency of CONCURRENCY) {
      let rawTag = 0;
      const rawPut = await measure(concurrency, (w, i) => raw.put(`/raw/${concurrency}/${++rawTag}/${w}/${i}`).value(VALUE).exec());
      const creates = { etcd: await measure(concurrency, createOp(stores.etcd)), embedded: await measure(concurrency, createOp(stores.embedded)) };
      rows.push(['create', concurrency, creates.etcd, creates.embedded, rawPut]);
      const gets = { etcd: 0, embedded: 0 };
      const lists = { etcd: 0, embedded: 0 };
      for (const kind of ['etcd', 'embedded'] as const) {
        const store = stores[kind];
        gets[kind] = await measure(concurrency, (w, i) => store.get(keys[kind][(((w * 7919 + i) % LIST_SIZE) + LIST_SIZE) % LIST_SIZE]));
        lists[kind] = await measure(concurrency, () => store.list('/registry/bench/list/'));
      }
      rows.push(['get', concurrency, gets.etcd, gets.embedded, undefined]);
      rows.push([`list (${LIST_SIZE} keys)`, concurrency, lists.etcd, lists.embedded, undefined]);
    }
  } finally {
    raw.close();
    await Promise.all(Object.values(stores).map((store) => store.close()));
    await etcd.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }

  const header = ['operation', 'in flight', 'etcd store ops/s', 'embedded ops/s', 'raw etcd3 put ops/s'];
  const table = [header, ...rows.map(([op, c, e, m, r]) => [op, String(c), format(e), format(m), format(r)])];
  const widths = header.map((_, col) => Math.max(...table.map((row) => row[col].length)));
  const line = (row: string[]) => `| ${row.map((cell, col) => (col < 2 ? cell.padEnd(widths[col]) : cell.padStart(widths[col]))).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of table.slice(1)) console.log(line(row));
  for (const [op, c, e, m, r] of rows) {
    if (op === 'create' && r) {
      console.log(`create vs raw put @${c}: etcd store ${((e ?? 0) / r).toFixed(2)}x, embedded ${((m ?? 0) / r).toFixed(2)}x`);
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
