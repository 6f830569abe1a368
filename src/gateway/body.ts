/**
 * Request bodies: the Content-Type picks the codec (absent means JSON, unknown is 415), the
 * body is read with upstream's 3 MiB limit (413), and decoding failures are 400s worded as
 * upstream's serializers word them. PATCH bodies map their Content-Type to a patch type
 * (SPEC "Modifying requests" 2); apply patches are YAML.
 */
import type { ApiObject, Patch, PatchType } from '../core/api';
import { badRequest, unsupportedMediaType } from '../status';
import { type Codec, type Codecs, CodecError, JSON_MEDIA_TYPE, YAML_MEDIA_TYPE, jsonCodec, negotiateInput, yamlCodec } from './codecs';
import type { GatewayRequest } from './types';

/** Upstream's default MaxRequestBodyBytes. */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** PATCH media types in upstream's order, as its 415 message lists them. */
export const PATCH_MEDIA_TYPES: ReadonlyMap<string, PatchType> = new Map<string, PatchType>([
  ['application/json-patch+json', 'json'],
  ['application/merge-patch+json', 'merge'],
  ['application/strategic-merge-patch+json', 'strategic'],
  ['application/apply-patch+yaml', 'apply'],
]);

function decodeMessage(codec: Codec, err: unknown): string {
  const msg = err instanceof CodecError ? err.message : String(err);
  if (codec.mediaType === JSON_MEDIA_TYPE) return `couldn't get version/kind; json parse error: ${msg}`;
  if (codec.mediaType === YAML_MEDIA_TYPE) return `error converting YAML to JSON: yaml: ${msg}`;
  return msg;
}

/** Decode with `codec`, turning malformed input into upstream's 400. */
export function decodeBody(codec: Codec, body: Uint8Array): unknown {
  try {
    return codec.decode(body);
  } catch (err) {
    throw badRequest(decodeMessage(codec, err));
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The input codec for a request with a body (415 before the body is read). */
export function bodyCodec(request: GatewayRequest, codecs: Codecs): Codec {
  return negotiateInput(request.headers['content-type'], codecs);
}

/** Decode an object body (create, update): it must be a JSON object. */
export function decodeObject(codec: Codec, body: Uint8Array): ApiObject {
  const value = decodeBody(codec, body);
  if (!isObject(value)) {
    const text = Buffer.from(body).toString('utf8').slice(0, 200);
    throw badRequest(`Object 'Kind' is missing in '${text}'`);
  }
  return value as ApiObject;
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

/** Decode a patch document: JSON for the JSON-based types, YAML for apply. */
export function decodePatch(type: PatchType, body: Uint8Array): Patch {
  if (type === 'apply') {
    try {
      return { type, body: yamlCodec.decode(body) };
    } catch (err) {
      throw badRequest(`error decoding YAML: ${(err as Error).message}`);
    }
  }
  try {
    return { type, body: jsonCodec.decode(body) };
  } catch (err) {
    throw badRequest(`error decoding patch: ${(err as Error).message}`);
  }
}
