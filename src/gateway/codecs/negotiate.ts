/**
 * Content negotiation as pure functions over the codec list (SPEC "Content negotiation" 1-2),
 * following upstream's negotiation package: Accept clauses sorted by q-value then specificity
 * (goautoneg), `*\/*` and `type/*` wildcards, the `as`/`g`/`v` conversion parameters, `pretty`
 * and `stream`. A clause the endpoint cannot honour (e.g. a Table it cannot build) is skipped,
 * so a fallback clause such as kubectl's trailing `application/json` is used instead.
 */
import { notAcceptable, unsupportedMediaType } from '../../status';
import { type Codec, type Codecs, mediaTypesOf, streamMediaTypesOf } from './codec';

export interface AcceptClause {
  type: string;
  subType: string;
  params: Record<string, string>;
  q: number;
}

/** The object a clause asks the server to convert to (`as=Table;g=meta.k8s.io;v=v1`). */
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
}

export interface EndpointRestrictions {
  /** May the endpoint answer in this codec with this conversion (undefined: the plain object)? */
  allowsConversion(convert: Conversion | undefined, codec: Codec): boolean;
  allowsStreamSchema(schema: string): boolean;
}

/** Resource endpoints: plain objects only, until Table and PartialObjectMetadata are served. */
export const resourceRestrictions: EndpointRestrictions = {
  allowsConversion: (convert) => convert === undefined,
  allowsStreamSchema: (schema) => schema === 'watch',
};

/** Upstream goautoneg.ParseAccept: parse, then order by q, then by specificity (stable). */
export function parseAccept(header: string): AcceptClause[] {
  const clauses: AcceptClause[] = [];
  for (const part of header.split(',')) {
    const [mediaRange, ...paramParts] = part.split(';');
    const range = mediaRange.trim();
    if (!range) continue;
    let type: string;
    let subType: string;
    if (range === '*') {
      type = '*';
      subType = '*';
    } else {
      const slash = range.indexOf('/');
      if (slash <= 0 || slash === range.length - 1) continue;
      type = range.slice(0, slash).toLowerCase();
      subType = range.slice(slash + 1).toLowerCase();
    }
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of paramParts) {
      const eq = p.indexOf('=');
      const key = (eq < 0 ? p : p.slice(0, eq)).trim();
      const value = eq < 0 ? '' : p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
      if (!key) continue;
      if (key === 'q') {
        const n = Number(value);
        q = Number.isFinite(n) ? n : 0;
      } else {
        params[key] = value;
      }
    }
    clauses.push({ type, subType, params, q });
  }
  const specificity = (c: AcceptClause) => (c.type === '*' ? 0 : c.subType === '*' ? 1 : 2);
  return clauses
    .map((c, i) => ({ c, i }))
    .sort((a, b) => b.c.q - a.c.q || specificity(b.c) - specificity(a.c) || a.i - b.i)
    .map((x) => x.c);
}

function clauseMatches(clause: AcceptClause, codec: Codec): boolean {
  const [type, subType] = codec.mediaType.split('/');
  return (clause.type === type && (clause.subType === subType || clause.subType === '*')) || (clause.type === '*' && clause.subType === '*');
}

function optionsFor(clause: AcceptClause, codec: Codec, restrictions: EndpointRestrictions): MediaTypeOptions | undefined {
  const p = clause.params;
  let convert: Conversion | undefined;
  if ('as' in p || 'g' in p || 'v' in p) convert = { group: p.g ?? '', version: p.v ?? '', kind: p.as ?? '' };
  const stream = p.stream;
  if (stream && (!codec.stream || !restrictions.allowsStreamSchema(stream))) return undefined;
  if (!restrictions.allowsConversion(convert, codec)) return undefined;
  return { codec, pretty: p.pretty === '1', convert, stream: stream || undefined };
}

/** Upstream NegotiateMediaTypeOptions: the first acceptable (clause, codec) pair, or undefined. */
export function negotiateMediaTypeOptions(accept: string | undefined, codecs: Codecs, restrictions: EndpointRestrictions): MediaTypeOptions | undefined {
  const list = [...codecs.values()];
  if (!accept) return list.length ? { codec: list[0], pretty: false } : undefined;
  for (const clause of parseAccept(accept)) {
    if (clause.q <= 0) continue;
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

/**
 * Upstream isPrettyPrint: the deprecated `pretty` query parameter (a Go boolean), else a
 * browser or command-line User-Agent.
 */
export function wantsPretty(request: OutputRequest): boolean {
  const pp = request.query.get('pretty');
  if (pp) return ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(pp);
  const ua = request.headers['user-agent'] ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

/** Pick the response format or fail with 406 listing what the endpoint serves. */
export function negotiateOutput(request: OutputRequest, codecs: Codecs, restrictions: EndpointRestrictions = resourceRestrictions): MediaTypeOptions {
  const options = negotiateMediaTypeOptions(request.headers.accept, codecs, restrictions);
  if (!options) throw notAcceptable(mediaTypesOf(codecs));
  return { ...options, pretty: options.pretty || wantsPretty(request) };
}

/** A watch needs a codec with stream framing (upstream NegotiateOutputMediaTypeStream). */
export function negotiateStreamOutput(request: OutputRequest, codecs: Codecs, restrictions: EndpointRestrictions = resourceRestrictions): MediaTypeOptions {
  const options = negotiateMediaTypeOptions(request.headers.accept, codecs, restrictions);
  if (!options || !options.codec.stream) throw notAcceptable(streamMediaTypesOf(codecs));
  return options;
}

/** The media type of a Content-Type header, lower-cased and without parameters; undefined when malformed. */
export function parseContentType(header: string): string | undefined {
  const base = header.split(';')[0].trim().toLowerCase();
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(base) ? base : undefined;
}

/** Upstream NegotiateInputSerializer: an absent Content-Type means the default (JSON); unknown types are 415. */
export function negotiateInput(contentType: string | undefined, codecs: Codecs): Codec {
  const list = [...codecs.values()];
  if (!contentType) return list[0];
  const mediaType = parseContentType(contentType);
  const codec = mediaType ? codecs.get(mediaType) : undefined;
  if (!codec) throw unsupportedMediaType(mediaTypesOf(codecs));
  return codec;
}
