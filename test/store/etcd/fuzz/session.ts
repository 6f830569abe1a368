/**
 * The etcd session the fuzzer mutates: one fixed series of store operations over one connection,
 * as a real etcd answered it (`captured-session.bin`, the server's bytes as they arrived, with
 * grpc-go's HPACK: Huffman strings, the dynamic table; its settings, window updates and pings).
 *
 * Replayed, the operations are all made at once, before any answer, so each takes the stream it
 * took when recorded (1, 3, 5, … in order); no operation makes a second call on the way to its
 * answer except the last (a read at a future revision, which asks for the current one), so the
 * streams line up. `node -r @swc-node/register test/store/etcd/fuzz/record-session.ts` records
 * it again against a fresh etcd.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { StoreError, type Store, type StoreEvent } from '../../../../src/store';
import { EtcdCallError } from '../../../../src/store/etcd/client';

export const CAPTURE_FILE = path.join(__dirname, 'captured-session.bin');

export const PREFIX = '/registry/fuzz/';
export const KEY_A = `${PREFIX}a`;
export const KEY_B = `${PREFIX}b`;
const A1 = Buffer.from(JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'fuzz' }, data: { one: '1'.repeat(120) } }));
const A2 = Buffer.from(JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'fuzz' }, data: { two: '2'.repeat(90) } }));
/** Larger than a frame, so its read comes in two DATA frames, and its watch event too. */
const B = Buffer.from(Array.from({ length: 20 * 1024 }, (_, i) => (i * 7) % 251));

/** What the watch of the session saw. */
export interface WatchLog {
  events: StoreEvent[];
  error?: StoreError;
}

/**
 * The session's operations in order. Revisions are those of a fresh etcd (1 before the first
 * write), so an update can name the revision it expects without asking.
 */
export function sessionOperations(store: Store, watch: WatchLog): Array<() => Promise<unknown>> {
  return [
    () => store.sizeBytes(),
    () => store.create(KEY_A, A1),
    () => store.create(KEY_A, A2), // exists
    () => {
      store.watch(PREFIX, {}, { onEvents: (events) => watch.events.push(...events), onError: (err) => (watch.error = err) });
      return Promise.resolve('watching');
    },
    () => store.update(KEY_A, A2, 2),
    () => store.update(KEY_A, A1, 2), // conflict
    () => store.create(KEY_B, B),
    () => store.list(PREFIX),
    () => store.list(PREFIX, { limit: 1 }),
    () => store.delete(KEY_A),
    () => store.delete(KEY_A), // not found
    () => store.get(KEY_B),
    () => store.count(PREFIX),
    () => store.get(KEY_B, { revision: 1000 }), // future revision: the last, as it makes a second call
  ];
}

/** Which operation waits for the watch to be in place before the next is recorded. */
export const WATCH_OPERATION = 3;

export function loadCapture(): Buffer {
  return fs.readFileSync(CAPTURE_FILE);
}

/** A result or error reduced to what two runs can be compared on (bytes by length and digest). */
export function describeOutcome(value: unknown): unknown {
  if (value instanceof StoreError) return { storeError: value.code, message: value.message, revision: value.revision, current: describeOutcome(value.current) };
  if (value instanceof EtcdCallError) return { etcdError: value.code, message: value.message };
  if (value instanceof Error) return { error: value.name, message: value.message };
  if (value instanceof Uint8Array) return `${value.length} bytes ${createHash('sha1').update(value).digest('hex').slice(0, 12)}`;
  if (Array.isArray(value)) return value.map(describeOutcome);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, describeOutcome(v)]));
  return value;
}
