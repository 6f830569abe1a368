/**
 * A custom resource's JSON as the CEL values its rules see (upstream's UnstructuredToVal):
 * typed by the schema, converted lazily (an object is a map whose fields are converted when a
 * rule reads them), so a rule reading two fields of a large object converts two fields.
 *
 * integer → int, number → double, date/date-time strings → timestamps, duration strings →
 * durations, int-or-string → int or string, preserve-unknown-fields → the JSON as it is (its
 * integers ints); an object's fields are read by their escaped CEL names; a resource's metadata
 * shows name and generateName only.
 */
import type * as CelLibrary from '@bufbuild/cel';
import type * as Wkt from '@bufbuild/protobuf/wkt';
import type * as Protobuf from '@bufbuild/protobuf';
import { cel } from '../../../../util/cel';
import type { CelTypeNode } from './types';

interface Libs {
  lib: typeof CelLibrary;
  wkt: typeof Wkt;
  pb: typeof Protobuf;
}
let libs: Libs | undefined;
function load(): Libs {
  libs ??= { lib: cel().lib, wkt: require('@bufbuild/protobuf/wkt') as typeof Wkt, pb: require('@bufbuild/protobuf') as typeof Protobuf };
  return libs;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An object's fields as a map keyed by CEL field names, each converted when read. */
class ObjectView implements ReadonlyMap<string, unknown> {
  constructor(
    private readonly value: Record<string, unknown>,
    private readonly type: CelTypeNode,
  ) {}
  private jsonName(key: string): string | undefined {
    return this.type.jsonNames?.get(key);
  }
  get(key: string): unknown {
    const name = this.jsonName(key);
    if (name === undefined || !Object.hasOwn(this.value, name)) return undefined;
    const v = this.value[name];
    return v === undefined ? undefined : toCelInput(v, this.type.fields!.get(key)!);
  }
  has(key: string): boolean {
    const name = this.jsonName(key);
    return name !== undefined && Object.hasOwn(this.value, name) && this.value[name] !== undefined;
  }
  get size(): number {
    let n = 0;
    for (const _ of this.keys()) n++;
    return n;
  }
  *keys(): MapIterator<string> {
    for (const key of this.type.jsonNames!.keys()) if (this.has(key)) yield key;
  }
  *values(): MapIterator<unknown> {
    for (const key of this.keys()) yield this.get(key);
  }
  *entries(): MapIterator<[string, unknown]> {
    for (const key of this.keys()) yield [key, this.get(key)];
  }
  [Symbol.iterator](): MapIterator<[string, unknown]> {
    return this.entries();
  }
  forEach(cb: (value: unknown, key: string, map: ReadonlyMap<string, unknown>) => void, thisArg?: unknown): void {
    for (const [k, v] of this.entries()) cb.call(thisArg, v, k, this);
  }
}

/** A map (additionalProperties) as a CEL map whose values are converted when read. */
class MapView implements ReadonlyMap<string, unknown> {
  constructor(
    private readonly value: Record<string, unknown>,
    private readonly elem: CelTypeNode,
  ) {}
  get(key: string): unknown {
    if (typeof key !== 'string' || !Object.hasOwn(this.value, key)) return undefined;
    const v = this.value[key];
    return v === undefined ? undefined : toCelInput(v, this.elem);
  }
  has(key: string): boolean {
    return typeof key === 'string' && Object.hasOwn(this.value, key) && this.value[key] !== undefined;
  }
  get size(): number {
    return Object.keys(this.value).length;
  }
  *keys(): MapIterator<string> {
    yield* Object.keys(this.value);
  }
  *values(): MapIterator<unknown> {
    for (const key of this.keys()) yield this.get(key);
  }
  *entries(): MapIterator<[string, unknown]> {
    for (const key of this.keys()) yield [key, this.get(key)];
  }
  [Symbol.iterator](): MapIterator<[string, unknown]> {
    return this.entries();
  }
  forEach(cb: (value: unknown, key: string, map: ReadonlyMap<string, unknown>) => void, thisArg?: unknown): void {
    for (const [k, v] of this.entries()) cb.call(thisArg, v, k, this);
  }
}

/** Untyped JSON (preserve-unknown-fields, dyn): integers become ints, the rest as CEL reads JSON. */
function dynInput(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(dynInput);
  if (isObject(v)) {
    const m = new Map<string, unknown>();
    for (const k of Object.keys(v)) m.set(k, dynInput(v[k]));
    return m;
  }
  return v;
}

const DURATION = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const UNIT_NANOS: Record<string, bigint> = { ns: 1n, us: 1000n, µs: 1000n, μs: 1000n, ms: 1000000n, s: 1000000000n, m: 60000000000n, h: 3600000000000n };

/** Go's time.ParseDuration, in nanoseconds; undefined when it does not parse. */
export function parseGoDuration(text: string): bigint | undefined {
  if (text === '0') return 0n;
  if (!DURATION.test(text)) return undefined;
  const negative = text.startsWith('-');
  let total = 0n;
  for (const m of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    const [whole, frac = ''] = m[1]!.split('.');
    const unit = UNIT_NANOS[m[2]!]!;
    total += BigInt(whole || '0') * unit;
    if (frac) total += (BigInt(frac.padEnd(18, '0').slice(0, 18)) * unit) / 10n ** 18n;
  }
  return negative ? -total : total;
}

function timestampInput(text: string, dateOnly: boolean): unknown {
  const ms = Date.parse(dateOnly ? `${text}T00:00:00Z` : text);
  if (Number.isNaN(ms)) return text;
  const { wkt, pb } = load();
  const frac = /\.(\d+)/.exec(text);
  const nanos = frac ? Number(frac[1]!.padEnd(9, '0').slice(0, 9)) : 0;
  return pb.create(wkt.TimestampSchema, { seconds: BigInt(Math.floor(ms / 1000)), nanos });
}

function durationInput(text: string): unknown {
  const ns = parseGoDuration(text);
  if (ns === undefined) return text;
  const { wkt, pb } = load();
  return pb.create(wkt.DurationSchema, { seconds: ns / 1000000000n, nanos: Number(ns % 1000000000n) });
}

/** The CEL input of a JSON value of the type (null stays null). */
export function toCelInput(v: unknown, type: CelTypeNode): unknown {
  if (v === null || v === undefined) return null;
  switch (type.kind) {
    case 'object':
      if (!isObject(v)) return dynInput(v);
      return load().lib.celMap(new ObjectView(v, type) as never);
    case 'map':
      if (!isObject(v)) return dynInput(v);
      return load().lib.celMap(new MapView(v, type.elem!) as never);
    case 'list':
      if (!Array.isArray(v)) return dynInput(v);
      return v.map((e) => toCelInput(e, type.elem!));
    case 'int':
    case 'intOrString':
      return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : v;
    case 'timestamp':
      return typeof v === 'string' ? timestampInput(v, type.node?.schema.format === 'date') : v;
    case 'duration':
      return typeof v === 'string' ? durationInput(v) : v;
    case 'bytes':
      return typeof v === 'string' ? Buffer.from(v, 'base64') : v;
    case 'dyn':
      return dynInput(v);
    default:
      return v;
  }
}
