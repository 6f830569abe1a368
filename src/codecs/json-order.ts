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
 *
 * The compact text is written by code generated per schema type (one function per message type
 * that reads its properties in declaration order), without a reordered copy; indentation is
 * Go's json.Indent applied to that text.
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

/** An encoder of one value type to compact JSON text (before the HTML escape), or undefined to leave it out. */
type ValueEncoder = (value: unknown) => string | undefined;

/**
 * Compact JSON generated per schema type: one function per message type that reads the type's
 * properties in declaration order and writes their text, so no reordered copy is built and the
 * map keys JS would move first (`"10"`) need no fallback. Untyped values, scalars and the
 * special types go to `JSON.stringify` as they are.
 *
 * A message encoder counts the object's own keys against the known ones it found; only when they
 * differ does it walk the keys again to append the unknown ones in their own order.
 */
class CompiledEncoder {
  private readonly messages = new Map<string, (value: Record<string, unknown>) => string>();

  constructor(private readonly registry: SchemaRegistry) {}

  top(value: unknown): string | undefined {
    if (isPlainObject(value)) {
      const { apiVersion, kind } = value;
      const served = typeof apiVersion === 'string' && typeof kind === 'string' ? this.registry.kind(apiVersion, kind) : undefined;
      if (served) return this.message(served.type.name)(value);
    }
    return JSON.stringify(value);
  }

  named(value: unknown, typeName: string): string | undefined {
    return isPlainObject(value) ? this.message(typeName)(value) : JSON.stringify(value);
  }

  /** The encoder of a message type, compiled on first use (a nested type's on the first value of it). */
  message(typeName: string): (value: Record<string, unknown>) => string {
    let encode = this.messages.get(typeName);
    if (!encode) this.messages.set(typeName, (encode = this.compile(this.registry.type(typeName))));
    return encode;
  }

  private valueEncoder(type: ValueType): ValueEncoder {
    switch (type.kind) {
      case 'message': {
        const name = type.type;
        let encode: ((value: Record<string, unknown>) => string) | undefined;
        return (value) => {
          if (!isPlainObject(value)) return JSON.stringify(value);
          return (encode ??= this.message(name))(value);
        };
      }
      case 'list': {
        const item = this.valueEncoder(type.item);
        return (value) => {
          if (!Array.isArray(value)) return JSON.stringify(value);
          if (value.length === 0) return '[]';
          let text = '[';
          for (let i = 0; i < value.length; i++) {
            if (i > 0) text += ',';
            text += item(value[i]) ?? 'null';
          }
          return text + ']';
        };
      }
      case 'map': {
        const entry = this.valueEncoder(type.value);
        return (value) => {
          if (!isPlainObject(value)) return JSON.stringify(value);
          const keys = sortedKeys(value);
          let text = '{';
          let first = true;
          for (const key of keys) {
            const member = entry(value[key]);
            if (member === undefined) continue;
            text += first ? `${JSON.stringify(key)}:${member}` : `,${JSON.stringify(key)}:${member}`;
            first = false;
          }
          return text + '}';
        };
      }
      default:
        return JSON.stringify;
    }
  }

  private compile(type: SchemaType): (value: Record<string, unknown>) => string {
    const names: string[] = [];
    if (type.typeMeta) names.push('kind', 'apiVersion');
    const encoders: ValueEncoder[] = [];
    if (type.typeMeta) encoders.push(JSON.stringify, JSON.stringify);
    for (const property of type.properties) {
      if (names.includes(property.name)) continue;
      names.push(property.name);
      encoders.push(this.valueEncoder(property.field.type));
    }
    const known = new Set(names);
    const lines = ['let text = "{", x, t, found = 0, keys = 0;', 'for (const _ in v) keys++;'];
    names.forEach((name, i) => {
      const key = JSON.stringify(name);
      lines.push(
        `x = v[${key}];`,
        `if (x !== undefined) { found++; t = e[${i}](x); if (t !== undefined) text += text.length === 1 ? ${JSON.stringify(`${key}:`)} + t : ${JSON.stringify(`,${key}:`)} + t; }`,
        `else if (${key} in v) found++;`,
      );
    });
    lines.push('return found === keys ? text + "}" : unknown(v, text) + "}";');
    const unknown = (value: Record<string, unknown>, text: string): string => {
      for (const key in value) {
        if (known.has(key)) continue;
        const member = JSON.stringify(value[key]);
        if (member !== undefined) text += text.length === 1 ? `${JSON.stringify(key)}:${member}` : `,${JSON.stringify(key)}:${member}`;
      }
      return text;
    };
    return new Function('e', 'unknown', `return function (v) {\n${lines.join('\n')}\n};`)(encoders, unknown) as (value: Record<string, unknown>) => string;
  }
}

/**
 * A map's keys in Go's order (sort.Strings: bytewise over UTF-8). Maps are mostly small and
 * often written sorted already: checked first, then sorted in place by insertion, as
 * `Array#sort` copies into a work array on every call.
 */
