/**
 * Many watchers in one process, each noting when every event arrives: Keelson watches over
 * HTTPS (one keep-alive connection each, newline-delimited JSON events), and raw etcd3 watchers
 * on one client (etcd's own delivery, the reference). The writer lives in the same process, so
 * the acknowledgement and the deliveries are timed by one clock and one event loop: a process
 * the busy machine leaves waiting delays both alike, instead of making deliveries appear to
 * precede the acknowledgement. Events are recognised by the object name `fanout-<seq>` without
 * parsing JSON, so that 1,000 watchers cost the receiving process as little as possible.
 */
import { Etcd3, type Watcher } from 'etcd3';
import { HttpsConnection, type Target, requestHead } from '../https-client';

/** Write the event numbered `seq`; resolves once the store or server acknowledged it. */
export type Writer = (seq: number) => Promise<void>;

/**
 * Write, note the acknowledgement, and gather every watcher's arrival of that write, timed from
 * sending it: a server may acknowledge a write before or after it fans the event out (Keelson
 * writes the responses of a turn after its other writes), so timing from the acknowledgement
 * would reward a late acknowledgement.
 */
async function round(
  write: Writer,
  arrivals: { collect(seq: number, sentAt: number, ackAt: number, timeoutMs: number): Promise<Omit<Delivery, 'writeUs'>> },
  seq: number,
  timeoutMs: number,
): Promise<Delivery> {
  const sentAt = performance.now();
  await write(seq);
  const ackAt = performance.now();
  const d = await arrivals.collect(seq, performance.timeOrigin + sentAt, performance.timeOrigin + ackAt, timeoutMs);
  return { ...d, writeUs: (ackAt - sentAt) * 1000 };
}

const MARKER = 'fanout-';

export interface Delivery {
  /** Watchers that saw the event before the timeout. */
  received: number;
  /** Per receiving watcher: arrival minus the write's sending, µs. */
  latenciesUs: number[];
  /** Arrivals before the write's acknowledgement. */
  beforeAck: number;
  /** From sending the write to its acknowledgement, µs. */
  writeUs: number;
}

export interface WatchCounts {
  watchers: number;
  /** Events seen out of order or twice (should stay 0). */
  outOfOrder: number;
  /** Watch streams that ended or failed while open. */
  ended: number;
}

/** Arrival bookkeeping shared by both kinds of watchers. */
class Arrivals {
  private readonly bySeq = new Map<number, number[]>();
  private readonly waiters = new Map<number, () => void>();
  private readonly lastSeq: number[];
  outOfOrder = 0;
  ended = 0;

  constructor(readonly watchers: number) {
    this.lastSeq = new Array<number>(watchers).fill(0);
  }

  record(watcher: number, seq: number, at: number): void {
    if (seq <= this.lastSeq[watcher]) {
      this.outOfOrder++;
      return;
    }
    this.lastSeq[watcher] = seq;
    let list = this.bySeq.get(seq);
    if (!list) this.bySeq.set(seq, (list = []));
    list.push(at);
    if (list.length === this.watchers) this.waiters.get(seq)?.();
  }

  async collect(seq: number, sentAt: number, ackAt: number, timeoutMs: number): Promise<Omit<Delivery, 'writeUs'>> {
    const list = this.bySeq.get(seq) ?? [];
    if (list.length < this.watchers) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.waiters.set(seq, () => {
          clearTimeout(timer);
          resolve();
        });
      });
      this.waiters.delete(seq);
    }
    const arrivals = this.bySeq.get(seq) ?? [];
    this.bySeq.delete(seq);
    return { received: arrivals.length, latenciesUs: arrivals.map((at) => (at - sentAt) * 1000), beforeAck: arrivals.filter((at) => at < ackAt).length };
  }

  counts(): WatchCounts {
    return { watchers: this.watchers, outOfOrder: this.outOfOrder, ended: this.ended };
  }
}

function seqAfterMarker(text: string, at: number): number {
  let seq = 0;
  for (let i = at + MARKER.length; i < text.length; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) break;
    seq = seq * 10 + c;
  }
  return seq;
}

export class HttpsWatchers {
  private readonly connections: HttpsConnection[] = [];
  private readonly arrivals: Arrivals;

