import {
  createCodecs,
  defaultCodecs,
  defaultRestrictions,
  gatewayCodecs,
  jsonCodec,
  negotiateInput,
  negotiateMediaTypeOptions,
  negotiateOutput,
  negotiateStreamOutput,
  parseAccept,
  resourceEndpointRestrictions,
  responseContentEncoding,
  wantsPretty,
  yamlCodec,
} from '../../../src/gateway/codecs';
import { createNaming } from '../../../src/naming';

const naming = createNaming('kubernetes');
const served = gatewayCodecs(naming);
const withCbor = gatewayCodecs(naming, { cbor: true, compression: true });
const resource = resourceEndpointRestrictions({ metaGroup: 'meta.k8s.io', table: true });

function output(accept?: string, url = '', ua?: string) {
  const headers: Record<string, string> = {};
  if (accept !== undefined) headers.accept = accept;
  if (ua) headers['user-agent'] = ua;
  return negotiateOutput({ headers, query: new URLSearchParams(url) }, defaultCodecs);
}

function pick(accept: string, codecs = served, restrictions = resource) {
  const o = negotiateMediaTypeOptions(accept, codecs, restrictions);
  return o && `${o.codec.mediaType}${o.convert ? ` as ${o.convert.kind}/${o.convert.version}` : ''}`;
}

describe('Accept parsing (goautoneg)', () => {
  it("orders clauses with goautoneg's comparator and insertion sort, quirks included", () => {
    const order = (h: string) => parseAccept(h).map((c) => `${c.type}/${c.subType};${c.q}`);
    expect(order('*/*;q=0.5, application/*, application/yaml;q=0.9, text/plain')).toEqual([
      'text/plain;1',
      // A concrete subtype goes before `application/*` whatever their q-values (upstream's comparator).
      'application/yaml;0.8999999761581421',
      'application/*;1',
      '*/*;0.5',
    ]);
    expect(order('application/json;q=0.5, application/yaml')).toEqual(['application/yaml;1', 'application/json;0.5']);
    expect(order('b/b, a/a')).toEqual(['b/b;1', 'a/a;1']);
  });
  it('keeps parameters other than q verbatim and skips malformed ranges', () => {
    expect(parseAccept('application/json;as=Table;v=v1;g=meta.k8s.io')[0]!.params).toEqual({ as: 'Table', v: 'v1', g: 'meta.k8s.io' });
    expect(parseAccept('application, a/b/c, *, x/y;flag')).toEqual([
      { type: 'x', subType: 'y', params: {}, q: 1 },
      { type: '*', subType: '*', params: {}, q: 1 },
    ]);
    expect(parseAccept('a/b;q=bad')[0]!.q).toBe(0);
  });
});

