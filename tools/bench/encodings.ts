/**
 * Scenario 6: what each wire format costs to write and read, for one ReplicaSet and for a
 * 1,000-item ReplicaSetList, measured in one process by CPU time per call. The formats are the
 * codec records the gateway serves (`gatewayCodecs`, CBOR included), on objects that are not
 * shared, i.e. the cost of the first encode of an object version (the watch cache memoises the
 * bytes per version after that). The reference is V8's own `JSON.stringify` / `JSON.parse`.
 */
import { type Codec, gatewayCodecs } from '../../src/gateway/codecs';
import { createNaming } from '../../src/naming';

export interface EncodingRow {
  subject: string;
  format: string;
  bytes: number;
  encodeUs: number;
  decodeUs: number;
}

/**
 * CPU µs per call of `fn`: after a warm-up, over at least `minMs` of CPU time. A call that alone
 * takes longer than `minMs` (YAML of a big list) is measured once: JIT warm-up is noise there.
 */
function cpuPerCall(fn: () => unknown, minMs: number): number {
  const measure = (limitMs: number) => {
    const start = process.cpuUsage();
    let calls = 0;
    let used = 0;
    do {
      fn();
      calls++;
      const cpu = process.cpuUsage(start);
      used = cpu.user + cpu.system;
    } while (used < limitMs * 1000);
    return used / calls;
  };
  const first = measure(0);
  if (first > minMs * 1000) return first;
  measure(minMs / 3);
  return measure(minMs);
}

/** The reference format's name in the rows. */
export const NATIVE_JSON = 'V8 JSON.stringify / JSON.parse';

function formatName(mediaType: string): string {
  if (mediaType === 'application/json') return 'JSON (gateway codec, upstream key order)';
  if (mediaType === 'application/yaml') return 'YAML';
  if (mediaType.endsWith('protobuf')) return 'protobuf';
  if (mediaType === 'application/cbor') return 'CBOR';
  return mediaType;
}

export function listOf(template: Record<string, unknown>, items: number): Record<string, unknown> {
  const meta = template.metadata as Record<string, unknown>;
  const { apiVersion: _a, kind: _k, ...itemTemplate } = template;
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSetList',
    metadata: { resourceVersion: String(meta.resourceVersion ?? '1') },
    // Each item its own copy: shared sub-objects would make YAML write anchors and aliases.
    items: Array.from({ length: items }, (_, i) => structuredClone({ ...itemTemplate, metadata: { ...meta, name: `rs-${String(i).padStart(6, '0')}` } })),
  };
}

export function measureEncodings(template: Record<string, unknown>, minMs: number): EncodingRow[] {
  const naming = createNaming('platform');
  const native: Codec = {
    mediaType: 'JSON.stringify / JSON.parse',
    encode: (value) => Buffer.from(JSON.stringify(value)),
    decode: (body) => JSON.parse(Buffer.from(body).toString('utf8')),
  };
  const formats: Array<[string, Codec]> = [
    [NATIVE_JSON, native],
    ...[...gatewayCodecs(naming, { cbor: true, compression: true }).values()].map((codec): [string, Codec] => [formatName(codec.mediaType), codec]),
  ];
  const subjects: Array<[string, Record<string, unknown>, number]> = [
    ['ReplicaSet', template, minMs],
    ['ReplicaSetList, 1,000 items', listOf(template, 1000), minMs * 3],
  ];
  const rows: EncodingRow[] = [];
  for (const [subject, value, budget] of subjects) {
    for (const [format, codec] of formats) {
      const bytes = codec.encode(value);
      rows.push({
        subject,
        format,
        bytes: bytes.length,
        encodeUs: cpuPerCall(() => codec.encode(value), budget),
        decodeUs: cpuPerCall(() => codec.decode(bytes), budget),
      });
    }
  }
  return rows;
}
