/**
 * JSON in upstream's byte layout. Go's encoding/json writes struct fields in declaration order
 * (TypeMeta's `kind`, `apiVersion` first; inline structs expanded in place), map keys sorted,
 * and escapes `<`, `>`, `&`, U+2028 and U+2029 as `\u003c`-style sequences; json.Indent keeps
 * `{}` and `[]` on one line. This encoder takes the declaration order from the schema, so the
 * same JSON-shaped object comes out as the bytes upstream would write.
 *
 * It orders, it does not normalise: keys the schema does not know are written after the known
 * ones in their own order, values are written as they are. Raw JSON (RawExtension, FieldsV1)
 * keeps its own key order, as upstream copies raw bytes.
 */
import { CodecError, type Codec } from './codec';
import type { Naming } from '../naming';
import { type SchemaRegistry, type SchemaType, schemaRegistry, type ValueType } from '../schema';
import { compareGoStrings, escapeGoHtml, goJsonString } from './go-strings';
import { isObject } from '../util/json-values';

export interface JsonOrderOptions {
  /** Indentation per level (`'  '` as `json.Indent` in upstream's fixtures); empty: compact. */
  indent?: string;
}

const isPlainObject = isObject<Record<string, unknown>>;

class Printer {
  constructor(
    private readonly registry: SchemaRegistry,
    private readonly indent: string,
  ) {}

  private newline(depth: number): string {
    return this.indent ? `\n${this.indent.repeat(depth)}` : '';
  }

  private container(open: string, close: string, parts: string[], depth: number): string {
    if (parts.length === 0) return open + close;
    const inner = this.newline(depth + 1);
    return `${open}${inner}${parts.join(`,${inner}`)}${this.newline(depth)}${close}`;
  }

  private member(key: string, value: string): string {
    return `${goJsonString(key)}:${this.indent ? ' ' : ''}${value}`;
  }

  /** Any JSON value, keys in the order the object holds them (untyped). */
  untyped(value: unknown, depth: number): string | undefined {
    if (value === null) return 'null';
    switch (typeof value) {
      case 'string':
        return goJsonString(value);
      case 'number':
        return Number.isFinite(value) ? String(value) : 'null';
      case 'boolean':
        return value ? 'true' : 'false';
      case 'object':
        break;
      default:
        return undefined;
    }
    if (Array.isArray(value)) {
      return this.container('[', ']', value.map((v) => this.untyped(v, depth + 1) ?? 'null'), depth);
    }
    const parts: string[] = [];
    for (const key of Object.keys(value as object)) {
      const v = this.untyped((value as Record<string, unknown>)[key], depth + 1);
      if (v !== undefined) parts.push(this.member(key, v));
    }
    return this.container('{', '}', parts, depth);
  }

  typed(value: unknown, type: ValueType, depth: number): string | undefined {
    if (value === null || value === undefined) return this.untyped(value, depth);
    switch (type.kind) {
      case 'message':
        return isPlainObject(value) ? this.object(value, this.registry.type(type.type), depth) : this.untyped(value, depth);
      case 'list':
        if (!Array.isArray(value)) return this.untyped(value, depth);
        return this.container('[', ']', value.map((v) => this.typed(v, type.item, depth + 1) ?? 'null'), depth);
      case 'map': {
        if (!isPlainObject(value)) return this.untyped(value, depth);
        const parts: string[] = [];
        for (const key of Object.keys(value).sort(compareGoStrings)) {
          const v = this.typed(value[key], type.value, depth + 1);
          if (v !== undefined) parts.push(this.member(key, v));
        }
        return this.container('{', '}', parts, depth);
      }
      default:
        return this.untyped(value, depth);
    }
  }

  object(value: Record<string, unknown>, type: SchemaType, depth: number): string {
    const parts: string[] = [];
    const done = new Set<string>();
    const emit = (key: string, v: string | undefined) => {
      done.add(key);
      if (v !== undefined) parts.push(this.member(key, v));
    };
    if (type.typeMeta) {
      for (const key of ['kind', 'apiVersion']) if (key in value) emit(key, this.untyped(value[key], depth + 1));
    }
    for (const property of type.properties) {
      if (property.name in value) emit(property.name, this.typed(value[property.name], property.field.type, depth + 1));
    }
    for (const key of Object.keys(value)) {
      if (!done.has(key)) emit(key, this.untyped(value[key], depth + 1));
    }
    return this.container('{', '}', parts, depth);
  }

  top(value: unknown): string {
    if (isPlainObject(value)) {
      const { apiVersion, kind } = value;
      const served = typeof apiVersion === 'string' && typeof kind === 'string' ? this.registry.kind(apiVersion, kind) : undefined;
      if (served) return this.object(value, served.type, 0);
    }
    return this.untyped(value, 0) ?? 'null';
  }
}

/** Keys a JS object cannot hold in a chosen position (array indexes go first) or at all. */
const AWKWARD_KEY = /^(?:0|[1-9]\d{0,9}|__proto__)$/;

/**
 * Each property's place in upstream's output, per type: kind and apiVersion first where the
 * type embeds TypeMeta, then the JSON properties in declaration order.
 */
const orders = new WeakMap<SchemaType, Map<string, number>>();

function orderOf(type: SchemaType): Map<string, number> {
  let order = orders.get(type);
  if (!order) {
    order = new Map();
    if (type.typeMeta) {
      order.set('kind', -2);
      order.set('apiVersion', -1);
    }
    type.properties.forEach((p, i) => {
      if (!order!.has(p.name)) order!.set(p.name, i);
    });
    orders.set(type, order);
  }
  return order;
}