describe('output negotiation', () => {
  it('defaults to JSON without an Accept header, and for */* and application/*', () => {
    expect(output().codec).toBe(jsonCodec);
    expect(output('*/*').codec).toBe(jsonCodec);
    expect(output('application/*').codec).toBe(jsonCodec);
    expect(output('application/json, */*').codec).toBe(jsonCodec);
  });
  it('serves YAML when asked; q only orders clauses, as upstream never refuses q=0', () => {
    expect(output('application/yaml').codec).toBe(yamlCodec);
    expect(output('application/json;q=0.5, application/yaml').codec).toBe(yamlCodec);
    expect(output('application/json;q=0.9, application/yaml;q=0.1').codec).toBe(jsonCodec);
    expect(output('application/json;q=0').codec).toBe(jsonCodec);
    expect(output('application/*;q=0.9, application/yaml;q=0.1').codec).toBe(yamlCodec);
  });
  it('matches media types case-sensitively, as goautoneg does', () => {
    expect(() => output('Application/JSON')).toThrow(expect.objectContaining({ code: 406 }));
  });
  it('is 406 listing the served types when nothing fits', () => {
    expect(() => output('text/html')).toThrow(
      expect.objectContaining({
        status: expect.objectContaining({
          code: 406,
          reason: 'NotAcceptable',
          message: 'only the following media types are accepted: application/json, application/yaml',
        }),
      }),
    );
    expect(() => negotiateOutput({ headers: { accept: 'application/cbor' }, query: new URLSearchParams() }, served)).toThrow(
      expect.objectContaining({
        message: 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      }),
    );
    expect(negotiateOutput({ headers: { accept: 'application/cbor' }, query: new URLSearchParams() }, withCbor).codec.mediaType).toBe('application/cbor');
  });
  it("falls back to plain JSON from kubectl's Table header where Tables are not served", () => {
    const o = output('application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json');
    expect(o.codec).toBe(jsonCodec);
    expect(o.convert).toBeUndefined();
    expect(() => output('application/json;as=Table;g=meta.k8s.io;v=v1')).toThrow(expect.objectContaining({ code: 406 }));
  });
  it('serves Tables in JSON and YAML only, PartialObjectMetadata in every format, in meta v1 and v1beta1', () => {
    expect(pick('application/json;as=Table;v=v1;g=meta.k8s.io')).toBe('application/json as Table/v1');
    expect(pick('application/yaml;as=Table;v=v1beta1;g=meta.k8s.io')).toBe('application/yaml as Table/v1beta1');
    expect(pick('application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io')).toBeUndefined();
    expect(pick('application/cbor;as=Table;v=v1;g=meta.k8s.io', withCbor)).toBeUndefined();
    expect(pick('application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1')).toBe(
      'application/vnd.kubernetes.protobuf as PartialObjectMetadataList/v1',
    );
    expect(pick('application/json;as=Table;v=v2;g=meta.k8s.io')).toBeUndefined();
    expect(pick('application/json;as=Table;v=v1;g=meta.platform.io')).toBeUndefined();
    expect(pick('application/json;as=Table;v=v1')).toBeUndefined();
    expect(pick('application/json;as=Pod;v=v1;g=meta.k8s.io')).toBeUndefined();
    const noTables = resourceEndpointRestrictions({ metaGroup: 'meta.k8s.io', table: false });
    expect(pick('application/json;as=Table;v=v1;g=meta.k8s.io, application/yaml', served, noTables)).toBe('application/yaml');
  });
  it('checks sv against the meta version and ignores unknown parameters', () => {
    expect(pick('application/json;sv=v1')).toBe('application/json');
    expect(pick('application/json;sv=v2, application/yaml')).toBe('application/yaml');
    expect(pick('application/json;sv=v1', served, defaultRestrictions)).toBeUndefined();
    expect(pick('application/json;charset=utf-8;export=1')).toBe('application/json');
  });
  it('honours pretty from the clause, the query (a Go bool) and human User-Agents', () => {
    expect(output('application/json;pretty=1').pretty).toBe(true);
    expect(output('application/json;pretty=true').pretty).toBe(false);
    expect(output('application/json', 'pretty=true').pretty).toBe(true);
    expect(output('application/json', 'pretty=T').pretty).toBe(true);
    expect(output('application/json', 'pretty=yes').pretty).toBe(false);
    expect(output('application/json', 'pretty=false', 'curl/8').pretty).toBe(false);
    expect(output('application/json', '', 'curl/8.1').pretty).toBe(true);
    expect(output('application/json', '', 'Mozilla/5.0 (X11)').pretty).toBe(true);
    expect(output('application/json', '', 'kubectl/v1.32').pretty).toBe(false);
    expect(wantsPretty({ headers: { 'user-agent': 'Wget/1.21' }, query: new URLSearchParams() })).toBe(true);
  });
  it('accepts stream=watch only for codecs that can stream', () => {
    expect(negotiateMediaTypeOptions('application/json;stream=watch', defaultCodecs, defaultRestrictions)?.stream).toBe('watch');
    expect(negotiateMediaTypeOptions('application/yaml;stream=watch', defaultCodecs, defaultRestrictions)).toBeUndefined();
    expect(negotiateMediaTypeOptions('application/json;stream=other', defaultCodecs, defaultRestrictions)).toBeUndefined();
    expect(negotiateMediaTypeOptions('application/json;stream=', defaultCodecs, defaultRestrictions)?.stream).toBeUndefined();
  });
  it('needs a streaming codec for watches (YAML is 406), and never indents events', () => {
    const req = (accept: string, query = '') => ({ headers: { accept }, query: new URLSearchParams(query) });
    expect(negotiateStreamOutput(req('application/json', 'pretty=true'), defaultCodecs)).toMatchObject({ codec: jsonCodec, pretty: false });
    expect(() => negotiateStreamOutput(req('application/yaml'), defaultCodecs)).toThrow(
      expect.objectContaining({ status: expect.objectContaining({ code: 406 }) }),
    );
    expect(negotiateStreamOutput(req('application/cbor'), withCbor).codec.stream!.mediaType).toBe('application/cbor-seq');
    expect(negotiateStreamOutput(req('application/vnd.kubernetes.protobuf;stream=watch'), served).codec.stream!.mediaType).toBe(
      'application/vnd.kubernetes.protobuf;stream=watch',
    );
  });
});

describe('response content encoding', () => {
  const req = (acceptEncoding?: string) => ({
    headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding },
    query: new URLSearchParams(),
  });
  it('is gzip when gzip is one of the Accept-Encoding tokens, exactly', () => {
    expect(responseContentEncoding(req('gzip'), served)).toBe('gzip');
    expect(responseContentEncoding(req('deflate, gzip'), served)).toBe('gzip');
    expect(responseContentEncoding(req('gzip;q=1.0'), served)).toBeUndefined();
    expect(responseContentEncoding(req('br'), served)).toBeUndefined();
    expect(responseContentEncoding(req(), served)).toBeUndefined();
  });
  it('is off with the APIResponseCompression gate off', () => {
    expect(responseContentEncoding(req('gzip'), gatewayCodecs(naming, { cbor: false, compression: false }))).toBeUndefined();
    expect(negotiateOutput({ ...req('gzip'), headers: { 'accept-encoding': 'gzip' } }, served).contentEncoding).toBe('gzip');
  });
});

describe('input negotiation', () => {
  it('treats an absent Content-Type as JSON and ignores parameters', () => {
    expect(negotiateInput(undefined, defaultCodecs)).toBe(jsonCodec);
    expect(negotiateInput('application/json; charset=utf-8', defaultCodecs)).toBe(jsonCodec);
    expect(negotiateInput('Application/YAML', defaultCodecs)).toBe(yamlCodec);
  });
  it('is 415 with upstream message for anything else, CBOR included while its gate is off', () => {
    for (const ct of ['text/plain', 'garbage', 'application/cbor']) {
      expect(() => negotiateInput(ct, served)).toThrow(
        expect.objectContaining({
          status: expect.objectContaining({
            code: 415,
            reason: 'UnsupportedMediaType',
            message:
              'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
          }),
        }),
      );
    }
    expect(negotiateInput('application/cbor', withCbor).mediaType).toBe('application/cbor');
    expect(createCodecs([]).size).toBe(0);
  });
});
