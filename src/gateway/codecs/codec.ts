import { type FeatureGates, Features } from '../../features';

import type { Codec } from '../../codecs/codec';
export { type Codec, CodecError, type EncodeOptions } from '../../codecs/codec';

/**
 * What the feature gates decide about encodings (docs/API.md, "Content negotiation" 4 and 6):
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
