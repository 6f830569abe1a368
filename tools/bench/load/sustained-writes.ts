/**
 * An operator's steady write load with watchers (issue 50): `clients` writers creating, merge-
 * patching, applying and deleting ~1 KB ConfigMaps in one namespace at `writesPerSecond` in all,
 * never more than `objects` alive, while `watchers` watch the namespace from before the first
 * write. Every acknowledged write is one event; each watcher must see every one of them, in
 * order. A watch resumed from a resourceVersion `resumeAgeMs` old must succeed and replay every
 * change since, in order.
 *
 * Each writer owns the names `cm-<n>` with `n % clients` equal to its number, so what it was
 * told is exactly what happened (no writer races another on a name) and the count of events is
 * the count of 2xx answers.
 */
import https from 'node:https';
import type { Target } from '../https-client';

export interface SustainedWritesOptions {
  target: Target;
  namespace: string;
  clients: number;
  writesPerSecond: number;
  objects: number;
  watchers: number;
  /** Bytes of data per ConfigMap. */
  valueBytes: number;
}

export interface WatcherTally {
  events: number;
  outOfOrder: number;
  lastRv: number;
  ended: boolean;
  error?: string;
}

interface Watcher {
  tally: WatcherTally;
  /** The resourceVersion of every event, when the watcher records them. */
  rvs?: number[];
  close(): void;
}

/** Open a JSON watch; `onEvent` gets each line's type and resourceVersion. */
function openWatch(
  target: Target,
  path: string,
  onEvent: (type: string, rv: number, line: string) => void,
  onEnd: (error?: string) => void,
): { close(): void; opened: Promise<number> } {
  let buffered = '';
  let resolveOpened: (status: number) => void = () => {};
  const opened = new Promise<number>((resolve) => (resolveOpened = resolve));
  const req = https.request(
    {
      host: target.host,
      port: target.port,
      path,
      method: 'GET',
      ca: target.tls.ca,
      cert: target.tls.cert,
      key: target.tls.key,
      agent: false,
      checkServerIdentity: () => undefined,
      headers: { accept: 'application/json' },
    },
    (res) => {
      resolveOpened(res.statusCode ?? 0);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (!line) continue;
          const type = /^\{"type":"([A-Z]+)"/.exec(line)?.[1] ?? '?';
          const rv = Number(/"resourceVersion":"(\d+)"/.exec(line)?.[1] ?? 0);
          onEvent(type, rv, line);
        }
      });
      res.on('end', () => onEnd());
      res.on('error', (err) => onEnd(err.message));
    },
  );
  req.on('error', (err) => {
    resolveOpened(0);
    onEnd(err.message);
  });
  req.end();
  return { close: () => req.destroy(), opened };
}

function watcher(target: Target, path: string, record: boolean): Watcher {
  const tally: WatcherTally = { events: 0, outOfOrder: 0, lastRv: 0, ended: false };
  const rvs = record ? ([] as number[]) : undefined;
  const w = openWatch(
    target,
    path,
    (type, rv, line) => {
      if (type === 'ERROR') {
        tally.error = line.slice(0, 300);
        return;
      }
      if (type === 'BOOKMARK') return;
      tally.events++;
      if (rv <= tally.lastRv) tally.outOfOrder++;
      tally.lastRv = rv;
      rvs?.push(rv);
    },
    (error) => {
      tally.ended = true;
      if (error && !tally.error) tally.error = error;
    },
  );
  return { tally, ...(rvs ? { rvs } : {}), close: w.close };
}

interface Answer {
  status: number;
  body: string;
}

