/**
 * `application/json`: the default format of every endpoint; watch streams are newline-separated
 * documents.
 *
 * `jsonCodec` writes values in the key order they hold. `createJsonCodec(naming)` writes
 * upstream's bytes: Go's struct declaration order from the schema (kind and apiVersion first),
 * sorted map keys, HTML-safe escapes (src/codecs/json-order.ts). Ordering costs several times a
 * plain JSON.stringify, so it is paid once per object version: objects from the watch cache are
 * frozen and shared, and their body (compact bytes) is memoised on them (codecs/encode-once.ts).
 * A get writes the body as it is, a watch event is the body inside the event's frame, and a list
 * item (the object without kind and apiVersion) is a view of the body after them, so a list is
 * its items' bytes copied. A Table's rows embed their objects' text, read from the same body.
 * Pretty output re-indents the compact text as
 * Go's json.Indent does, so both share one ordering; like upstream's MarshalIndent it has no
 * trailing newline, where compact output ends with json.Encoder's.
 */
import { encodeOnce, isShared, ownBytes, typeMetaSource } from '../../codecs/encode-once';
import { type SchemaRegistry, schemaRegistry } from '../../schema';
import {
  encodeOrderedJson,
  encodeOrderedJsonAs,
  encodeOrderedJsonBytes,
  indentJsonBytes,
  indentJsonPieces,
  isUnstructuredKind,
  encodeSortedJson,
} from '../../codecs/json-order';
import { escapeGoHtml, goJsonString } from '../../codecs/go-strings';
import type { Naming } from '../../naming';
import { type Codec, CodecError } from './codec';
import { isObject } from '../../util/json-values';

export const JSON_MEDIA_TYPE = 'application/json';

/** The item type `listItemType` gives a list of custom resources (unstructured objects, written whole). */
const UNSTRUCTURED = '*unstructured';

/** Upstream's JSON serializer: compact with json.Encoder's newline, or json.MarshalIndent's text without one. */
function encode(value: unknown, pretty = false): Buffer {
  return Buffer.from(pretty ? JSON.stringify(value, null, 2) : `${JSON.stringify(value)}\n`, 'utf8');
}

function decode(body: Uint8Array): unknown {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CodecError(JSON_MEDIA_TYPE, (err as Error).message);
  }
}

/** JSON in the order values hold their keys (tests, and values without a schema). */
export const jsonCodec: Codec = {
  mediaType: JSON_MEDIA_TYPE,
  encode: (value, options) => encode(value, options?.pretty),
  decode,
  stream: {
    mediaType: JSON_MEDIA_TYPE,
    encodeEvent: (event) => encode(event),
  },
};

/** JSON.stringify with Go's HTML-safe escapes, for values whose key order is already upstream's. */
function plain(value: unknown): string {
  return escapeGoHtml(JSON.stringify(value) ?? 'null');
}

/** The ordered compact JSON text of values, memoised on frozen (shared, immutable) objects. */
class OrderedJson {
  private readonly itemEncoders = new Map<string, { format: string; encode: (v: Record<string, unknown>) => Uint8Array }>();

  constructor(private readonly registry: SchemaRegistry) {}

  text(value: unknown): string {
    if (!isObject(value)) return plain(value);
    // A cached object's text is its body's (made once, kept as bytes only).
    if (isShared(value)) {
      const body = this.body(value);
      return body.toString('utf8', 0, body.length - 1);
    }
    return this.encodeText(value);
  }

  private encodeText(value: Record<string, unknown>): string {
    return this.formText(value) ?? encodeOrderedJson(this.registry, value);
  }

  /** The text of a Table, a metadata form or a typed list; undefined for any other object. */
  private formText(value: Record<string, unknown>): string | undefined {
    if (value.kind === 'Table' && 'columnDefinitions' in value) return this.table(value);
    const meta = this.metaType(value);
    if (meta) return encodeOrderedJsonAs(this.registry, value, meta);
    const list = this.listItemType(value);
    if (list) return this.list(value, list);
    return undefined;
  }

  /**
   * `value`'s compact JSON with json.Encoder's newline. For a cached (shared) object this is its
   * one JSON encoding per object version, kept as bytes: a get writes it as it is, and its watch
   * events and list items are cut from it.
   */
  body(value: Record<string, unknown>): Buffer {
    if (!isShared(value)) return this.encodeBody(value, false);
    return encodeOnce(value, 'application/json#body', (v) => this.encodeBody(v, true));
  }

