/**
 * The audit backends: the webhook against a real HTTPS receiver (client certificate, EventList,
 * retries on the injected clock), batching, throttling, buffer overflow, truncation and closing.
 */
import { mkdtemp } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/clock';
import { readWebhookConfig } from '../../src/authn/webhook';
import type { AuditEvent } from '../../src/gateway';
import {
  type AuditBackend,
  bufferedBackend,
  ignoringErrors,
  legacyEventLine,
  truncatingBackend,
  unionBackends,
  webhookBackend,
} from '../../src/server/audit-backends';
import { type AuditReceiver, startAuditReceiver } from './support/audit-receiver';
import { eventually } from '../support/eventually';

function event(n: number, extra: Partial<AuditEvent> = {}): AuditEvent {
  return {
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'Metadata',
    auditID: `id-${n}`,
    stage: 'ResponseComplete',
    requestURI: `/api/v1/namespaces/default/configmaps/c${n}`,
    verb: 'get',
    user: { username: 'alice', groups: ['dev', 'system:authenticated'] },
    sourceIPs: ['127.0.0.1'],
    objectRef: { resource: 'configmaps', namespace: 'default', name: `c${n}`, apiVersion: 'v1' },
    responseStatus: { metadata: {}, code: 200 },
    requestReceivedTimestamp: '2026-01-01T00:00:00.000000Z',
    stageTimestamp: '2026-01-01T00:00:00.001000Z',
    ...extra,
  };
}

interface Failure {
  plugin: string;
  message: string;
  ids: string[];
}

/** Wait (real time: the backends send over real sockets) until the backend has read the refusal and set its retry on the clock. */
const retryScheduled = (clock: ManualClock) => eventually(() => clock.pending() > 0, { what: 'the retry to be scheduled' });

/** A backend that only records what reaches it (for the layers in front of the webhook). */
function recorder(): AuditBackend & { batches: string[][] } {
  const batches: string[][] = [];
  return {
    batches,
    process(events) {
      batches.push(events.map((e) => e.auditID));
      return true;
    },
    close: async () => {},
  };
}

describe('webhook backend', () => {
  let receiver: AuditReceiver;
  let kubeconfig: string;
  beforeAll(async () => {
    receiver = await startAuditReceiver();
    kubeconfig = await receiver.writeKubeconfig(await mkdtemp(path.join(os.tmpdir(), 'keelson-audit-backends-')));
  });
  afterAll(() => receiver.close());
  beforeEach(() => void receiver.batches.splice(0));

  function backend(clock: ManualClock, failures: Failure[]): AuditBackend {
    return webhookBackend({
      client: readWebhookConfig(kubeconfig),
      apiVersion: 'audit.k8s.io/v1',
      initialBackoffMs: 10_000,
      clock,
      random: () => 0,
      onError: (plugin, err, events) => failures.push({ plugin, message: err.message, ids: events.map((e) => e.auditID) }),
    });
  }

  test('POSTs one EventList per call, with the client certificate of the kubeconfig, items without kind or apiVersion', async () => {
    const failures: Failure[] = [];
    const ok = await backend(new ManualClock(), failures).process([event(1), event(2)]);
    expect(ok).toBe(true);
    expect(receiver.batches).toHaveLength(1);
    const [batch] = receiver.batches;
    expect(batch!.clientCn).toBe('keelson-gateway');
    expect(batch!.contentType).toBe('application/json');
    expect(batch!.body).toMatchObject({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {} });
    expect(batch!.body.items.map((e) => e.auditID)).toEqual(['id-1', 'id-2']);
    expect(batch!.body.items[0]).not.toHaveProperty('kind');
    expect(batch!.body.items[0]).not.toHaveProperty('apiVersion');
    expect(batch!.body.items[0]).toMatchObject({ level: 'Metadata', stage: 'ResponseComplete', user: { username: 'alice' } });
    expect(failures).toEqual([]);
  });

  test('retries a refused POST after the initial backoff, then half as long again', async () => {
    const clock = new ManualClock();
    const failures: Failure[] = [];
    receiver.answer(500, 503);
    const sent = backend(clock, failures).process([event(3)]);
    await receiver.waitForBatches(1);
    await retryScheduled(clock);
    clock.advance(9_999);
    // Not yet due: the retry's timer is still on the clock, unfired.
    expect(clock.pending()).toBe(1);
    expect(receiver.batches).toHaveLength(1);
    clock.advance(1);
    await receiver.waitForBatches(2);
    await retryScheduled(clock);
    clock.advance(14_999);
    expect(clock.pending()).toBe(1);
    expect(receiver.batches).toHaveLength(2);
    clock.advance(1);
    await expect(sent).resolves.toBe(true);
    expect(receiver.batches).toHaveLength(3);
    expect(failures).toEqual([]);
  });

  test('gives up after five tries, reporting the events it lost', async () => {
    const clock = new ManualClock();
    const failures: Failure[] = [];
    receiver.answer(500, 500, 500, 500, 500);
    const sent = backend(clock, failures).process([event(4), event(5)]);
    for (const [n, wait] of [
      [1, 10_000],
      [2, 15_000],
      [3, 22_500],
      [4, 33_750],
    ] as const) {
      await receiver.waitForBatches(n);
      await retryScheduled(clock);
      clock.advance(wait);
    }
    await expect(sent).resolves.toBe(false);
    expect(receiver.batches).toHaveLength(5);
    expect(failures).toEqual([{ plugin: 'webhook', message: expect.stringContaining('the server answered 500: receiver refused'), ids: ['id-4', 'id-5'] }]);
  });

  test('an unreachable service fails the same way; a closing backend stops waiting to retry', async () => {
    const clock = new ManualClock();
    const failures: Failure[] = [];
    const down = webhookBackend({
      client: { ...readWebhookConfig(kubeconfig), server: 'https://127.0.0.1:1/audit' },
      apiVersion: 'audit.k8s.io/v1',
      initialBackoffMs: 10_000,
      clock,
      onError: (plugin, err, events) => failures.push({ plugin, message: err.message, ids: events.map((e) => e.auditID) }),
    });
    const sent = down.process([event(6)]);
    await retryScheduled(clock);
    await down.close();
    await expect(sent).resolves.toBe(false);
    expect(failures).toEqual([{ plugin: 'webhook', message: expect.stringContaining('ECONNREFUSED'), ids: ['id-6'] }]);
  });

  test('a kubeconfig naming a plain http server is POSTed to over http', async () => {
    const bodies: string[] = [];
    const plain = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    const sent = await webhookBackend({
      client: { server: `http://127.0.0.1:${(plain.address() as AddressInfo).port}/audit` },
      apiVersion: 'audit.k8s.io/v1',
      initialBackoffMs: 10,
      clock: new ManualClock(),
      onError: () => {},
    }).process([event(10)]);
    await new Promise<void>((r) => plain.close(() => r()));
    expect(sent).toBe(true);
    expect(JSON.parse(bodies[0]!).items[0].auditID).toBe('id-10');
  });

  test('blocking mode ignores a failure; a union waits for every backend and fails when one does', async () => {
    const clock = new ManualClock();
    const failures: Failure[] = [];
    const failing: AuditBackend = { process: async () => false, close: async () => {} };
    await expect(ignoringErrors(failing).process([event(7)])).resolves.toBe(true);
    const both = unionBackends([backend(clock, failures), failing]);
    await expect(both.process([event(8)])).resolves.toBe(false);
    expect(receiver.events().map((e) => e.auditID)).toEqual(['id-8']);
    expect(unionBackends([recorder(), recorder()]).process([event(9)])).toBe(true);
  });
});