function sortedKeys(map: Record<string, unknown>): string[] {
  const keys = Object.keys(map);
  const n = keys.length;
  let i = 1;
  while (i < n && compareGoStrings(keys[i - 1]!, keys[i]!) <= 0) i++;
  if (i === n) return keys;
  if (n > 32) return keys.sort(compareGoStrings);
  for (; i < n; i++) {
    const key = keys[i]!;
    let j = i;
    while (j > 0 && compareGoStrings(keys[j - 1]!, key) > 0) {
      keys[j] = keys[j - 1]!;
      j--;
    }
    keys[j] = key;
  }
  return keys;
}

/**
 * Go's json.Indent: a newline and indentation after `{`, `[` and `,`, `": "` after keys, and
 * empty `{}` / `[]` kept on one line. Strings are copied verbatim.
 */
export function indentJson(text: string, indent = '  '): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      if (text[i + 1] === close) {
        out += c + close;
        i++;
      } else {
        depth++;
        out += `${c}\n${indent.repeat(depth)}`;
      }
    } else if (c === '}' || c === ']') {
      depth--;
      out += `\n${indent.repeat(depth)}${c}`;
    } else if (c === ',') {
      out += `,\n${indent.repeat(depth)}`;
    } else if (c === ':') {
      out += ': ';
    } else {
      out += c;
    }
  }
  return out;
}

/** An encoder bound to one registry. */
function createEncoder(registry: SchemaRegistry): (value: unknown, indent: string, typeName?: string) => string {
  const compiled = new CompiledEncoder(registry);
  return (value, indent, typeName) => {
    // Inside JSON text these characters only occur in strings, so escaping the whole text is safe.
    const text = escapeGoHtml((typeName ? compiled.named(value, typeName) : compiled.top(value)) ?? 'null');
    return indent ? indentJson(text, indent) : text;
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

/**
 * Upstream's JSON of a served object written without its resourceVersion (a write's stored
 * bytes), and `at`, the offset where that member goes: right after the `"uid":"…"` member of
 * its metadata, as ObjectMeta declares resourceVersion right after uid. A create stores the text
 * and splices the version in once the store has given one (`withResourceVersion`) for its
 * answer (`WriteResult.json`), instead of encoding the object a second time.
 *
 * Undefined where that layout cannot be promised: an unserved kind (written in its own key
 * order), metadata that is not ObjectMeta, no uid, or a resourceVersion already set.
 */
export function orderedJsonBeforeVersion(registry: SchemaRegistry, value: unknown): { text: string; at: number } | undefined {
  if (!isPlainObject(value)) return undefined;
  const { apiVersion, kind, metadata } = value;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !isPlainObject(metadata)) return undefined;
  if (typeof metadata.uid !== 'string' || metadata.resourceVersion !== undefined) return undefined;
  const served = registry.kind(apiVersion, kind);
  if (!served || !versionFollowsUid(registry, served.type)) return undefined;
  const text = encodeOrderedJson(registry, value);
  // Before the uid only kind, apiVersion and metadata's string members come (checked on the
  // type), and a string cannot hold this unescaped: the first match is the uid member.
  const member = escapeGoHtml(`"uid":${JSON.stringify(metadata.uid)}`);
  const found = text.indexOf(member, text.indexOf('"metadata":{'));
  return found < 0 ? undefined : { text, at: found + member.length };
}

/** `text` (from orderedJsonBeforeVersion) with `"resourceVersion":"<version>"` at `at`. */
export function withResourceVersion(text: string, at: number, version: string): string {
  return `${text.slice(0, at)},"resourceVersion":${escapeGoHtml(JSON.stringify(version))}${text.slice(at)}`;
}

const layoutChecked = new WeakMap<SchemaType, boolean>();

/**
 * Whether a served type's JSON starts kind, apiVersion, metadata, and its metadata's members
 * before uid are all strings, with resourceVersion the member declared right after uid.
 */
function versionFollowsUid(registry: SchemaRegistry, type: SchemaType): boolean {
  let ok = layoutChecked.get(type);
  if (ok !== undefined) return ok;
  ok = false;
  const first = type.properties.find((p) => p.name !== 'kind' && p.name !== 'apiVersion');
  const metaType = first?.name === 'metadata' && first.field.type.kind === 'message' ? registry.type(first.field.type.type) : undefined;
  if (type.typeMeta && metaType) {
    const names = metaType.properties.map((p) => p.name);
    const uid = names.indexOf('uid');
    const before = metaType.properties.slice(0, Math.max(0, uid));
    ok = uid >= 0 && names[uid + 1] === 'resourceVersion' && before.every((p) => p.field.type.kind === 'scalar' && p.field.type.scalar === 'string');
  }
  layoutChecked.set(type, ok);
  return ok;
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
