import {
  defaultCodecs,
  jsonCodec,
  negotiateInput,
  negotiateMediaTypeOptions,
  negotiateOutput,
  negotiateStreamOutput,
  parseAccept,
  resourceRestrictions,
  yamlCodec,
} from '../../../src/gateway/codecs';

function output(accept?: string, url = '', ua?: string) {
  const headers: Record<string, string> = {};
  if (accept !== undefined) headers.accept = accept;
  if (ua) headers['user-agent'] = ua;
  return negotiateOutput({ headers, query: new URLSearchParams(url) }, defaultCodecs);
}

describe('Accept parsing (goautoneg)', () => {
  it('orders by q, then specificity, keeping header order on ties', () => {
    const clauses = parseAccept('*/*;q=0.5, application/*, application/yaml;q=0.9, text/plain');
    expect(clauses.map((c) => `${c.type}/${c.subType};${c.q}`)).toEqual(['text/plain;1', 'application/*;1', 'application/yaml;0.9', '*/*;0.5']);
  });
  it('keeps parameters other than q', () => {
    expect(parseAccept('application/json;as=Table;v=v1;g=meta.k8s.io')[0].params).toEqual({ as: 'Table', v: 'v1', g: 'meta.k8s.io' });
  });
});

describe('output negotiation', () => {
  it('defaults to JSON without an Accept header, and for */* and application/*', () => {
    expect(output().codec).toBe(jsonCodec);
    expect(output('*/*').codec).toBe(jsonCodec);
    expect(output('application/*').codec).toBe(jsonCodec);
    expect(output('application/json, */*').codec).toBe(jsonCodec);
  });
  it('serves YAML when asked, honouring q-values', () => {
    expect(output('application/yaml').codec).toBe(yamlCodec);
    expect(output('application/json;q=0.5, application/yaml').codec).toBe(yamlCodec);
    expect(output('application/json;q=0.9, application/yaml;q=0.1').codec).toBe(jsonCodec);
  });
  it("falls back to plain JSON from kubectl's Table header", () => {
    const o = output('application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json');
    expect(o.codec).toBe(jsonCodec);
    expect(o.convert).toBeUndefined();
  });
  it('is 406 with upstream message when nothing fits', () => {
    expect(() => output('text/html')).toThrow(
      expect.objectContaining({
        status: expect.objectContaining({ code: 406, reason: 'NotAcceptable', message: 'only the following media types are accepted: application/json, application/yaml' }),
      }),
    );
    expect(() => output('application/json;as=Table;g=meta.k8s.io;v=v1')).toThrow(expect.objectContaining({ code: 406 }));
    expect(() => output('application/json;q=0')).toThrow(expect.objectContaining({ code: 406 }));
  });
  it('tolerates unknown parameters and honours pretty', () => {
    expect(output('application/json;charset=utf-8').codec).toBe(jsonCodec);
    expect(output('application/json;pretty=1').pretty).toBe(true);
    expect(output('application/json', 'pretty=true').pretty).toBe(true);
    expect(output('application/json', 'pretty=false', 'curl/8').pretty).toBe(false);
    expect(output('application/json', '', 'curl/8.1').pretty).toBe(true);
    expect(output('application/json', '', 'kubectl/v1.32').pretty).toBe(false);
  });
  it('accepts stream=watch only for codecs that can stream', () => {
    expect(negotiateMediaTypeOptions('application/json;stream=watch', defaultCodecs, resourceRestrictions)?.stream).toBe('watch');
    expect(negotiateMediaTypeOptions('application/yaml;stream=watch', defaultCodecs, resourceRestrictions)).toBeUndefined();
    expect(negotiateMediaTypeOptions('application/json;stream=other', defaultCodecs, resourceRestrictions)).toBeUndefined();
  });
  it('needs a streaming codec for watches (YAML is 406)', () => {
    const req = (accept: string) => ({ headers: { accept }, query: new URLSearchParams() });
    expect(negotiateStreamOutput(req('application/json'), defaultCodecs).codec).toBe(jsonCodec);
    expect(() => negotiateStreamOutput(req('application/yaml'), defaultCodecs)).toThrow(
      expect.objectContaining({ status: expect.objectContaining({ code: 406, message: 'only the following media types are accepted: application/json' }) }),
    );
  });
});

describe('input negotiation', () => {
  it('treats an absent Content-Type as JSON and ignores parameters', () => {
    expect(negotiateInput(undefined, defaultCodecs)).toBe(jsonCodec);
    expect(negotiateInput('application/json; charset=utf-8', defaultCodecs)).toBe(jsonCodec);
    expect(negotiateInput('Application/YAML', defaultCodecs)).toBe(yamlCodec);
  });
  it('is 415 with upstream message for anything else', () => {
    for (const ct of ['text/plain', 'garbage', 'application/vnd.kubernetes.protobuf']) {
      expect(() => negotiateInput(ct, defaultCodecs)).toThrow(
        expect.objectContaining({
          status: expect.objectContaining({
            code: 415,
            reason: 'UnsupportedMediaType',
            message: 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
          }),
        }),
      );
    }
  });
});
