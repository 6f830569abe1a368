/** `application/json`: the default format of every endpoint; watch streams are newline-separated documents. */
import { type Codec, CodecError } from './codec';

export const JSON_MEDIA_TYPE = 'application/json';

function encode(value: unknown, pretty = false): Buffer {
  return Buffer.from(`${pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value)}\n`, 'utf8');
}

export const jsonCodec: Codec = {
  mediaType: JSON_MEDIA_TYPE,
  encode: (value, options) => encode(value, options?.pretty),
  decode(body) {
    const text = Buffer.from(body).toString('utf8');
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new CodecError(JSON_MEDIA_TYPE, (err as Error).message);
    }
  },
  stream: {
    mediaType: JSON_MEDIA_TYPE,
    encodeEvent: (event) => encode(event),
  },
};