  /** An object's compact JSON and newline (written as bytes where it can be); `own` when it is kept. */
  private encodeBody(value: Record<string, unknown>, own: boolean): Buffer {
    const text = this.formText(value);
    if (text === undefined) return encodeOrderedJsonBytes(this.registry, value, { suffix: NEWLINE_BYTE, own });
    return (own ? ownBytes : utf8)(`${text}\n`);
  }

  /** meta v1beta1's PartialObjectMetadata(List) share v1's fields (the schema holds v1 only). */
  private metaType(value: Record<string, unknown>): string | undefined {
    if (value.kind !== 'PartialObjectMetadata' && value.kind !== 'PartialObjectMetadataList') return undefined;
    if (typeof value.apiVersion !== 'string' || !value.apiVersion.endsWith('/v1beta1')) return undefined;
    return `meta.v1.${value.kind}`;
  }

  /**
   * The item type of a typed list (`apps.v1.ReplicaSet` for a ReplicaSetList), if `value` is
   * one; UNSTRUCTURED for a list of custom resources.
   */
  private listItemType(value: Record<string, unknown>): string | undefined {
    if (!Array.isArray(value.items) || typeof value.apiVersion !== 'string' || typeof value.kind !== 'string') return undefined;
    if (isUnstructuredKind(this.registry, value.apiVersion, value.kind)) return UNSTRUCTURED;
    const items = this.registry.kind(value.apiVersion, value.kind)?.type.property.get('items')?.field.type;
    return items?.kind === 'list' && items.item.kind === 'message' ? items.item.type : undefined;
  }

  private list(value: Record<string, unknown>, itemType: string): string {
    return Buffer.concat([...this.listPieces(value, itemType)]).toString('utf8');
  }

  /** A typed list's compact JSON with json.Encoder's newline, its items' memoised bytes copied once; undefined for anything else. */
  listBytes(value: unknown): Buffer | undefined {
    const itemType = isObject(value) ? this.listItemType(value) : undefined;
    if (!itemType) return undefined;
    return Buffer.concat([...this.listPieces(value as Record<string, unknown>, itemType, NEWLINE)]);
  }

  /**
   * A typed list's bytes in pieces: the head up to `"items":[`, each item (memoised per object
   * version), the tail, then `after` if given. Bytes rather than text: a response copies them
   * into its writes, where text would be joined, flattened and encoded to UTF-8 again on every
   * list.
   */
  listPieces(value: Record<string, unknown>, itemType: string, after?: Uint8Array): Iterable<Uint8Array> {
    if (itemType === UNSTRUCTURED) return after ? followedBy(this.unstructuredListPieces(value), after) : this.unstructuredListPieces(value);
    const parts: string[] = [];
    for (const key of ['kind', 'apiVersion']) if (value[key] !== undefined) parts.push(`"${key}":${plain(value[key])}`);
    if (value.metadata !== undefined) parts.push(`"metadata":${encodeOrderedJsonAs(this.registry, value.metadata, 'meta.v1.ListMeta')}`);
    parts.push('"items":[');
    const encoder = this.itemEncoder(itemType);
    return new TypedListPieces(
      Buffer.from(`{${parts.join(',')}`, 'utf8'),
      value.items as unknown[],
      (item) => encodeOnce(item, encoder.format, encoder.encode),
      after,
    );
  }

  /**
   * A list of custom resources as upstream writes an unstructured list: keys sorted
   * (`apiVersion`, `items`, `kind`, `metadata`), each item whole, with its own apiVersion and
   * kind, its bytes its body's (memoised per object version).
   */
  private *unstructuredListPieces(value: Record<string, unknown>): Generator<Uint8Array> {
    const head = Object.keys(value)
      .filter((k) => k < 'items' && value[k] !== undefined)
      .sort();
    const tail = Object.keys(value)
      .filter((k) => k > 'items' && value[k] !== undefined)
      .sort();
    const member = (k: string) => `${goJsonString(k)}:${encodeSortedJson(value[k])}`;
    yield utf8(`{${[...head.map(member), '"items":['].join(',')}`);
    let first = true;
    for (const item of value.items as unknown[]) {
      if (!first) yield COMMA;
      first = false;
      if (isObject(item)) {
        const body = this.body(item);
        yield body.subarray(0, body.length - 1);
      } else yield utf8(plain(item));
    }
    yield utf8(`]${tail.map((k) => `,${member(k)}`).join('')}}`);
  }

