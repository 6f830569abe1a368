/**
 * JSON in upstream's byte layout. Go's encoding/json writes struct fields in declaration order
 * (TypeMeta's `kind`, `apiVersion` first; inline structs expanded in place), map keys sorted,
 * and escapes `<`, `>`, `&`, U+2028 and U+2029 as `\u003c`-style sequences; json.Indent keeps
 * `{}` and `[]` on one line. This encoder takes the declaration order from the schema, so the
 * same JSON-shaped object comes out as the bytes upstream would write.
 *
 * It orders, it does not normalise: keys the schema does not know are written after the known
 * ones in their own order, values are written as they are. Raw JSON (RawExtension, FieldsV1,
 * apiextensions' JSON) keeps its own key order, as upstream copies raw bytes.
 *
 * The compact form is written as UTF-8 bytes by code generated per schema type (one function
 * per message type that reads its properties in declaration order), without a reordered copy
 * and without intermediate text; the text forms decode those bytes, and indentation is Go's
 * json.Indent applied to the text.
 */
import { CodecError, type Codec } from './codec';
import type { Naming } from '../naming';
import { type SchemaRegistry, type SchemaType, schemaRegistry, type ValueType } from '../schema';
import { compareGoStrings, escapeGoHtml, goJsonString } from './go-strings';
import { isObject, isPlainJson, isPlainObject } from '../util/json-values';
import { GrowableWriter } from './growable-buffer';
import { ownBytes } from './encode-once';
import { isFrozen } from '../util/frozen';

export interface JsonOrderOptions {
  /** Indentation per level (`'  '` as `json.Indent` in upstream's fixtures); empty: compact. */
  indent?: string;
}

const isRecord = isObject<Record<string, unknown>>;

/**
 * Where the compiled encoders write: one growable byte buffer per process, reused by every
 * encode (encoding is synchronous and never re-entered). Compact JSON goes straight to UTF-8
 * bytes: ASCII strings that need no escape (nearly all of an object's) are copied a char code at
 * a time, the rest go through `JSON.stringify` and Go's HTML escape; no intermediate text is
 * built, flattened or converted.
 */
class JsonSink extends GrowableWriter {
  constructor() {
    super(SINK_BYTES);
  }

  /**
   * Whether everything written so far came from values JSON.parse would give back for it
   * (isPlainJson, with frozen parts taken as plain): the encode's walk answers for the watch
   * cache, which may then adopt a write's object without walking it again (written-objects.ts).
   */
  plain = true;

  /** Back to `length` as it was (a member that turned out to write nothing). */
  rewind(at: number): void {
    this.pos = at;
  }

  byte(c: number): void {
    this.ensure(1);
    this.buf[this.pos++] = c;
  }

  /** Bytes from `from` on (a member's `,"name":`, from 1 for the first member; a memoised value). */
  raw(bytes: Uint8Array, from: number): void {
    const n = bytes.length;
    this.ensure(n);
    const buf = this.buf;
    if (n - from > 64) {
      buf.set(from === 0 ? bytes : bytes.subarray(from), this.pos);
      this.pos += n - from;
      return;
    }
    let p = this.pos;
    for (let i = from; i < n; i++) buf[p++] = bytes[i]!;
    this.pos = p;
  }

  /** Text known to be ASCII (numbers, literals). */
  ascii(text: string): void {
    this.ensure(text.length);
    this.pos += this.copyAscii(text, this.pos);
  }

  /** JSON text, already escaped as Go escapes it, as UTF-8. */
  text(text: string): void {
    this.ensure(text.length * 3);
    this.pos += this.buf.write(text, this.pos, 'utf8');
  }

