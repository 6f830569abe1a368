/**
 * What the fault suite shares. `npm test` runs it reduced; `npm run test:faults` sets
 * KEELSON_FAULTS=full for the figures in docs/RELIABILITY.md.
 */
import { httpsRequest, httpsStream, type HttpsResult } from '../gateway/support/https-client';
import type { ServerProcess } from '../gateway/support/server-process';
import { eventually } from '../support/eventually';

export const FULL = process.env.KEELSON_FAULTS === 'full';

/** Fault tests restart servers many times; each file gets this long. */
export const FAULT_TIMEOUT_MS = FULL ? 3_600_000 : 240_000;

export interface Call {
  status: number;
  body: Record<string, any>;
}

/** One JSON request to the server; rejects on a transport failure (the server went away). */
export async function call(server: ServerProcess, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Call> {
  const text = body !== undefined ? JSON.stringify(body) : undefined;
  const r: HttpsResult = await httpsRequest(`${server.url}${path}`, server.admin, {
    method,
    headers: { Accept: 'application/json', ...(text !== undefined ? { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(text)) } : {}) },
    body: text,
  });
  let parsed: Record<string, any> = {};
  try {
    parsed = r.body ? JSON.parse(r.body) : {};
  } catch {
    parsed = { raw: r.body };
  }
  return { status: r.status, body: parsed };
}

