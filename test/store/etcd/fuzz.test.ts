/**
 * A seeded fuzzer for the etcd client's parsers: the HTTP/2 frame reader, the HPACK decoder and
 * the gRPC message framing, fed random bytes, random frames and mutations of a session a real
 * etcd answered (fuzz/session.ts). Every case must end with every call settled, every failure a
 * clear storage error, memory back where it was, and the client able to dial on; the HPACK
 * decoder must read back whatever a valid encoder writes, and the chunked Range decoder must agree
 * with the generated one.
 *
 * `npm test` runs a fixed number of cases of a fixed seed; `npm run test:faults`
 * (KEELSON_FAULTS=full) many more of a new seed. The seed is printed; to replay a failure:
 *   KEELSON_FUZZ_SEED=<seed> [KEELSON_FUZZ_CASE=<i>] npx jest test/store/etcd/fuzz.test.ts
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { RangeResponse } from '../../../src/gen/etcd/etcdserverpb/rpc';
import { MessageReader } from '../../../src/store/etcd/client';
import { HPACK_STATIC_TABLE, HpackDecoder, HpackError } from '../../../src/store/etcd/hpack';
import { decodeRangeResponseChunks } from '../../../src/store/etcd/range-chunks';
import { RESPONSE_SHAPES, checkWire } from '../../../src/store/etcd/wire-check';
import { seededRandom } from '../../../src/util/seeded-random';
import { FULL } from '../../faults/support';
import { FLAG, FRAME, TestHpackEncoder, parseFrames, scanBlock, type Frame } from './fuzz/frames';
import { healthyPrefix, runCase } from './fuzz/harness';
import { Rng, chunked, fuzzInput } from './fuzz/mutate';
import { describeOutcome, loadCapture } from './fuzz/session';

const SEED = Number(process.env.KEELSON_FUZZ_SEED ?? (FULL ? Date.now() % 2 ** 31 : 56));
const ONLY = process.env.KEELSON_FUZZ_CASE === undefined ? undefined : Number(process.env.KEELSON_FUZZ_CASE);
const SIZES = FULL
  ? { sessions: 150_000, hpack: 500_000, roundTrips: 10_000, framing: 50_000 }
  : { sessions: 2_000, hpack: 20_000, roundTrips: 1_500, framing: 2_000 };

jest.setTimeout(FULL ? 3_600_000 : 120_000);

/** Case `i` of a run: its own random sequence, so one case replays alone. */
const caseRng = (i: number) => new Rng(seededRandom((SEED ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0));
const cases = (count: number) => (ONLY !== undefined ? [ONLY] : Array.from({ length: count }, (_, i) => i));
const replay = (suite: string, i: number) => `KEELSON_FUZZ_SEED=${SEED} KEELSON_FUZZ_CASE=${i} npx jest test/store/etcd/fuzz.test.ts -t '${suite}'`;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const memory = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
/** Memory once garbage is collected and the freed buffers' memory handed back (a turn or two after the collection). */
const settledMemory = async () => {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    gc();
  }
  return memory();
};
const MiB = 1024 * 1024;

const capture = loadCapture();
const captureFrames = parseFrames(capture);
const healthy = healthyPrefix(capture);
const STATUS_SIZE = 20_480;

beforeAll(() => process.stdout.write(`etcd client fuzz: seed ${SEED}${ONLY !== undefined ? `, case ${ONLY} only` : ''} (${FULL ? 'full' : 'reduced'})\n`));

/** Anything thrown outside a call's promise (an uncaught exception, an unhandled rejection). */
function watchStrays(): { strays: string[]; stop(): void } {
  const strays: string[] = [];
  const onError = (err: unknown) => strays.push(String((err as Error)?.stack ?? err));
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  return { strays, stop: () => (process.off('uncaughtException', onError), process.off('unhandledRejection', onError)) };
}

describe('the session as etcd answered it', () => {
  it('replays to the answers the recording got', async () => {
    const result = await runCase([capture], healthy, new Rng(() => 0.5), STATUS_SIZE);
    expect(result.problems).toEqual([]);
    const outcomes = result.outcomes.map((o) => describeOutcome(o?.value)) as any[];
    expect(outcomes[0]).toBe(STATUS_SIZE);
    expect(outcomes.slice(1, 7).map((o) => o.modRevision ?? o.storeError)).toEqual([2, 'exists', undefined, 3, 'conflict', 4]);
    expect(outcomes[7]).toMatchObject({ revision: 4, count: 2, more: false, kvs: [{ modRevision: 3 }, { modRevision: 4, value: '20480 bytes 49ceed5bbd13' }] });
    expect(outcomes[8]).toMatchObject({ count: 2, more: true });
    expect(outcomes[9]).toMatchObject({ revision: 5, prev: { modRevision: 3 } });
    expect(outcomes.slice(10).map((o) => o.storeError ?? o)).toEqual(['not-found', expect.anything(), 1, 'future-revision']);
    expect(result.watch.events.map((e) => [e.type, e.revision])).toEqual([
      ['put', 3],
      ['put', 4],
      ['delete', 5],
    ]);
  });
});