  /** A string as Go's encoding/json writes it (JSON.stringify's escapes, plus Go's HTML ones). */
  string(value: string): void {
    const n = value.length;
    this.ensure(n + 2);
    const buf = this.buf;
    const start = this.pos;
    let p = start;
    buf[p++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = value.charCodeAt(i);
      // Control characters, non-ASCII, `"`, `\`, and Go's `<`, `>`, `&`: the general path.
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26) {
        this.pos = start;
        this.text(escapeGoHtml(JSON.stringify(value)));
        return;
      }
      buf[p++] = c;
    }
    buf[p++] = 0x22;
    this.pos = p;
  }

  /**
   * `"key":` and what `write` writes of `value`, after a comma unless it is the first member;
   * nothing at all when `write` writes nothing. Returns whether it wrote the member.
   */
  member(key: string, value: unknown, write: ValueEncoder, first: boolean): boolean {
    const at = this.pos;
    if (!first) this.byte(0x2c);
    this.string(key);
    this.byte(0x3a);
    if (write(value, this)) return true;
    this.pos = at;
    return false;
  }

  /**
   * What was written, copied out: into a buffer of its own when `own` (bytes to be memoised: a
   * small `Buffer.from` is a slice of a shared 8 KiB pool, which a memoised slice would keep
   * alive whole), else as `finish` copies it.
   */
  copy(own: boolean): Buffer {
    if (!own) return this.finish();
    const out = Buffer.allocUnsafeSlow(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }

  /** What was written, as text. */
  toText(): string {
    return this.buf.toString('utf8', 0, this.pos);
  }

  /** Done with what was written: a buffer grown for one huge value is not kept. */
  reset(): void {
    this.pos = 0;
    this.plain = true;
    if (this.buf.length > MAX_KEPT_SINK_BYTES) this.buf = Buffer.allocUnsafe(SINK_BYTES);
  }
}

const SINK_BYTES = 64 * 1024;
const MAX_KEPT_SINK_BYTES = 1024 * 1024;

/** Writes one value of a type; false when it writes nothing (as JSON.stringify gives undefined). */
type ValueEncoder = (value: unknown, sink: JsonSink) => boolean;

/**
 * Any value as `JSON.stringify` writes it, HTML-escaped as Go does: untyped values, scalars,
 * the special types (RawExtension, FieldsV1, IntOrString, ...) and values of the wrong shape.
 */
function writeAsIs(value: unknown, sink: JsonSink): boolean {
  switch (typeof value) {
    case 'string':
      sink.string(value);
      return true;
    case 'number':
      // -0 is written as 0, and JSON.parse gives 0 back.
      if (!Number.isFinite(value) || (value === 0 && 1 / value < 0)) sink.plain = false;
      sink.ascii(Number.isFinite(value) ? String(value) : 'null');
      return true;
    case 'boolean':
      sink.ascii(value ? 'true' : 'false');
      return true;
    default: {
      if (value === null) {
        sink.ascii('null');
        return true;
      }
      const text = JSON.stringify(value);
      if (text === undefined || !isPlainJson(value, true)) sink.plain = false;
      if (text === undefined) return false;
      sink.text(escapeGoHtml(text));
      return true;
    }
  }
}

/**
 * A managedFields field set (`fieldsV1`, raw JSON written as it is). A `Frozen` one (it cannot
 * change, so its bytes can be kept) is written from bytes made once per set: field sets are half
 * of a typical object's text, and one frozen set is shared by every object written the same way
 * (the created-objects memo in managed-fields.ts, the watch cache's table in cached-object.ts).
 */
function writeFieldSet(value: unknown, sink: JsonSink): boolean {
  if (value === null || typeof value !== 'object' || !isFrozen(value)) return writeAsIs(value, sink);
  let bytes = fieldSetBytes.get(value);
  // JSON.stringify of an object is never undefined.
  if (!bytes) fieldSetBytes.set(value, (bytes = ownBytes(escapeGoHtml(JSON.stringify(value)))));
  sink.raw(bytes, 0);
  return true;
}

/**
 * A value as Go's encoding/json writes a `map[string]interface{}`: every object's keys sorted,
 * which is how upstream writes custom resources (unstructured objects) at every level.
 */
function writeSorted(value: unknown, sink: JsonSink): boolean {
  if (Array.isArray(value)) {
    sink.byte(0x5b);
    for (let i = 0; i < value.length; i++) {
      if (i > 0) sink.byte(0x2c);
      if (!writeSorted(value[i], sink)) sink.ascii('null');
    }
    sink.byte(0x5d);
    return true;
  }
  if (!isRecord(value)) return writeAsIs(value, sink);
  if (!isPlainObject(value)) sink.plain = false;
  sink.byte(0x7b);
  let first = true;
  for (const key of sortedKeys(value)) if (sink.member(key, value[key], writeSorted, first)) first = false;
  sink.byte(0x7d);
  return true;
}

/** The API groups each profile's built-in kinds are served in. Shared by every server in the process: derived from the two constant profiles. */
const builtinGroups = new Map<string, ReadonlySet<string>>();