export function summary(name: string, figures: Record<string, unknown>): void {
  process.stdout.write(`fault-suite ${name}: ${JSON.stringify(figures)}\n`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An object's state as the clients know it: its data and resourceVersion, or null when absent. */
export type State = { data: Record<string, string>; rv: string } | null;

interface Entry {
  acked: State;
  /** A write whose outcome is unknown (the server died, or answered an error that may still have applied). */
  pending?: { data: Record<string, string> | null };
}

/**
 * What the writers were told: the last acknowledged state of each object, and the write in
 * flight when the answer did not come. `check` holds a stored state against it: an
 * acknowledged state must be there exactly; a pending write is either wholly there or not.
 */
export class Ledger {
  readonly entries = new Map<string, Entry>();
  acknowledged = 0;
  unknownOutcomes = 0;
  unknownApplied = 0;
  maxAckedRv = 0;

  begin(name: string, data: Record<string, string> | null): void {
    const e = this.entries.get(name);
    this.entries.set(name, { acked: e?.acked ?? null, pending: { data } });
  }

  ack(name: string, state: State): void {
    const before = this.entries.get(name)?.acked;
    this.entries.set(name, { acked: state });
    this.acknowledged++;
    if (state) {
      // Writers run concurrently, so answers arrive out of order across objects; one object's versions only grow.
      const rv = Number(state.rv);
      if (before && rv <= Number(before.rv)) throw new Error(`${name}: resourceVersion went backwards: ${rv} after ${before.rv}`);
      this.maxAckedRv = Math.max(this.maxAckedRv, rv);
    }
  }

  /** Hold what is stored for `name` against what was acknowledged; adopt it. Throws on a lost or half-applied write. */
  check(name: string, observed: State): void {
    const e = this.entries.get(name);
    if (!e) {
      if (observed) throw new Error(`${name} is stored but was never written`);
      return;
    }
    const same = (s: State) => (s === null ? observed === null : !!observed && JSON.stringify(observed.data) === JSON.stringify(s.data));
    if (e.pending) {
      this.unknownOutcomes++;
      const intended: State = e.pending.data ? { data: e.pending.data, rv: '' } : null;
      if (!same(e.acked) && !same(intended)) throw new Error(`${name}: neither the acknowledged nor the in-flight state: ${JSON.stringify({ observed, e })}`);
      if (!same(e.acked)) this.unknownApplied++;
    } else {
      if (!same(e.acked)) throw new Error(`${name}: acknowledged ${JSON.stringify(e.acked)} lost: ${JSON.stringify(observed)}`);
      if (observed && observed.rv !== e.acked!.rv) throw new Error(`${name}: resourceVersion ${observed.rv}, acknowledged ${e.acked!.rv}`);
    }
    if (observed && Number(observed.rv) > this.maxAckedRv) this.maxAckedRv = Number(observed.rv);
    this.entries.set(name, { acked: observed });
  }

  /** Check every tracked object and every stored one against a full list of the namespace. */
  checkAll(items: Array<{ metadata: { name: string; resourceVersion: string }; data?: Record<string, string> }>): void {
    const stored = new Map(items.map((o) => [o.metadata.name, o]));
    for (const name of new Set([...this.entries.keys(), ...stored.keys()])) {
      const o = stored.get(name);
      this.check(name, o ? { data: o.data ?? {}, rv: o.metadata.resourceVersion } : null);
    }
  }
}

export interface WriterOptions {
  ledger: Ledger;
  /** Names this writer owns start with it. */
  prefix: string;
  /** The configmaps collection path. */
  base: string;
  /** The server for the next request (several processes: any of them). */
  server(): ServerProcess;
  /** Go on after a write whose outcome is unknown (resolving it with a read), or stop (the server was killed). */
  onUnknown: 'stop' | 'continue';
  stopped(): boolean;
}

/** One writer: creates, updates and deletes its own ConfigMaps until stopped. */
export async function runWriter(o: WriterOptions): Promise<void> {
  let seq = 0;
  const resolve = async (name: string): Promise<boolean> => {
    // Read until a server answers, then hold the answer against the ledger.
    while (!o.stopped()) {
      try {
        const r = await call(o.server(), 'GET', `${o.base}/${name}`);
        if (r.status === 200) o.ledger.check(name, { data: r.body.data ?? {}, rv: r.body.metadata.resourceVersion });
        else if (r.status === 404) o.ledger.check(name, null);
        else {
          await sleep(100); // a client's pause before it asks a failing server again
          continue;
        }
        return true;
      } catch {
        await sleep(100); // a client's pause before it asks an unreachable server again
      }
    }
    return false;
  };
  while (!o.stopped()) {
    const mine = [...o.ledger.entries.entries()].filter(([n, e]) => n.startsWith(o.prefix) && e.acked && !e.pending);
    const roll = Math.random();
    const value = `${o.prefix}${seq++}`;
    let name: string;
    let request: () => Promise<Call>;
    let expected: number;
    let state: (r: Call) => State;
    if (mine.length < 5 || roll < 0.2) {
      name = `${o.prefix}${seq}`;
      const data = { v: value };
      o.ledger.begin(name, data);
      request = () => call(o.server(), 'POST', o.base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
      expected = 201;
      state = (r) => ({ data, rv: r.body.metadata.resourceVersion });
    } else {
      const [picked, e] = mine[Math.floor(Math.random() * mine.length)]!;
      name = picked;
      if (roll < 0.8) {
        const data = { v: value };
        o.ledger.begin(name, data);
        request = () =>
          call(o.server(), 'PUT', `${o.base}/${picked}`, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: picked, resourceVersion: e.acked!.rv },
            data,
          });
        expected = 200;
        state = (r) => ({ data, rv: r.body.metadata.resourceVersion });
      } else {
        o.ledger.begin(name, null);
        request = () => call(o.server(), 'DELETE', `${o.base}/${picked}`);
        expected = 200;
        state = () => null;
      }
    }
    let r: Call;
    try {
      r = await request();
    } catch {
      if (o.onUnknown === 'stop') return;
      if (!(await resolve(name))) return;
      continue;
    }
    if (r.status === expected) {
      o.ledger.ack(name, state(r));
      continue;
    }
    // 5xx (storage unavailable, timeout) may or may not have applied; anything else is a bug.
    if (r.status < 500) throw new Error(`${name}: answered ${r.status}: ${JSON.stringify(r.body)}`);
    if (o.onUnknown === 'stop' || !(await resolve(name))) return;
  }
}

/** An informer-like watcher: lists, then watches from the list's version; relists on 410 or a broken stream. */
export class Watcher {
  view = new Map<string, { rv: string; data: unknown }>();
  rv = '0';
  duplicates = 0;
  relists = 0;
  events = 0;
  private stream?: ReturnType<typeof httpsStream>;
  private stopped = false;

  constructor(private readonly base: string) {}

  /** Follow `server()` until stopped; after a stop it may run again (against a restarted server) from where it was. */
  async run(server: () => ServerProcess): Promise<void> {
    this.stopped = false;
    while (!this.stopped) {
      try {
        if (this.rv === '0') await this.relist(server());
        await this.follow(server());
      } catch {
        if (this.stopped) return;
        await sleep(50); // an informer's pause before it watches again
      }
    }
  }

  private async relist(srv: ServerProcess): Promise<void> {
    const r = await call(srv, 'GET', this.base);
    if (r.status !== 200) throw new Error(`list answered ${r.status}`);
    this.view = new Map(r.body.items.map((o: any) => [o.metadata.name, { rv: o.metadata.resourceVersion, data: o.data }]));
    this.rv = r.body.metadata.resourceVersion;
    this.relists++;
  }

  private async follow(srv: ServerProcess): Promise<void> {
    const s = httpsStream(`${srv.url}${this.base}?watch=true&resourceVersion=${this.rv}&allowWatchBookmarks=true`, srv.admin);
    this.stream = s;
    await s.opened;
    let read = 0;
    for (;;) {
      if (this.stopped) return;
      while (read < s.lines.length) {
        const event = JSON.parse(s.lines[read++]!);
        if (event.type === 'ERROR') {
          // 410 (history gone) starts over from a list, as informers do; other errors resume.
          if (event.object?.code === 410) this.rv = '0';
          throw new Error(`watch error ${event.object?.code}`);
        }
        const rv = event.object.metadata.resourceVersion;
        if (Number(rv) <= Number(this.rv)) this.duplicates++;
        this.rv = rv;
        if (event.type === 'BOOKMARK') continue;
        this.events++;
        const name = event.object.metadata.name;
        if (event.type === 'DELETED') this.view.delete(name);
        else this.view.set(name, { rv, data: event.object.data });
      }
      if (s.ended || s.closed) throw new Error('stream ended');
      // Woken by the next line or the stream's end (`stop` closes it); a quiet minute starts a new watch.
      await s.waitForLines(read + 1, 60_000).catch((err: Error) => {
        s.close();
        throw err;
      });
    }
  }

  stop(): void {
    this.stopped = true;
    this.stream?.close();
  }

  /**
   * Resolves once the view holds exactly these names at these versions (or after `ms`: a bound
   * for a loaded machine, not a speed the test asserts). On a miss it says where the watcher
   * stands and how its view differs, for the log.
   */
  async matches(items: Array<{ metadata: { name: string; resourceVersion: string } }>, ms = 30_000): Promise<boolean> {
    const expected = new Map(items.map((o) => [o.metadata.name, o.metadata.resourceVersion]));
    const differences = () => {
      const out: string[] = [];
      for (const [name, rv] of expected) if (this.view.get(name)?.rv !== rv) out.push(`${name}: want ${rv}, have ${this.view.get(name)?.rv ?? 'none'}`);
      for (const name of this.view.keys()) if (!expected.has(name)) out.push(`${name}: not listed, have ${this.view.get(name)!.rv}`);
      return out;
    };
    await eventually(() => differences().length === 0, { timeoutMs: ms }).catch(() => undefined);
    const left = differences();
    if (left.length > 0) {
      process.stderr.write(
        `watcher at rv ${this.rv} after ${this.relists} list(s) and ${this.events} event(s) differs from the list in ${left.length}: ${left.slice(0, 20).join('; ')}\n`,
      );
    }
    return left.length === 0;
  }
}
