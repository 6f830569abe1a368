/**
 * The audit backends and how they are put together, as upstream's audit options put them
 * together (docs/OPERATIONS.md, "Audit"):
 *
 * - the log (`--audit-log-path`, server/audit-log.ts);
 * - the webhook (`--audit-webhook-config-file`): each call POSTs one `EventList` to the service
 *   the kubeconfig-format file names, retried on any failure five times in all, waiting
 *   `--audit-webhook-initial-backoff` and then half as long again each time (up to a fifth more,
 *   at random), each try given 30 s;
 * - in front of the webhook, by `--audit-webhook-mode`: `batch` queues events (at most
 *   `--audit-webhook-batch-buffer-size`; more are dropped and counted) and sends them in batches
 *   of up to `--audit-webhook-batch-max-size`, a batch at the latest `--audit-webhook-batch-max-wait`
 *   after the previous one was started, at most `--audit-webhook-batch-throttle-qps` batches a second
 *   (bursts of `--audit-webhook-batch-throttle-burst`); `blocking` makes the request wait for
 *   each POST and ignores its failure; `blocking-strict` waits too and lets a failure fail the
 *   request (the gateway's audit step does that for the first event);
 * - truncation (`--audit-webhook-truncate-enabled`) in front of all that: an event larger than
 *   the limit loses its request and response objects (and is annotated so), or is dropped when
 *   still too large; the events of one call are split into POSTs of at most the batch limit.
 *
 * A failure is counted in `apiserver_audit_error_total` under the plugin that met it (`webhook`,
 * `buffered`, `truncate`) and logged with the events it lost, one line each in the legacy audit
 * format.
 */
import http from 'node:http';
import https from 'node:https';
import { type Clock, type Pause, pause } from '../clock';
import type { WebhookClientConfig } from '../authn/webhook';
import type { AuditEvent } from '../gateway';

export interface AuditBackend {
  /** Hand events over; `false` (or a promise of it) when they were not recorded. */
  process(events: AuditEvent[]): boolean | Promise<boolean>;
  /** Send what is queued, and wait for the sends under way. */
  close(): Promise<void>;
}

/** A backend's failure: the plugin that met it, the error, the events lost. */
export type PluginError = (plugin: string, err: Error, events: readonly AuditEvent[]) => void;

/** Every backend's result: one that waits makes the whole answer wait. */
export function unionBackends(backends: readonly AuditBackend[]): AuditBackend {
  if (backends.length === 1) return backends[0]!;
  return {
    process(events) {
      const results = backends.map((b) => b.process(events));
      if (results.some((r) => r instanceof Promise)) return Promise.all(results).then((all) => all.every(Boolean));
      return results.every(Boolean);
    },
    close: async () => {
      await Promise.all(backends.map((b) => b.close()));
    },
  };
}

/** `blocking` mode: the caller waits for the delegate, but its failure is not the request's. */
export function ignoringErrors(delegate: AuditBackend): AuditBackend {
  return {
    process(events) {
      const result = delegate.process(events);
      return result instanceof Promise ? result.then(() => true) : true;
    },
    close: () => delegate.close(),
  };
}

/** The legacy audit log line upstream logs the events a failure lost with. */
export function legacyEventLine(e: AuditEvent): string {
  const quoteAll = (list: readonly string[]) => list.map((g) => JSON.stringify(g)).join(',');
  const user = e.user.username || '<none>';
  const groups = e.user.username && e.user.groups?.length ? quoteAll(e.user.groups) : '<none>';
  const as = e.impersonatedUser ? e.impersonatedUser.username : '<self>';
  const asGroups = e.impersonatedUser?.groups ? quoteAll(e.impersonatedUser.groups) : '<lookup>';
  const namespace = e.objectRef?.namespace || '<none>';
  const code = e.responseStatus?.code;
  const fields: Array<[string, string]> = [
    ['id', e.auditID],
    ['stage', e.stage],
    ['ip', e.sourceIPs?.[0] ?? '<unknown>'],
    ['method', e.verb],
    ['user', user],
    ['groups', groups],
    ['as', as],
    ['asgroups', asGroups],
    ['user-agent', e.userAgent ?? ''],
    ['namespace', namespace],
    ['uri', e.requestURI],
  ];
  const quoted = fields.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ');
  // Go's RFC3339Nano: the fraction without trailing zeros, none at all for whole seconds.
  const time = e.requestReceivedTimestamp.replace(/\.(\d*?)0*Z$/, (_, digits: string) => (digits ? `.${digits}Z` : 'Z'));
  return `${time} AUDIT: ${quoted} response="${code === undefined ? '<deferred>' : String(code)}"`;
}