describe('batch mode', () => {
  const failuresOf = (list: Failure[]) => (plugin: string, err: Error, events: readonly AuditEvent[]) =>
    list.push({ plugin, message: err.message, ids: events.map((e) => e.auditID) });

  test('a full batch goes at once; the rest when the wait since the last batch is over', async () => {
    const clock = new ManualClock();
    const sink = recorder();
    const failures: Failure[] = [];
    const batched = bufferedBackend(sink, { bufferSize: 100, maxBatchSize: 3, maxBatchWaitMs: 30_000, clock, onError: failuresOf(failures) });
    expect(batched.process([1, 2, 3, 4, 5, 6, 7].map((n) => event(n)))).toBe(true);
    await eventually(() => sink.batches.length === 2, { what: 'two full batches' });
    expect(sink.batches).toEqual([
      ['id-1', 'id-2', 'id-3'],
      ['id-4', 'id-5', 'id-6'],
    ]);
    clock.advance(29_999);
    // The partial batch's wait has not run out: its timer is still on the clock.
    expect(clock.pending()).toBe(1);
    expect(sink.batches).toHaveLength(2);
    clock.advance(1);
    await eventually(() => sink.batches.length === 3, { what: 'the partial batch' });
    expect(sink.batches[2]).toEqual(['id-7']);
    await batched.close();
    expect(failures).toEqual([]);
  });

  test('a full buffer drops what does not fit, and says so', async () => {
    const clock = new ManualClock();
    const sink = recorder();
    const failures: Failure[] = [];
    const batched = bufferedBackend(sink, { bufferSize: 2, maxBatchSize: 10, maxBatchWaitMs: 30_000, clock, onError: failuresOf(failures) });
    expect(batched.process([event(1), event(2), event(3), event(4)])).toBe(true);
    expect(failures).toEqual([{ plugin: 'buffered', message: 'audit buffer queue blocked', ids: ['id-3', 'id-4'] }]);
    clock.advance(30_000);
    await eventually(() => sink.batches.length === 1, { what: 'the batch' });
    expect(sink.batches).toEqual([['id-1', 'id-2']]);
    await batched.close();
    batched.process([event(5)]);
    expect(failures[1]).toEqual({ plugin: 'buffered', message: 'audit backend shut down', ids: ['id-5'] });
  });

  test('throttled: a burst goes at once, then one batch per 1/qps seconds', async () => {
    const clock = new ManualClock();
    const sink = recorder();
    const batched = bufferedBackend(sink, { bufferSize: 100, maxBatchSize: 1, maxBatchWaitMs: 0, throttle: { qps: 2, burst: 2 }, clock, onError: () => {} });
    batched.process([1, 2, 3, 4].map((n) => event(n)));
    await eventually(() => sink.batches.length === 2, { what: 'the burst' });
    // The third waits for the throttle's timer on the clock, which has not moved.
    await eventually(() => clock.pending() === 1, { what: 'the throttle to wait' });
    expect(sink.batches).toHaveLength(2);
    clock.advance(499);
    expect(clock.pending()).toBe(1);
    expect(sink.batches).toHaveLength(2);
    clock.advance(1);
    await eventually(() => sink.batches.length === 3, { what: 'the third batch' });
    clock.advance(500);
    await eventually(() => sink.batches.length === 4, { what: 'the fourth batch' });
    expect(sink.batches.flat()).toEqual(['id-1', 'id-2', 'id-3', 'id-4']);
    await batched.close();
  });

  test('closing sends what is queued, in full batches, and waits for the sends', async () => {
    const clock = new ManualClock();
    const done: string[][] = [];
    const slow: AuditBackend = {
      process: (events) => new Promise((resolve) => setTimeout(() => resolve(done.push(events.map((e) => e.auditID)) > 0), 30)),
      close: async () => {},
    };
    const batched = bufferedBackend(slow, {
      bufferSize: 100,
      maxBatchSize: 4,
      maxBatchWaitMs: 30_000,
      throttle: { qps: 0.001, burst: 1 },
      clock,
      onError: () => {},
    });
    batched.process([1, 2, 3, 4, 5, 6].map((n) => event(n)));
    await batched.close();
    expect(done).toEqual([
      ['id-1', 'id-2', 'id-3', 'id-4'],
      ['id-5', 'id-6'],
    ]);
  });
});