  /**
   * The pieces of a large typed list (streamed responses), or undefined: from STREAMED_LIST_ITEMS
   * items, or from STREAMED_LIST_BYTES of item bytes (memoised on the items, so measuring them
   * first costs no second encode).
   */
  chunks(value: unknown, after?: Uint8Array): Iterable<Uint8Array> | undefined {
    if (!isObject(value) || !Array.isArray(value.items)) return undefined;
    const itemType = this.listItemType(value);
    if (!itemType) return undefined;
    const items = value.items as unknown[];
    if (items.length < STREAMED_LIST_ITEMS) {
      let size = 0;
      for (const item of items) {
        size += isObject(item) ? (itemType === UNSTRUCTURED ? this.body(item).length : this.itemRest(item, itemType).length + 2) : plain(item).length;
        if (size >= STREAMED_LIST_BYTES) break;
      }
      if (size < STREAMED_LIST_BYTES) return undefined;
    }
    return this.listPieces(value, itemType, after);
  }

  /**
   * A list item's compact JSON after its opening brace, memoised per object version. An item that
   * is a cached object without its kind and apiVersion (`viewWithoutTypeMeta`) is the same text
   * as that object's body after `{"kind":…,"apiVersion":…,`, so it is cut from the body (a view of
   * the same bytes) rather than encoded and kept again; anything else is encoded.
   */
  private itemRest(item: Record<string, unknown>, itemType: string): Uint8Array {
    const encoder = this.itemEncoder(itemType);
    return encodeOnce(item, encoder.format, encoder.encode);
  }

  /**
   * The memo key and encoder of one item type, made once: a list calls `itemRest` per item, and
   * a key built and a closure made per call were garbage at every item of every list.
   */
  private itemEncoder(itemType: string): { format: string; encode: (v: Record<string, unknown>) => Uint8Array } {
    let encoder = this.itemEncoders.get(itemType);
    if (!encoder) {
      encoder = {
        format: `application/json#item:${itemType}`,
        encode: (v) => this.cutFromSource(v, itemType) ?? encodeOrderedJsonBytes(this.registry, v, { typeName: itemType, own: isShared(v) }).subarray(1),
      };
      this.itemEncoders.set(itemType, encoder);
    }
    return encoder;
  }

  /** The item's bytes after its `{`, as a view of its source object's body, when the layout allows. */
  private cutFromSource(item: Record<string, unknown>, itemType: string): Uint8Array | undefined {
    const source = typeMetaSource(item, this.registry, itemType);
    if (!source) return undefined;
    const head = Buffer.from(`{"kind":${plain(source.kind)},"apiVersion":${plain(source.apiVersion)},`, 'utf8');
    const body = this.body(source);
    // The body is `head` + the item's text after its `{` + newline; anything else is encoded instead.
    if (body.length <= head.length + 1 || !body.subarray(0, head.length).equals(head)) return undefined;
    return body.subarray(head.length, body.length - 1);
  }

  /** metav1.Table: its fields in Go order, each row's object in its own upstream order. */
  private table(value: Record<string, unknown>): string {
    const parts = [`"kind":${plain(value.kind)}`, `"apiVersion":${plain(value.apiVersion)}`];
    parts.push(`"metadata":${encodeOrderedJsonAs(this.registry, value.metadata ?? {}, 'meta.v1.ListMeta')}`);
    parts.push(`"columnDefinitions":${plain(value.columnDefinitions ?? null)}`);
    const rows = (Array.isArray(value.rows) ? (value.rows as Record<string, unknown>[]) : []).map((row) => {
      const fields = [`"cells":${plain(row.cells ?? null)}`];
      if (row.conditions !== undefined) fields.push(`"conditions":${plain(row.conditions)}`);
      fields.push(`"object":${row.object === undefined || row.object === null ? 'null' : this.text(row.object)}`);
      return `{${fields.join(',')}}`;
    });
    parts.push(`"rows":${Array.isArray(value.rows) ? `[${rows.join(',')}]` : 'null'}`);
    return `{${parts.join(',')}}`;
  }
}

const OPEN = Buffer.from('{');
const COMMA_OPEN = Buffer.from(',{');
const COMMA = Buffer.from(',');
const LIST_END = Buffer.from(']}');
const EVENT_TAIL = Buffer.from('}\n');
const NEWLINE = Buffer.from('\n');
const NEWLINE_BYTE = 0x0a;
const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

