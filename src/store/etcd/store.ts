/**
 * The production backend: the Store interface over a real etcd cluster.
 *
 * Every operation is one etcd request, so several API server processes sharing one cluster see
 * one linearizable history (etcd's revision is the store revision). Guarded writes are etcd
 * transactions whose else-branch reads the key, so a failed guard reports the current value in
 * the same round trip, as upstream's etcd3 store does. Every call goes through the store's own
 * client (client.ts: gRPC over its own HTTP/2 framing, with codecs generated from proto/etcd).
 */
import { Compare_CompareResult, Compare_CompareTarget, type RangeRequest, type TxnResponse } from '../../gen/etcd/etcdserverpb/rpc';
import type { KeyValue as EtcdKeyValue } from '../../gen/etcd/mvccpb/kv';
import { EtcdClient, type EtcdCalls } from './client';
import { classifyEtcdError, errorMessage } from './errors';
import { EtcdWatch } from './watch';
import { prefixEndBytes, rangeStart, requestedRevision } from '../keys';
import {
  StoreError,
  type GetOptions,
  type GetResult,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Store,
  type StoreWatch,
  type WatchHandlers,
  type WatchOptions,
} from '../types';

export interface EtcdStoreOptions {
  /** Client URLs, e.g. `http://127.0.0.1:2379`. */
  endpoints: string[];
  /** Prepended to every key (kube-apiserver's `--etcd-prefix` works on whole keys; this is extra namespacing, default none). */
  prefix?: string;
  /** Deadline for each unary request; a request past it fails with `unavailable`. Default 30 s. */
  requestTimeoutMs?: number;
  /**
   * Keepalive pings on the connection to etcd (kube-apiserver's etcd client: every 30 s, 10 s
   * to answer): a member gone silent without closing the connection fails the session, so its
   * watches end and restart elsewhere. 0 turns the pings off.
   */
  keepaliveMs?: number;
  keepaliveTimeoutMs?: number;
  /**
   * TLS to etcd (kube-apiserver's `--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`), PEM: the
   * CA that verifies etcd's serving certificate (the host's roots when absent), and the client
   * certificate and key etcd's `--client-cert-auth` asks for. Given, every endpoint is dialled
   * with TLS.
   */
  tls?: EtcdTlsOptions;
  /**
   * What the store calls etcd through: by default its own client (client.ts) made from the
   * options above. The tests' differential oracle passes one that checks each call against etcd3.
   */
  client?: EtcdCalls;
}

export interface EtcdTlsOptions {
  ca?: string;
  cert?: string;
  key?: string;
}

/**
 * Where the compacted revision is recorded, as upstream kube-apiserver does (same key name and
 * decimal value format). etcd does not expose its compacted revision cheaply, so every API
 * server on the cluster reads it here. It lives at the etcd root, outside any store prefix,
 * because compaction is cluster-wide, and outside the `/registry/...` key space (keys under
 * the store are expected to start with '/').
 */
export const COMPACT_REV_KEY = 'compact_rev_key';
const COMPACT_REV_KEY_BYTES = Buffer.from(COMPACT_REV_KEY);

export class EtcdStore implements Store {
  readonly kind = 'etcd' as const;
  private readonly client: EtcdCalls;
  private readonly prefix: Buffer;
  private readonly watches = new Set<EtcdWatch>();
  private closed = false;

  constructor(options: EtcdStoreOptions) {
    if (options.endpoints.length === 0) throw new TypeError('etcd store needs at least one endpoint');
    const tls = options.tls;
    // No automatic retries of a call that may have reached etcd: a transaction whose answer was
    // lost (a leader killed mid-request) may have applied, and a create resent would answer 409
    // AlreadyExists to its own client. A failed call fails; the caller (or its client) decides,
    // as with upstream's etcd client.
    this.client =
      options.client ??
      new EtcdClient({
        endpoints: options.endpoints,
        tls: tls && (tls.ca || tls.cert || tls.key) ? tls : undefined,
        timeoutMs: options.requestTimeoutMs ?? 30_000,
        keepaliveMs: options.keepaliveMs ?? 30_000,
        keepaliveTimeoutMs: options.keepaliveTimeoutMs ?? 10_000,
      });
    this.prefix = Buffer.from(options.prefix ?? '');
  }

