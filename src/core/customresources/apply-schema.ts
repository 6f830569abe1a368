/**
 * A version's structural schema as the schema types server-side apply walks, as upstream
 * builds structured-merge-diff's schema from a CRD's: objects with properties are structs (the
 * metadata is ObjectMeta), objects with `additionalProperties` maps, arrays lists, each with the
 * schema's `x-…-list-type`, `x-…-list-map-keys` and `x-…-map-type`; int-or-string and open
 * values (`x-…-preserve-unknown-fields` without properties, no type) are leaves whose value is
 * owned whole. Built on the first write that needs it and kept with the definition's type.
 */
import { type FieldDef, type PackageDef, type SchemaType, type ValueType, compileSchema } from '../../schema';
import { META_V1 } from '../../schema/defs/meta-v1';
import type { JSONSchemaProps, SchemaExtensions } from '../validation/schema/types';

const STRING: ValueType = { kind: 'scalar', scalar: 'string' };
const INT64: ValueType = { kind: 'scalar', scalar: 'int64' };
const DOUBLE: ValueType = { kind: 'scalar', scalar: 'double' };
const BOOL: ValueType = { kind: 'scalar', scalar: 'bool' };
const OPEN: ValueType = { kind: 'special', special: 'RawExtension' };
const INT_OR_STRING: ValueType = { kind: 'special', special: 'IntOrString' };

/** The package the converted types live in (their names are local to one definition's compilation). */
const PACKAGE = 'customresource.v1';

class Converter {
  readonly types: { name: string; fields: FieldDef[]; typeMeta: boolean; structType?: 'atomic' | 'granular' }[] = [];

  constructor(private readonly ext: SchemaExtensions) {}

  /** The value type of a schema node, declaring a struct type for an object with properties. */
  value(schema: JSONSchemaProps | undefined, depth: number): ValueType {
    if (!schema || depth > MAX_DEPTH) return OPEN;
    if (schema[this.ext.intOrString as `x-${string}`] === true) return INT_OR_STRING;
    switch (schema.type) {
      case 'string':
        return STRING;
      case 'integer':
        return INT64;
      case 'number':
        return DOUBLE;
      case 'boolean':
        return BOOL;
      case 'array':
        return { kind: 'list', item: this.value(Array.isArray(schema.items) ? undefined : schema.items, depth + 1) };
      case 'object': {
        const embedded = schema[this.ext.embeddedResource as `x-${string}`] === true;
        if (schema.properties && Object.keys(schema.properties).length > 0) return { kind: 'message', type: this.struct(schema, embedded, depth) };
        if (embedded) return { kind: 'message', type: this.struct(schema, true, depth) };
        if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
          return { kind: 'map', value: this.value(schema.additionalProperties, depth + 1) };
        }
        // An open object (preserve-unknown-fields, or no properties): granular by key, its values whole.
        return { kind: 'map', value: OPEN };
      }
      default:
        return OPEN;
    }
  }

  /** Declare the struct type of an object node; returns its qualified name. */
  struct(schema: JSONSchemaProps, embedded: boolean, depth: number, root = false): string {
    const name = `T${this.types.length}`;
    const type: (typeof this.types)[number] = { name, fields: [], typeMeta: root };
    this.types.push(type);
    let number = 1;
    const fields: FieldDef[] = [];
    if (root || embedded) {
      if (embedded) {
        fields.push(this.field('apiVersion', number++, STRING, undefined));
        fields.push(this.field('kind', number++, STRING, undefined));
      }
      fields.push(this.field('metadata', number++, { kind: 'message', type: 'meta.v1.ObjectMeta' }, undefined));
    }
    const properties = schema.properties ?? {};
    for (const key of Object.keys(properties).sort()) {
      if ((root || embedded) && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
      const prop = properties[key]!;
      fields.push(this.field(key, number++, this.value(prop, depth + 1), prop));
    }
    type.fields = fields;
    const mapType = schema[this.ext.mapType as `x-${string}`];
    if (mapType === 'atomic') type.structType = 'atomic';
    return `${PACKAGE}.${name}`;
  }

  private field(name: string, number: number, type: ValueType, schema: JSONSchemaProps | undefined): FieldDef {
    const listType = schema?.[this.ext.listType as `x-${string}`];
    const keys = schema?.[this.ext.listMapKeys as `x-${string}`];
    const mapType = schema?.[this.ext.mapType as `x-${string}`];
    return {
      name,
      number,
      type,
      pointer: true,
      omitEmpty: true,
      inline: false,
      required: false,
      ...(type.kind === 'list' ? { listType: listType === 'set' || listType === 'map' ? listType : 'atomic' } : {}),
      ...(type.kind === 'list' && listType === 'map' && Array.isArray(keys) ? { listMapKeys: keys as string[] } : {}),
      ...(type.kind === 'map' && (mapType === 'atomic' || mapType === 'granular') ? { mapType } : {}),
      ...(type.kind === 'message' && (mapType === 'atomic' || mapType === 'granular') ? { structType: mapType } : {}),
    };
  }
}

/** Nesting past this is owned whole (the decode limits keep objects shallower anyway). */
const MAX_DEPTH = 64;

/** The root type of a version's objects for server-side apply. */
export function applySchemaType(schema: JSONSchemaProps, ext: SchemaExtensions): SchemaType {
  const converter = new Converter(ext);
  const root = converter.struct(schema, false, 0, true);
  const pkg: PackageDef = { name: PACKAGE, types: converter.types };
  return compileSchema([META_V1, pkg]).get(root)!;
}
