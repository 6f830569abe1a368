/**
 * The fuzzer's inputs: the captured session mutated where parsers go wrong (frame lengths, flags,
 * padding, priority fields, header blocks split over CONTINUATION, HPACK table size updates,
 * Huffman tails, integers and string lengths, gRPC length prefixes, message bytes, stream ids,
 * control frames of every kind), random frames, and random bytes. Each input says how it was
 * made, so a failure names its mutations as well as its seed.
 */
import { HPACK_STATIC_TABLE } from '../../../../src/store/etcd/hpack';
import { FLAG, FRAME, TestHpackEncoder, hpackInteger, hpackString, scanBlock, serializeFrames, type EncodeChoice, type Frame } from './frames';

/** The seeded source every choice of a case comes from. */
export class Rng {
  constructor(readonly next: () => number) {}

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}

export interface FuzzInput {
  bytes: Buffer;
  /** How it was made, for the report of a failure. */
  how: string[];
}

type FrameMutator = (frames: Frame[], rng: Rng) => string | undefined;

const indexOf = (frames: Frame[], rng: Rng, test: (f: Frame) => boolean): number => {
  const candidates = frames.flatMap((f, i) => (test(f) ? [i] : []));
  return candidates.length === 0 ? -1 : rng.pick(candidates);
};

const isHeaders = (f: Frame) => f.type === FRAME.HEADERS;
const isData = (f: Frame) => f.type === FRAME.DATA;

/** A HEADERS frame's block, for the header-block mutators (a frame already padded or split is left alone). */
function headerBlock(frames: Frame[], rng: Rng): { at: number; block: Buffer } | undefined {
  const at = indexOf(frames, rng, (f) => isHeaders(f) && (f.flags & (FLAG.PADDED | FLAG.PRIORITY)) === 0 && (f.flags & FLAG.END_HEADERS) !== 0);
  return at < 0 ? undefined : { at, block: frames[at]!.payload };
}