/** Thrown inside `Reorderer` when only the printer can keep the order. */
const NEEDS_PRINTER = Symbol('needs printer');

/**
 * The fast path: copy the value with keys inserted in upstream's order and let the native
 * JSON.stringify write it (several times faster than printing by hand). Objects whose order a
 * JS object cannot hold (map keys such as `"10"` that JS moves first) throw NEEDS_PRINTER.
 */
class Reorderer {
  constructor(private readonly registry: SchemaRegistry) {}

  typed(value: unknown, type: ValueType): unknown {
    if (value === null || typeof value !== 'object') return value;
    switch (type.kind) {
      case 'message':
        return isPlainObject(value) ? this.object(value, this.registry.type(type.type)) : value;
      case 'list':
        return Array.isArray(value) ? value.map((v) => this.typed(v, type.item)) : value;
      case 'map': {
        if (!isPlainObject(value)) return value;
        const keys = Object.keys(value).sort(compareGoStrings);
        const out: Record<string, unknown> = {};
        for (const key of keys) {
          if (AWKWARD_KEY.test(key) && keys.length > 1) throw NEEDS_PRINTER;
          out[key] = this.typed(value[key], type.value);
        }
        return out;
      }
      default:
        return value;
    }
  }

  /**
   * Walks the object's own keys (usually far fewer than its type's properties), puts the known
   * ones in declaration order (insertion sort: a handful of keys, mostly in order already), then
   * the unknown ones as they came.
   */
  object(value: Record<string, unknown>, type: SchemaType): Record<string, unknown> {
    const order = orderOf(type);
    const known: string[] = [];
    let unknown: string[] | undefined;
    for (const key in value) {
      const at = order.get(key);
      if (at === undefined) {
        if (AWKWARD_KEY.test(key)) throw NEEDS_PRINTER;
        (unknown ??= []).push(key);
        continue;
      }
      let i = known.length;
      known.push(key);
      while (i > 0 && order.get(known[i - 1]!)! > at) {
        known[i] = known[i - 1]!;
        i--;
      }
      known[i] = key;
    }
    const out: Record<string, unknown> = {};
    for (const key of known) {
      const property = type.property.get(key);
      out[key] = property ? this.typed(value[key], property.field.type) : value[key];
    }
    if (unknown) for (const key of unknown) out[key] = value[key];
    return out;
  }

  top(value: unknown): unknown {
    if (!isPlainObject(value)) return value;
    const { apiVersion, kind } = value;
    const served = typeof apiVersion === 'string' && typeof kind === 'string' ? this.registry.kind(apiVersion, kind) : undefined;
    return served ? this.object(value, served.type) : value;
  }
}

/** An encoder bound to one registry: the fast path, and the printer where only it keeps the order. */
function createEncoder(registry: SchemaRegistry): (value: unknown, indent: string, typeName?: string) => string {
  const reorderer = new Reorderer(registry);
  return (value, indent, typeName) => {
    try {
      const ordered = typeName ? reorderer.typed(value, { kind: 'message', type: typeName }) : reorderer.top(value);
      // Inside JSON text these characters only occur in strings, so escaping the whole text is safe.
      return escapeGoHtml(JSON.stringify(ordered, null, indent || undefined) ?? 'null');
    } catch (err) {
      if (err !== NEEDS_PRINTER) throw err;
      const printer = new Printer(registry, indent);
      return typeName ? (printer.typed(value, { kind: 'message', type: typeName }, 0) ?? 'null') : printer.top(value);
    }
  };
}

const encoders = new WeakMap<SchemaRegistry, ReturnType<typeof createEncoder>>();

function encoderFor(registry: SchemaRegistry): ReturnType<typeof createEncoder> {
  let encoder = encoders.get(registry);
  if (!encoder) encoders.set(registry, (encoder = createEncoder(registry)));
  return encoder;
}

/** Upstream's JSON text of a JSON-shaped object (typed by its apiVersion and kind when known). */
export function encodeOrderedJson(registry: SchemaRegistry, value: unknown, options: JsonOrderOptions = {}): string {
  return encoderFor(registry)(value, options.indent ?? '');
}

/** As encodeOrderedJson, for a value of a named type (e.g. a list item without kind). */
export function encodeOrderedJsonAs(registry: SchemaRegistry, value: unknown, typeName: string, options: JsonOrderOptions = {}): string {
  return encoderFor(registry)(value, options.indent ?? '', typeName);
}

const JSON_MEDIA_TYPE = 'application/json';

/**
 * An `application/json` codec whose output follows upstream's field order (one document per
 * line, as upstream's JSON serializer ends each with a newline; watch events likewise).
 */
export function createOrderedJsonCodec(naming: Naming): Codec {
  const encode = encoderFor(schemaRegistry(naming));
  return {
    mediaType: JSON_MEDIA_TYPE,
    encode: (value, options) => Buffer.from(`${encode(value, options?.pretty ? '  ' : '')}\n`, 'utf8'),
    decode(body) {
      try {
        return JSON.parse(Buffer.from(body).toString('utf8')) as unknown;
      } catch (err) {
        throw new CodecError(JSON_MEDIA_TYPE, (err as Error).message);
      }
    },
    stream: {
      mediaType: JSON_MEDIA_TYPE,
      encodeEvent: (event) => Buffer.from(`{"type":${goJsonString(event.type)},"object":${encode(event.object, '')}}\n`, 'utf8'),
    },
  };
}
