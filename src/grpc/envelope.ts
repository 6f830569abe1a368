/**
 * Objects cross the gRPC door in an envelope shaped as upstream's `runtime.Unknown` (the
 * protobuf envelope's message, docs/API.md, "Content negotiation" 3): apiVersion and kind readable up front, the object
 * serialized in `raw`. `raw` is JSON and `contentType` says so; the envelope could carry the
 * protobuf encoding (`contentType` unset) without a schema change, and the decoders refuse what
 * they cannot read instead of misreading it.
 */
import type { Unknown } from '../gen/keelson/core/v1/envelope';
import type { ApiList, ApiObject } from '../core';
import { badRequest, isStatus, unsupportedMediaType, type Status } from '../status';

export const JSON_CONTENT_TYPE = 'application/json';

/** Wraps any JSON-shaped API object (an object, a list, a Status) in an envelope. */
export function encodeEnvelope(value: ApiObject | ApiList | Status): Unknown {
  return {
    typeMeta: { apiVersion: value.apiVersion ?? '', kind: value.kind ?? '' },
    raw: Buffer.from(JSON.stringify(value), 'utf8'),
    contentType: JSON_CONTENT_TYPE,
  };
}

/** Opens an envelope; `what` names the field in error messages. */
export function decodeEnvelope(envelope: Unknown | undefined, what: string): unknown {
  if (!envelope) throw badRequest(`${what}: missing`);
  if (envelope.contentEncoding) {
    throw badRequest(`${what}: unsupported content encoding "${envelope.contentEncoding}"`);
  }
  if (envelope.contentType !== JSON_CONTENT_TYPE) throw unsupportedMediaType([JSON_CONTENT_TYPE]);
  try {
    return JSON.parse(envelope.raw.toString('utf8'));
  } catch (err) {
    throw badRequest(`${what}: invalid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

export function decodeObject(envelope: Unknown | undefined, what: string): ApiObject {
  const value = decodeEnvelope(envelope, what);
  if (!isApiObject(value)) throw badRequest(`${what}: expected a JSON object`);
  return value;
}

export function decodeList(envelope: Unknown | undefined, what: string): ApiList {
  const value = decodeEnvelope(envelope, what);
  if (!isApiList(value)) throw badRequest(`${what}: expected a list object with items`);
  return value;
}

export function decodeStatus(envelope: Unknown | undefined, what: string): Status {
  const value = decodeEnvelope(envelope, what);
  if (!isStatus(value)) throw badRequest(`${what}: expected a Status object`);
  return value;
}

/** An object or a Status, whichever the envelope holds (delete results, watch events). */
export function decodeObjectOrStatus(envelope: Unknown | undefined, what: string): ApiObject | Status {
  const value = decodeEnvelope(envelope, what);
  if (isStatus(value)) return value;
  if (!isApiObject(value)) throw badRequest(`${what}: expected a JSON object`);
  return value;
}

function isApiObject(value: unknown): value is ApiObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isApiList(value: unknown): value is ApiList {
  return isApiObject(value) && Array.isArray(value.items);
}
