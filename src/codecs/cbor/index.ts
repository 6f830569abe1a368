/** Upstream-compatible CBOR (RFC 8949): schema-driven encoding and decoding, watch sequences. */
export { CborEncoder, CborDecoder } from './codec';
export { CborReader, CborDecodeError, readCbor, readCborSequence, type ReadShape } from './reader';
export { CborWriter, MAJOR, SELF_DESCRIBED_PREFIX, SELF_DESCRIBED_TAG, TAG_EXPECTED_BASE64, sortedKeys } from './writer';
