export * from './codec';
export * from './json';
export * from './yaml';
export * from './cbor';
export * from './negotiate';
export * from './convert';
import { encodeOnce } from '../../codecs/encode-once';
import { createProtobufCodec, type ProtobufCodec } from '../../codecs/protobuf';
import type { Naming } from '../../naming';
import { type Codec, type Codecs, DEFAULT_ENCODING_FEATURES, type EncodingFeatures, createCodecs } from './codec';
import { createCborCodec } from './cbor';
import { STREAMED_LIST_BYTES, STREAMED_LIST_ITEMS, createJsonCodec, jsonCodec } from './json';
import { protobufLists } from './protobuf-list';
import { yamlCodec } from './yaml';

/** JSON and YAML: the formats that need no schema (tests use these alone). */
export const defaultCodecs = createCodecs([jsonCodec, yamlCodec]);

/**
 * Protobuf with each shared object's bytes made once and reused by gets, watch events and list
 * items (protobuf-list.ts); a large typed list streams like JSON's.
 */
function memoizedProtobuf(codec: ProtobufCodec): Codec {
  const encode = (value: unknown): Buffer =>
    typeof value === 'object' && value !== null ? encodeOnce(value, codec.mediaType, (v) => codec.encode(v)) : codec.encode(value);
  const lists = protobufLists(codec, encode);
  return {
    mediaType: codec.mediaType,
    encode: (value) => {
      const list = lists.pieces(value);
      return list ? Buffer.concat([...list.pieces], list.size) : encode(value);
    },
    encodeChunks: (value) => {
      const list = lists.pieces(value);
      if (!list) return undefined;
      return (value as { items: unknown[] }).items.length >= STREAMED_LIST_ITEMS || list.size >= STREAMED_LIST_BYTES ? list.pieces : undefined;
    },
    decode: (body) => codec.decode(body),
    canEncode: (value) => codec.canEncode(value),
    stream: {
      mediaType: codec.stream.mediaType,
      encodeEvent: (event) => codec.stream.encodeEventWithBody(event.type, encode(event.object)),
    },
  };
}

/**
 * What the gateway serves, in upstream's order (JSON first, the default; then YAML; then the
 * vendor's protobuf envelope, docs/API.md, "Content negotiation" 3; then CBOR when its gate is on, as
 * upstream appends it to the codec factory).
 */
export function gatewayCodecs(naming: Naming, features?: EncodingFeatures): Codecs {
  const list: Codec[] = [createJsonCodec(naming), yamlCodec, memoizedProtobuf(createProtobufCodec(naming))];
  if ((features ?? DEFAULT_ENCODING_FEATURES).cbor) list.push(createCborCodec(naming));
  return createCodecs(list, features);
}
