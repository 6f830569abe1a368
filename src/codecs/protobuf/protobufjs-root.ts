/**
 * The schema as protobufjs reflection types: a second, independent implementation of the same
 * wire format, for protobuf-speaking clients in tests and tools (they should not share the
 * server's codec). Message names are the schema's vendor-neutral names (`core.v1.Pod`); names
 * never travel on the wire. Everything is proto2 (`optional`, unpacked repeated scalars), as
 * upstream's generated.proto files are.
 */
import protobuf from 'protobufjs';
import { createNaming, type Naming, UPSTREAM_VENDOR } from '../../naming';
import type { SchemaType, ValueType } from '../../schema';
import { schemaTypes } from '../../schema';

/** Messages for the special types, in package `special`. */
const SPECIAL_MESSAGES: Record<string, [name: string, id: number, type: string][]> = {
  Time: [
    ['seconds', 1, 'int64'],
    ['nanos', 2, 'int32'],
  ],
  MicroTime: [
    ['seconds', 1, 'int64'],
    ['nanos', 2, 'int32'],
  ],
  Duration: [['duration', 1, 'int64']],
  Quantity: [['string', 1, 'string']],
  IntOrString: [
    ['type', 1, 'int64'],
    ['intVal', 2, 'int32'],
    ['strVal', 3, 'string'],
  ],
  RawExtension: [['raw', 1, 'bytes']],
  FieldsV1: [['Raw', 1, 'bytes']],
  JSON: [['raw', 1, 'bytes']],
};

function typeName(type: ValueType, wrappers: Map<string, string>): string {
  switch (type.kind) {
    case 'scalar':
      return type.scalar;
    case 'special':
      return `.special.${type.special}`;
    case 'message':
      return `.${type.type}`;
    case 'list': {
      // A wrapped list is a message `{repeated item items = 1}`.
      const item = typeName(type.item, wrappers);
      const name = `List_${item.replace(/^\./, '').replace(/\./g, '_')}`;
      wrappers.set(name, item);
      return `.special.${name}`;
    }
    case 'map':
      throw new Error('nested maps are not supported');
  }
}

/**
 * A field's name in protobufjs: its JSON name, but for the `$`-names protobufjs reserves
 * (JSONSchemaProps' `$schema`, `$ref`), which go by their protobuf names (`schema`, `ref`).
 */
function protoName(name: string): string {
  return name.startsWith('$') ? name.slice(1) : name;
}

function addType(root: protobuf.Root, type: SchemaType, wrappers: Map<string, string>): void {
  const dot = type.name.lastIndexOf('.');
  const message = new protobuf.Type(type.name.slice(dot + 1));
  for (const field of type.protoFields) {
    const name = protoName(field.name);
    const t = field.type;
    if (t.kind === 'map') {
      message.add(new protobuf.MapField(name, field.number, 'string', typeName(t.value, wrappers)));
    } else if (t.kind === 'list' && !t.wrapped) {
      message.add(new protobuf.Field(name, field.number, typeName(t.item, wrappers), 'repeated', undefined, { packed: false }));
    } else {
      message.add(new protobuf.Field(name, field.number, typeName(t, wrappers), 'optional'));
    }
  }
  root.define(type.name.slice(0, dot)).add(message);
}

/**
 * A resolved protobufjs Root with one message per schema type (`root.lookupType('apps.v1.ReplicaSet')`).
 * Field names are the JSON names of `naming`'s profile (they differ only for fields named by a
 * schema extension); the wire is the same under every profile.
 */
export function protobufjsRoot(naming: Naming = createNaming(UPSTREAM_VENDOR)): protobuf.Root {
  const root = new protobuf.Root();
  const special = root.define('special');
  for (const [name, fields] of Object.entries(SPECIAL_MESSAGES)) {
    const message = new protobuf.Type(name);
    for (const [field, id, type] of fields) message.add(new protobuf.Field(field, id, type, 'optional'));
    special.add(message);
  }
  const wrappers = new Map<string, string>();
  for (const type of schemaTypes(naming).values()) addType(root, type, wrappers);
  for (const [name, item] of wrappers) {
    special.add(new protobuf.Type(name).add(new protobuf.Field('items', 1, item, 'repeated', undefined, { packed: false })));
  }
  root.resolveAll();
  return root;
}
