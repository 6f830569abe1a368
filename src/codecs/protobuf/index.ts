/** Upstream-compatible protobuf: envelope, schema-driven object bytes, watch frames. */
export { createProtobufCodec, ProtobufNotMarshalableError, type ProtobufCodec, type ProtobufWatchEvent } from './codec';
export { decodeEnvelope, encodeEnvelope, encodeUnknown, hasProtobufPrefix, PROTOBUF_PREFIX, type Envelope } from './envelope';
export { decodeMessage, encodeMessage, ProtobufEncodeError, type JsonObject } from './message';
export { decodeWatchEventMessage, decodeWatchFrames, encodeWatchEventMessage, encodeWatchFrame, WatchFrameReader, type RawWatchEvent } from './watch';
export { ProtobufDecodeError } from './wire-format';
