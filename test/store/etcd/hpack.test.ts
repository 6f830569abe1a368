/**
 * HPACK for the etcd client (hpack.ts): the decoder against RFC 7541's own examples and against
 * blocks nghttp2 (node:http2's server) encodes, the Huffman table's shape, and the encoder's
 * fixed blocks read back.
 */
import http2 from 'node:http2';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { HUFFMAN_BITS, HUFFMAN_CODES, HpackDecoder, HpackError, encodeHeaderBlock, huffmanDecode } from '../../../src/store/etcd/hpack';
import { H2Connection } from '../../../src/store/etcd/h2-connection';

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex');
const pairs = (fields: string[]) => Array.from({ length: fields.length / 2 }, (_, i) => [fields[2 * i], fields[2 * i + 1]]);

describe('Huffman code', () => {
  it('is the canonical code of its lengths: codes of a length follow each other in symbol order, and the code is complete', () => {
    const symbols = HUFFMAN_CODES.map((code, symbol) => ({ code, bits: HUFFMAN_BITS[symbol]!, symbol }));
    expect(symbols).toHaveLength(257);
    symbols.sort((a, b) => a.bits - b.bits || a.symbol - b.symbol);
    let expected = 0;
    let bits = symbols[0]!.bits;
    for (const entry of symbols) {
      expected *= 2 ** (entry.bits - bits);
      bits = entry.bits;
      expect({ symbol: entry.symbol, code: entry.code }).toEqual({ symbol: entry.symbol, code: expected });
      expected++;
    }
    // A complete prefix code: the next code would need one more bit than the longest has.
    expect(expected).toBe(2 ** bits);
  });

  it('decodes the RFC 7541 examples (C.4, C.6)', () => {
    const cases: [string, string][] = [
      ['f1e3 c2e5 f23a 6ba0 ab90 f4ff', 'www.example.com'],
      ['a8eb 1064 9cbf', 'no-cache'],
      ['25a8 49e9 5ba9 7d7f', 'custom-key'],
      ['25a8 49e9 5bb8 e8b4 bf', 'custom-value'],
      ['6402', '302'],
      ['aec3 771a 4b', 'private'],
      ['d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff', 'Mon, 21 Oct 2013 20:13:21 GMT'],
      ['9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3', 'https://www.example.com'],
    ];
    for (const [bytes, text] of cases) {
      const data = hex(bytes);
      expect(huffmanDecode(data, 0, data.length)).toBe(text);
    }
  });

  it('refuses padding longer than 7 bits, padding with a zero bit, and EOS', () => {
    // 'a' is 00011 (5 bits): then 3 bits of ones pad it to a byte.
    expect(huffmanDecode(Buffer.from([0b00011111]), 0, 1)).toBe('a');
    expect(() => huffmanDecode(Buffer.from([0b00011110]), 0, 1)).toThrow(HpackError);
    expect(() => huffmanDecode(Buffer.from([0b00011111, 0xff]), 0, 2)).toThrow('bad padding');
    expect(() => huffmanDecode(Buffer.from([0xff, 0xff, 0xff, 0xff]), 0, 4)).toThrow('EOS');
  });
});

