/**
 * The etcd client's framing of gRPC messages on a stream (etcd-client.ts): a watch stream's
 * bytes arrive in chunks that split and join messages anywhere.
 */
import { MessageReader } from '../../src/store/etcd-client';

function framed(...messages: Buffer[]): Buffer {
  return Buffer.concat(
    messages.map((m) => {
      const head = Buffer.alloc(5);
      head.writeUInt32BE(m.length, 1);
      return Buffer.concat([head, m]);
    }),
  );
}

describe('gRPC message framing', () => {
  const messages = [Buffer.from('first'), Buffer.alloc(0), Buffer.alloc(70_000, 7), Buffer.from('last')];
  const bytes = framed(...messages);

  it.each([1, 2, 3, 5, 6, 4096, bytes.length])('gives back every message whole, in order, from chunks of %i bytes', (size) => {
    const reader = new MessageReader();
    const out: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += size) out.push(...reader.push(bytes.subarray(at, at + size)).map((m) => Buffer.from(m)));
    expect(out).toEqual(messages);
  });

  it('holds a partial message until the rest arrives', () => {
    const reader = new MessageReader();
    expect(reader.push(bytes.subarray(0, 7))).toEqual([]);
    expect(reader.push(bytes.subarray(7, 10)).map((m) => Buffer.from(m).toString())).toEqual(['first']);
  });

  it('refuses a compressed message (none is asked for)', () => {
    const compressed = framed(Buffer.from('x'));
    compressed[0] = 1;
    expect(() => new MessageReader().push(compressed)).toThrow('compressed');
  });
});