  private constructor(
    n: number,
    private readonly write: Writer,
  ) {
    this.arrivals = new Arrivals(n);
  }

  /**
   * Open `n` watches of `path` (a collection URL with `?watch=1...`); resolves once all answered
   * 200. Writes POST `before + "fanout-<seq>" + after` to `create.path` on a connection of their own.
   */
  static async open(target: Target, n: number, path: string, create: { path: string; before: string; after: string }): Promise<HttpsWatchers> {
    const writer = await HttpsConnection.connect(target);
    const createHead = requestHead('POST', create.path, target, { 'content-type': 'application/json' });
    const write: Writer = async (seq) => {
      const res = await writer.request(createHead, Buffer.from(`${create.before}${MARKER}${seq}${create.after}`), { keepBody: false });
      if (res.status !== 201) throw new Error(`create fanout-${seq}: ${res.status}`);
    };
    const watchers = new HttpsWatchers(n, write);
    watchers.connections.push(writer);
    const head = requestHead('GET', path, target);
    for (let i = 0; i < n; i += 32) {
      await Promise.all(Array.from({ length: Math.min(32, n - i) }, (_, j) => watchers.start(target, head, i + j)));
    }
    return watchers;
  }

  private async start(target: Target, head: string, index: number): Promise<void> {
    const conn = await HttpsConnection.connect(target);
    this.connections.push(conn);
    let partial = '';
    await new Promise<void>((resolve, reject) => {
      conn
        .request(head, undefined, {
          onHead: (status) => (status === 200 ? resolve() : reject(new Error(`watch answered ${status}`))),
          onBody: (chunk, receivedAt) => {
            const at = performance.timeOrigin + receivedAt;
            let text = partial + chunk.toString('latin1');
            let nl: number;
            while ((nl = text.indexOf('\n')) >= 0) {
              const marker = text.indexOf(MARKER);
              if (marker >= 0 && marker < nl && text.startsWith('{"type":"ADDED"')) this.arrivals.record(index, seqAfterMarker(text, marker), at);
              text = text.slice(nl + 1);
            }
            partial = text;
          },
        })
        .then(
          () => this.arrivals.ended++,
          () => this.arrivals.ended++,
        );
    });
  }

  round(seq: number, timeoutMs: number): Promise<Delivery> {
    return round(this.write, this.arrivals, seq, timeoutMs);
  }

  counts(): WatchCounts {
    return this.arrivals.counts();
  }

  close(): void {
    for (const conn of this.connections) conn.close();
  }
}

export class EtcdWatchers {
  private readonly watchers: Watcher[] = [];
  private readonly arrivals: Arrivals;

  private constructor(
    private readonly client: Etcd3,
    n: number,
  ) {
    this.arrivals = new Arrivals(n);
  }

  /**
   * `n` watchers of `prefix` on one etcd3 client (one gRPC watch stream, as a Node process would
   * have). Writes put `value` at `<prefix>fanout-<seq>` through the same client.
   */
  static async open(endpoint: string, n: number, prefix: string, value: Uint8Array): Promise<EtcdWatchers> {
    const watchers = new EtcdWatchers(new Etcd3({ hosts: endpoint }), n);
    for (let i = 0; i < n; i++) {
      const watcher = await watchers.client.watch().prefix(prefix).create();
      watcher.on('put', (kv) => {
        const at = performance.timeOrigin + performance.now();
        const key = kv.key.toString('latin1');
        const marker = key.lastIndexOf(MARKER);
        if (marker >= 0) watchers.arrivals.record(i, seqAfterMarker(key, marker), at);
      });
      watcher.on('error', () => watchers.arrivals.ended++);
      watchers.watchers.push(watcher);
    }
    const bytes = Buffer.from(value);
    watchers.write = async (seq) => {
      await watchers.client.put(`${prefix}${MARKER}${seq}`).value(bytes).exec();
    };
    return watchers;
  }

  private write: Writer = async () => {};

  round(seq: number, timeoutMs: number): Promise<Delivery> {
    return round(this.write, this.arrivals, seq, timeoutMs);
  }

  counts(): WatchCounts {
    return this.arrivals.counts();
  }

  async close(): Promise<void> {
    await Promise.all(this.watchers.map((w) => w.cancel().catch(() => {})));
    this.client.close();
  }
}