describe('HPACK decoder', () => {
  it('decodes the RFC 7541 requests with Huffman coding (C.4), keeping the dynamic table across blocks', () => {
    const decoder = new HpackDecoder();
    expect(pairs(decoder.decode(hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff')))).toEqual([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
    ]);
    expect(pairs(decoder.decode(hex('8286 84be 5886 a8eb 1064 9cbf')))).toEqual([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
      ['cache-control', 'no-cache'],
    ]);
    expect(pairs(decoder.decode(hex('8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf')))).toEqual([
      [':method', 'GET'],
      [':scheme', 'https'],
      [':path', '/index.html'],
      [':authority', 'www.example.com'],
      ['custom-key', 'custom-value'],
    ]);
  });

  it('evicts the oldest entries when the table is full (RFC 7541 C.6, a 256-octet table)', () => {
    const decoder = new HpackDecoder(256);
    // The table size update to 256 comes first; then the three responses of C.6.
    decoder.decode(hex('3fe1 01'));
    decoder.decode(
      hex('4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3'),
    );
    expect(pairs(decoder.decode(hex('4883 640e ffc1 c0bf')))).toEqual([
      [':status', '307'],
      ['cache-control', 'private'],
      ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'],
      ['location', 'https://www.example.com'],
    ]);
    // ':status: 302' was evicted by 307: the table holds four entries, index 66 is past it.
    expect(() => decoder.decode(hex('c2'))).toThrow('past the dynamic table');
  });

  it('refuses a table size over the advertised one, an update after a field, index 0 and a truncated block', () => {
    expect(() => new HpackDecoder(4096).decode(hex('3fe1 3f'))).toThrow('8192 over the 4096 advertised');
    expect(() => new HpackDecoder().decode(hex('8220'))).toThrow('after a field');
    expect(() => new HpackDecoder().decode(hex('80'))).toThrow('index 0');
    expect(() => new HpackDecoder().decode(hex('4088 25a8'))).toThrow('runs past');
    expect(() => new HpackDecoder().decode(hex('7f'))).toThrow('inside an integer');
  });

  it('reads back the blocks the encoder builds', () => {
    const fields: [string, string][] = [
      [':method', 'POST'],
      [':scheme', 'http'],
      [':path', '/etcdserverpb.KV/Range'],
      [':authority', '127.0.0.1:2379'],
      ['content-type', 'application/grpc'],
      ['te', 'trailers'],
      ['grpc-timeout', '5000m'],
      ['x-long', 'v'.repeat(300)],
    ];
    expect(pairs(new HpackDecoder().decode(encodeHeaderBlock(fields)))).toEqual(fields);
  });
});

describe('HPACK against nghttp2', () => {
  let server: http2.Http2Server;
  let port: number;
  beforeAll(async () => {
    server = http2.createServer();
    server.on('stream', (stream, headers) => {
      const values = JSON.parse(Buffer.from(String(headers['x-values']), 'base64').toString('latin1')) as string[];
      const out: http2.OutgoingHttpHeaders = { ':status': 200 };
      values.forEach((value, i) => (out[`x-${i % 7}-${Math.floor(i / 7)}`] = value));
      stream.respond(out, { endStream: true });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('decodes what nghttp2 sends: every byte a header value may hold, Huffman-coded or not, indexed and evicted', async () => {
    const printable = Array.from({ length: 256 }, (_, b) => b).filter((b) => b === 9 || (b >= 0x20 && b !== 0x7f));
    const values: string[] = [];
    // Each allowed byte alone and in runs, values repeated (indexed) and many (evicting).
    for (const b of printable)
      values.push(
        String.fromCharCode(b)
          .repeat(1 + (b % 5))
          .trim() || 'x',
      );
    for (let i = 0; i < 60; i++)
      values.push(
        printable
          .slice(i, i + 40)
          .map((b) => String.fromCharCode(b))
          .join('')
          .trim(),
      );
    const socket = net.connect(port, '127.0.0.1');
    const received: string[][] = [];
    const connection = new H2Connection(socket, {}, { stream: 65_535, connection: 1 << 20 }, 'connect');
    const block = encodeHeaderBlock([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', `127.0.0.1:${port}`],
      ['x-values', Buffer.from(JSON.stringify(values), 'latin1').toString('base64')],
    ]);
    for (let round = 0; round < 3; round++) {
      await new Promise<void>((resolve, reject) => {
        connection.request(
          block,
          { onHeaders: (fields) => (received.push(fields), resolve()), onData: () => undefined, onAbort: (reason) => reject(new Error(reason)) },
          undefined,
          true,
        );
      });
    }
    connection.destroy();
    for (const fields of received) {
      const got = new Map(pairs(fields) as [string, string][]);
      values.forEach((value, i) => expect(got.get(`x-${i % 7}-${Math.floor(i / 7)}`)).toBe(value));
    }
  });
});
