import { bodyCodec, decodeObject, decodePatch, patchTypeOf, readOptionalBody } from '../../src/gateway/body';
import { defaultCodecs, jsonCodec, yamlCodec } from '../../src/gateway/codecs';
import { fakeRequest } from './support/http';

describe('request bodies', () => {
  it('picks the codec by Content-Type, JSON when absent, 415 otherwise', () => {
    expect(bodyCodec(fakeRequest({ url: '/' }), defaultCodecs)).toBe(jsonCodec);
    expect(bodyCodec(fakeRequest({ url: '/', headers: { 'content-type': 'application/yaml' } }), defaultCodecs)).toBe(yamlCodec);
    expect(() => bodyCodec(fakeRequest({ url: '/', headers: { 'content-type': 'text/csv' } }), defaultCodecs)).toThrow(expect.objectContaining({ code: 415 }));
  });

  it('decodes objects from JSON and YAML', () => {
    expect(decodeObject(jsonCodec, Buffer.from('{"kind":"Pod"}')).object).toEqual({ kind: 'Pod' });
    expect(decodeObject(yamlCodec, Buffer.from('kind: Pod\nmetadata:\n  name: a\n')).object).toEqual({ kind: 'Pod', metadata: { name: 'a' } });
  });

  it('answers 400 for malformed bodies and for bodies that are not objects', () => {
    expect(() => decodeObject(jsonCodec, Buffer.from('{'))).toThrow(
      expect.objectContaining({
        status: expect.objectContaining({ code: 400, message: expect.stringMatching(/^couldn't get version\/kind; json parse error: /) }),
      }),
    );
    expect(() => decodeObject(yamlCodec, Buffer.from('a: [\n'))).toThrow(
      expect.objectContaining({ code: 400, message: expect.stringMatching(/^error converting YAML to JSON: yaml: /) }),
    );
    expect(() => decodeObject(jsonCodec, Buffer.from('[1]'))).toThrow(expect.objectContaining({ code: 400, message: "Object 'Kind' is missing in '[1]'" }));
  });

  it('reads an optional body: none means undefined', async () => {
    expect(await readOptionalBody(fakeRequest({ url: '/' }), defaultCodecs)).toBeUndefined();
    expect(await readOptionalBody(fakeRequest({ url: '/', body: '{"kind":"DeleteOptions"}' }), defaultCodecs)).toEqual({ kind: 'DeleteOptions' });
    await expect(readOptionalBody(fakeRequest({ url: '/', body: 'x', headers: { 'content-type': 'text/plain' } }), defaultCodecs)).rejects.toMatchObject({
      code: 415,
    });
  });

  it('refuses a JSON object or patch that decodes to more values than the limit with 413, and passes one at it', () => {
    // A million and one values (the list and its zeros) in under 3 MiB of text: counted from the
    // text as past the limit, so the decoded value is walked and refused.
    const zeros = (n: number) => `[${'0,'.repeat(n - 1)}0]`;
    const tooMany = expect.objectContaining({ code: 413, message: 'Request entity too large: the request body decodes to more than 1000000 values' });
    expect(() => decodeObject(jsonCodec, Buffer.from(`{"x":${zeros(1_000_000)}}`))).toThrow(tooMany);
    expect(() => decodePatch('merge', Buffer.from(`{"x":${zeros(1_000_000)}}`))).toThrow(tooMany);
    // At the limit exactly: the object, the list and 999,998 zeros; and a bound past the limit
    // that the walk finds within it (empty lists count once in the text, never in the value).
    expect(decodeObject(jsonCodec, Buffer.from(`{"x":${zeros(999_998)}}`)).object.x).toHaveLength(999_998);
    expect(decodeObject(jsonCodec, Buffer.from(`{"x":[${'[],'.repeat(499_999)}[]]}`)).object.x).toHaveLength(500_000);
  });

  it('rejects bodies over 3 MiB with 413', async () => {
    await expect(readOptionalBody(fakeRequest({ url: '/', body: Buffer.alloc(3 * 1024 * 1024 + 1, 32) }), defaultCodecs)).rejects.toMatchObject({
      status: { code: 413, reason: 'RequestEntityTooLarge', message: 'Request entity too large: limit is 3145728' },
    });
  });

  it('maps PATCH content types to patch types, ignoring parameters', () => {
    expect(patchTypeOf('application/json-patch+json')).toBe('json');
    expect(patchTypeOf('application/merge-patch+json; charset=utf-8')).toBe('merge');
    expect(patchTypeOf('application/strategic-merge-patch+json')).toBe('strategic');
    expect(patchTypeOf('application/apply-patch+yaml')).toBe('apply');
  });

  it('answers 415 with the patch types for any other PATCH content type', () => {
    for (const ct of [undefined, 'application/json', 'application/yaml']) {
      expect(() => patchTypeOf(ct)).toThrow(
        expect.objectContaining({
          status: expect.objectContaining({
            code: 415,
            message:
              'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml',
          }),
        }),
      );
    }
  });

  it('decodes apply patches as YAML and the others as JSON', () => {
    expect(decodePatch('apply', Buffer.from('kind: Pod\n')).patch).toEqual({ type: 'apply', body: { kind: 'Pod' } });
    expect(decodePatch('json', Buffer.from('[{"op":"remove","path":"/a"}]')).patch).toEqual({ type: 'json', body: [{ op: 'remove', path: '/a' }] });
    expect(() => decodePatch('merge', Buffer.from('{'))).toThrow(expect.objectContaining({ code: 400 }));
  });
});
