import { StatusError, notFound, timeout } from '../../src/status';
import { defaultCodecs, jsonCodec } from '../../src/gateway/codecs';
import { warningHeaderValue, writeError, writeObject, writeRawJson, writeText } from '../../src/gateway/respond';
import { fakeExchange } from './support/http';

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