/** Lists from this many items on are written as they are encoded (respond.ts). */
export const STREAMED_LIST_ITEMS = 500;
/**
 * ...and so are lists of fewer, larger items from this much text on: a whole response made at
 * once is garbage of its size (joined text, then bytes) for each request that asks.
 */
export const STREAMED_LIST_BYTES = 512 * 1024;

function* followedBy(pieces: Iterable<Uint8Array>, last: Uint8Array): Generator<Uint8Array> {
  yield* pieces;
  yield last;
}

/**
 * A typed list's pieces (`OrderedJson.listPieces`): the head, each item's opening and memoised
 * rest, `]}`, then `after`. An iterator that hands out one result object again and again (its
 * readers, a loop or a spread, take each value before asking for the next): as generators, two
 * results per item through two of them were most of a 10,000-item list's garbage, collected
 * while other requests waited.
 */
class TypedListPieces implements IterableIterator<Uint8Array> {
  private readonly result: { done: boolean; value: Uint8Array } = { done: false, value: OPEN };
  /** 0 the head; 1 an item's opening; 2 its rest; 3 the list's end; 4 `after`; 5 done. */
  private stage = 0;
  private index = 0;

  constructor(
    private readonly head: Uint8Array,
    private readonly items: readonly unknown[],
    private readonly rest: (item: Record<string, unknown>) => Uint8Array,
    private readonly after: Uint8Array | undefined,
  ) {}

  [Symbol.iterator](): IterableIterator<Uint8Array> {
    return this;
  }

  next(): IteratorResult<Uint8Array> {
    const result = this.result;
    switch (this.stage) {
      case 0:
        this.stage = this.items.length > 0 ? 1 : 3;
        result.value = this.head;
        return result;
      case 1: {
        const item = this.items[this.index];
        if (isObject(item)) {
          this.stage = 2;
          result.value = this.index === 0 ? OPEN : COMMA_OPEN;
        } else {
          result.value = utf8(this.index === 0 ? plain(item) : `,${plain(item)}`);
          this.advance();
        }
        return result;
      }
      case 2:
        result.value = this.rest(this.items[this.index] as Record<string, unknown>);
        this.advance();
        return result;
      case 3:
        this.stage = this.after ? 4 : 5;
        result.value = LIST_END;
        return result;
      case 4:
        this.stage = 5;
        result.value = this.after!;
        return result;
      default:
        return { done: true, value: undefined };
    }
  }

  private advance(): void {
    this.index++;
    this.stage = this.index < this.items.length ? 1 : 3;
  }
}

/** `application/json` with upstream's key order and bytes (see the file comment). */
export function createJsonCodec(naming: Naming): Codec {
  const ordered = new OrderedJson(schemaRegistry(naming));
  const text = (value: unknown, pretty?: boolean) => {
    if (pretty) return indentJsonBytes(Buffer.from(ordered.text(value), 'utf8'));
    // A cached object's body is made once (a get by name writes it as it is); an unshared typed
    // list is its items' bytes copied.
    if (isObject(value)) return (!isShared(value) && ordered.listBytes(value)) || ordered.body(value);
    return Buffer.from(`${ordered.text(value)}\n`, 'utf8');
  };
  const eventHeads = new Map<string, Buffer>();
  /** A watch event: a cached object's body between the event's head and its closing brace, no text in between. */
  const encodeEvent = (event: { type: string; object: unknown }): Buffer => {
    const { object } = event;
    if (!isObject(object) || !isShared(object)) return Buffer.from(`{"type":${plain(event.type)},"object":${ordered.text(object)}}\n`, 'utf8');
    let head = eventHeads.get(event.type);
    if (!head) eventHeads.set(event.type, (head = Buffer.from(`{"type":${plain(event.type)},"object":`, 'utf8')));
    const body = ordered.body(object);
    return Buffer.concat([head, body.subarray(0, body.length - 1), EVENT_TAIL]);
  };
  return {
    mediaType: JSON_MEDIA_TYPE,
    encode: (value, options) => text(value, options?.pretty),
    encodeChunks: (value, options) => {
      if (!options?.pretty) return ordered.chunks(value, NEWLINE);
      const compact = ordered.chunks(value);
      return compact && indentJsonPieces(compact);
    },
    decode,
    stream: {
      mediaType: JSON_MEDIA_TYPE,
      encodeEvent,
    },
  };
}
