import { StatusError, notFound, timeout } from '../../src/status';
import { defaultCodecs, jsonCodec } from '../../src/gateway/codecs';
import { STREAMED_LIST_ITEMS, createJsonCodec } from '../../src/gateway/codecs/json';
import { createNaming } from '../../src/naming';
import { gunzipSync } from 'node:zlib';
import { warningHeaderValue, writeError, writeObject, writeRawJson, writeText } from '../../src/gateway/respond';
import { fakeExchange } from './support/http';

describe('streamed lists', () => {
  const codec = createJsonCodec(createNaming('kubernetes'));
  const list = (n: number) => ({
    kind: 'ConfigMapList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '7' },
    items: Array.from({ length: n }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${i}`, namespace: 'default' },
      data: { k: 'v'.repeat(200) },
    })),
  });

  // Pretty: curl's user agent, ?pretty=true; indented piece by piece as it streams.
  it.each([false, true])('a large list (pretty: %s) goes out in pieces, without Content-Length, byte for byte what encode gives', async (pretty) => {
    const value = list(STREAMED_LIST_ITEMS * 2);
    const { exchange, response } = fakeExchange({ url: '/' });
    const writes: number[] = [];
    response.onWrite = (chunk) => writes.push(chunk.length);
    await writeObject(exchange, 200, value, { codec, pretty });
    expect(response.header('content-length')).toBeUndefined();
    expect(writes.length).toBeGreaterThan(1);
    expect(response.text).toBe(codec.encode(value, { pretty }).toString('utf8'));
    if (pretty) expect(response.text).toBe(JSON.stringify(JSON.parse(codec.encode(value).toString('utf8')), null, 2));
  });

  it('to a client that takes gzip it streams through gzip, the same bytes once unzipped', async () => {
    const value = list(STREAMED_LIST_ITEMS * 2);
    const { exchange, response } = fakeExchange({ url: '/' });
    await writeObject(exchange, 200, value, { codec, pretty: false, contentEncoding: 'gzip' });
    expect(response.header('content-encoding')).toBe('gzip');
    expect(response.header('content-length')).toBeUndefined();
    expect(gunzipSync(Buffer.concat(response.chunks)).toString('utf8')).toBe(codec.encode(value).toString('utf8'));
  });

  it('a writer that holds each chunk until it drains (as a socket does) gets every byte as written, through gzip and indented too', async () => {
    // Items of varied text, so that a batch buffer filled again too early would show.
    const value = {
      ...list(0),
      items: Array.from({ length: STREAMED_LIST_ITEMS * 3 }, (_, i) => ({
        metadata: { name: `cm-${i}`, namespace: 'default' },
        data: { k: String(i).repeat(1 + (i % 97)) },
      })),
    };
    for (const [contentEncoding, pretty] of [
      [undefined, false],
      ['gzip', false],
      [undefined, true],
    ] as const) {
      const { exchange, response } = fakeExchange({ url: '/' });
      // Chunks are kept by reference, not copied, until the next drain reads them: like a
      // socket, which may still hold a chunk it accepted until it has drained.
      const held: Uint8Array[] = [];
      const received: Buffer[] = [];
      let writes = 0;
      response.write = (chunk) => {
        held.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
        writes++;
        return writes % 3 === 0; // full most of the time, not always
      };
      response.drain = async () => {
        await new Promise((resolve) => setImmediate(resolve));
        for (const chunk of held.splice(0)) received.push(Buffer.from(chunk));
      };
      const end = response.end.bind(response);
      response.end = (chunk) => {
        for (const c of held.splice(0)) received.push(Buffer.from(c));
        if (chunk !== undefined) received.push(Buffer.from(chunk));
        end();
      };
      await writeObject(exchange, 200, value, { codec, pretty, contentEncoding });
      const body = Buffer.concat(received);
      expect((contentEncoding ? gunzipSync(body) : body).equals(codec.encode(value, { pretty }))).toBe(true);
    }
  });

  it('small lists, pretty or not, get one body with its length', async () => {
    for (const output of [
      { codec, pretty: false },
      { codec, pretty: true },
    ]) {
      const { exchange, response } = fakeExchange({ url: '/' });
      await writeObject(exchange, 200, list(3), output);
      expect(response.header('content-length')).toBeDefined();
      expect(response.text).toBe(codec.encode(list(3), { pretty: output.pretty }).toString('utf8'));
    }
  });
});

describe('responses', () => {
  it('writes objects with Content-Type and Content-Length', () => {
    const { exchange, response } = fakeExchange({ url: '/' });
    writeObject(exchange, 201, { a: 1 }, { codec: jsonCodec, pretty: false });
    expect(response.status).toBe(201);
    expect(response.header('content-type')).toBe('application/json');
    expect(response.header('content-length')).toBe('8');
    expect(response.text).toBe('{"a":1}\n');
  });

  it('sends no body for HEAD', () => {
    const { exchange, response } = fakeExchange({ url: '/', method: 'HEAD' });
    writeObject(exchange, 200, { a: 1 }, { codec: jsonCodec, pretty: false });
    expect(response.text).toBe('');
    expect(response.header('content-length')).toBe('8');
  });

  it('turns collected warnings into Warning headers, escaped and deduplicated', () => {
    const { exchange, response } = fakeExchange({ url: '/' });
    exchange.warnings.push('unknown field "spec.foo"', 'unknown field "spec.foo"', 'a \\ b');
    writeObject(exchange, 200, {}, { codec: jsonCodec, pretty: false });
    expect(response.header('warning')).toEqual(['299 - "unknown field \\"spec.foo\\""', '299 - "a \\\\ b"']);
    expect(warningHeaderValue('plain')).toBe('299 - "plain"');
  });

  it('writes errors as Status in the negotiated format, JSON when nothing fits', () => {
    const yaml = fakeExchange({ url: '/', headers: { accept: 'application/yaml' } });
    writeError(yaml.exchange, notFound({ group: '', resource: 'pods' }, 'x'), defaultCodecs);
    expect(yaml.response.status).toBe(404);
    expect(yaml.response.header('content-type')).toBe('application/yaml');
    expect(yaml.response.text).toContain('reason: NotFound');

    const html = fakeExchange({ url: '/', headers: { accept: 'text/html' } });
    writeError(html.exchange, notFound({ group: '', resource: 'pods' }, 'x'), defaultCodecs);
    expect(html.response.json).toMatchObject({ kind: 'Status', code: 404, message: 'pods "x" not found' });
  });

  it('sets Retry-After from the Status details', () => {
    const { exchange, response } = fakeExchange({ url: '/' });
    writeError(exchange, timeout('slow', 3), defaultCodecs);
    expect(response.header('retry-after')).toBe('3');
    expect(response.status).toBe(504);
  });

  it('turns unknown errors into 500 InternalError', () => {
    const { exchange, response } = fakeExchange({ url: '/' });
    writeError(exchange, new Error('boom'), defaultCodecs);
    expect(response.status).toBe(500);
    expect(response.json).toMatchObject({ reason: 'InternalError', message: 'Internal error occurred: boom' });
    expect(StatusError.from(new Error('x')).code).toBe(500);
  });

  it('writes raw indented JSON and plain text as Go does', () => {
    const raw = fakeExchange({ url: '/' });
    writeRawJson(raw.exchange, 200, { major: '1' });
    expect(raw.response.text).toBe('{\n  "major": "1"\n}');
    const text = fakeExchange({ url: '/' });
    writeText(text.exchange, 404, '404 page not found\n');
    expect(text.response.header('content-type')).toBe('text/plain; charset=utf-8');
    expect(text.response.header('x-content-type-options')).toBe('nosniff');
  });
});