describe('truncation', () => {
  const big = 'x'.repeat(2_000);

  test('an event over the limit loses its objects and is marked; one still too large is dropped', () => {
    const sink = recorder();
    const kept: AuditEvent[] = [];
    const failures: Failure[] = [];
    const truncating = truncatingBackend(
      { process: (events) => (kept.push(...events), sink.process(events)), close: async () => {} },
      {
        maxEventSize: 1_500,
        maxBatchSize: 100_000,
        annotation: 'audit.k8s.io/truncated',
        onError: (plugin, err, events) => failures.push({ plugin, message: err.message, ids: events.map((e) => e.auditID) }),
      },
    );
    const withObjects = event(1, { level: 'RequestResponse', requestObject: { data: big }, responseObject: { data: big } });
    const metadataOnly = event(2, { annotations: { note: big } });
    expect(truncating.process([withObjects, metadataOnly, event(3)])).toBe(true);
    expect(kept.map((e) => e.auditID)).toEqual(['id-1', 'id-3']);
    expect(kept[0]).not.toHaveProperty('requestObject');
    expect(kept[0]).not.toHaveProperty('responseObject');
    expect(kept[0]!.annotations).toEqual({ 'audit.k8s.io/truncated': 'true' });
    expect(withObjects.requestObject).toEqual({ data: big });
    expect(failures).toEqual([{ plugin: 'truncate', message: 'event is too large even after truncating', ids: ['id-2'] }]);
  });

  test('the events of one call are split into batches under the byte limit', () => {
    const sink = recorder();
    const size = Buffer.byteLength(JSON.stringify(event(1)));
    const truncating = truncatingBackend(sink, {
      maxEventSize: size + 10,
      maxBatchSize: size * 2 + 5,
      annotation: 'audit.k8s.io/truncated',
      onError: () => {},
    });
    truncating.process([1, 2, 3, 4, 5].map((n) => event(n)));
    expect(sink.batches).toEqual([['id-1', 'id-2'], ['id-3', 'id-4'], ['id-5']]);
  });
});

test('the legacy line an error logs for each lost event', () => {
  expect(legacyEventLine(event(1, { userAgent: 'kubectl/v1.32.0' }))).toBe(
    '2026-01-01T00:00:00Z AUDIT: id="id-1" stage="ResponseComplete" ip="127.0.0.1" method="get" user="alice" groups="\\"dev\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="kubectl/v1.32.0" namespace="default" uri="/api/v1/namespaces/default/configmaps/c1" response="200"',
  );
  expect(
    legacyEventLine(
      event(2, {
        stage: 'RequestReceived',
        responseStatus: undefined,
        sourceIPs: undefined,
        objectRef: undefined,
        requestReceivedTimestamp: '2026-01-01T00:00:00.120300Z',
      }),
    ),
  ).toMatch(/^2026-01-01T00:00:00\.1203Z AUDIT: .* ip="<unknown>" method="get" user="alice" .* namespace="<none>" .* response="<deferred>"$/);
});
