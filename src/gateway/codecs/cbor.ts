/**
 * `application/cbor` (docs/API.md, "Content negotiation" 4; alpha, gate `CBORServingAndStorage`): one
 * self-described CBOR item per body, written as upstream's CBOR serializer writes it
 * (src/codecs/cbor). Watches are `application/cbor-seq`, a CBOR sequence of self-described
 * `{type, object}` events, as upstream answers a CBOR watch (RFC 9110 lets it deviate from the
 * accepted `application/cbor` rather than send a 406). Encoded objects from the watch cache are
 * memoised, and each event reuses its object's bytes.
 */
import { encodeOnce } from '../../codecs/encode-once';
import { schemaRegistry } from '../../schema';
import { CborDecoder, CborEncoder } from '../../codecs/cbor';
import type { Naming } from '../../naming';
import { type Codec, CodecError } from './codec';

export const CBOR_MEDIA_TYPE = 'application/cbor';
export const CBOR_SEQ_MEDIA_TYPE = 'application/cbor-seq';
/** Server-side apply with a CBOR body (the decoded object is the applied configuration). */
export const APPLY_PATCH_CBOR_MEDIA_TYPE = 'application/apply-patch+cbor';

export interface CborCodec extends Codec {
  /** Decode an `application/cbor-seq` watch stream (for clients and tests). */
  decodeWatchStream(stream: Uint8Array): { type: string; object: unknown }[];
}

export function createCborCodec(naming: Naming): CborCodec {
  const registry = schemaRegistry(naming);
  const encoder = new CborEncoder(registry);
  const decoder = new CborDecoder(registry);
  const encode = (value: unknown): Buffer =>
    typeof value === 'object' && value !== null ? encodeOnce(value, CBOR_MEDIA_TYPE, (v) => encoder.encode(v)) : encoder.encode(value);
  return {
    mediaType: CBOR_MEDIA_TYPE,
    encode: (value) => encode(value),
    decode(body) {
      try {
        return decoder.decode(body);
      } catch (err) {
        // Upstream reads the type first, and reports a malformed body from there.
        throw new CodecError(CBOR_MEDIA_TYPE, `unable to determine group/version/kind: ${(err as Error).message}`);
      }
    },
    stream: {
      mediaType: CBOR_SEQ_MEDIA_TYPE,
      encodeEvent: (event) => encoder.encodeEvent(event.type, encode(event.object)),
    },
    decodeWatchStream: (stream) => decoder.decodeEvents(stream),
  };
}