/**
 * Whether a kind is a custom resource's (or its list's): one the schema does not know, in a
 * group that is not one of the built-in ones. Upstream writes those as unstructured objects,
 * keys sorted at every level; an unknown kind of a built-in group (a Table) keeps its own order.
 */
export function isUnstructuredKind(registry: SchemaRegistry, apiVersion: string, kind: string): boolean {
  return !registry.kind(apiVersion, kind) && inCustomGroup(registry, apiVersion);
}

/** Whether an apiVersion names a group none of the profile's built-in kinds is served in (a custom resource's). */
function inCustomGroup(registry: SchemaRegistry, apiVersion: string): boolean {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return false;
  const naming = registry.naming;
  let groups = builtinGroups.get(naming.vendor);
  if (!groups) builtinGroups.set(naming.vendor, (groups = new Set([...Object.values(naming.apiGroups), ...Object.values(naming.groups)])));
  return !groups.has(apiVersion.slice(0, slash));
}

/** A frozen field set's bytes. Shared by every server in the process: a pure memo keyed by frozen sets. */
const fieldSetBytes = new WeakMap<object, Uint8Array>();

/** A member's `,"name":` as bytes (written from index 1 for an object's first member). */
function memberHead(name: string): Uint8Array {
  return Buffer.from(`,${escapeGoHtml(JSON.stringify(name))}:`, 'utf8');
}

/**
 * Compact JSON generated per schema type: one function per message type that reads the type's
 * properties in declaration order and writes their bytes, so no reordered copy is built and the
 * map keys JS would move first (`"10"`) need no fallback. Untyped values, scalars and the
 * special types are written as `JSON.stringify` writes them.
 *
 * A message encoder counts the object's own keys against the known ones it found; only when they
 * differ does it walk the keys again to append the unknown ones in their own order.
 */
class CompiledEncoder {
  private readonly messages = new Map<string, (value: Record<string, unknown>, sink: JsonSink) => void>();

  constructor(private readonly registry: SchemaRegistry) {}

  /** `value` (typed by its apiVersion and kind when served, else as it is, `null` for nothing). */
  top(value: unknown, sink: JsonSink): void {
    if (isRecord(value)) {
      const { apiVersion, kind } = value;
      const served = typeof apiVersion === 'string' && typeof kind === 'string' ? this.registry.kind(apiVersion, kind) : undefined;
      if (served) return this.message(served.type.name)(value, sink);
      if (typeof apiVersion === 'string' && typeof kind === 'string' && inCustomGroup(this.registry, apiVersion)) {
        writeSorted(value, sink);
        return;
      }
    }
    if (!writeAsIs(value, sink)) sink.ascii('null');
  }

  named(value: unknown, typeName: string, sink: JsonSink): void {
    if (isRecord(value)) this.message(typeName)(value, sink);
    else if (!writeAsIs(value, sink)) sink.ascii('null');
  }

  /** The encoder of a message type, compiled on first use (a nested type's on the first value of it). */
  message(typeName: string): (value: Record<string, unknown>, sink: JsonSink) => void {
    let encode = this.messages.get(typeName);
    if (!encode) this.messages.set(typeName, (encode = this.compile(this.registry.type(typeName))));
    return encode;
  }

  private valueEncoder(type: ValueType): ValueEncoder {
    switch (type.kind) {
      case 'message': {
        const name = type.type;
        const union = this.registry.type(name).union;
        if (union) {
          // Upstream's marshaller writes one of its fields' values (UnionDef): a JSON object is
          // the `object` field's message, anything else the `other` field's value.
          const property = this.registry.type(name).property;
          const object = this.valueEncoder(property.get(union.object)!.field.type);
          const other = this.valueEncoder(property.get(union.other)!.field.type);
          return (value, sink) => (isRecord(value) ? object(value, sink) : other(value, sink));
        }
        let encode: ((value: Record<string, unknown>, sink: JsonSink) => void) | undefined;
        return (value, sink) => {
          if (!isRecord(value)) return writeAsIs(value, sink);
          (encode ??= this.message(name))(value, sink);
          return true;
        };
      }
      case 'list': {
        const item = this.valueEncoder(type.item);
        return (value, sink) => {
          if (!Array.isArray(value)) return writeAsIs(value, sink);
          sink.byte(0x5b);
          for (let i = 0; i < value.length; i++) {
            if (i > 0) sink.byte(0x2c);
            if (!item(value[i], sink)) sink.ascii('null');
          }
          sink.byte(0x5d);
          return true;
        };
      }
      case 'map': {
        const entry = this.valueEncoder(type.value);
        return (value, sink) => {
          if (!isRecord(value)) return writeAsIs(value, sink);
          if (!isPlainObject(value)) sink.plain = false;
          sink.byte(0x7b);
          let first = true;
          for (const key of sortedKeys(value)) if (sink.member(key, value[key], entry, first)) first = false;
          sink.byte(0x7d);
          return true;
        };
      }
      case 'special':
        return type.special === 'FieldsV1' ? writeFieldSet : writeAsIs;
      default:
        return writeAsIs;
    }
  }