  async get(key: string, options: GetOptions = {}): Promise<GetResult> {
    const revision = requestedRevision(options.revision);
    const res = await this.call(key, () => this.client.range(range({ key: this.etcdKey(key), revision: revision ?? 0 })));
    const kv = res.kvs[0];
    return { kv: kv ? this.fromEtcd(kv) : undefined, revision: revision ?? headerRevision(res) };
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    const revision = requestedRevision(options.revision);
    const start = rangeStart(prefix, options.startKey);
    // etcd reports `count` over the whole requested range [start, end) and `more` when the
    // limit cut it, both at the one revision the range was served at.
    const res = await this.call(prefix, () =>
      this.client.range(
        range({
          key: this.etcdKey(start),
          rangeEnd: prefixEndBytes(this.etcdKey(prefix)),
          revision: revision ?? 0,
          limit: options.limit ?? 0,
        }),
      ),
    );
    return {
      kvs: res.kvs.map((kv) => this.fromEtcd(kv)),
      revision: revision ?? headerRevision(res),
      more: res.more,
      count: res.count,
    };
  }

  async count(prefix: string): Promise<number> {
    const from = this.etcdKey(prefix);
    const res = await this.call(prefix, () => this.client.range(range({ key: from, rangeEnd: prefixEndBytes(from), countOnly: true })));
    return res.count;
  }

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    const etcdKey = this.etcdKey(key);
    // A key that does not exist has create revision 0 in etcd comparisons.
    const res = await this.call(key, () =>
      this.client.txn({
        compare: [compare(etcdKey, Compare_CompareTarget.CREATE, { createRevision: 0 })],
        success: [{ requestPut: put(etcdKey, value) }],
        failure: [{ requestRange: range({ key: etcdKey }) }],
      }),
    );
    if (!res.succeeded) {
      throw new StoreError('exists', `key ${key} already exists`, { key, current: this.rangeResult(res, 0) });
    }
    const revision = headerRevision(res);
    return { key, value, createRevision: revision, modRevision: revision };
  }

  async update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KeyValue> {
    // etcd compares a missing key as mod revision 0, so a guard of 0 would create the key.
    if (!(expectedModRevision > 0)) throw await this.guardFailure(key, expectedModRevision);
    const etcdKey = this.etcdKey(key);
    const res = await this.call(key, () =>
      this.client.txn({
        compare: [compare(etcdKey, Compare_CompareTarget.MOD, { modRevision: expectedModRevision })],
        // The keys-only range after the put reads the txn's own write: it yields the create
        // revision without shipping the old value back (as prev_kv would).
        success: [{ requestPut: put(etcdKey, value) }, { requestRange: range({ key: etcdKey, keysOnly: true }) }],
        failure: [{ requestRange: range({ key: etcdKey }) }],
      }),
    );
    if (!res.succeeded) throw this.guardError(key, expectedModRevision, this.rangeResult(res, 0));
    const written = this.rangeResult(res, 1);
    const revision = headerRevision(res);
    return { key, value, createRevision: written?.createRevision ?? revision, modRevision: revision };
  }

  async delete(key: string, expectedModRevision?: number): Promise<{ prev: KeyValue; revision: number }> {
    const etcdKey = this.etcdKey(key);
    if (expectedModRevision === undefined) {
      const res = await this.call(key, () => this.client.deleteRange({ key: etcdKey, rangeEnd: EMPTY, prevKv: true }));
      const prev = res.prevKvs[0];
      if (!prev) throw new StoreError('not-found', `key ${key} not found`, { key });
      return { prev: this.fromEtcd(prev), revision: headerRevision(res) };
    }
    if (!(expectedModRevision > 0)) throw await this.guardFailure(key, expectedModRevision);
    const res = await this.call(key, () =>
      this.client.txn({
        compare: [compare(etcdKey, Compare_CompareTarget.MOD, { modRevision: expectedModRevision })],
        success: [{ requestDeleteRange: { key: etcdKey, rangeEnd: EMPTY, prevKv: true } }],
        failure: [{ requestRange: range({ key: etcdKey }) }],
      }),
    );
    if (!res.succeeded) throw this.guardError(key, expectedModRevision, this.rangeResult(res, 0));
    const prev = res.responses[0]?.responseDeleteRange?.prevKvs[0];
    if (!prev) throw new StoreError('not-found', `key ${key} not found`, { key });
    return { prev: this.fromEtcd(prev), revision: headerRevision(res) };
  }

  watch(prefix: string, options: WatchOptions, handlers: WatchHandlers): StoreWatch {
    const key = this.etcdKey(prefix);
    const startRevision = requestedRevision(options.startRevision);
    const watch = new EtcdWatch(
      {
        client: this.client,
        toStoreKey: (etcdKey) => this.storeKey(etcdKey),
        toKeyValue: (kv) => this.fromEtcd(kv),
        compactedRevision: () => this.compactedRevision(),
        onClosed: (closed) => this.watches.delete(closed),
      },
      { key, rangeEnd: prefixEndBytes(key), startRevision, prevKv: options.prevKv ?? true },
      handlers,
    );
    if (this.closed) queueMicrotask(() => watch.fail(new StoreError('unavailable', 'store is closed')));
    else this.watches.add(watch);
    return watch;
  }

  async currentRevision(): Promise<number> {
    const res = await this.call(undefined, () => this.client.range(range({ key: COMPACT_REV_KEY_BYTES, countOnly: true }), true));
    return headerRevision(res);
  }

  async sizeBytes(): Promise<number> {
    const status = await this.call(undefined, () => this.client.status());
    return status.dbSize;
  }

  async compactedRevision(): Promise<number> {
    return (await this.readCompactRevKey()).recorded;
  }

  /**
   * Records the new compacted revision in `compact_rev_key` (a txn guarded on the key's mod
   * revision, so racing API servers cannot move it backwards), then compacts etcd itself. The key
   * is written first so that it is never below etcd's real compaction: readers trust it when
   * rejecting watches. Compacting to a revision at or below the recorded one is a no-op apart from
   * re-issuing etcd's compaction, which finishes the job if a previous attempt died between the
   * two steps. A revision above the current one fails with `future-revision`.
   */
  async compact(revision: number): Promise<void> {
    if (!(revision > 0)) return; // nothing lies below revision 1
    for (;;) {
      const { kv, recorded, currentRevision } = await this.readCompactRevKey();
      if (revision > currentRevision) {
        throw new StoreError('future-revision', `cannot compact at ${revision}: current revision is ${currentRevision}`, {
          revision: currentRevision,
        });
      }
      if (revision > recorded) {
        const guard = kv
          ? compare(COMPACT_REV_KEY_BYTES, Compare_CompareTarget.MOD, { modRevision: kv.modRevision })
          : compare(COMPACT_REV_KEY_BYTES, Compare_CompareTarget.CREATE, { createRevision: 0 });
        const res = await this.call(undefined, () =>
          this.client.txn({ compare: [guard], success: [{ requestPut: put(COMPACT_REV_KEY_BYTES, Buffer.from(String(revision))) }], failure: [] }),
        );
        if (!res.succeeded) continue; // another API server recorded a compaction meanwhile: re-read
      }
      try {
        await this.call(undefined, () => this.client.compact({ revision, physical: true }));
      } catch (err) {
        // Already compacted this far (by another process, or an earlier call): nothing to do.
        if (StoreError.is(err, 'compacted')) return;
        throw err;
      }
      return;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const watch of [...this.watches]) watch.fail(new StoreError('unavailable', 'store is closed'));
    this.client.close();
  }

  /** `compact_rev_key` as stored (if at all), the compacted revision it records (0 if none), and the store's revision. */
  private async readCompactRevKey(): Promise<{ kv?: EtcdKeyValue; recorded: number; currentRevision: number }> {
    const res = await this.call(undefined, () => this.client.range(range({ key: COMPACT_REV_KEY_BYTES })));
    const kv = res.kvs[0];
    return { kv, recorded: kv ? Number(utf8(kv.value)) : 0, currentRevision: headerRevision(res) };
  }

  /** Runs one etcd request, translating its failure into a StoreError. */
  private async call<T>(key: string | undefined, request: () => Promise<T>): Promise<T> {
    if (this.closed) throw new StoreError('unavailable', 'store is closed', { key });
    try {
      return await request();
    } catch (err) {
      throw await this.translate(err, key);
    }
  }

  private async translate(err: unknown, key: string | undefined): Promise<unknown> {
    if (err instanceof StoreError) return err;
    const message = errorMessage(err);
    switch (classifyEtcdError(err)) {
      case 'compacted':
        return new StoreError('compacted', `the requested revision has been compacted (${message})`, {
          key,
          revision: await this.compactedRevision().catch(() => undefined),
        });
      case 'future-revision':
        return new StoreError('future-revision', `the requested revision is newer than the store's (${message})`, {
          key,
          revision: await this.currentRevision().catch(() => undefined),
        });
      case 'unavailable':
        return new StoreError('unavailable', `etcd is unavailable: ${message}`, { key });
      default:
        return err;
    }
  }

  /** A guard that can never match (expected revision <= 0): report the key's actual state. */
  private async guardFailure(key: string, expectedModRevision: number): Promise<StoreError> {
    const { kv } = await this.get(key);
    return this.guardError(key, expectedModRevision, kv);
  }

  private guardError(key: string, expectedModRevision: number, current: KeyValue | undefined): StoreError {
    if (!current) return new StoreError('not-found', `key ${key} not found`, { key });
    return new StoreError('conflict', `key ${key} is at revision ${current.modRevision}, not ${expectedModRevision}`, { key, current });
  }

  private rangeResult(res: TxnResponse, index: number): KeyValue | undefined {
    const kv = res.responses[index]?.responseRange?.kvs[0];
    return kv ? this.fromEtcd(kv) : undefined;
  }

  private etcdKey(key: string): Buffer {
    return this.prefix.length === 0 ? Buffer.from(key) : Buffer.concat([this.prefix, Buffer.from(key)]);
  }

  private storeKey(etcdKey: Uint8Array): string {
    return utf8(etcdKey, this.prefix.length);
  }

  /** A record as the store hands it on. */
  private fromEtcd(kv: EtcdKeyValue): KeyValue {
    return { key: this.storeKey(kv.key), value: kv.value, createRevision: kv.createRevision, modRevision: kv.modRevision };
  }
}

const EMPTY = Buffer.alloc(0);

/** A range request: the fields given, the rest at their defaults. */
function range(fields: Partial<RangeRequest> & { key: Buffer }): RangeRequest {
  return { rangeEnd: EMPTY, limit: 0, revision: 0, serializable: false, keysOnly: false, countOnly: false, ...fields };
}

/** A put of `value` at `key`, nothing else asked. */
function put(key: Uint8Array, value: Uint8Array) {
  return { key, value, lease: 0, prevKv: false };
}

/** `target` of `key` equal to the value given in `value` (createRevision, modRevision). */
function compare(key: Buffer, target: Compare_CompareTarget, value: { createRevision?: number; modRevision?: number }) {
  return { key, target, result: Compare_CompareResult.EQUAL, rangeEnd: EMPTY, ...value };
}

/** The UTF-8 text of `bytes` from `start` (a view of the response, read without copying). */
function utf8(bytes: Uint8Array, start = 0): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', start);
}

function headerRevision(res: { header?: { revision: number } | undefined }): number {
  return res.header?.revision ?? 0;
}

export function createEtcdStore(options: EtcdStoreOptions): Store {
  return new EtcdStore(options);
}
