/**
 * Request bodies: the Content-Type picks the codec (absent means JSON, unknown is 415), the
 * body is read with upstream's 3 MiB limit (413), and decoding failures are 400s worded as
 * upstream's serializers word them. PATCH bodies map their Content-Type to a patch type
 * (docs/API.md, "Patch types"); apply patches are YAML.
 */
import { type ApiObject, type DecodeReport, type Patch, type PatchType, PATCH_MEDIA_TYPES } from '../core';
import { badRequest, unsupportedMediaType } from '../status';
import { decodeStrictJson } from '../codecs/strict-json';
import { joinIndex, joinKey } from '../codecs/go-strings';
import { checkDecodedLimits, checkJsonDecodeLimits, checkJsonNesting, checkJsonText, checkRawNesting, withinLimits } from '../codecs/limits';
import { decodeStrictYaml } from '../codecs/strict-yaml';
import { type Codec, type Codecs, CodecError, JSON_MEDIA_TYPE, YAML_MEDIA_TYPE, negotiateInput } from './codecs';
import type { GatewayRequest } from './types';
import { isObject } from '../util/json-values';

/** Upstream's default MaxRequestBodyBytes. */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

export { PATCH_MEDIA_TYPES } from '../core';

function decodeMessage(codec: Codec, err: unknown): string {
  const msg = err instanceof CodecError ? err.message : String(err);
  if (codec.mediaType === JSON_MEDIA_TYPE) return `couldn't get version/kind; json parse error: ${msg}`;
  if (codec.mediaType === YAML_MEDIA_TYPE) return `error converting YAML to JSON: yaml: ${msg}`;
  return msg;
}

/** A body's UTF-8 text, read in place (`Buffer.from` of a byte array would copy it first). */
function textOf(body: Uint8Array): string {
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
}

/** Text formats are checked for nesting before a parser sees them (codecs/limits.ts). */
function isText(codec: Codec): boolean {
  return codec.mediaType === JSON_MEDIA_TYPE || codec.mediaType === YAML_MEDIA_TYPE;
}

/** Decode with `codec`, turning malformed input into upstream's 400 and a body past the limits into 400 / 413. */
export function decodeBody(codec: Codec, body: Uint8Array): unknown {
  if (codec.mediaType === JSON_MEDIA_TYPE) withinLimits(() => checkJsonNesting(textOf(body)));
  else if (isText(codec)) withinLimits(() => checkRawNesting(textOf(body)));
  let value: unknown;
  try {
    value = codec.decode(body);
  } catch (err) {
    throw badRequest(decodeMessage(codec, err));
  }
  withinLimits(() => checkDecodedLimits(value));
  return value;
}

/** The input codec for a request with a body (415 before the body is read). */
export function bodyCodec(request: GatewayRequest, codecs: Codecs): Codec {
  return negotiateInput(request.headers['content-type'], codecs);
}

/**
 * Decode JSON and YAML bodies with the strict decoders, which also report keys given twice
 * (for `fieldValidation`, docs/API.md, "Field validation"); other formats cannot repeat a field.
 */
function decodeRecorded(codec: Codec, body: Uint8Array): { value: unknown; report?: DecodeReport } {
  if (!isText(codec)) return { value: decodeBody(codec, body) };
  const text = textOf(body);
  const counts = codec.mediaType === JSON_MEDIA_TYPE ? withinLimits(() => checkJsonText(text)) : undefined;
  if (counts === undefined) withinLimits(() => checkRawNesting(text));
  const decoded = decodeStrictText(codec, text, counts?.members);
  withinLimits(() => (counts ? checkJsonDecodeLimits(decoded.value, text, counts) : checkDecodedLimits(decoded.value)));
  return decoded;
}

/** `members`: a JSON text's object members, counted by checkJsonText. */
function decodeStrictText(codec: Codec, text: string, members: number | undefined): { value: unknown; report?: DecodeReport } {
  try {
    if (codec.mediaType === JSON_MEDIA_TYPE) {
      const { value, duplicates, firstSeen } = decodeStrictJson(text, members);
      const report: DecodeReport = { kind: 'json', duplicates: [...duplicates] };
      if (firstSeen.size > 0) report.firstSeen = [...firstSeen].map(([path, seq]) => ({ path, seq }));
      return { value, report };
    }
    if (codec.mediaType === YAML_MEDIA_TYPE) {
      const { value, duplicates } = decodeStrictYaml(text);
      return { value, report: { kind: 'yaml', duplicates: [...duplicates] } };
    }
  } catch (err) {
    throw badRequest(decodeMessage(codec, new CodecError(codec.mediaType, (err as Error).message)));
  }
  return { value: codec.decode(Buffer.from(text)) };
}

