import { type FeatureGates, Features } from '../../features';

/**
 * A wire format as a record (STYLE.md practice 6): its media type, how to encode a value, how
 * to decode a body, and, for formats that can stream, how to frame one watch event.
 */
export interface EncodeOptions {
  pretty?: boolean;
}

export interface Codec {
  /** The media type without parameters, e.g. `application/json`. */
  readonly mediaType: string;
  encode(value: unknown, options?: EncodeOptions): Buffer;
  /** Decode a body into a JSON-shaped value; throws `CodecError` on malformed input. */
  decode(body: Uint8Array): unknown;
  /**
   * For formats that only carry known kinds (protobuf): can `value` be encoded? Absent means
   * every JSON-shaped value can.
   */
  canEncode?(value: unknown): boolean;
  /** Watch framing (upstream's StreamSerializer + Framer); absent when the format cannot stream. */
  readonly stream?: {
    /** The Content-Type of a watch response in this format. */
    readonly mediaType: string;
    encodeEvent(event: { type: string; object: unknown }): Buffer;
  };
}

/** A body that the codec could not decode; callers turn it into the right 400. */
export class CodecError extends Error {
  constructor(
    readonly mediaType: string,
    message: string,
  ) {
    super(message);
    this.name = 'CodecError';
  }
}

/**
 * What the feature gates decide about encodings (SPEC "Content negotiation" 4 and 6):
 * `CBORServingAndStorage` (alpha, off by default) adds CBOR; `APIResponseCompression` (beta, on
 * by default) gzips large responses.
 */
export interface EncodingFeatures {
  readonly cbor: boolean;
  readonly compression: boolean;
}

export const DEFAULT_ENCODING_FEATURES: EncodingFeatures = { cbor: false, compression: true };

/** The encoding gates out of the server's feature gates (src/features). */
export function encodingFeatures(gates: FeatureGates): EncodingFeatures {
  return { cbor: gates.enabled(Features.CBORServingAndStorage), compression: gates.enabled(Features.APIResponseCompression) };
}

/**
 * Codecs keyed by media type, in order of preference (the first is the default). `features`
 * records the gates they were built under, when they were built under explicit gates.
 */
export type Codecs = ReadonlyMap<string, Codec> & { readonly features?: EncodingFeatures };

export function createCodecs(list: readonly Codec[], features?: EncodingFeatures): Codecs {
  return Object.assign(new Map(list.map((c) => [c.mediaType, c] as const)), { features });
}

export function featuresOf(codecs: Codecs): EncodingFeatures {
  return codecs.features ?? DEFAULT_ENCODING_FEATURES;
}

export function mediaTypesOf(codecs: Codecs): string[] {
  return [...codecs.keys()];
}

/**
 * The watch media types, as each format's stream answers. (Upstream's 406 lists every streaming
 * format as `<type>;stream=watch`, JSON included; the gateway's tests pin this form for now.)
 */
export function streamMediaTypesOf(codecs: Codecs): string[] {
  return [...codecs.values()].flatMap((c) => (c.stream ? [c.stream.mediaType] : []));
}

/** The codecs without those matching `drop` (e.g. the formats a converted object cannot take). */
export function codecsWithout(codecs: Codecs, drop: (codec: Codec) => boolean): Codecs {
  return createCodecs(
    [...codecs.values()].filter((c) => !drop(c)),
    featuresOf(codecs),
  );
}
