/**
 * The differential oracle: the etcd store's calls made through its own client and checked, call
 * by call, against etcd3 (grpc-js, protobufjs) on the same etcd. The store above sees its own
 * client's answers; every disagreement is kept, in words, for the test to show.
 *
 * - Reads (Range, Status) go through both at once. Answered at the same revision, the two
 *   answers must be the same field for field; a read at a fixed revision must be the same
 *   whatever the revision it was answered at. Errors must have the same gRPC code, and the same
 *   text when etcd wrote it.
 * - A write cannot be made twice, so each goes through one client, chosen by a seeded coin (the
 *   store's writes are encoded by its own Txn codec, etcd3's by protobufjs), and the other
 *   checks its answer by reading at the write's revision: each put is there with its value,
 *   each delete's previous values were there just before, each read inside the transaction
 *   reads the same, and the transaction's compares, evaluated on what the other reads, give
 *   the branch etcd took. A compaction is made again through the other, which must be told it
 *   was compacted already.
 * - A watch is opened through both; when the store's ends, etcd3's runs on until it has caught up
 *   (or 5 s), then the events both saw are compared in order, with their previous values, and
 *   the ends (a compaction's cancel, a broken stream) by what they say.
 */
import type { KeyValue } from '../../../../src/gen/etcd/mvccpb/kv';
import {
  type CompactionRequest,
  type CompactionResponse,
  type Compare,
  Compare_CompareResult,
  Compare_CompareTarget,
  type DeleteRangeRequest,
  type DeleteRangeResponse,
  type RangeRequest,
  type RangeResponse,
  type StatusResponse,
  type TxnRequest,
  type TxnResponse,
  type WatchCreateRequest,
  type WatchResponse,
} from '../../../../src/gen/etcd/etcdserverpb/rpc';
import { GrpcCode } from '../../../../src/status';
import { EtcdCallError, type EtcdCalls, type WatchStream, type WatchStreamHandlers } from '../../../../src/store/etcd/client';

/** What the oracle compared, for the report. */
export interface OracleFigures {
  readsCompared: number;
  /** Reads at the latest revision that the two clients got at different revisions (writes raced them). */
  readsRaced: number;
  errorsCompared: number;
  writesByOwnClient: number;
  writesByEtcd3: number;
  writesCrossChecked: number;
  watchesCompared: number;
  eventsCompared: number;
}

/** Failures that are the transport's, not etcd's: compared by code only (each client words them its own way). */
const TRANSPORT_CODES: ReadonlySet<number> = new Set([GrpcCode.UNAVAILABLE, GrpcCode.DEADLINE_EXCEEDED, GrpcCode.CANCELLED]);

