/**
 * Scenario 6: what each wire format costs to write and read, for one ReplicaSet and for a
 * 1,000-item ReplicaSetList, measured in one process by CPU time per operation. The formats are
 * the gateway's own codec records (STYLE.md practice 6): JSON as the gateway serves it
 * (`JSON.stringify`/`JSON.parse`, the reference), JSON in upstream's field order, YAML and the
 * protobuf envelope.
 */
import { createOrderedJsonCodec } from '../../src/codecs/json-order';
import { createProtobufCodec } from '../../src/codecs/protobuf';
import { type Codec, jsonCodec, yamlCodec } from '../../src/gateway/codecs';
import { createNaming } from '../../src/naming';

export interface EncodingRow {
  subject: string;
  format: string;
  bytes: number;
  encodeUs: number;
  decodeUs: number;
}

/** CPU µs per call of `fn`, after a warm-up, over at least `minMs` of CPU time. */
function cpuPerCall(fn: () => unknown, minMs: number): number {
  const deadline = (limitMs: number) => {
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
  deadline(minMs / 3);
  return deadline(minMs);
}

export function listOf(template: Record<string, unknown>, items: number): Record<string, unknown> {
  const meta = template.metadata as Record<string, unknown>;
  const { apiVersion: _a, kind: _k, ...itemTemplate } = template;
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSetList',
    metadata: { resourceVersion: String(meta.resourceVersion ?? '1') },
    items: Array.from({ length: items }, (_, i) => ({ ...itemTemplate, metadata: { ...meta, name: `rs-${String(i).padStart(6, '0')}` } })),
  };
}

export function measureEncodings(template: Record<string, unknown>, minMs: number): EncodingRow[] {
  const naming = createNaming('platform');
  const formats: Array<[string, Codec]> = [
    ['JSON (served)', jsonCodec],
    ['JSON, upstream order', createOrderedJsonCodec(naming)],
    ['protobuf', createProtobufCodec(naming)],
    ['YAML', yamlCodec],
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
