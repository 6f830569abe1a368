export * from './codec';
export * from './json';
export * from './yaml';
export * from './negotiate';
import { createProtobufCodec } from '../../codecs/protobuf';
import type { Naming } from '../../naming';
import { type Codecs, createCodecs } from './codec';
import { jsonCodec } from './json';
import { yamlCodec } from './yaml';

/** JSON and YAML: the formats that need no schema (tests use these alone). */
export const defaultCodecs = createCodecs([jsonCodec, yamlCodec]);

/**
 * What the gateway serves, in upstream's order (JSON first, the default; then YAML; then the
 * vendor's protobuf envelope, SPEC "Content negotiation" 3). CBOR joins when its gate exists.
 */
export function gatewayCodecs(naming: Naming): Codecs {
  return createCodecs([jsonCodec, yamlCodec, createProtobufCodec(naming)]);
}