export class DifferentialCalls implements EtcdCalls {
  readonly mismatches: string[] = [];
  readonly figures: OracleFigures = {
    readsCompared: 0,
    readsRaced: 0,
    errorsCompared: 0,
    writesByOwnClient: 0,
    writesByEtcd3: 0,
    writesCrossChecked: 0,
    watchesCompared: 0,
    eventsCompared: 0,
  };
  /** Comparisons still running (a watch's, after the store ended it). */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly own: EtcdCalls,
    private readonly etcd3: EtcdCalls,
    /** The seeded coin that picks the client of each write. */
    private readonly coin: () => number,
  ) {}

  async range(request: RangeRequest, now?: boolean): Promise<RangeResponse> {
    const [mine, theirs] = await Promise.allSettled([this.own.range(request, now), this.etcd3.range(request)]);
    this.compareSettled(`Range ${text(request.key)}@${request.revision}`, mine, theirs, (a, b) => {
      if (a.header?.revision === b.header?.revision) return same(a, b);
      if (request.revision !== 0) return same({ ...a, header: undefined }, { ...b, header: undefined });
      this.figures.readsRaced++;
      return undefined;
    });
    return unwrap(mine);
  }

  async status(): Promise<StatusResponse> {
    const [mine, theirs] = await Promise.allSettled([this.own.status(), this.etcd3.status()]);
    // The database grows between the two reads; the version does not.
    this.compareSettled('Status', mine, theirs, (a, b) => same(a.version, b.version));
    return unwrap(mine);
  }

  async txn(request: TxnRequest): Promise<TxnResponse> {
    const [by, other] = this.pick();
    const outcome = await settle(by.txn(request));
    if (outcome.status === 'rejected') {
      await this.checkRefusal('Txn', outcome.reason, () => other.txn(request));
      throw outcome.reason;
    }
    await this.crossCheck(`Txn on ${request.compare.map((c) => text(c.key)).join(',')}`, async () => {
      const res = outcome.value;
      const revision = res.header!.revision;
      const problems: string[] = [];
      // The compares, on what the other client reads where etcd evaluated them: just before a
      // transaction that wrote, at the revision of one that did not.
      const compared = res.succeeded ? revision - 1 : revision;
      let holds = true;
      for (const c of request.compare) holds &&= evaluate(c, (await other.range(at(c.key, compared))).kvs[0]);
      if (holds !== res.succeeded)
        problems.push(`etcd took the ${res.succeeded ? 'success' : 'failure'} branch; the compares read through the other client say ${holds}`);
      const ops = res.succeeded ? request.success : request.failure;
      for (const [i, op] of ops.entries()) {
        const answer = res.responses[i];
        if (op.requestPut) {
          const kv = (await other.range(at(op.requestPut.key, revision))).kvs[0];
          if (!kv || kv.modRevision !== revision || !Buffer.from(kv.value).equals(Buffer.from(op.requestPut.value)))
            problems.push(`put ${i} is not read back at ${revision}`);
        } else if (op.requestDeleteRange) {
          const d = op.requestDeleteRange;
          const before = await other.range({ ...at(d.key, revision - 1), rangeEnd: d.rangeEnd });
          const after = await other.range({ ...at(d.key, revision), rangeEnd: d.rangeEnd });
          if (after.kvs.length > 0) problems.push(`delete ${i} still reads ${after.kvs.length} keys at ${revision}`);
          if (d.prevKv) problems.push(...mismatch(`delete ${i}'s previous values`, answer?.responseDeleteRange?.prevKvs, before.kvs));
        } else if (op.requestRange) {
          const read = await other.range({ ...op.requestRange, revision: op.requestRange.revision || revision });
          problems.push(...mismatch(`read ${i}`, withoutHeader(answer?.responseRange), withoutHeader(read)));
        }
      }
      return problems;
    });
    return outcome.value;
  }

  async deleteRange(request: DeleteRangeRequest): Promise<DeleteRangeResponse> {
    const [by, other] = this.pick();
    const outcome = await settle(by.deleteRange(request));
    if (outcome.status === 'rejected') {
      await this.checkRefusal('DeleteRange', outcome.reason, () => other.deleteRange(request));
      throw outcome.reason;
    }
    await this.crossCheck(`DeleteRange ${text(request.key)}`, async () => {
      const res = outcome.value;
      const revision = res.header!.revision;
      const range = (r: number) => other.range({ ...at(request.key, r), rangeEnd: request.rangeEnd });
      const problems: string[] = [];
      if ((await range(revision)).kvs.length > 0) problems.push(`keys still read at ${revision}`);
      // Nothing deleted: nothing written, and the revision is the current one.
      const before = res.deleted > 0 ? await range(revision - 1) : await range(revision);
      if (before.kvs.length !== res.deleted) problems.push(`deleted ${res.deleted}, the other read ${before.kvs.length} just before`);
      if (request.prevKv) problems.push(...mismatch('previous values', res.prevKvs, res.deleted > 0 ? before.kvs : []));
      return problems;
    });
    return outcome.value;
  }

  async compact(request: CompactionRequest): Promise<CompactionResponse> {
    const [by, other] = this.pick();
    const outcome = await settle(by.compact(request));
    // Made again through the other: compacted already, whichever answered first.
    const again = await settle(other.compact(request));
    this.figures.writesCrossChecked++;
    if (again.status === 'fulfilled' || !String((again.reason as Error).message).includes('required revision has been compacted')) {
      this.mismatches.push(
        `Compact ${request.revision} made again through the other client: ${again.status === 'fulfilled' ? 'it compacted' : (again.reason as Error).message}`,
      );
    }
    if (outcome.status === 'rejected') {
      this.compareErrors(`Compact ${request.revision}`, outcome.reason, again.status === 'rejected' ? again.reason : undefined);
      throw outcome.reason;
    }
    return outcome.value;
  }

  watch(create: WatchCreateRequest, handlers: WatchStreamHandlers): WatchStream {
    const mine: Recorded = { events: [], canceled: [] };
    const theirs: Recorded = { events: [], canceled: [] };
    const recordInto = (log: Recorded, response: WatchResponse) => {
      log.events.push(...response.events.map((e) => ({ revision: e.kv?.modRevision ?? 0, ...describe(e) })));
      if (response.canceled || response.compactRevision > 0) log.canceled.push({ compactRevision: response.compactRevision, reason: response.cancelReason });
    };
    let caughtUp: () => void = () => undefined;
    const oracle = this.etcd3.watch(create, {
      onResponse: (response) => {
        recordInto(theirs, response);
        if (mine.ended && theirs.events.length >= mine.events.length) caughtUp();
      },
      onEnd: (err) => {
        theirs.end = err;
        caughtUp();
      },
    });
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      mine.ended = true;
      const comparison = (async () => {
        if (theirs.events.length < mine.events.length && !theirs.end) {
          await new Promise<void>((resolve) => {
            caughtUp = resolve;
            setTimeout(resolve, 5_000).unref();
          });
        }
        oracle.cancel();
        this.compareWatches(create, mine, theirs);
      })();
      this.pending.add(comparison);
      void comparison.finally(() => this.pending.delete(comparison));
    };
    const stream = this.own.watch(create, {
      onResponse: (response) => {
        recordInto(mine, response);
        handlers.onResponse(response);
      },
      onEnd: (err) => {
        mine.end = err;
        finish();
        handlers.onEnd(err);
      },
    });
    return {
      cancel: () => {
        stream.cancel();
        finish();
      },
    };
  }

  close(): void {
    this.own.close();
    this.etcd3.close();
  }

  /** Waits for the comparisons still running; the mismatches are then complete. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private pick(): [EtcdCalls, EtcdCalls] {
    if (this.coin() < 0.5) {
      this.figures.writesByOwnClient++;
      return [this.own, this.etcd3];
    }
    this.figures.writesByEtcd3++;
    return [this.etcd3, this.own];
  }

  private async crossCheck(what: string, check: () => Promise<string[]>): Promise<void> {
    this.figures.writesCrossChecked++;
    try {
      for (const problem of await check()) this.mismatches.push(`${what}: ${problem}`);
    } catch (err) {
      this.mismatches.push(`${what}: the other client could not check it: ${(err as Error).message}`);
    }
  }

  /**
   * A write one client had refused: etcd's own refusals (a request too large, a future
   * revision) wrote nothing, so the other client makes it too and must be refused alike. A
   * transport failure may have written: not made again.
   */
  private async checkRefusal(what: string, reason: unknown, again: () => Promise<unknown>): Promise<void> {
    if (!(reason instanceof EtcdCallError) || TRANSPORT_CODES.has(reason.code)) return;
    const second = await settle(again());
    if (second.status === 'fulfilled') this.mismatches.push(`${what}: refused by one client (${reason.message}), done by the other`);
    else this.compareErrors(what, reason, second.reason);
  }

  private compareSettled<T>(what: string, mine: PromiseSettledResult<T>, theirs: PromiseSettledResult<T>, compare: (a: T, b: T) => string | undefined): void {
    if (mine.status === 'fulfilled' && theirs.status === 'fulfilled') {
      this.figures.readsCompared++;
      const difference = compare(mine.value, theirs.value);
      if (difference) this.mismatches.push(`${what}: ${difference}`);
    } else if (mine.status === 'rejected' && theirs.status === 'rejected') {
      this.compareErrors(what, mine.reason, theirs.reason);
    } else {
      const [ok, failed] = mine.status === 'fulfilled' ? ['own client', theirs] : ['etcd3', mine];
      this.mismatches.push(`${what}: answered only by the ${ok}; the other failed with ${((failed as PromiseRejectedResult).reason as Error).message}`);
    }
  }

  private compareErrors(what: string, a: unknown, b: unknown): void {
    this.figures.errorsCompared++;
    if (!(a instanceof EtcdCallError) || !(b instanceof EtcdCallError)) {
      this.mismatches.push(`${what}: failed with ${String(a)} and ${String(b)}`);
      return;
    }
    if (a.code !== b.code) this.mismatches.push(`${what}: gRPC code ${a.code} (${a.message}) through the own client, ${b.code} (${b.message}) through etcd3`);
    else if (!TRANSPORT_CODES.has(a.code) && a.message !== b.message)
      this.mismatches.push(`${what}: "${a.message}" through the own client, "${b.message}" through etcd3`);
  }

  private compareWatches(create: WatchCreateRequest, mine: Recorded, theirs: Recorded): void {
    this.figures.watchesCompared++;
    const what = `Watch ${text(create.key)} from ${create.startRevision}`;
    // A watch from "now" starts where each client's reached etcd: compare from the later start.
    let a = mine.events;
    let b = theirs.events;
    if (create.startRevision === 0 && a.length > 0 && b.length > 0) {
      const from = Math.max(a[0]!.revision, b[0]!.revision);
      a = a.filter((e) => e.revision >= from);
      b = b.filter((e) => e.revision >= from);
    }
    const common = Math.min(a.length, b.length);
    this.figures.eventsCompared += common;
    for (let i = 0; i < common; i++) {
      const difference = same(a[i], b[i]);
      if (difference) {
        this.mismatches.push(`${what}: event ${i}: ${difference}`);
        return;
      }
    }
    if (b.length < a.length && !theirs.end) this.mismatches.push(`${what}: etcd3 saw ${b.length} events, the own client ${a.length}`);
    const difference = same(mine.canceled, theirs.canceled);
    if (difference && !(mine.end && theirs.end)) this.mismatches.push(`${what}: cancelled differently: ${difference}`);
    if (mine.end && theirs.end && mine.end.code !== theirs.end.code && !(TRANSPORT_CODES.has(mine.end.code) && TRANSPORT_CODES.has(theirs.end.code))) {
      this.mismatches.push(`${what}: ended with gRPC code ${mine.end.code} (${mine.end.message}) and ${theirs.end.code} (${theirs.end.message})`);
    }
  }
}

