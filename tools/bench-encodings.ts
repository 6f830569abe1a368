/**
 * Encode/decode throughput per wire format, for one ReplicaSet (a Deployment's, with a pod
 * template using most of PodSpec) and a 1,000-item ReplicaSetList:
 *
 *   node -r @swc-node/register tools/bench-encodings.ts [--seconds 1]
 *
 * Formats: plain JSON (JSON.stringify, key order as held), upstream-ordered JSON (the schema
 * walk, cold), the gateway's JSON codec warm (frozen cache objects: text memoised per object
 * version), YAML, protobuf (envelope + schema-driven bytes) and CBOR. Decode is the gateway
 * codec's `decode` for each (ordered JSON decodes as JSON). Prints a Markdown table: operations
 * per second and MB/s of encoded bytes, each the median of three timed runs.
 */
import { deepFreeze } from '../src/util/frozen';
import { encodeOrderedJson } from '../src/codecs/json-order';
import { createProtobufCodec } from '../src/codecs/protobuf';
import { schemaRegistry } from '../src/schema';
import { createCborCodec, createJsonCodec, yamlCodec } from '../src/gateway/codecs';
import { createNaming } from '../src/naming';
import { realisticReplicaSet } from '../test/codecs/sample-objects';

const seconds = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 1;
const naming = createNaming('kubernetes');
const registry = schemaRegistry(naming);
const json = createJsonCodec(naming);
const yaml = yamlCodec;
const protobuf = createProtobufCodec(naming);
const cbor = createCborCodec(naming);

function replicaSet(i: number): Record<string, any> {
  const rs = realisticReplicaSet() as Record<string, any>;
  rs.metadata = { ...rs.metadata, name: `frontend-${i}`, uid: `5f1c3a52-5a8b-4b7e-9d8c-${String(i).padStart(12, '0')}`, resourceVersion: String(1000 + i) };
  return rs;
}

const one = replicaSet(0);
const list = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSetList',
  metadata: { resourceVersion: '5000' },
  items: Array.from({ length: 1000 }, (_, i) => {
    const { apiVersion: _a, kind: _k, ...item } = replicaSet(i);
    return item;
  }),
};
/** As the watch cache hands them out: frozen, shared, so encoders may memoise. */
const frozenOne = deepFreeze(replicaSet(0));
const frozenList = { ...list, items: list.items.map((item) => deepFreeze(JSON.parse(JSON.stringify(item)))) };

/** Runs per second of `fn`, over `seconds` (median of three). */
function rate(fn: () => unknown): number {
  const runs: number[] = [];
  for (let r = 0; r < 3; r++) {
    const end = performance.now() + (seconds * 1000) / 3;
    let n = 0;
    const start = performance.now();
    while (performance.now() < end) {
      fn();
      n++;
    }
    runs.push(n / ((performance.now() - start) / 1000));
  }
  return runs.sort((a, b) => a - b)[1]!;
}

interface Format {
  name: string;
  encode(value: unknown): Buffer | string;
  decode(bytes: Buffer): unknown;
  /** The value to encode, when it differs (frozen cache objects). */
  input?(value: unknown): unknown;
}

const formats: Format[] = [
  { name: 'JSON (JSON.stringify, held order)', encode: (v) => JSON.stringify(v), decode: (b) => JSON.parse(b.toString('utf8')) },
  { name: 'JSON, upstream order (cold)', encode: (v) => encodeOrderedJson(registry, v), decode: (b) => json.decode(b) },
  {
    name: 'JSON, gateway codec (warm, encode-once)',
    encode: (v) => json.encode(v),
    decode: (b) => json.decode(b),
    input: (v) => (v === one ? frozenOne : frozenList),
  },
  { name: 'YAML', encode: (v) => yaml.encode(v), decode: (b) => yaml.decode(b) },
  { name: 'protobuf', encode: (v) => protobuf.encode(v), decode: (b) => protobuf.decode(b) },
  { name: 'CBOR', encode: (v) => cbor.encode(v), decode: (b) => cbor.decode(b) },
];

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));

console.log(`Node ${process.version}, ${seconds}s per measurement\n`);
console.log('| format | object | bytes | encode ops/s | encode MB/s | decode ops/s | decode MB/s |');
console.log('|---|---|---:|---:|---:|---:|---:|');
for (const format of formats) {
  for (const [label, value] of [
    ['ReplicaSet', one],
    ['1,000-item list', list],
  ] as const) {
    const input = format.input ? format.input(value) : value;
    const encoded = format.encode(input);
    const bytes = Buffer.isBuffer(encoded) ? encoded : Buffer.from(encoded, 'utf8');
    const enc = rate(() => format.encode(input));
    const dec = rate(() => format.decode(bytes));
    const mb = (ops: number) => fmt((ops * bytes.length) / 1e6);
    console.log(`| ${format.name} | ${label} | ${bytes.length.toLocaleString('en-US')} | ${fmt(enc)} | ${mb(enc)} | ${fmt(dec)} | ${mb(dec)} |`);
  }
}