/**
 * Decode an object body (create, update): it must be a JSON object. What the strict decoder
 * found goes to the core with the request (`RequestContext.decodeReport`), which reports it
 * with the unknown fields.
 */
export function decodeObject(codec: Codec, body: Uint8Array): { object: ApiObject; report?: DecodeReport } {
  const { value, report } = decodeRecorded(codec, body);
  if (!isObject(value)) {
    const text = textOf(body).slice(0, 200);
    throw badRequest(`Object 'Kind' is missing in '${text}'`);
  }
  return { object: value as ApiObject, report };
}

/**
 * A DELETE body, decoded, or undefined when the request has none (then options come from the
 * query).
 */
export async function readOptionalBody(request: GatewayRequest, codecs: Codecs): Promise<unknown | undefined> {
  const body = await request.readBody(MAX_REQUEST_BODY_BYTES);
  if (body.length === 0) return undefined;
  return decodeBody(bodyCodec(request, codecs), body);
}

/** Upstream patch handler: Content-Type without parameters, matched exactly against the patch types. */
export function patchTypeOf(contentType: string | undefined): PatchType {
  let mediaType = contentType ?? '';
  const semi = mediaType.indexOf(';');
  if (semi > 0) mediaType = mediaType.slice(0, semi);
  const type = PATCH_MEDIA_TYPES.get(mediaType.trim());
  if (!type) throw unsupportedMediaType([...PATCH_MEDIA_TYPES.keys()]);
  return type;
}

const JSON_PATCH_OP_FIELDS = new Set(['op', 'path', 'from', 'value']);

/**
 * Upstream's strict errors of a JSON patch document, decoded as `[]jsonPatchOp`: unknown and
 * repeated operation fields (`json patch unknown field "[0].foo"`), and repeated keys inside
 * values, in document order.
 */
function jsonPatchErrors(value: unknown, duplicates: readonly { path: string; seq: number }[], firstSeen: ReadonlyMap<string, number>): string[] {
  const items: { seq: number; text: string }[] = duplicates.map((d) => ({ seq: d.seq, text: `json patch duplicate field ${JSON.stringify(d.path)}` }));
  if (Array.isArray(value)) {
    value.forEach((op, i) => {
      if (!isObject(op)) return;
      for (const key of Object.keys(op)) {
        if (!JSON_PATCH_OP_FIELDS.has(key)) {
          const path = joinKey(joinIndex('', i), key);
          items.push({ seq: firstSeen.get(path) ?? Number.MAX_SAFE_INTEGER, text: `json patch unknown field ${JSON.stringify(path)}` });
        }
      }
    });
  }
  // A repeated unknown key is reported once, as unknown (Go skips unknown fields' values).
  const unknown = new Set(items.filter((i) => i.text.includes(' unknown field ')).map((i) => i.text.slice(i.text.indexOf('"'))));
  const kept = items.filter((i) => !(i.text.includes(' duplicate field ') && unknown.has(i.text.slice(i.text.indexOf('"')))));
  return [...new Set(kept.sort((a, b) => a.seq - b.seq).map((i) => i.text))];
}

/**
 * Decode a patch document: JSON for the JSON-based types, YAML for apply. The strict decoders'
 * findings (repeated keys, unknown JSON patch operation fields) go to the core with the request
 * for `fieldValidation`.
 */
export function decodePatch(type: PatchType, body: Uint8Array): { patch: Patch; report: DecodeReport } {
  const text = textOf(body);
  if (type === 'apply') {
    withinLimits(() => checkRawNesting(text));
    let decoded;
    try {
      decoded = decodeStrictYaml(text);
    } catch (err) {
      throw badRequest(`error decoding YAML: ${(err as Error).message}`);
    }
    withinLimits(() => checkDecodedLimits(decoded.value));
    return { patch: { type, body: decoded.value }, report: { kind: 'yaml', duplicates: [...decoded.duplicates] } };
  }
  const counts = withinLimits(() => checkJsonText(text));
  let decoded;
  try {
    decoded = decodeStrictJson(text, counts.members);
  } catch (err) {
    throw badRequest(`error decoding patch: ${(err as Error).message}`);
  }
  withinLimits(() => checkJsonDecodeLimits(decoded.value, text, counts));
  const errors =
    type === 'json'
      ? jsonPatchErrors(decoded.value, decoded.duplicates, decoded.firstSeen)
      : [...new Set(decoded.duplicates.map((d) => `duplicate field ${JSON.stringify(d.path)}`))];
  return { patch: { type, body: decoded.value }, report: { kind: 'patch', errors } };
}
