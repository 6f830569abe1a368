export * from './codec';
export * from './json';
export * from './yaml';
export * from './negotiate';
import { createCodecs } from './codec';
import { jsonCodec } from './json';
import { yamlCodec } from './yaml';

/** The formats the gateway serves today, JSON first (the default); protobuf and CBOR join this list later. */
export const defaultCodecs = createCodecs([jsonCodec, yamlCodec]);
