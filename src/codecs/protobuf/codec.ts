/**
 * `application/vnd.<vendor>.protobuf` as a codec record (`Codec` in ../codec.ts): the envelope
 * around schema-driven object bytes, and watch frames.
 */
import { type Codec, CodecError } from '../codec';
import type { Naming } from '../../naming';
import { type SchemaRegistry, type ServedKind, schemaRegistry } from '../../schema';
import { decodeEnvelope, encodeEnvelope } from './envelope';
import { decodeMessage, encodeMessage, type JsonObject } from './message';
import { decodeWatchFrames, encodeWatchFrame } from './watch';

/**
 * The object has no protobuf form here (e.g. a Table, or a kind without a schema). Upstream
 * answers such requests with 406 NotAcceptable and this message.
 */
export class ProtobufNotMarshalableError extends Error {
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(
      `object ${kind || 'of unknown kind'} (${apiVersion || 'no apiVersion'}) does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message`,
    );
    this.name = 'ProtobufNotMarshalableError';
  }
}

export interface ProtobufWatchEvent {
  type: string;
  object: JsonObject;
}

export interface ProtobufCodec extends Codec {
  readonly registry: SchemaRegistry;
  readonly stream: {
    readonly mediaType: string;
    encodeEvent(event: { type: string; object: unknown }): Buffer;
    /** A frame around an object body already encoded (shared by every watcher). */
    encodeEventWithBody(type: string, objectBody: Uint8Array): Buffer;
  };
  /** True when `value` (by apiVersion and kind) has a protobuf form. */
  canEncode(value: unknown): boolean;
  /** Decode a complete watch stream (for clients and tests). */
  decodeWatchStream(stream: Uint8Array): ProtobufWatchEvent[];
}

function typeMetaOf(value: unknown): { apiVersion: string; kind: string } {
  const obj = (typeof value === 'object' && value !== null ? value : {}) as { apiVersion?: unknown; kind?: unknown };
  return {
    apiVersion: typeof obj.apiVersion === 'string' ? obj.apiVersion : '',
    kind: typeof obj.kind === 'string' ? obj.kind : '',
  };
}

export function createProtobufCodec(naming: Naming): ProtobufCodec {
  const registry = schemaRegistry(naming);
  const mediaType = naming.mediaTypes.protobuf;
  const types = registry.type;

  const servedKind = (value: unknown): ServedKind => {
    const { apiVersion, kind } = typeMetaOf(value);
    const served = registry.kind(apiVersion, kind);
    if (!served) throw new ProtobufNotMarshalableError(apiVersion, kind);
    return served;
  };

  const encode = (value: unknown): Buffer => {
    const served = servedKind(value);
    const raw = encodeMessage(value as JsonObject, served.type, types);
    return encodeEnvelope({ apiVersion: served.apiVersion, kind: served.kind, raw, contentEncoding: '', contentType: '' });
  };

  const decodeBody = (body: Uint8Array): JsonObject => {
    const envelope = decodeEnvelope(body);
    if (!envelope.kind) throw new Error(`Object 'Kind' is missing in the protobuf envelope`);
    if (!envelope.apiVersion) throw new Error(`Object 'apiVersion' is missing in the protobuf envelope`);
    if (envelope.contentEncoding) throw new Error(`unsupported content encoding ${JSON.stringify(envelope.contentEncoding)}`);
    const served = registry.kind(envelope.apiVersion, envelope.kind);
    if (!served) throw new Error(`no kind "${envelope.kind}" is registered for version "${envelope.apiVersion}"`);
    const fields = decodeMessage(envelope.raw ?? new Uint8Array(0), served.type, types);
    return served.type.typeMeta ? { kind: envelope.kind, apiVersion: envelope.apiVersion, ...fields } : fields;
  };

  return {
    mediaType,
    registry,
    encode: (value) => encode(value),
    decode(body) {
      try {
        return decodeBody(body);
      } catch (err) {
        throw new CodecError(mediaType, (err as Error).message);
      }
    },
    canEncode: (value) => {
      const { apiVersion, kind } = typeMetaOf(value);
      return registry.kind(apiVersion, kind) !== undefined;
    },
    stream: {
      mediaType: `${mediaType};stream=watch`,
      encodeEvent: (event) => encodeWatchFrame(event.type, encode(event.object)),
      encodeEventWithBody: (type, objectBody) => encodeWatchFrame(type, objectBody),
    },
    decodeWatchStream: (stream) => decodeWatchFrames(stream).map((event) => ({ type: event.type, object: decodeBody(event.object) })),
  };
}
