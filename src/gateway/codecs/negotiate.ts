/**
 * Content negotiation as pure functions over the codec list (docs/API.md, "Content negotiation"),
 * following upstream's negotiation package clause by clause:
 *
 * - `Accept` is parsed and ordered as goautoneg does it (its insertion-sort comparator: a higher
 *   q first, else a concrete type before `*`, else a concrete subtype before `*`), matched
 *   case-sensitively, and the first (clause, codec) pair the endpoint allows wins. q only orders:
 *   upstream never refuses a clause for `q=0`.
 * - Clause parameters: `as`/`g`/`v` ask for a conversion (Table, PartialObjectMetadata), `stream`
 *   for a streaming variant, `sv` for a server version, `pretty=1` for indentation; others are
 *   ignored. A clause the endpoint cannot honour is skipped, so kubectl's trailing
 *   `application/json` is used when a Table cannot be served.
 * - Nothing acceptable is 406 listing the served media types (with `;stream=watch` for watches);
 *   an unknown `Content-Type` is 415.
 */
import { notAcceptable, unsupportedMediaType } from '../../status';
import { type Codec, type Codecs, featuresOf, mediaTypesOf, streamMediaTypesOf } from './codec';

export interface AcceptClause {
  type: string;
  subType: string;
  params: Record<string, string>;
  q: number;
}

/** The object a clause asks the server to convert to (`as=Table;g=<meta group>;v=v1`). */
export interface Conversion {
  group: string;
  version: string;
  kind: string;
}

export interface MediaTypeOptions {
  codec: Codec;
  pretty: boolean;
  convert?: Conversion;
  /** `stream=watch` was requested. */
  stream?: string;
  /** `gzip` when the client accepts it and compression is enabled (upstream responseContentEncodingSupported). */
  contentEncoding?: 'gzip';
}

/** What an endpoint can serve (upstream EndpointRestrictions / RequestScope). */
export interface EndpointRestrictions {
  /** Upstream AllowsMediaTypeTransform: may the endpoint answer in this codec with this conversion (undefined: the plain object)? */
  allowsConversion(convert: Conversion | undefined, codec: Codec): boolean;
  allowsStreamSchema(schema: string): boolean;
  /** The `sv` parameter; absent means no server version is served. */
  allowsServerVersion?(version: string): boolean;
}

/** Upstream DefaultEndpointRestrictions: plain objects only, `stream=watch`, no server versions. */
export const defaultRestrictions: EndpointRestrictions = {
  allowsConversion: (convert) => convert === undefined,
  allowsStreamSchema: (schema) => schema === 'watch',
};

/** Resource endpoints without Table or metadata conversions (tests, subresources without a table). */
export const resourceRestrictions: EndpointRestrictions = defaultRestrictions;

export interface ResourceEndpoint {
  /** The meta group (`naming.groups.meta`): conversions exist in its v1 and v1beta1. */
  metaGroup: string;
  /** The endpoint can build Tables (upstream: a TableConvertor is installed). */
  table: boolean;
}

/**
 * Upstream RequestScope.AllowsMediaTypeTransform for a resource endpoint: Table in JSON and YAML
 * only (so protobuf and CBOR Tables are skipped), PartialObjectMetadata(List) in any format,
 * nothing else; `sv` must name the meta version.
 */
export function resourceEndpointRestrictions(endpoint: ResourceEndpoint): EndpointRestrictions {
  return {
    allowsConversion(convert, codec) {
      if (convert === undefined) return true;
      if (convert.group !== endpoint.metaGroup || (convert.version !== 'v1' && convert.version !== 'v1beta1')) return false;
      switch (convert.kind) {
        case 'Table':
          return endpoint.table && (codec.mediaType === 'application/json' || codec.mediaType === 'application/yaml');
        case 'PartialObjectMetadata':
        case 'PartialObjectMetadataList':
          return true;
        default:
          return false;
      }
    },
    allowsStreamSchema: (schema) => schema === 'watch',
    allowsServerVersion: (version) => version === 'v1',
  };
}

