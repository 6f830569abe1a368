/**
 * A wire format as a record: its media type, how to encode a value, how to decode a body, and,
 * for formats that can stream, how to frame one watch event. One record per format, kept in a
 * Map keyed by media type, so that negotiation is a pure function over the list.
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
  /**
   * The encoding of a large list as pieces whose concatenation is `encode(value, options)`, so a
   * response can be written as it is produced; undefined for anything else (and absent for
   * formats that cannot).
   */
  encodeChunks?(value: unknown, options?: EncodeOptions): Iterable<Uint8Array> | undefined;
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