export interface WebhookBackendOptions {
  client: WebhookClientConfig;
  /** `audit.<domain>/v1`. */
  apiVersion: string;
  initialBackoffMs: number;
  clock: Clock;
  onError: PluginError;
  /** Each POST's limit, as upstream's webhook client's 30 s. */
  timeoutMs?: number;
  /** The backoff's jitter source (tests pin it). */
  random?: () => number;
}

const WEBHOOK_TRIES = 5;
const BACKOFF_FACTOR = 1.5;
const BACKOFF_JITTER = 0.2;

/** One POST of an EventList; resolves on a 2xx answer. */
function postEvents(client: WebhookClientConfig, body: string, timeoutMs: number): Promise<void> {
  // A kubeconfig may name a plain http server, as client-go allows.
  const transport = client.server.startsWith('http:') ? http : https;
  return new Promise((resolve, reject) => {
    const req = transport.request(
      client.server,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) },
        ca: client.ca,
        cert: client.cert,
        key: client.key,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) return resolve();
          const text = Buffer.concat(chunks).toString('utf8').trim().slice(0, 512);
          reject(new Error(`the server answered ${status}${text ? `: ${text}` : ''} (post ${client.server})`));
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms (post ${client.server})`)));
    req.on('error', reject);
    req.end(body);
  });
}

export function webhookBackend(options: WebhookBackendOptions): AuditBackend {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const random = options.random ?? Math.random;
  const waits = new Set<Pause>();
  let closing = false;
  return {
    async process(events) {
      // The list's items carry no kind or apiVersion of their own, as upstream encodes them.
      const items = events.map(({ kind: _kind, apiVersion: _apiVersion, ...rest }) => rest);
      const body = JSON.stringify({ kind: 'EventList', apiVersion: options.apiVersion, metadata: {}, items });
      let delay = options.initialBackoffMs;
      let lastError: Error | undefined;
      for (let attempt = 1; ; attempt++) {
        try {
          await postEvents(options.client, body, timeoutMs);
          return true;
        } catch (err) {
          lastError = err as Error;
        }
        // Any failure is worth another try (upstream retries whatever the error); a closing
        // server stops retrying.
        if (attempt >= WEBHOOK_TRIES || closing) break;
        const wait = pause(options.clock, delay * (1 + random() * BACKOFF_JITTER));
        waits.add(wait);
        await wait.done;
        waits.delete(wait);
        delay *= BACKOFF_FACTOR;
      }
      options.onError('webhook', lastError!, events);
      return false;
    },
    async close() {
      closing = true;
      for (const w of waits) w.wake();
    },
  };
}

export interface BufferedOptions {
  bufferSize: number;
  maxBatchSize: number;
  maxBatchWaitMs: number;
  /** Batches a second and the burst; none: unthrottled. */
  throttle?: { qps: number; burst: number };
  /** Hand over one batch at a time, each once the one before is done (the log); else side by side. */
  sequential?: boolean;
  clock: Clock;
  onError: PluginError;
}

/** A token bucket on the clock, full at the start (client-go's token bucket rate limiter). */
class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock,
  ) {
    this.tokens = burst;
    this.at = clock.now();
  }

  /** Take a token now, or say how many milliseconds until one is due. */
  take(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) / 1000) * this.qps);
    this.at = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil(((1 - this.tokens) / this.qps) * 1000));
  }
}

/** `batch` mode in front of `delegate` (upstream's buffered backend, its sends not waited on). */
export function bufferedBackend(delegate: AuditBackend, options: BufferedOptions): AuditBackend {
  const queue: AuditEvent[] = [];
  const sending = new Set<Promise<unknown>>();
  const bucket = options.throttle ? new TokenBucket(options.throttle.qps, options.throttle.burst, options.clock) : undefined;
  let running = true;
  let waiting: Pause | undefined;

  const wait = async (ms: number | undefined): Promise<void> => {
    // No timer when batches are single events (upstream's too): only a new event wakes it.
    waiting = ms === undefined ? pauseUntilWoken() : pause(options.clock, ms);
    await waiting.done;
    waiting = undefined;
  };

  const send = async (batch: AuditEvent[]): Promise<void> => {
    if (batch.length === 0) return;
    for (let due = bucket?.take() ?? 0; due > 0 && running; due = bucket!.take()) await wait(due);
    const sent = Promise.resolve()
      .then(() => delegate.process(batch))
      .catch((err: unknown) => options.onError('buffered', err as Error, batch));
    if (options.sequential) {
      await sent;
      return;
    }
    sending.add(sent);
    void sent.finally(() => sending.delete(sent));
  };

  const loop = (async () => {
    while (running) {
      // A batch is sent once it is full, or when the wait since the last one started is over.
      if (queue.length < options.maxBatchSize) await wait(options.maxBatchSize > 1 ? options.maxBatchWaitMs : undefined);
      await send(queue.splice(0, options.maxBatchSize));
    }
    // Closing: what is queued goes out in full batches, unthrottled.
    while (queue.length > 0) await send(queue.splice(0, options.maxBatchSize));
    await Promise.all(sending);
  })();

  return {
    process(events) {
      if (!running) {
        options.onError('buffered', new Error('audit backend shut down'), events);
        return true;
      }
      for (let i = 0; i < events.length; i++) {
        if (queue.length >= options.bufferSize) {
          options.onError('buffered', new Error('audit buffer queue blocked'), events.slice(i));
          break;
        }
        queue.push(events[i]!);
      }
      if (queue.length >= options.maxBatchSize) waiting?.wake();
      return true;
    },
    async close() {
      running = false;
      waiting?.wake();
      await loop;
      await delegate.close();
    },
  };
}

function pauseUntilWoken(): Pause {
  let wake = () => {};
  const done = new Promise<void>((resolve) => (wake = resolve));
  return { done, wake: () => wake() };
}

export interface TruncateOptions {
  maxEventSize: number;
  maxBatchSize: number;
  /** `audit.<domain>/truncated`. */
  annotation: string;
  onError: PluginError;
}

/** Truncation in front of `delegate` (upstream's truncate backend). */
export function truncatingBackend(delegate: AuditBackend, options: TruncateOptions): AuditBackend {
  const size = (e: AuditEvent) => Buffer.byteLength(JSON.stringify(e));
  return {
    process(events) {
      const results: Array<boolean | Promise<boolean>> = [];
      const dropped: AuditEvent[] = [];
      let batch: AuditEvent[] = [];
      let batchBytes = 0;
      for (let event of events) {
        let bytes = size(event);
        const hasObjects = event.level === 'Request' || event.level === 'RequestResponse';
        if (bytes > options.maxEventSize && hasObjects) {
          const { requestObject: _req, responseObject: _res, ...rest } = event;
          event = { ...rest, annotations: { ...event.annotations, [options.annotation]: 'true' } };
          bytes = size(event);
        }
        if (bytes > options.maxEventSize) {
          dropped.push(event);
          continue;
        }
        if (batch.length > 0 && batchBytes + bytes > options.maxBatchSize) {
          results.push(delegate.process(batch));
          batch = [];
          batchBytes = 0;
        }
        batch.push(event);
        batchBytes += bytes;
      }
      if (batch.length > 0) results.push(delegate.process(batch));
      if (dropped.length > 0) options.onError('truncate', new Error('event is too large even after truncating'), dropped);
      if (results.some((r) => r instanceof Promise)) return Promise.all(results).then((all) => all.every(Boolean));
      return results.every(Boolean);
    },
    close: () => delegate.close(),
  };
}