/** goautoneg's comparator; not a strict order, so the sort below must be the same insertion sort. */
function before(a: AcceptClause, b: AcceptClause): boolean {
  if (a.q > b.q) return true;
  if (a.type !== '*' && b.type === '*') return true;
  if (a.subType !== '*' && b.subType === '*') return true;
  return false;
}

/** Go's strconv.ParseFloat(s, 32) as goautoneg uses it: malformed values count as 0. */
function parseQ(text: string): number {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return 0;
  return Math.fround(Number(text));
}

/**
 * Upstream goautoneg.ParseAccept, remembered per header text: clients send the same few Accept
 * headers on every request. The answers are frozen and shared.
 */
export function parseAccept(header: string): readonly AcceptClause[] {
  let clauses = parsedAccepts.get(header);
  if (!clauses) {
    if (parsedAccepts.size >= MAX_PARSED_ACCEPTS) parsedAccepts.clear();
    clauses = Object.freeze(parseAcceptHeader(header).map((c) => Object.freeze({ ...c, params: Object.freeze(c.params) })));
    parsedAccepts.set(header, clauses);
  }
  return clauses;
}

const MAX_PARSED_ACCEPTS = 256;
/** Shared by every server in the process: a pure memo of header values, its answers frozen. */
const parsedAccepts = new Map<string, readonly AcceptClause[]>();

function parseAcceptHeader(header: string): AcceptClause[] {
  const clauses: AcceptClause[] = [];
  for (const rawPart of header.split(',')) {
    const part = rawPart.replace(/^ +| +$/g, '');
    const [mediaRange, ...paramParts] = part.split(';');
    const sp = mediaRange!.split('/');
    const type = sp[0]!.replace(/^ +| +$/g, '');
    let subType: string;
    if (sp.length === 1 && type === '*') subType = '*';
    else if (sp.length === 2) subType = sp[1]!.replace(/^ +| +$/g, '');
    else continue;
    const clause: AcceptClause = { type, subType, params: {}, q: 1 };
    for (const param of paramParts) {
      const eq = param.indexOf('=');
      if (eq < 0) continue;
      const token = param.slice(0, eq).replace(/^ +| +$/g, '');
      if (token === 'q') clause.q = parseQ(param.slice(eq + 1));
      else clause.params[token] = param.slice(eq + 1).replace(/^ +| +$/g, '');
    }
    clauses.push(clause);
  }
  // Go's sort.Sort runs insertion sort on short slices (all real Accept headers).
  for (let i = 1; i < clauses.length; i++) {
    for (let j = i; j > 0 && before(clauses[j]!, clauses[j - 1]!); j--) {
      [clauses[j], clauses[j - 1]] = [clauses[j - 1]!, clauses[j]!];
    }
  }
  return clauses;
}

function clauseMatches(clause: AcceptClause, codec: Codec): boolean {
  const slash = codec.mediaType.indexOf('/');
  const type = codec.mediaType.slice(0, slash);
  const subType = codec.mediaType.slice(slash + 1);
  return (clause.type === type && (clause.subType === subType || clause.subType === '*')) || (clause.type === '*' && clause.subType === '*');
}

/** Upstream acceptMediaTypeOptions: the options a clause asks of a codec, or undefined when the endpoint cannot honour them. */
function optionsFor(clause: AcceptClause, codec: Codec, restrictions: EndpointRestrictions): MediaTypeOptions | undefined {
  const p = clause.params;
  let convert: Conversion | undefined;
  if ('as' in p || 'g' in p || 'v' in p) convert = { group: p.g ?? '', version: p.v ?? '', kind: p.as ?? '' };
  const stream = p.stream;
  if (stream && (!codec.stream || !restrictions.allowsStreamSchema(stream))) return undefined;
  if (p.sv && !(restrictions.allowsServerVersion?.(p.sv) ?? false)) return undefined;
  if (!restrictions.allowsConversion(convert, codec)) return undefined;
  const options: MediaTypeOptions = { codec, pretty: p.pretty === '1' };
  if (convert) options.convert = convert;
  if (stream) options.stream = stream;
  return options;
}