interface Recorded {
  events: Array<{ revision: number } & Record<string, unknown>>;
  canceled: Array<{ compactRevision: number; reason: string }>;
  end?: EtcdCallError;
  ended?: boolean;
}

function settle<T>(promise: Promise<T>): Promise<PromiseSettledResult<T>> {
  return Promise.allSettled([promise]).then(([result]) => result!);
}

function unwrap<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

/** A range of one key at `revision`. */
function at(key: Uint8Array, revision: number): RangeRequest {
  return { key, rangeEnd: new Uint8Array(0), limit: 0, revision, serializable: false, keysOnly: false, countOnly: false };
}

/** One compare as etcd evaluates it, on the key's value read at the transaction's revision. */
function evaluate(c: Compare, kv: KeyValue | undefined): boolean {
  let actual: number | Buffer;
  let expected: number | Buffer;
  if (c.target === Compare_CompareTarget.CREATE) [actual, expected] = [kv?.createRevision ?? 0, c.createRevision ?? 0];
  else if (c.target === Compare_CompareTarget.MOD) [actual, expected] = [kv?.modRevision ?? 0, c.modRevision ?? 0];
  else if (c.target === Compare_CompareTarget.VERSION) [actual, expected] = [kv?.version ?? 0, c.version ?? 0];
  else [actual, expected] = [Buffer.from(kv?.value ?? []), Buffer.from(c.value ?? [])];
  const order = typeof actual === 'number' ? Math.sign(actual - (expected as number)) : Buffer.compare(actual, expected as Buffer);
  if (c.result === Compare_CompareResult.EQUAL) return order === 0;
  if (c.result === Compare_CompareResult.GREATER) return order > 0;
  if (c.result === Compare_CompareResult.LESS) return order < 0;
  return order !== 0;
}

function withoutHeader(response: RangeResponse | undefined): unknown {
  return response ? { ...response, header: undefined } : undefined;
}

/** A message with its bytes as text, for comparing and for the report. */
function describe(value: unknown): any {
  if (value instanceof Uint8Array) return `${Buffer.from(value).toString('base64')}`;
  if (Array.isArray(value)) return value.map(describe);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, describe(v)]));
  return value;
}

function text(key: Uint8Array): string {
  return Buffer.from(key).toString('utf8');
}

/** Undefined when `a` and `b` are the same message; else both, shortened. */
function same(a: unknown, b: unknown): string | undefined {
  const x = JSON.stringify(describe(a));
  const y = JSON.stringify(describe(b));
  return x === y ? undefined : `${x.slice(0, 400)} ≠ ${y.slice(0, 400)}`;
}

function mismatch(what: string, a: unknown, b: unknown): string[] {
  const difference = same(a, b);
  return difference ? [`${what}: ${difference}`] : [];
}
