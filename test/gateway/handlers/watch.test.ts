import { createNaming } from '../../../src/naming';
import { defaultCodecs } from '../../../src/gateway/codecs';
import { createResourceHandler } from '../../../src/gateway/handlers/resource';
import { defaultWatchTimeoutMs } from '../../../src/gateway/handlers/watch';
import { ResourceIndex } from '../../../src/gateway/resource-index';
import { parseRequestInfo } from '../../../src/gateway/steps/request-info';
import type { ResourceRequestInfo } from '../../../src/gateway/types';
import { type FakeRequestInit, fakeExchange } from '../support/http';
import { testDefinitions } from '../support/definitions';
import { RecordingCore } from '../support/recording-core';
import { ManualClock } from '../../../src/clock';
import type { WatchEvent } from '../../../src/core/api';
import { AsyncQueue } from '../../../src/util/async-queue';

const naming = createNaming('kubernetes');

function start(init: FakeRequestInit, timeoutMs = 60_000, clock?: ManualClock, stream?: AsyncQueue<WatchEvent>) {
  const core = new RecordingCore();
  if (stream) (core as { watchStream: unknown }).watchStream = stream;
  const handler = createResourceHandler({
    core,
    codecs: defaultCodecs,
    naming,
    index: new ResourceIndex(testDefinitions(naming)),
    watchTimeoutMs: () => timeoutMs,
    clock,
  });
  const { exchange, response } = fakeExchange(init);
  exchange.info = parseRequestInfo(exchange.request);
  exchange.user = { username: 'admin', groups: ['system:masters'] };
  const done = handler(exchange, exchange.info as ResourceRequestInfo);
  return { core, response, done };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('watch', () => {
  it('streams one JSON document per event, flushing headers first, until the core ends the stream', async () => {
    const { core, response, done } = start({ url: '/api/v1/namespaces/ns/pods?watch=true&resourceVersion=5&allowWatchBookmarks=true' });
    await tick();
    expect(response.status).toBe(200);
    expect(response.headersFlushed).toBe(true);
    expect(response.header('content-type')).toBe('application/json');
    expect(core.last).toMatchObject({
      method: 'watch',
      target: { namespace: 'ns', resource: 'pods' },
      args: [{ resourceVersion: '5', allowWatchBookmarks: true }],
    });
    core.watchStream.push({ type: 'ADDED', object: { kind: 'Pod', metadata: { name: 'a' } } });
    await tick();
    expect(response.text).toBe('{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a"}}}\n');
    core.watchStream.push({ type: 'DELETED', object: { kind: 'Pod', metadata: { name: 'a' } } });
    core.watchStream.close();
    await done;
    expect(response.text.split('\n').filter(Boolean)).toHaveLength(2);
    expect(response.ended).toBe(true);
  });

  it('ends when the client goes away', async () => {
    const aborter = new AbortController();
    const { core, response, done } = start({ url: '/api/v1/pods?watch=1', signal: aborter.signal });
    await tick();
    aborter.abort();
    await done;
    expect(core.watchStream.closed).toBe(true);
    expect(response.ended).toBe(true);
  });

  it('ends after timeoutSeconds', async () => {
    const { core, done } = start({ url: '/api/v1/pods?watch=1&timeoutSeconds=0' });
    await done;
    expect(core.watchStream.closed).toBe(true);
  });

  it("ends at the server's watch timeout, on the server's clock, when the request sets none", async () => {
    const clock = new ManualClock();
    const { core, response, done } = start({ url: '/api/v1/pods?watch=1' }, 60_000, clock);
    await tick();
    clock.advance(59_999);
    await tick();
    expect(core.watchStream.closed).toBe(false);
    clock.advance(1);
    await done;
    expect(core.watchStream.closed).toBe(true);
    expect(response.ended).toBe(true);
  });

  it('serves the deprecated /watch/ path, naming the object through a field selector', async () => {
    const { core, done } = start({ url: '/api/v1/watch/namespaces/ns/pods/p?fieldSelector=a%3Db&timeoutSeconds=0' });
    await done;
    expect(core.last.args[0]).toMatchObject({ fieldSelector: 'a=b,metadata.name=p' });
    expect(core.last.target.name).toBeUndefined();
  });

  it('is 406 for YAML, since YAML cannot stream', async () => {
    const { core, done } = start({ url: '/api/v1/pods?watch=1', headers: { accept: 'application/yaml' } });
    await expect(done).rejects.toMatchObject({ code: 406, message: 'only the following media types are accepted: application/json' });
    expect(core.calls).toHaveLength(0);
  });

  it('defaults to between 30 and 60 minutes', () => {
    expect(defaultWatchTimeoutMs(() => 0)).toBe(1800_000);
    expect(defaultWatchTimeoutMs(() => 0.999)).toBeLessThan(3600_000);
  });

  describe("taken directly (a stream that offers `direct`, as the watch cache's watchers do)", () => {
    const pod = (name: string): WatchEvent => ({ type: 'ADDED', object: { kind: 'Pod', metadata: { name } } });
    const names = (text: string) =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line).object.metadata.name);

    it('writes what was queued before it started, then each event within the push', async () => {
      const stream = new AsyncQueue<WatchEvent>();
      stream.push(pod('a'));
      const { response, done } = start({ url: '/api/v1/pods?watch=1' }, 60_000, undefined, stream);
      await tick();
      expect(names(response.text)).toEqual(['a']);
      stream.push(pod('b'));
      // Written within the push: no turn of the event loop in between.
      expect(names(response.text)).toEqual(['a', 'b']);
      stream.close();
      await done;
      expect(response.ended).toBe(true);
    });

    it('stops taking events while the socket pushes back, and writes them in order once it drains', async () => {
      const stream = new AsyncQueue<WatchEvent>();
      const { response, done } = start({ url: '/api/v1/pods?watch=1' }, 60_000, undefined, stream);
      let full = true;
      let drained!: () => void;
      const write = response.write.bind(response);
      response.write = (chunk) => (write(chunk), !full);
      response.drain = () => new Promise<void>((resolve) => (drained = resolve));
      await tick();
      stream.push(pod('a'));
      stream.push(pod('b'));
      stream.push(pod('c'));
      expect(names(response.text)).toEqual(['a']);
      expect(stream.size).toBe(2);
      await tick();
      full = false;
      drained();
      await tick();
      expect(names(response.text)).toEqual(['a', 'b', 'c']);
      stream.push(pod('d'));
      expect(names(response.text)).toEqual(['a', 'b', 'c', 'd']);
      stream.close();
      await done;
    });

    it('ends with the error the stream was closed with, after what was queued', async () => {
      const stream = new AsyncQueue<WatchEvent>();
      const { response, done } = start({ url: '/api/v1/pods?watch=1' }, 60_000, undefined, stream);
      await tick();
      stream.push(pod('a'));
      stream.close(new Error('store gone'));
      await expect(done).rejects.toThrow('store gone');
      expect(names(response.text)).toEqual(['a']);
      expect(response.ended).toBe(true);
    });

    it('ends when the client goes away while it waits for events', async () => {
      const aborter = new AbortController();
      const stream = new AsyncQueue<WatchEvent>();
      const { response, done } = start({ url: '/api/v1/pods?watch=1', signal: aborter.signal }, 60_000, undefined, stream);
      await tick();
      aborter.abort();
      await done;
      expect(stream.isClosed).toBe(true);
      expect(response.ended).toBe(true);
    });
  });
});
