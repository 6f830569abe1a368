/**
 * One fuzz case: the etcd store over its own client, talking to an in-memory peer that sends the
 * case's bytes. The session's operations are all made first; the bytes are read in the chunks
 * the case chose (letting the event loop turn between some of them); then the peer hangs up.
 *
 * What a case must show: every operation settled (nothing hangs once the connection is gone),
 * every failure a clear one (a StoreError, or etcd's own gRPC error with its code and text, as
 * upstream surfaces it), the watch ended, and the client whole: its next call dials a new
 * connection, which works.
 */
import { StoreError, type Store } from '../../../../src/store';
import { EtcdCallError, EtcdClient } from '../../../../src/store/etcd/client';
import { EtcdStore } from '../../../../src/store/etcd/store';
import { InMemorySocket } from './in-memory-socket';
import type { Rng } from './mutate';
import { FLAG, parseFrames, serializeFrames } from './frames';
import { sessionOperations, type WatchLog } from './session';

export interface CaseResult {
  /** Each operation's result or error (undefined: never settled). */
  outcomes: Array<{ ok: boolean; value: unknown } | undefined>;
  watch: WatchLog;
  /** What the case broke, in words; empty when it passed. */
  problems: string[];
  /** Wall time of the case. */
  ms: number;
}

/** The capture up to the end of stream 1 (the session's status call): a peer that answers one call well. */
export function healthyPrefix(capture: Buffer): Buffer {
  const frames = parseFrames(capture);
  const end = frames.findIndex((f) => f.streamId === 1 && (f.flags & FLAG.END_STREAM) !== 0);
  return serializeFrames(frames.slice(0, end + 1));
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What is unclear about `err` as a failure; undefined when a caller (and, through the core, an API client) can act on it. */
export function clearFailure(err: unknown): string | undefined {
  if (err instanceof StoreError) return err.message ? undefined : `a StoreError (${err.code}) without a message`;
  if (err instanceof EtcdCallError) {
    if (!Number.isInteger(err.code) || err.code < 1 || err.code > 16) return `an etcd error with gRPC code ${err.code}: ${err.message}`;
    return err.message ? undefined : `an etcd error (${err.code}) without a message`;
  }
  return `not a storage error: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
}

export async function runCase(chunks: readonly Buffer[], healthy: Buffer, rng: Rng, expectedStatusSize: number): Promise<CaseResult> {
  const started = performance.now();
  // Every dial gets a socket of its own; the first carries the case's bytes. Once the peer has
  // hung up, dials are refused (as a member that is down refuses them) until the recovery call.
  const sockets: InMemorySocket[] = [];
  let refuseDials = false;
  const client = new EtcdClient({
    endpoints: ['http://member-a:2379', 'http://member-b:2379'],
    timeoutMs: 60_000,
    keepaliveMs: 0,
    dial: () => {
      const socket = new InMemorySocket();
      sockets.push(socket);
      if (refuseDials) socket.refuse();
      return socket.asTransport();
    },
  });
  const store: Store = new EtcdStore({ endpoints: ['http://unused:2379'], client });
  const watch: WatchLog = { events: [] };
  const outcomes: CaseResult['outcomes'] = [];
  const problems: string[] = [];
  const pending = sessionOperations(store, watch).map((operation, i) =>
    operation().then(
      (value) => void (outcomes[i] = { ok: true, value }),
      (err: unknown) => void (outcomes[i] = { ok: false, value: err }),
    ),
  );
  const fuzzed = sockets[0]!;
  try {
    fuzzed.connect();
    // Turns of the event loop between some reads: the client's writes, deadlines and follow-up calls run there.
    const turnsAt = new Set(Array.from({ length: rng.int(4) }, () => rng.int(chunks.length)));
    for (const [i, chunk] of chunks.entries()) {
      fuzzed.deliver(chunk);
      if (turnsAt.has(i)) await turn();
    }
    await turn();
    // The peer hangs up, and so does any other member a call went on to (a GOAWAY sends calls on).
    refuseDials = true;
    for (const socket of sockets) socket.hangUp();
    for (let i = 0; i < 3; i++) await turn();

    outcomes.length = pending.length;
    for (const [i, outcome] of outcomes.entries()) {
      if (!outcome) problems.push(`operation ${i} never settled after the peer hung up`);
      else if (!outcome.ok) {
        const unclear = clearFailure(outcome.value);
        if (unclear) problems.push(`operation ${i}: ${unclear}`);
      }
    }
    if (!watch.error) problems.push('the watch did not end when the connection did');
    else if (!StoreError.is(watch.error)) problems.push(`the watch ended with ${clearFailure(watch.error)}`);

    // The client itself is whole: the next call dials the next endpoint and is answered there.
    refuseDials = false;
    const again = store.sizeBytes().then(
      (size) => (size === expectedStatusSize ? undefined : `a call on a new connection answered ${size}`),
      (err: unknown) => `a call on a new connection failed: ${(err as Error).message}`,
    );
    const spare = sockets[sockets.length - 1]!;
    if (spare.destroyed) problems.push('the next call did not dial a new connection');
    spare.connect();
    spare.deliver(healthy);
    const recovered = await Promise.race([
      again,
      turn()
        .then(turn)
        .then(() => 'a call on a new connection was not answered'),
    ]);
    if (recovered) problems.push(recovered);
  } finally {
    await store.close();
  }
  return { outcomes, watch, problems, ms: performance.now() - started };
}