describe('fuzzed sessions', () => {
  it('settle every call with a clear storage error or a right answer, and leave the client whole', async () => {
    const { strays, stop } = watchStrays();
    const failures: string[] = [];
    const started = performance.now();
    let slowest = { ms: 0, i: -1 };
    let answered = 0;
    let failed = 0;
    const before = await settledMemory();
    let peak = 0;
    try {
      for (const i of cases(SIZES.sessions)) {
        const rng = caseRng(i);
        const input = fuzzInput(captureFrames, rng);
        const result = await runCase(chunked(input.bytes, rng), healthy, rng, STATUS_SIZE);
        for (const outcome of result.outcomes) outcome?.ok ? answered++ : failed++;
        if (result.ms > slowest.ms) slowest = { ms: result.ms, i };
        if (ONLY !== undefined)
          process.stdout.write(
            `case ${i}: ${input.how.join('; ')}\n${JSON.stringify(describeOutcome(result.outcomes.map((o) => o?.value)), null, 1).slice(0, 4000)}\n`,
          );
        if (result.problems.length > 0 || strays.length > 0) {
          failures.push(
            `case ${i} (${input.how.join('; ')}): ${[...result.problems, ...strays.splice(0)].join('; ')}\n  replay: ${replay('fuzzed sessions', i)}`,
          );
          if (failures.length >= 10) break;
        }
        if (i % 50 === 0) peak = Math.max(peak, memory() - before);
      }
    } finally {
      stop();
    }
    const retained = (await settledMemory()) - before;
    process.stdout.write(
      `etcd client fuzz, sessions: seed ${SEED}, ${ONLY !== undefined ? 1 : SIZES.sessions} cases in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
        `operations answered ${answered}, failed ${failed}; slowest case ${slowest.ms.toFixed(1)} ms (${slowest.i}); ` +
        `memory peak +${(peak / MiB).toFixed(1)} MiB, retained +${(retained / MiB).toFixed(1)} MiB\n`,
    );
    expect(failures).toEqual([]);
    // No case holds the process: a case is a few milliseconds of parsing at most.
    expect(slowest.ms).toBeLessThan(2_000);
    // Nothing kept from case to case, and no input made the client balloon.
    expect(retained).toBeLessThan(32 * MiB);
    expect(peak).toBeLessThan(256 * MiB);
  });
});

/** The header blocks of the capture, in order: the decoder's table lives across them. */
const captureBlocks = captureFrames.filter((f) => f.type === FRAME.HEADERS).map((f) => f.payload);

describe('the HPACK decoder', () => {
  it('decodes mutated and random blocks to fields or refuses them with an HpackError, nothing else', () => {
    const failures: string[] = [];
    let refused = 0;
    for (const i of cases(SIZES.hpack)) {
      const rng = caseRng(i);
      const blocks = rng.chance(0.1) ? Array.from({ length: rng.between(1, 4) }, () => rng.bytes(rng.int(64))) : mutateBlocks(captureBlocks, rng);
      const decoder = new HpackDecoder();
      for (const block of blocks) {
        let fields: unknown;
        try {
          fields = decoder.decode(block);
        } catch (err) {
          if (err instanceof HpackError) {
            refused++;
            break; // the connection is gone: no later block is read
          }
          failures.push(`case ${i}: ${(err as Error).stack}\n  replay: ${replay('the HPACK decoder', i)}`);
          break;
        }
        if (!Array.isArray(fields) || fields.length % 2 !== 0 || !fields.every((f) => typeof f === 'string'))
          failures.push(`case ${i}: decoded to ${JSON.stringify(fields)}`);
      }
      if (failures.length >= 10) break;
    }
    process.stdout.write(`etcd client fuzz, HPACK: seed ${SEED}, ${SIZES.hpack} cases, ${refused} refused\n`);
    expect(failures).toEqual([]);
  });

  it('reads back every block a valid encoder writes: Huffman or not, indexed, evicted, resized', () => {
    const failures: string[] = [];
    for (const i of cases(SIZES.roundTrips)) {
      const rng = caseRng(i);
      const encoder = new TestHpackEncoder(HPACK_STATIC_TABLE);
      const decoder = new HpackDecoder();
      for (let b = rng.between(1, 6); b > 0; b--) {
        const fields = Array.from({ length: rng.between(0, 12) }, () => field(rng));
        const prefix = rng.chance(0.2) ? encoder.resize(rng.pick([0, 64, 256, 4096, rng.int(4097)])) : [];
        const block = encoder.encode(
          fields,
          () => ({
            representation: rng.pick(['indexed-if-possible', 'incremental', 'without-indexing', 'never-indexed'] as const),
            huffman: rng.chance(0.5),
            indexName: rng.chance(0.6),
          }),
          prefix,
        );
        let decoded: string[] | string;
        try {
          decoded = decoder.decode(block);
        } catch (err) {
          decoded = String(err);
        }
        const expected = fields.flat();
        if (JSON.stringify(decoded) !== JSON.stringify(expected)) {
          failures.push(
            `case ${i}: ${JSON.stringify(expected).slice(0, 300)} read back as ${JSON.stringify(decoded).slice(0, 300)}\n  replay: ${replay('reads back every block', i)}`,
          );
          break;
        }
      }
      if (failures.length >= 10) break;
    }
    expect(failures).toEqual([]);
  });
});

describe('gRPC message framing', () => {
  it('splits any chunking of length-prefixed messages as a reference splitter does, refusing compressed ones', () => {
    const failures: string[] = [];
    for (const i of cases(SIZES.framing)) {
      const rng = caseRng(i);
      const body = (n: number) => (n <= 100 ? rng.bytes(n) : Buffer.alloc(n, rng.int(256)));
      const messages = Array.from({ length: rng.between(1, 6) }, () => ({
        flag: rng.chance(0.05) ? rng.between(1, 255) : 0,
        body: body(rng.pick([0, 1, 4, 5, 100, rng.int(40_000)])),
      }));
      const stream = Buffer.concat(
        messages.map((m) =>
          Buffer.concat([
            Buffer.from([m.flag, m.body.length >>> 24, (m.body.length >>> 16) & 0xff, (m.body.length >>> 8) & 0xff, m.body.length & 0xff]),
            m.body,
          ]),
        ),
      );
      const cut = rng.chance(0.3) ? rng.int(stream.length + 1) : stream.length; // a stream that ends early
      const firstFlagged = messages.findIndex((m) => m.flag !== 0);
      const reader = new MessageReader();
      const got: Buffer[] = [];
      let threw: string | undefined;
      for (const chunk of chunked(stream.subarray(0, cut), rng)) {
        try {
          got.push(...reader.push(chunk).map((m) => Buffer.from(m)));
        } catch (err) {
          threw = (err as Error).message;
          break;
        }
      }
      // The reference: the messages whole within the cut, up to the first compressed one.
      const expected: Buffer[] = [];
      let at = 0;
      let refusal = false;
      for (const m of messages) {
        if (cut - at < 5) break;
        if (m.flag !== 0) {
          refusal = true;
          break;
        }
        if (cut - at < 5 + m.body.length) break;
        expected.push(m.body);
        at += 5 + m.body.length;
      }
      const sameMessages = got.length <= expected.length && got.every((m, k) => m.equals(expected[k]!));
      const ok = refusal ? threw?.includes('compressed') && sameMessages : !threw && got.length === expected.length && sameMessages;
      if (!ok)
        failures.push(
          `case ${i}: ${messages.length} messages (first compressed: ${firstFlagged}), cut at ${cut}: got ${got.length}, expected ${expected.length}${threw ? `, threw ${threw}` : ''}\n  replay: ${replay('splits any chunking', i)}`,
        );
      if (failures.length >= 10) break;
    }
    expect(failures).toEqual([]);
  });

  it('decodes a mutated Range response from its frames exactly as the generated decoder does from the whole', () => {
    const listFrames = captureFrames.filter((f) => f.type === FRAME.DATA && f.streamId === 15).map((f) => f.payload);
    const message = Buffer.concat(listFrames);
    const failures: string[] = [];
    let refused = 0;
    for (const i of cases(SIZES.framing)) {
      const rng = caseRng(i);
      const mutated = Buffer.from(message);
      const flips = rng.between(1, 6);
      for (let k = 0; k < flips; k++)
        mutated[rng.between(5, mutated.length - 1)] = rng.pick([0, 0xff, 0x80, 0x7f, 0x08, 0x0a, 0x10, 0x12, 0x18, 0x20, 0x0b, 0x0c, 0x1c, rng.int(256)]);
      const body = mutated.subarray(5);
      const cut = rng.chance(0.2) ? rng.int(body.length) : body.length;
      mutated.writeUInt32BE(cut, 1);
      const whole = mutated.subarray(0, 5 + cut);
      const chunks = chunked(whole, rng);
      // The client's path for a response in one piece: the wire check, then the generated decoder.
      const joined = attempt(() => {
        checkWire(whole.subarray(5), RESPONSE_SHAPES.RangeResponse);
        return RangeResponse.decode(new BinaryReader(whole.subarray(5)));
      });
      const fromChunks = attempt(() => decodeRangeResponseChunks(chunks));
      if (joined.error && fromChunks.error) refused++;
      else if (JSON.stringify(describeOutcome(joined.value)) !== JSON.stringify(describeOutcome(fromChunks.value)) || !!joined.error !== !!fromChunks.error) {
        failures.push(
          `case ${i}: the generated decoder ${joined.error ?? 'decoded it'}; from ${chunks.length} chunks ${fromChunks.error ?? 'decoded'}${joined.error || fromChunks.error ? '' : ' differently'}\n  replay: ${replay('decodes a mutated Range response', i)}`,
        );
      }
      if (failures.length >= 10) break;
    }
    process.stdout.write(`etcd client fuzz, Range decoding: seed ${SEED}, ${SIZES.framing} cases, ${refused} refused by both\n`);
    expect(failures).toEqual([]);
  });
});

function attempt<T>(f: () => T): { value?: T; error?: string } {
  try {
    return { value: f() };
  } catch (err) {
    return { error: String((err as Error).message) };
  }
}

/** A header field: often a static table name, sometimes its value too, any octets otherwise. */
function field(rng: Rng): [string, string] {
  const text = (n: number) => Array.from({ length: n }, () => String.fromCharCode(rng.chance(0.8) ? rng.between(0x20, 0x7e) : rng.int(256))).join('');
  if (rng.chance(0.3)) {
    const [name, value] = HPACK_STATIC_TABLE[rng.between(1, HPACK_STATIC_TABLE.length - 1)]!;
    return [name, rng.chance(0.5) ? value : text(rng.int(40))];
  }
  return [text(rng.between(1, 30)), text(rng.chance(0.02) ? rng.int(5000) : rng.pick([0, 1, 10, rng.int(300)]))];
}

/** The capture's blocks with one to three of them changed where HPACK parsers slip. */
function mutateBlocks(blocks: readonly Buffer[], rng: Rng): Buffer[] {
  const out: Buffer[] = blocks.map((b) => Buffer.from(b));
  for (let n = rng.between(1, 3); n > 0; n--) {
    const at = rng.int(out.length);
    const frames: Frame[] = [{ type: FRAME.HEADERS, flags: FLAG.END_HEADERS, streamId: 1, payload: out[at]! }];
    // The session mutators that aim at blocks, on a frame of this block alone.
    const input = fuzzInputForBlock(frames, rng);
    out[at] = input;
  }
  return out;
}

function fuzzInputForBlock(frames: Frame[], rng: Rng): Buffer {
  const block = frames[0]!.payload;
  const parts = scanBlock(block) ?? [];
  switch (rng.int(6)) {
    case 0: {
      const flipped = Buffer.from(block);
      if (flipped.length > 0) flipped[rng.int(flipped.length)]! ^= 1 << rng.int(8);
      return flipped;
    }
    case 1:
      return block.subarray(0, rng.int(block.length + 1));
    case 2:
      return Buffer.concat([Buffer.from([0x20 | rng.pick([0, 31]), ...(rng.chance(0.5) ? [rng.int(256), rng.int(128)] : [])]), block]);
    case 3: {
      const p = parts.length > 0 ? rng.pick(parts) : undefined;
      return p ? Buffer.concat([block.subarray(0, p.end), Buffer.from([0x3f, 0xe1, 0x1f]), block.subarray(p.end)]) : block;
    }
    case 4:
      return Buffer.concat([block, rng.bytes(rng.between(1, 8))]);
    default: {
      const strings = parts.flatMap((p) => p.strings).filter((s) => s.huffman && s.end > s.dataAt);
      if (strings.length === 0) return Buffer.concat([Buffer.from([0x00, 0x81, rng.int(256), 0x81, rng.int(256)]), block]);
      const s = rng.pick(strings);
      const changed = Buffer.from(block);
      changed[s.end - 1] = rng.pick([0x00, 0xfe, 0x7f, rng.int(256)]);
      return changed;
    }
  }
}