  private compile(type: SchemaType): (value: Record<string, unknown>, sink: JsonSink) => void {
    const names: string[] = [];
    if (type.typeMeta) names.push('kind', 'apiVersion');
    const encoders: ValueEncoder[] = [];
    if (type.typeMeta) encoders.push(writeAsIs, writeAsIs);
    for (const property of type.properties) {
      if (names.includes(property.name)) continue;
      names.push(property.name);
      encoders.push(this.valueEncoder(property.field.type));
    }
    const heads = names.map(memberHead);
    const known = new Set(names);
    const lines = ['let x, at, first = true, found = 0, keys = 0;', 'if (!plainObject(v)) s.plain = false;', 'for (const _ in v) keys++;', 's.byte(123);'];
    names.forEach((name, i) => {
      const key = JSON.stringify(name);
      lines.push(
        `x = v[${key}];`,
        `if (x !== undefined) { found++; at = s.length; s.raw(h[${i}], first ? 1 : 0); if (e[${i}](x, s)) first = false; else s.rewind(at); }`,
        `else if (${key} in v) { found++; s.plain = false; }`,
      );
    });
    lines.push('if (found !== keys) unknown(v, s, first);', 's.byte(125);');
    const unknown = (value: Record<string, unknown>, sink: JsonSink, first: boolean): void => {
      for (const key in value) if (!known.has(key) && sink.member(key, value[key], writeAsIs, first)) first = false;
    };
    // Named in stack traces and CPU profiles after the type it encodes (an anonymous script otherwise).
    const source = `return function (v, s) {\n${lines.join('\n')}\n};\n//# sourceURL=keelson-json-order/${type.name.replace(/[^\w.]/g, '_')}.js`;
    return new Function('e', 'h', 'unknown', 'plainObject', source)(encoders, heads, unknown, isPlainObject) as (
      value: Record<string, unknown>,
      sink: JsonSink,
    ) => void;
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
  return indentJsonBytes(Buffer.from(text, 'utf8'), indent).toString('utf8');
}

/** `indentJson` from UTF-8 to UTF-8, without a text in between. */
export function indentJsonBytes(json: Uint8Array, indent = '  '): Buffer {
  return Buffer.concat([...indentJsonPieces([json], indent)]);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA_BYTE = 0x2c;
const COLON = 0x3a;
const SPACE = 0x20;

/** The size of the buffers `indentJsonPieces` fills: a streamed response writes each as it is. */
const INDENTED_PIECE_BYTES = 64 * 1024;

/**
 * `indentJson` over compact JSON given in pieces (a streamed list's, `Codec.encodeChunks`), as
 * pieces of about INDENTED_PIECE_BYTES: a pretty list (`?pretty=true`, or curl's and wget's user
 * agents, as upstream) streams in write turns like a compact one, instead of being made whole,
 * as text, in one turn of the event loop. A piece may end anywhere, even inside a string or
 * between a `{` and its `}`; the state carries over.
 */
export function* indentJsonPieces(pieces: Iterable<Uint8Array>, indent = '  '): Generator<Uint8Array> {
  const lines: Buffer[] = [];
  /** A newline and the indentation of `depth`. */
  const line = (depth: number): Buffer => (lines[depth] ??= Buffer.from(`\n${indent.repeat(depth)}`, 'utf8'));
  const indentBytes = Buffer.byteLength(indent, 'utf8');
  let out = Buffer.allocUnsafeSlow(INDENTED_PIECE_BYTES);
  let at = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  /** A `{` or `[` just read (0: none): the next byte says whether it is empty (`{}`) or opens a line. */
  let opened = 0;
  for (const piece of pieces) {
    let i = 0;
    while (i < piece.length) {
      if (inString) {
        // A string's bytes are copied as they are, up to its closing quote (or the piece's end).
        for (; i < piece.length; i++) {
          if (at === out.length) {
            yield out;
            out = Buffer.allocUnsafeSlow(INDENTED_PIECE_BYTES);
            at = 0;
          }
          const c = piece[i]!;
          out[at++] = c;
          if (escaped) escaped = false;
          else if (c === BACKSLASH) escaped = true;
          else if (c === QUOTE) {
            inString = false;
            i++;
            break;
          }
        }
        continue;
      }
      const c = piece[i++]!;
      // The most one byte can write: a held opener, its new line, a closer's line, the closer.
      const most = 2 * (1 + indentBytes * (depth + 1)) + 2;
      if (at + most > out.length) {
        yield out.subarray(0, at);
        out = Buffer.allocUnsafeSlow(Math.max(INDENTED_PIECE_BYTES, most));
        at = 0;
      }
      if (opened !== 0) {
        out[at++] = opened;
        const empty = c === (opened === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET);
        opened = 0;
        if (empty) {
          out[at++] = c;
          continue;
        }
        at += line(++depth).copy(out, at);
      }
      switch (c) {
        case QUOTE:
          out[at++] = c;
          inString = true;
          break;
        case OPEN_BRACE:
        case OPEN_BRACKET:
          opened = c;
          break;
        case CLOSE_BRACE:
        case CLOSE_BRACKET:
          at += line(--depth).copy(out, at);
          out[at++] = c;
          break;
        case COMMA_BYTE:
          out[at++] = c;
          at += line(depth).copy(out, at);
          break;
        case COLON:
          out[at++] = c;
          out[at++] = SPACE;
          break;
        default:
          out[at++] = c;
      }
    }
  }
  if (at > 0) yield out.subarray(0, at);
  // Only in malformed input: the opener was the last byte.
  if (opened !== 0) yield Buffer.concat([Buffer.of(opened), line(depth + 1)]);
}

/**
 * The encoder bound to one registry, and the process' sink. Shared by every server in the
 * process: registries never change, and the sink holds nothing from one encode to the next.
 */
const encoders = new WeakMap<SchemaRegistry, CompiledEncoder>();
const sink = new JsonSink();

function encoderFor(registry: SchemaRegistry): CompiledEncoder {
  let encoder = encoders.get(registry);
  if (!encoder) encoders.set(registry, (encoder = new CompiledEncoder(registry)));
  return encoder;
}

/** Runs one encode into the sink; `take` reads the bytes before the sink is reused. */
function encodeWith<T>(registry: SchemaRegistry, value: unknown, typeName: string | undefined, take: (sink: JsonSink) => T): T {
  const encoder = encoderFor(registry);
  sink.reset();
  if (typeName) encoder.named(value, typeName, sink);
  else encoder.top(value, sink);
  return take(sink);
}

/** A value's compact JSON with every object's keys sorted (a member of an unstructured object). */
export function encodeSortedJson(value: unknown): string {
  sink.reset();
  if (!writeSorted(value, sink)) sink.ascii('null');
  return sink.toText();
}

function orderedText(registry: SchemaRegistry, value: unknown, typeName: string | undefined, options: JsonOrderOptions): string {
  const text = encodeWith(registry, value, typeName, (s) => s.toText());
  return options.indent ? indentJson(text, options.indent) : text;
}

/** Upstream's JSON text of a JSON-shaped object (typed by its apiVersion and kind when known). */
export function encodeOrderedJson(registry: SchemaRegistry, value: unknown, options: JsonOrderOptions = {}): string {
  return orderedText(registry, value, undefined, options);
}

/** As encodeOrderedJson, for a value of a named type (e.g. a list item without kind). */
export function encodeOrderedJsonAs(registry: SchemaRegistry, value: unknown, typeName: string, options: JsonOrderOptions = {}): string {
  return orderedText(registry, value, typeName, options);
}

export interface JsonBytesOptions {
  /** The value's type, when it has no kind and apiVersion of its own (a list item). */
  typeName?: string;
  /** A byte written after the JSON (a newline). */
  suffix?: number;
  /** Bytes to be kept (memoised): in a buffer of their own rather than a slice of a shared pool. Default true. */
  own?: boolean;
}

/** encodeOrderedJson's compact bytes. */
export function encodeOrderedJsonBytes(registry: SchemaRegistry, value: unknown, options: JsonBytesOptions = {}): Buffer {
  return encodeWith(registry, value, options.typeName, (s) => {
    if (options.suffix !== undefined) s.byte(options.suffix);
    return s.copy(options.own ?? true);
  });
}

/**
 * Upstream's JSON of a served object written without its resourceVersion (a write's stored
 * bytes), and `at`, the byte offset where that member goes: right after the `"uid":"…"` member
 * of its metadata, as ObjectMeta declares resourceVersion right after uid. A create stores the
 * bytes and splices the version in once the store has given one (`withResourceVersion`) for its
 * answer (`WriteResult.json`), instead of encoding the object a second time. `plain` says whether
 * the value was all JSON.parse could give back for the bytes (the sink's `plain`).
 *
 * Undefined where that layout cannot be promised: an unserved kind (written in its own key
 * order), metadata that is not ObjectMeta, no uid, or a resourceVersion already set.
 */
export function orderedJsonBeforeVersion(registry: SchemaRegistry, value: unknown): { bytes: Buffer; at: number; plain: boolean } | undefined {
  if (!isRecord(value)) return undefined;
  const { apiVersion, kind, metadata } = value;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !isRecord(metadata)) return undefined;
  if (typeof metadata.uid !== 'string' || metadata.resourceVersion !== undefined) return undefined;
  const served = registry.kind(apiVersion, kind);
  if (!served) return inCustomGroup(registry, apiVersion) ? unstructuredBeforeVersion(registry, value, metadata.uid) : undefined;
  if (!versionFollowsUid(registry, served.type)) return undefined;
  // Pooled, not a buffer of its own: the stored bytes live as long as the write (memoised bytes
  // are what `own` is for).
  const { bytes, plain } = encodeWith(registry, value, undefined, (s) => ({ bytes: s.copy(false), plain: s.plain }));
  // Before the uid only kind, apiVersion and metadata's string members come (checked on the
  // type), and a string cannot hold this unescaped: the first match is the uid member.
  const member = escapeGoHtml(`"uid":${JSON.stringify(metadata.uid)}`);
  const found = bytes.indexOf(member, bytes.indexOf('"metadata":{'), 'utf8');
  return found < 0 ? undefined : { bytes, at: found + Buffer.byteLength(member, 'utf8'), plain };
}

/**
 * A custom resource's stored bytes (keys sorted at every level) and where its resourceVersion
 * goes: right before the `,"uid":…` member of its metadata, the member that sorts after it
 * (`creationTimestamp` and `name` always come before, so the comma is there).
 */
function unstructuredBeforeVersion(
  registry: SchemaRegistry,
  value: Record<string, unknown>,
  uid: string,
): { bytes: Buffer; at: number; plain: boolean } | undefined {
  const { bytes, plain } = encodeWith(registry, value, undefined, (s) => ({ bytes: s.copy(false), plain: s.plain }));
  const member = escapeGoHtml(`,"uid":${JSON.stringify(uid)}`);
  const found = bytes.indexOf(member, bytes.indexOf('"metadata":{'), 'utf8');
  return found < 0 ? undefined : { bytes, at: found, plain };
}

/**
 * `bytes` (from orderedJsonBeforeVersion) with `"resourceVersion":"<version>"` at `at` and a
 * newline after (an answer, written once: a pooled buffer for small ones).
 */
export function withResourceVersion(bytes: Uint8Array, at: number, version: string): Buffer {
  const member = Buffer.from(`,"resourceVersion":${escapeGoHtml(JSON.stringify(version))}`, 'utf8');
  const out = Buffer.allocUnsafe(bytes.length + member.length + 1);
  out.set(bytes.subarray(0, at), 0);
  out.set(member, at);
  out.set(bytes.subarray(at), at + member.length);
  out[out.length - 1] = 0x0a;
  return out;
}

/** versionFollowsUid's answers. Shared by every server in the process: a pure memo keyed by schema types. */
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
  const registry = schemaRegistry(naming);
  const encode = (value: unknown, indent: string): string => encodeOrderedJson(registry, value, { indent });
  return {
    mediaType: JSON_MEDIA_TYPE,
    encode: (value, options) =>
      options?.pretty ? Buffer.from(`${encode(value, '  ')}\n`, 'utf8') : encodeOrderedJsonBytes(registry, value, { suffix: 0x0a, own: false }),
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