function request(agent: https.Agent, target: Target, method: string, path: string, body?: string, contentType = 'application/json'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: target.host,
        port: target.port,
        path,
        method,
        agent,
        ca: target.tls.ca,
        cert: target.tls.cert,
        key: target.tls.key,
        checkServerIdentity: () => undefined,
        headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': contentType, 'content-length': Buffer.byteLength(body) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export class SustainedWrites {
  private readonly agent: https.Agent;
  private readonly watchers: Watcher[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  /** Writes answered 2xx: each is one event. */
  acked = 0;
  /** (time, newest resourceVersion the first watcher saw) every second of the load: where resumes start. */
  readonly history: Array<{ at: number; rv: number }> = [];
  private historyTimer?: NodeJS.Timeout;
  errors = 0;
  private readonly base: string;
  /** Each writer's objects alive, by number. */
  private readonly owned: Array<Set<number>> = [];

  constructor(private readonly options: SustainedWritesOptions) {
    this.agent = new https.Agent({ keepAlive: true, maxSockets: options.clients });
    this.base = `/api/v1/namespaces/${options.namespace}/configmaps`;
  }

  /** Create the namespace and open the watchers from its resourceVersion. */
  async prepare(): Promise<void> {
    const { target, namespace } = this.options;
    const ns = await request(
      this.agent,
      target,
      'POST',
      '/api/v1/namespaces',
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }),
    );
    if (ns.status !== 201 && ns.status !== 409) throw new Error(`namespace: ${ns.status} ${ns.body}`);
    const list = await request(this.agent, target, 'GET', `${this.base}?limit=1`);
    const from = /"resourceVersion":"(\d+)"/.exec(list.body)![1];
    // The first watcher records every event's resourceVersion: what a resumed watch is held against.
    for (let i = 0; i < this.options.watchers; i++) this.watchers.push(watcher(target, `${this.base}?watch=1&resourceVersion=${from}`, i === 0));
  }

  /** Start the writers at the configured rate. */
  start(): void {
    this.running = true;
    const { clients, writesPerSecond } = this.options;
    const perClientMs = (1000 * clients) / writesPerSecond;
    const started = performance.now();
    this.historyTimer = setInterval(() => this.history.push({ at: Date.now(), rv: this.newestSeen() }), 1000);
    this.loops = Array.from({ length: clients }, (_, c) => this.writer(c, started + (c * perClientMs) / clients, perClientMs));
  }

  /** Stop the writers; resolves when their last writes are answered. */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.historyTimer);
    await Promise.all(this.loops);
  }

  /** The newest resourceVersion the first watcher saw. */
  newestSeen(): number {
    return this.watchers[0]?.tally.lastRv ?? 0;
  }

  tallies(): WatcherTally[] {
    return this.watchers.map((w) => ({ ...w.tally }));
  }

  /** Wait (up to `ms`, after the writers stopped) until every watcher has seen an event per acknowledged write. */
  async drain(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (this.watchers.every((w) => w.tally.events >= this.acked || w.tally.ended)) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  }

  /**
   * Resume a watch from the newest resourceVersion at least `ageMs` old and read until it reaches
   * the newest the first watcher saw: whether it succeeded, how old its start was, and whether it
   * delivered the same changes as that watcher, in order.
   */
  async resume(
    ageMs: number,
    timeoutMs = 60_000,
  ): Promise<{ ok: boolean; ageMs: number; fromRv: number; events: number; expected: number; outOfOrder: number; error?: string }> {
    const now = Date.now();
    const start = [...this.history].reverse().find((h) => now - h.at >= ageMs && h.rv > 0);
    if (!start) return { ok: false, ageMs: 0, fromRv: 0, events: 0, expected: 0, outOfOrder: 0, error: `no resourceVersion ${ageMs} ms old yet` };
    const until = this.newestSeen();
    const expected = this.watchers[0]!.rvs!.filter((rv) => rv > start.rv && rv <= until).length;
    let events = 0;
    let outOfOrder = 0;
    let last = 0;
    let error: string | undefined;
    let done: () => void = () => {};
    const finished = new Promise<void>((resolve) => (done = resolve));
    const w = openWatch(
      this.options.target,
      `${this.base}?watch=1&resourceVersion=${start.rv}`,
      (type, rv, line) => {
        if (type === 'ERROR') {
          error = line.slice(0, 300);
          done();
          return;
        }
        if (rv > until) {
          done();
          return;
        }
        events++;
        if (rv <= last) outOfOrder++;
        last = rv;
        if (rv >= until) done();
      },
      (e) => {
        error ??= e ?? 'the watch ended';
        done();
      },
    );
    const timer = setTimeout(() => {
      error ??= `timed out at resourceVersion ${last} of ${until}`;
      done();
    }, timeoutMs);
    await finished;
    clearTimeout(timer);
    w.close();
    return {
      ok: !error && events === expected && outOfOrder === 0,
      ageMs: now - start.at,
      fromRv: start.rv,
      events,
      expected,
      outOfOrder,
      ...(error ? { error } : {}),
    };
  }

  /** After `stop`: delete every object the writers left (each deletion one more event); resolves with how many. */
  async deleteAll(): Promise<number> {
    let deleted = 0;
    await Promise.all(
      this.owned.map(async (exists) => {
        for (const n of [...exists]) {
          const answer = await request(this.agent, this.options.target, 'DELETE', `${this.base}/cm-${n}`);
          if (answer.status === 200) {
            exists.delete(n);
            this.acked++;
            deleted++;
          } else {
            this.errors++;
          }
        }
      }),
    );
    return deleted;
  }

  close(): void {
    for (const w of this.watchers) w.close();
    this.agent.destroy();
  }

  private async writer(client: number, firstAt: number, everyMs: number): Promise<void> {
    const { target, clients, objects, valueBytes } = this.options;
    const mine = Array.from({ length: Math.ceil(objects / clients) }, (_, i) => i * clients + client).filter((n) => n < objects);
    const exists = new Set<number>();
    this.owned[client] = exists;
    let next = firstAt;
    let counter = 0;
    const filler = 'x'.repeat(Math.max(0, valueBytes - 40));
    while (this.running) {
      const wait = next - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      next += everyMs;
      const n = mine[Math.floor(Math.random() * mine.length)]!;
      const name = `cm-${n}`;
      const value = `${client}-${++counter}-${filler}`;
      let answer: Answer;
      try {
        if (!exists.has(n)) {
          answer = await request(
            this.agent,
            target,
            'POST',
            this.base,
            JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { load: 'sustained' } }, data: { value } }),
          );
          if (answer.status === 201) exists.add(n);
        } else {
          const r = Math.random();
          if (r < 0.4) {
            answer = await request(this.agent, target, 'PATCH', `${this.base}/${name}`, JSON.stringify({ data: { value } }), 'application/merge-patch+json');
          } else if (r < 0.7) {
            const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { value, applied: String(counter) } });
            answer = await request(
              this.agent,
              target,
              'PATCH',
              `${this.base}/${name}?fieldManager=load-${client}&force=true`,
              body,
              'application/apply-patch+yaml',
            );
          } else {
            answer = await request(this.agent, target, 'DELETE', `${this.base}/${name}`);
            if (answer.status === 200) exists.delete(n);
          }
        }
      } catch {
        this.errors++;
        continue;
      }
      if (answer.status >= 200 && answer.status < 300) this.acked++;
      else this.errors++;
    }
  }
}
