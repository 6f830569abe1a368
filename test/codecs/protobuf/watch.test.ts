/**
 * Upstream's protobuf watch framing: 4-byte big-endian length, then a bare WatchEvent (raw
 * serializer: no prefix, no Unknown) whose object.raw is the object's complete protobuf body.
 */
import { Reader } from 'protobufjs/minimal';
import {
  createProtobufCodec,
  decodeWatchFrames,
  encodeWatchFrame,
  hasProtobufPrefix,
  ProtobufDecodeError,
  WatchFrameReader,
} from '../../../src/codecs/protobuf';
import { createNaming } from '../../../src/naming';

const naming = createNaming('kubernetes');
const codec = createProtobufCodec(naming);
const pod = { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p', namespace: 'default', resourceVersion: '5' } };

describe('protobuf watch frames', () => {
  it('answers with ;stream=watch', () => {
    expect(codec.stream.mediaType).toBe(`${naming.mediaTypes.protobuf};stream=watch`);
  });

  it('frames a length and a bare WatchEvent holding the full object body', () => {
    const frame = codec.stream.encodeEvent({ type: 'ADDED', object: pod });
    const length = frame.readUInt32BE(0);
    expect(length).toBe(frame.length - 4);
    const event = frame.subarray(4);
    expect(hasProtobufPrefix(event)).toBe(false);

    const r = Reader.create(event);
    expect(r.uint32()).toBe((1 << 3) | 2);
    expect(r.string()).toBe('ADDED');
    expect(r.uint32()).toBe((2 << 3) | 2);
    const end = r.uint32() + r.pos;
    expect(r.uint32()).toBe((1 << 3) | 2);
    const body = r.bytes();
    expect(r.pos).toBe(end);
    expect(end).toBe(event.length);
    expect(Buffer.from(body).equals(codec.encode(pod))).toBe(true);
  });

  it('reuses an object body encoded once', () => {
    const body = codec.encode(pod);
    expect(codec.stream.encodeEventWithBody('MODIFIED', body)).toEqual(codec.stream.encodeEvent({ type: 'MODIFIED', object: pod }));
  });

  it('decodes a stream of events, Status errors included', () => {
    const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old', reason: 'Expired', code: 410 };
    const stream = Buffer.concat([
      codec.stream.encodeEvent({ type: 'ADDED', object: pod }),
      codec.stream.encodeEvent({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '9' } } }),
      codec.stream.encodeEvent({ type: 'ERROR', object: status }),
    ]);
    const events = codec.decodeWatchStream(stream);
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK', 'ERROR']);
    expect(events[0]!.object).toMatchObject({ kind: 'Pod', metadata: { name: 'p', resourceVersion: '5' } });
    expect(events[2]!.object).toEqual(status);
  });

  it('splits frames that arrive in arbitrary chunks', () => {
    const stream = Buffer.concat([encodeWatchFrame('ADDED', codec.encode(pod)), encodeWatchFrame('DELETED', codec.encode(pod))]);
    const reader = new WatchFrameReader();
    const seen: string[] = [];
    for (let i = 0; i < stream.length; i += 3) seen.push(...reader.push(stream.subarray(i, i + 3)).map((e) => e.type));
    expect(seen).toEqual(['ADDED', 'DELETED']);
    expect(reader.remainder).toBe(0);
  });

  it('rejects a stream that ends inside a frame', () => {
    const frame = encodeWatchFrame('ADDED', codec.encode(pod));
    expect(() => decodeWatchFrames(frame.subarray(0, frame.length - 1))).toThrow(ProtobufDecodeError);
  });
});