/** Upstream NegotiateMediaTypeOptions: the first acceptable (clause, codec) pair, or undefined. */
export function negotiateMediaTypeOptions(accept: string | undefined, codecs: Codecs, restrictions: EndpointRestrictions): MediaTypeOptions | undefined {
  const list = [...codecs.values()];
  if (!accept) return list.length ? { codec: list[0]!, pretty: false } : undefined;
  for (const clause of parseAccept(accept)) {
    for (const codec of list) {
      if (!clauseMatches(clause, codec)) continue;
      const options = optionsFor(clause, codec, restrictions);
      if (options) return options;
    }
  }
  return undefined;
}

export interface OutputRequest {
  headers: Readonly<Record<string, string | undefined>>;
  query: URLSearchParams;
}

/** Go's strconv.ParseBool. */
function goBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  return undefined;
}

/**
 * Upstream isPrettyPrint: the deprecated `pretty` query parameter (a Go boolean; unparsable is
 * false), else a browser or command-line User-Agent.
 */
export function wantsPretty(request: OutputRequest): boolean {
  const pp = request.query.get('pretty');
  if (pp) return goBool(pp) ?? false;
  const ua = request.headers['user-agent'] ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

/**
 * Upstream responseContentEncodingSupported: `gzip` when it is one of the comma-separated
 * `Accept-Encoding` tokens (exactly; `gzip;q=0.5` is not) and compression is enabled.
 */
export function responseContentEncoding(request: OutputRequest, codecs: Codecs): 'gzip' | undefined {
  const header = request.headers['accept-encoding'];
  if (!header || !featuresOf(codecs).compression) return undefined;
  return header.split(',').some((token) => token.trim() === 'gzip') ? 'gzip' : undefined;
}

function finish(options: MediaTypeOptions, request: OutputRequest, codecs: Codecs): MediaTypeOptions {
  const out = { ...options, pretty: options.pretty || wantsPretty(request) };
  const encoding = responseContentEncoding(request, codecs);
  if (encoding) out.contentEncoding = encoding;
  return out;
}

/** Pick the response format or fail with 406 listing what the endpoint serves. */
export function negotiateOutput(request: OutputRequest, codecs: Codecs, restrictions: EndpointRestrictions = defaultRestrictions): MediaTypeOptions {
  const options = negotiateMediaTypeOptions(request.headers.accept, codecs, restrictions);
  if (!options) throw notAcceptable(mediaTypesOf(codecs));
  return finish(options, request, codecs);
}

/** A watch needs a codec with stream framing (upstream NegotiateOutputMediaTypeStream); 406 lists the `;stream=watch` types. */
export function negotiateStreamOutput(request: OutputRequest, codecs: Codecs, restrictions: EndpointRestrictions = defaultRestrictions): MediaTypeOptions {
  const options = negotiateMediaTypeOptions(request.headers.accept, codecs, restrictions);
  if (!options?.codec.stream) throw notAcceptable(streamMediaTypesOf(codecs));
  // Watch events are never indented: upstream's stream serializers have no pretty variant.
  return { ...options, pretty: false };
}

/** The media type of a Content-Type header, lower-cased and without parameters; undefined when malformed. */
export function parseContentType(header: string): string | undefined {
  const base = header.split(';')[0]!.trim().toLowerCase();
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(base) ? base : undefined;
}

/** Upstream NegotiateInputSerializer: an absent Content-Type means the default (JSON); unknown types are 415. */
export function negotiateInput(contentType: string | undefined, codecs: Codecs): Codec {
  const list = [...codecs.values()];
  if (!contentType) return list[0]!;
  const mediaType = parseContentType(contentType);
  const codec = mediaType ? codecs.get(mediaType) : undefined;
  if (!codec) throw unsupportedMediaType(mediaTypesOf(codecs));
  return codec;
}
