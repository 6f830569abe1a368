/**
 * A typed list in the protobuf envelope, written from its items' memoised bytes.
 *
 * A list message is its `metadata` (field 1) followed by one length-delimited `items` field per
 * item, and an item's message bytes do not carry kind or apiVersion (TypeMeta lives in the
 * envelope, not in the message). So a cached object's list item, the object without kind and
 * apiVersion, is the very message inside that object's own envelope (its get and watch body):
 * the item's bytes are a view of it, and a list costs a copy of its items, not an encoding of
 * each. Items that are not cached objects are encoded, and memoised when shared.
 *
 * The pieces concatenate to exactly what encoding the whole list gives; the list's size is known
 * before its first byte, so a large list streams (`encodeChunks`).
 */
import { encodeOnce, typeMetaSource } from '../../codecs/encode-once';
import { decodeEnvelope, encodeEnvelope, encodeMessage, type JsonObject, type ProtobufCodec } from '../../codecs/protobuf';
import { ProtoWriter } from '../../codecs/protobuf/writer';
import { isObject } from '../../util/json-values';
import type { SchemaType } from '../../schema';

/** contentEncoding (3) and contentType (4), both empty, as upstream always writes them. */
const ENVELOPE_TAIL = Uint8Array.of(0x1a, 0x00, 0x22, 0x00);
const LENGTH_DELIMITED = 2;

interface ListShape {
  listType: SchemaType;
  itemType: SchemaType;
  itemsNumber: number;
  /** The list's envelope up to its raw field: the prefix and TypeMeta. */
  envelopeStart: Buffer;
}

export interface ProtobufLists {
  /** The list's pieces, or undefined when `value` is not a typed list whose items this can write. */
  pieces(value: unknown): { size: number; pieces: Iterable<Uint8Array> } | undefined;
}

/**
 * `encodeObject` is the codec's (memoised) encoding of a whole object in its envelope: an item
 * that is a cached object's view is cut from it, so gets, watch events and lists share one
 * protobuf encoding per object version.
 */
export function protobufLists(codec: ProtobufCodec, encodeObject: (value: object) => Buffer): ProtobufLists {
  const { registry } = codec;
  const types = registry.type;
  const shapes = new Map<string, ListShape | null>();

  const shapeOf = (value: Record<string, unknown>): ListShape | undefined => {
    const { apiVersion, kind } = value;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !Array.isArray(value.items)) return undefined;
    const key = `${apiVersion}\u0000${kind}`;
    let shape = shapes.get(key);
    if (shape === undefined) {
      shape = null;
      const served = registry.kind(apiVersion, kind);
      const fields = served?.type.protoFields ?? [];
      const items = fields.find((f) => f.name === 'items');
      // Items last, a plain repeated message: the list is its other fields, then the items.
      if (served && items && items === fields[fields.length - 1] && items.type.kind === 'list' && !items.type.wrapped && items.type.item.kind === 'message') {
        // The same envelope around no raw bytes, less its last six: raw's tag and zero length, then the tail.
        const empty = encodeEnvelope({ apiVersion: served.apiVersion, kind: served.kind, raw: new Uint8Array(0), contentEncoding: '', contentType: '' });
        const envelopeStart = empty.subarray(0, empty.length - 2 - ENVELOPE_TAIL.length);
        shape = { listType: served.type, itemType: types(items.type.item.type), itemsNumber: items.number, envelopeStart };
      }
      shapes.set(key, shape);
    }
    return shape ?? undefined;
  };

  /** An item's message bytes: a view of its source object's envelope when it is a cached object's view, else encoded. */
  const itemBytes = (item: JsonObject, shape: ListShape): Uint8Array =>
    encodeOnce(item, `${codec.mediaType}#item:${shape.itemType.name}`, (v) => {
      const source = typeMetaSource(v, registry, shape.itemType.name);
      const raw = source && decodeEnvelope(encodeObject(source)).raw;
      return raw ?? encodeMessage(v, shape.itemType, types);
    });

  return {
    pieces(value) {
      if (!isObject(value)) return undefined;
      const shape = shapeOf(value);
      if (!shape) return undefined;
      const items = value.items as unknown[];
      if (!items.every(isObject)) return undefined;
      const bodies = items.map((item) => itemBytes(item as JsonObject, shape));
      const rest = encodeMessage({ ...value, items: [] }, shape.listType, types);
      // Every item's field header (tag and length) in one buffer of this list's.
      const tag = (shape.itemsNumber << 3) | LENGTH_DELIMITED;
      const headerWriter = new ProtoWriter(bodies.length * 6);
      const headerEnds: number[] = [];
      let bodiesLength = 0;
      for (const body of bodies) {
        headerWriter.uint32(tag).uint32(body.length);
        headerEnds.push(headerWriter.length);
        bodiesLength += body.length;
      }
      const headers = headerWriter.finish();
      const rawLength = rest.length + headers.length + bodiesLength;
      const head = Buffer.concat([
        shape.envelopeStart,
        new ProtoWriter(8)
          .uint32((2 << 3) | LENGTH_DELIMITED)
          .uint32(rawLength)
          .finish(),
      ]);
      const size = head.length + rawLength + ENVELOPE_TAIL.length;
      function* pieces(): Generator<Uint8Array> {
        yield head;
        yield rest;
        let start = 0;
        for (const [i, body] of bodies.entries()) {
          yield headers.subarray(start, headerEnds[i]);
          start = headerEnds[i]!;
          yield body;
        }
        yield ENVELOPE_TAIL;
      }
      return { size, pieces: pieces() };
    },
  };
}
