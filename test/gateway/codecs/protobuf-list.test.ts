/**
 * Typed lists in the protobuf envelope written from their items' memoised bytes
 * (src/gateway/codecs/protobuf-list.ts): byte for byte what encoding the whole list gives, a
 * cached object's item cut from its own envelope, streamed from 500 items.
 */
import { deepFreeze } from '../../../src/util/frozen';
import { viewWithoutTypeMeta } from '../../../src/codecs/encode-once';
import { createProtobufCodec, decodeEnvelope } from '../../../src/codecs/protobuf';
import { gatewayCodecs } from '../../../src/gateway/codecs';
import { STREAMED_LIST_ITEMS } from '../../../src/gateway/codecs/json';
import { createNaming } from '../../../src/naming';
import { realisticReplicaSet } from '../../codecs/sample-objects';

const naming = createNaming('kubernetes');
const MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
const memoised = gatewayCodecs(naming).get(MEDIA_TYPE)!;
/** The codec without memos or list pieces: the whole list encoded field by field. */
const plain = createProtobufCodec(naming);
const fresh = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** ReplicaSets as the watch cache holds them (frozen), in sizes whose lengths take one, two and three varint bytes. */
function cachedReplicaSets(): Array<Record<string, unknown>> {
  return [10, 300, 40_000].map((size, i) => {
    const rs = realisticReplicaSet() as Record<string, unknown> & { metadata: Record<string, unknown> };
    if (size < 100) rs.spec = {};
    rs.status = i === 0 ? {} : rs.status;
    rs.metadata = i === 0 ? { name: 'tiny' } : { ...rs.metadata, name: `rs-${i}`, annotations: { note: 'ü'.repeat(size) } };
    return deepFreeze(rs);
  });
}

/** The objects' list items as the watch cache makes them: the object without kind and apiVersion, linked to it. */
function viewsOf(objects: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return objects.map((o) => {
    const { kind: _k, apiVersion: _a, ...rest } = o;
    const view = Object.freeze(rest);
    viewWithoutTypeMeta(view, o);
    return view;
  });
}

const listOf = (items: unknown[]) => ({
  kind: 'ReplicaSetList',
  apiVersion: 'apps/v1',
  metadata: { resourceVersion: '42', continue: 'abc', remainingItemCount: 7 },
  items,
});

describe('protobuf lists from memoised items', () => {
  test('a list of cached objects is byte for byte the whole list encoded, and decodes back to it', () => {
    const objects = cachedReplicaSets();
    const list = listOf(viewsOf(objects));
    const bytes = memoised.encode(list);
    expect(bytes.equals(plain.encode(fresh(list)))).toBe(true);
    expect(memoised.decode(bytes)).toEqual(plain.decode(plain.encode(fresh(list))));
    // Plain (not cached) items and an empty list too.
    for (const other of [listOf(fresh(viewsOf(objects))), listOf([])]) expect(memoised.encode(other).equals(plain.encode(fresh(other)))).toBe(true);
  });

  test("a cached object's item is a view of the object's own envelope, which its get and watch events use", () => {
    const objects = cachedReplicaSets();
    const views = viewsOf(objects);
    const pieces = [...memoised.encodeChunks!(listOf(Array.from({ length: STREAMED_LIST_ITEMS }, (_, i) => views[i % 3])))!];
    for (const object of objects) {
      const body = memoised.encode(object);
      expect(body).toBe(memoised.encode(object));
      const raw = decodeEnvelope(body).raw!;
      expect(pieces.some((p) => p.buffer === body.buffer && p.byteOffset === raw.byteOffset && p.length === raw.length)).toBe(true);
    }
  });

  test('streams from 500 items, or from 512 KiB, in the bytes of the whole list; smaller lists are one body', () => {
    const views = viewsOf(cachedReplicaSets());
    const many = listOf(Array.from({ length: STREAMED_LIST_ITEMS }, (_, i) => views[i % 2]));
    const streamed = memoised.encodeChunks!(many);
    expect(streamed).toBeDefined();
    expect(Buffer.concat([...streamed!]).equals(plain.encode(fresh(many)))).toBe(true);
    // 20 items of 40,000 two-byte characters are over 512 KiB.
    const large = listOf(Array.from({ length: 20 }, () => views[2]));
    expect(Buffer.concat([...memoised.encodeChunks!(large)!]).equals(plain.encode(fresh(large)))).toBe(true);
    expect(memoised.encodeChunks!(listOf(views.slice(0, 2)))).toBeUndefined();
  });

  test('a list kind without a protobuf form is refused as before', () => {
    expect(() => memoised.encode({ kind: 'WidgetList', apiVersion: 'example.com/v1', metadata: {}, items: [] })).toThrow(
      'does not implement the protobuf marshalling interface',
    );
  });
});