const FRAME_MUTATORS: Record<string, FrameMutator> = {
  length(frames, rng) {
    const f = frames[rng.int(frames.length)]!;
    const n = f.payload.length;
    f.declaredLength = rng.pick([0, Math.max(0, n - 1), n + 1, rng.int(0x1000000), 16_384, 16_385, 0xffffff]);
    return `frame type ${f.type} on stream ${f.streamId}: length ${n} written as ${f.declaredLength}`;
  },
  flags(frames, rng) {
    const f = frames[rng.int(frames.length)]!;
    const flip = rng.pick([FLAG.END_STREAM, FLAG.END_HEADERS, FLAG.PADDED, FLAG.PRIORITY, rng.int(256)]);
    f.flags ^= flip;
    return `frame type ${f.type} on stream ${f.streamId}: flags ^ ${flip}`;
  },
  padding(frames, rng) {
    const at = indexOf(frames, rng, (f) => (isData(f) || isHeaders(f)) && (f.flags & FLAG.PADDED) === 0);
    if (at < 0) return undefined;
    const f = frames[at]!;
    const valid = rng.chance(0.6);
    const pad = valid ? rng.int(256) : rng.between(f.payload.length + 1, f.payload.length + 300) & 0xff;
    const padding = valid ? Buffer.alloc(pad) : Buffer.alloc(0);
    f.payload = Buffer.concat([Buffer.from([pad]), f.payload, padding]);
    f.flags |= FLAG.PADDED;
    if (!valid && rng.chance(0.3)) f.payload = Buffer.alloc(0);
    return `frame type ${f.type} on stream ${f.streamId}: ${valid ? '' : 'bad '}padding ${pad}`;
  },
  priority(frames, rng) {
    const at = indexOf(frames, rng, (f) => isHeaders(f) && (f.flags & (FLAG.PRIORITY | FLAG.PADDED)) === 0);
    if (at < 0) return undefined;
    const f = frames[at]!;
    const valid = rng.chance(0.6);
    if (valid) f.payload = Buffer.concat([rng.bytes(5), f.payload]);
    f.flags |= FLAG.PRIORITY;
    return `HEADERS on stream ${f.streamId}: ${valid ? 'priority fields' : 'priority flag without its fields'}`;
  },
  continuation(frames, rng) {
    const at = indexOf(frames, rng, (f) => isHeaders(f) && (f.flags & (FLAG.PADDED | FLAG.PRIORITY)) === 0 && (f.flags & FLAG.END_HEADERS) !== 0);
    if (at < 0) return undefined;
    const f = frames[at]!;
    const pieces = rng.between(2, 5);
    const cuts = Array.from({ length: pieces - 1 }, () => rng.int(f.payload.length + 1)).sort((a, b) => a - b);
    const parts = [0, ...cuts, f.payload.length].slice(1).map((end, i, ends) => f.payload.subarray(i === 0 ? 0 : ends[i - 1]!, end));
    const first: Frame = { type: FRAME.HEADERS, flags: f.flags & ~FLAG.END_HEADERS, streamId: f.streamId, payload: Buffer.from(parts[0]!) };
    const rest: Frame[] = parts
      .slice(1)
      .map((p, i) => ({ type: FRAME.CONTINUATION, flags: i === parts.length - 2 ? FLAG.END_HEADERS : 0, streamId: f.streamId, payload: Buffer.from(p) }));
    const variant = rng.pick(['valid', 'valid', 'interleaved', 'other stream', 'never ends']);
    if (variant === 'interleaved') rest.splice(rng.int(rest.length), 0, { type: FRAME.PING, flags: 0, streamId: 0, payload: Buffer.alloc(8) });
    if (variant === 'other stream') rest[rng.int(rest.length)]!.streamId += 2;
    if (variant === 'never ends') rest[rest.length - 1]!.flags &= ~FLAG.END_HEADERS;
    frames.splice(at, 1, first, ...rest);
    return `HEADERS on stream ${f.streamId} in ${pieces} frames (${variant})`;
  },
  'continuation flood'(frames, rng) {
    const at = indexOf(frames, rng, isHeaders);
    if (at < 0) return undefined;
    const f = frames[at]!;
    const count = rng.between(10, 400);
    const flood: Frame[] = Array.from({ length: count }, () => ({
      type: FRAME.CONTINUATION,
      flags: 0,
      streamId: f.streamId,
      payload: Buffer.alloc(16_384, 0x82),
    }));
    frames.splice(at, 1, { ...f, flags: f.flags & ~FLAG.END_HEADERS }, ...flood);
    return `HEADERS on stream ${f.streamId} followed by ${count} CONTINUATION frames of 16 KiB, never ending`;
  },
  'table size update'(frames, rng) {
    const found = headerBlock(frames, rng);
    if (!found) return undefined;
    const size = rng.pick([0, 1, 100, 4096, 4097, 65_536, 2 ** 31, rng.int(8192)]);
    const update = Buffer.from(hpackInteger(size, 5, 0x20));
    const parts = scanBlock(found.block);
    const where = rng.pick(['start', 'start twice', 'after a field']);
    let block: Buffer;
    if (where === 'after a field' && parts && parts.length > 0)
      block = Buffer.concat([found.block.subarray(0, parts[0]!.end), update, found.block.subarray(parts[0]!.end)]);
    else if (where === 'start twice') block = Buffer.concat([Buffer.from(hpackInteger(rng.int(4097), 5, 0x20)), update, found.block]);
    else block = Buffer.concat([update, found.block]);
    frames[found.at]!.payload = block;
    return `header block on stream ${frames[found.at]!.streamId}: table size update to ${size} at the ${where}`;
  },
  'huffman tail'(frames, rng) {
    const found = headerBlock(frames, rng);
    if (!found) return undefined;
    const strings = (scanBlock(found.block) ?? []).flatMap((p) => p.strings);
    if (strings.length === 0) return undefined;
    const s = rng.pick(strings);
    const data = found.block.subarray(s.dataAt, s.end);
    const variant = rng.pick(['zero bit in the padding', 'a byte of padding more', 'last byte cut', 'EOS', 'a bit flipped', 'recoded as Huffman']);
    let replacement: Buffer;
    if (variant === 'zero bit in the padding')
      replacement = Buffer.from(
        hpackPrefixed(data.length > 0 ? Buffer.concat([data.subarray(0, -1), Buffer.from([data[data.length - 1]! & 0xfe])]) : Buffer.from([0xfe]), true),
      );
    else if (variant === 'a byte of padding more') replacement = Buffer.from(hpackPrefixed(Buffer.concat([data, Buffer.from([0xff])]), true));
    else if (variant === 'last byte cut') replacement = Buffer.from(hpackPrefixed(data.subarray(0, Math.max(0, data.length - 1)), s.huffman));
    else if (variant === 'EOS') replacement = Buffer.from(hpackPrefixed(Buffer.concat([data, Buffer.from([0xff, 0xff, 0xff, 0xff])]), true));
    else if (variant === 'a bit flipped') {
      const flipped = Buffer.from(data);
      if (flipped.length > 0) flipped[rng.int(flipped.length)]! ^= 1 << rng.int(8);
      replacement = Buffer.from(hpackPrefixed(flipped, s.huffman));
    } else replacement = Buffer.from(hpackString(s.huffman ? 'x' : data.toString('latin1'), true));
    frames[found.at]!.payload = Buffer.concat([found.block.subarray(0, s.prefixAt), replacement, found.block.subarray(s.end)]);
    return `header block on stream ${frames[found.at]!.streamId}: a string's Huffman code: ${variant}`;
  },
  'hpack integer'(frames, rng) {
    const found = headerBlock(frames, rng);
    if (!found) return undefined;
    const parts = scanBlock(found.block) ?? [];
    if (parts.length === 0) return undefined;
    const p = rng.pick(parts);
    const first = found.block[p.start]!;
    const [bits, flags] = p.kind === 'indexed' ? [7, 0x80] : p.kind === 'size-update' ? [5, 0x20] : first & 0x40 ? [6, 0x40] : [4, first & 0xf0];
    const variant = rng.pick(['zero', 'past the tables', 'huge', 'overlong', 'cut off']);
    const value = variant === 'zero' ? 0 : variant === 'past the tables' ? rng.between(62, 200) : rng.pick([2 ** 28, 2 ** 31, 2 ** 35]);
    let encoded: Buffer;
    if (variant === 'overlong') encoded = Buffer.from([flags | ((1 << bits) - 1), 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
    else if (variant === 'cut off') encoded = Buffer.from([flags | ((1 << bits) - 1), 0x80]);
    else encoded = Buffer.from(hpackInteger(value, bits, flags));
    const integerEnd = p.strings[0]?.prefixAt ?? p.end;
    const tail = variant === 'cut off' ? Buffer.alloc(0) : found.block.subarray(integerEnd);
    frames[found.at]!.payload = Buffer.concat([found.block.subarray(0, p.start), encoded, tail]);
    return `header block on stream ${frames[found.at]!.streamId}: a ${p.kind} integer ${variant}`;
  },
  'hpack string length'(frames, rng) {
    const found = headerBlock(frames, rng);
    if (!found) return undefined;
    const strings = (scanBlock(found.block) ?? []).flatMap((p) => p.strings);
    if (strings.length === 0) return undefined;
    const s = rng.pick(strings);
    const length = rng.pick([found.block.length - s.dataAt + 1, 2 ** 20, 0]);
    frames[found.at]!.payload = Buffer.concat([
      found.block.subarray(0, s.prefixAt),
      Buffer.from(hpackInteger(length, 7, s.huffman ? 0x80 : 0)),
      found.block.subarray(s.dataAt),
    ]);
    return `header block on stream ${frames[found.at]!.streamId}: a string length of ${length}`;
  },
  'header fields'(frames, rng) {
    // Only blocks that add nothing to the table: replacing them leaves the later blocks readable.
    const at = indexOf(
      frames,
      rng,
      (f) => isHeaders(f) && f.flags === (f.flags & (FLAG.END_HEADERS | FLAG.END_STREAM)) && (scanBlock(f.payload) ?? []).every((p) => p.kind === 'indexed'),
    );
    if (at < 0) return undefined;
    const f = frames[at]!;
    const fields = headerList(rng);
    const encoder = new TestHpackEncoder(HPACK_STATIC_TABLE);
    const choose = (): EncodeChoice => ({
      representation: rng.pick(['without-indexing', 'never-indexed'] as const),
      huffman: rng.chance(0.5),
      indexName: rng.chance(0.7),
    });
    f.payload = encoder.encode(fields, choose);
    if (rng.chance(0.3)) f.flags |= FLAG.END_STREAM;
    return `HEADERS on stream ${f.streamId}: ${JSON.stringify(fields)}${f.flags & FLAG.END_STREAM ? ' ending the stream' : ''}`;
  },
  'grpc prefix'(frames, rng) {
    const at = indexOf(frames, rng, (f) => isData(f) && f.payload.length >= 5 && (f.flags & FLAG.PADDED) === 0);
    if (at < 0) return undefined;
    const f = frames[at]!;
    f.payload = Buffer.from(f.payload);
    if (rng.chance(0.3)) {
      f.payload[0] = rng.pick([1, 2, 0x80, rng.int(256)]);
      return `DATA on stream ${f.streamId}: compression flag ${f.payload[0]}`;
    }
    const length = f.payload.readUInt32BE(1);
    const next = rng.pick([0, 0xffffffff, 0x7fffffff, 0x80000000, length + 1, Math.max(0, length - 1), rng.int(2 ** 32)]);
    f.payload.writeUInt32BE(next, 1);
    return `DATA on stream ${f.streamId}: message length ${length} written as ${next}`;
  },
  'message bytes'(frames, rng) {
    const at = indexOf(frames, rng, (f) => isData(f) && f.payload.length > 5);
    if (at < 0) return undefined;
    const f = frames[at]!;
    f.payload = Buffer.from(f.payload);
    const count = rng.between(1, 4);
    for (let i = 0; i < count; i++) f.payload[rng.between(5, f.payload.length - 1)] = rng.pick([0, 0xff, 0x80, 0x0a, 0x12, 0x0b, 0x0c, rng.int(256)]);
    return `DATA on stream ${f.streamId}: ${count} message bytes changed`;
  },
  'stream id'(frames, rng) {
    const f = frames[rng.int(frames.length)]!;
    const before = f.streamId;
    f.streamId = rng.pick([0, 2, 1, 3, 7, 0x7fffffff, before + 2, rng.int(64)]);
    return `frame type ${f.type}: stream ${before} → ${f.streamId}`;
  },
  drop(frames, rng) {
    const [f] = frames.splice(rng.int(frames.length), 1);
    return `frame type ${f!.type} on stream ${f!.streamId} dropped`;
  },
  duplicate(frames, rng) {
    const at = rng.int(frames.length);
    const f = frames[at]!;
    frames.splice(at + rng.int(3), 0, { ...f });
    return `frame type ${f.type} on stream ${f.streamId} sent twice`;
  },
  reorder(frames, rng) {
    const from = rng.int(frames.length);
    const [f] = frames.splice(from, 1);
    const to = Math.max(0, Math.min(frames.length, from + rng.between(-5, 5)));
    frames.splice(to, 0, f!);
    return `frame type ${f!.type} on stream ${f!.streamId} moved from ${from} to ${to}`;
  },
  truncate(frames, rng) {
    const keep = rng.int(frames.length);
    frames.splice(keep);
    return `frames from ${keep} on never sent`;
  },
  'control frame'(frames, rng) {
    const f = controlFrame(rng, frames);
    frames.splice(rng.int(frames.length + 1), 0, f);
    return `inserted frame type ${f.type} flags ${f.flags} on stream ${f.streamId}: ${f.payload.subarray(0, 16).toString('hex')}`;
  },
};

/** `data` behind its HPACK string length prefix. */
function hpackPrefixed(data: Buffer, huffman: boolean): number[] {
  return [...hpackInteger(data.length, 7, huffman ? 0x80 : 0), ...data];
}

/** Response headers or trailers as a peer might get them wrong. */
function headerList(rng: Rng): Array<[string, string]> {
  const fields: Array<[string, string]> = [];
  if (rng.chance(0.5)) fields.push([':status', rng.pick(['200', '200', '503', '404', '500', 'abc', '', '2000'])]);
  if (rng.chance(0.4)) fields.push(['content-type', rng.pick(['application/grpc', 'text/html', ''])]);
  if (rng.chance(0.8))
    fields.push(['grpc-status', rng.pick(['0', '0', '1', '4', '11', '13', '14', '16', '17', '-1', 'x', '', '0x1', ' 5', '99999999999999999999'])]);
  if (rng.chance(0.7)) {
    fields.push([
      'grpc-message',
      rng.pick([
        '',
        '%',
        '%zz',
        'etcdserver:%20mvcc:%20required%20revision%20has%20been%20compacted',
        'etcdserver: mvcc: required revision is a future revision',
        '%E2%9C%93 ok',
        '%ED%A0%80',
        'x'.repeat(10_000),
        '\u00ff\u0000\u0001',
      ]),
    ]);
  }
  if (rng.chance(0.2)) fields.push(['grpc-status', rng.pick(['0', '14'])]);
  return fields;
}

/** A control frame, well formed or not. */
function controlFrame(rng: Rng, frames: Frame[]): Frame {
  const streams = [...new Set(frames.map((f) => f.streamId).filter((id) => id > 0))];
  const someStream = () => (streams.length > 0 && rng.chance(0.8) ? rng.pick(streams) : rng.int(40));
  const u32 = (...values: number[]) => {
    const out = Buffer.alloc(4 * values.length);
    values.forEach((v, i) => out.writeUInt32BE(v >>> 0, 4 * i));
    return out;
  };
  switch (rng.int(12)) {
    case 0:
      return {
        type: FRAME.PING,
        flags: rng.chance(0.3) ? FLAG.ACK : 0,
        streamId: rng.chance(0.9) ? 0 : 1,
        payload: rng.bytes(rng.chance(0.9) ? 8 : rng.int(16)),
      };
    case 1: {
      const count = rng.int(5);
      const params = Buffer.alloc(6 * count);
      for (let i = 0; i < count; i++) {
        params.writeUInt16BE(rng.between(1, 8), 6 * i);
        params.writeUInt32BE(rng.pick([0, 1, 16_383, 16_384, 65_535, 2 ** 24, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, rng.int(2 ** 32)]), 6 * i + 2);
      }
      const payload = rng.chance(0.9) ? params : Buffer.concat([params, rng.bytes(rng.between(1, 5))]);
      return { type: FRAME.SETTINGS, flags: rng.chance(0.1) ? FLAG.ACK : 0, streamId: rng.chance(0.95) ? 0 : 1, payload };
    }
    case 2:
      return {
        type: FRAME.WINDOW_UPDATE,
        flags: 0,
        streamId: rng.chance(0.5) ? 0 : someStream(),
        payload: rng.chance(0.9) ? u32(rng.pick([0, 1, 2 ** 31 - 1, rng.int(2 ** 31)])) : rng.bytes(3),
      };
    case 3:
      return {
        type: FRAME.GOAWAY,
        flags: 0,
        streamId: 0,
        payload: rng.chance(0.9)
          ? Buffer.concat([u32(rng.pick([0, 1, 7, 13, 2 ** 31 - 1, someStream()]), rng.int(14)), rng.bytes(rng.int(20))])
          : rng.bytes(rng.int(8)),
      };
    case 4:
      return { type: FRAME.RST_STREAM, flags: 0, streamId: someStream(), payload: rng.chance(0.9) ? u32(rng.int(14)) : rng.bytes(rng.int(8)) };
    case 5:
      return { type: FRAME.PUSH_PROMISE, flags: FLAG.END_HEADERS, streamId: someStream(), payload: Buffer.concat([u32(2), Buffer.from([0x88])]) };
    case 6:
      return { type: FRAME.PRIORITY, flags: 0, streamId: someStream(), payload: rng.bytes(rng.chance(0.9) ? 5 : rng.int(10)) };
    case 7:
      return { type: FRAME.DATA, flags: rng.int(2), streamId: rng.chance(0.5) ? 0 : someStream(), payload: rng.bytes(rng.int(64)) };
    case 8:
      return { type: FRAME.HEADERS, flags: FLAG.END_HEADERS | rng.int(2), streamId: rng.chance(0.3) ? 0 : someStream(), payload: Buffer.from([0x88]) };
    case 9:
      return { type: FRAME.CONTINUATION, flags: FLAG.END_HEADERS, streamId: someStream(), payload: Buffer.from([0x88]) };
    case 10:
      return { type: rng.between(10, 255), flags: rng.int(256), streamId: rng.int(64), payload: rng.bytes(rng.int(64)) };
    default:
      return { type: FRAME.SETTINGS, flags: 0, streamId: 0, payload: Buffer.from([0, 4, 0, 0, 0, 0]) }; // a window of 0
  }
}

/** Random frames behind a valid SETTINGS: the frame reader's shapes without the session's order. */
function randomFrames(rng: Rng): Frame[] {
  const frames: Frame[] = [{ type: FRAME.SETTINGS, flags: 0, streamId: 0, payload: Buffer.alloc(0) }];
  const count = rng.between(1, 40);
  for (let i = 0; i < count; i++) {
    frames.push(
      rng.chance(0.5)
        ? controlFrame(rng, frames)
        : {
            type: rng.int(12),
            flags: rng.int(256),
            streamId: rng.pick([0, 1, 3, 5, 7, rng.int(100)]),
            payload: rng.bytes(rng.pick([0, 1, 4, 5, 8, 9, rng.int(300)])),
          },
    );
  }
  return frames;
}

/** Splits `bytes` into the reads the client gets. */
export function chunked(bytes: Buffer, rng: Rng): Buffer[] {
  const mode = rng.pick(['whole', 'large', 'small', 'mixed', 'mixed', 'tiny']);
  if (mode === 'whole' || bytes.length === 0) return [bytes];
  // Tiny reads over a stretch of 8 KiB, larger ones around it: every cut of a frame header, at a
  // cost that does not grow with the session.
  const tinyFrom = rng.int(bytes.length);
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    const tiny = mode === 'tiny' && at >= tinyFrom && at < tinyFrom + 8192;
    const size = tiny
      ? rng.between(1, 12)
      : mode === 'large' || mode === 'tiny'
        ? rng.between(1, 65_536)
        : mode === 'small'
          ? rng.between(1, 600)
          : rng.pick([1, 2, 8, 9, 10, rng.between(1, 20_000)]);
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

/** One case's input from `capture` (the session's frames). */
export function fuzzInput(capture: readonly Frame[], rng: Rng): FuzzInput {
  const mode = rng.next();
  if (mode < 0.04) return { bytes: serializeFrames(capture), how: ['the capture as recorded'] };
  if (mode < 0.12) {
    const length = rng.pick([0, 1, 9, rng.int(200), rng.int(4096)]);
    return { bytes: rng.bytes(length), how: [`${length} random bytes`] };
  }
  if (mode < 0.22) {
    const frames = randomFrames(rng);
    return { bytes: serializeFrames(frames), how: [`${frames.length} random frames after SETTINGS`] };
  }
  const frames = capture.map((f) => ({ ...f }));
  const how: string[] = [];
  const names = Object.keys(FRAME_MUTATORS);
  const count = rng.between(1, 4);
  for (let i = 0; i < count && frames.length > 0; i++) {
    const name = rng.pick(names);
    // The flood is large; one case in fifty at most.
    if (name === 'continuation flood' && !rng.chance(0.1)) continue;
    const done = FRAME_MUTATORS[name]!(frames, rng);
    if (done) how.push(`${name}: ${done}`);
  }
  let bytes = serializeFrames(frames);
  if (rng.chance(0.15) && bytes.length > 0) {
    const flips = rng.between(1, 8);
    bytes = Buffer.from(bytes);
    for (let i = 0; i < flips; i++) bytes[rng.int(bytes.length)]! ^= 1 << rng.int(8);
    how.push(`${flips} bits flipped anywhere`);
  }
  if (rng.chance(0.05)) {
    const at = rng.int(bytes.length + 1);
    const junk = rng.bytes(rng.between(1, 64));
    bytes = Buffer.concat([bytes.subarray(0, at), junk, bytes.subarray(at)]);
    how.push(`${junk.length} random bytes spliced in at ${at}`);
  }
  if (how.length === 0) how.push('no mutation applied');
  return { bytes, how };
}
