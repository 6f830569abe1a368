/**
 * HTTPS loads over a pool of keep-alive connections (one request in flight each): fixed
 * requests (gets, lists, creates with a fresh name each) and the read-modify-write loop of
 * writers contending for one object.
 */
import { HttpsConnection, type Target, requestHead } from '../https-client';
import { type Operation, type OpOutcome, type RunResult, runLoop } from './run-loop';

export interface RequestSpec {
  op: 'request';
  method: string;
  /** Rotated through per request. */
  paths: string[];
  /** A JSON body with a fresh name per request: `before + name + after`. */
  body?: { before: string; after: string };
  /** Unique per run, so that names never repeat across runs. */
  namePrefix?: string;
  /** The status that counts as a completed operation. */
  expect: number;
  /** The Accept header (default `application/json`). */
  accept?: string;
  /** The body's Content-Type (default `application/json`; a merge patch's is its own). */
  contentType?: string;
}

export interface ContendSpec {
  op: 'contend';
  /** The object every writer updates. */
  path: string;
}

export type HttpsSpec = RequestSpec | ContendSpec;

export class HttpsLoad {
  private constructor(
    private readonly target: Target,
    private readonly pool: HttpsConnection[],
  ) {}

  static async open(target: Target, connections: number): Promise<HttpsLoad> {
    // Handshakes a few at a time: 1,000 at once would time out on two cores.
    const pool: HttpsConnection[] = [];
    for (let i = 0; i < connections; i += 32) {
      pool.push(...(await Promise.all(Array.from({ length: Math.min(32, connections - i) }, () => HttpsConnection.connect(target)))));
    }
    return new HttpsLoad(target, pool);
  }

  get size(): number {
    return this.pool.length;
  }

  connection(i: number): HttpsConnection {
    return this.pool[i];
  }

  /** The connection of loop `w`, reconnected if the server closed it between runs. */
  private async live(w: number): Promise<HttpsConnection> {
    const conn = this.pool[w];
    if (!conn.socket.destroyed) return conn;
    return (this.pool[w] = await HttpsConnection.connect(this.target));
  }

  run(spec: HttpsSpec, durationMs: number): Promise<RunResult> {
    return spec.op === 'request' ? this.runRequests(spec, durationMs) : this.runContention(spec, durationMs);
  }

  private runRequests(spec: RequestSpec, durationMs: number): Promise<RunResult> {
    const extra: Record<string, string> = spec.body ? { 'content-type': spec.contentType ?? 'application/json' } : {};
    if (spec.accept) extra.accept = spec.accept;
    const heads = spec.paths.map((path) => requestHead(spec.method, path, this.target, extra));
    const before = spec.body ? Buffer.from(spec.body.before) : undefined;
    const after = spec.body ? Buffer.from(spec.body.after) : undefined;
    const op: Operation = async (w, i) => {
      const conn = await this.live(w);
      const head = heads[(w * 7919 + i) % heads.length];
      const body = before && after ? Buffer.concat([before, Buffer.from(`${spec.namePrefix}-${w}-${i}`), after]) : undefined;
      // Bodies are counted, never kept: a 10,000-item list is ~30 MB.
      const res = await conn.request(head, body, { keepBody: false });
      return { ok: res.status === spec.expect, bytes: res.bodyBytes, label: String(res.status) };
    };
    return runLoop(this.pool.length, durationMs, op);
  }

  /**
   * Each writer: read the object, change its own annotation, PUT it with the resourceVersion
   * it read; on 409 Conflict, read again and retry (what client-go's RetryOnConflict does).
   */
  private async runContention(spec: ContendSpec, durationMs: number): Promise<RunResult> {
    const getHead = requestHead('GET', spec.path, this.target);
    const putHead = requestHead('PUT', spec.path, this.target, { 'content-type': 'application/json' });
    const counters = { conflicts: 0, attempts: 0, reads: 0 };
    const current: Array<Record<string, any>> = [];
    const read = async (w: number) => {
      counters.reads++;
      const res = await (await this.live(w)).request(getHead);
      if (res.status !== 200) throw new Error(`GET ${spec.path}: ${res.status}`);
      current[w] = JSON.parse(res.body.toString('utf8'));
    };
    await Promise.all(this.pool.map((_, w) => read(w)));
    const op: Operation = async (w, i): Promise<OpOutcome> => {
      const obj = current[w];
      obj.metadata.annotations = { ...obj.metadata.annotations, [`bench.example.com/writer-${w}`]: String(i) };
      counters.attempts++;
      const res = await (await this.live(w)).request(putHead, Buffer.from(JSON.stringify(obj)));
      if (res.status === 200) {
        current[w] = JSON.parse(res.body.toString('utf8'));
        return { ok: true, bytes: res.bodyBytes, label: '200' };
      }
      if (res.status === 409) {
        counters.conflicts++;
        await read(w);
        return { ok: false, label: '409' };
      }
      return { ok: false, label: String(res.status) };
    };
    return runLoop(this.pool.length, durationMs, op, counters);
  }

  close(): void {
    for (const conn of this.pool) conn.close();
  }
}
