/**
 * Go's `omitempty` for the text formats. Upstream's JSON (and so its YAML) and CBOR encoders
 * leave out a field tagged `omitempty` whose value is empty — `""`, `0`, `false`, an empty list
 * or map — unless the Go field is a pointer; structs are never left out. Objects Keelson holds
 * may carry such values (a default of 0, a client's `"data": {}`), so they are dropped when the
 * object is written, the way protobuf's decoder never produces them. Cached objects pay this
 * once: the JSON codec memoises its text.
 */
import type { FieldDef, SchemaRegistry, SchemaType, ValueType } from '../../core/schema';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Would Go's encoder leave this field out? */
export function isEmptyOmitted(field: FieldDef, value: unknown): boolean {
  if (!field.omitEmpty || field.pointer) return false;
  const t = field.type;
  switch (t.kind) {
    case 'scalar':
      return value === '' || value === 0 || value === false;
    case 'list':
      return Array.isArray(value) && value.length === 0;
    case 'map':
      return isPlainObject(value) && Object.keys(value).length === 0;
    default:
      return false;
  }
}

class Dropper {
  constructor(private readonly registry: SchemaRegistry) {}

  /** `value` without omitted empties; the same object when nothing changes (no copy). */
  typed(value: unknown, type: ValueType): unknown {
    if (value === null || typeof value !== 'object') return value;
    switch (type.kind) {
      case 'message':
        return isPlainObject(value) ? this.object(value, this.registry.type(type.type)) : value;
      case 'list': {
        if (!Array.isArray(value)) return value;
        let out: unknown[] | undefined;
        value.forEach((v, i) => {
          const d = this.typed(v, type.item);
          if (d !== v) (out ??= value.slice())[i] = d;
        });
        return out ?? value;
      }
      case 'map': {
        if (!isPlainObject(value)) return value;
        let out: Record<string, unknown> | undefined;
        for (const k of Object.keys(value)) {
          const d = this.typed(value[k], type.value);
          if (d !== value[k]) (out ??= { ...value })[k] = d;
        }
        return out ?? value;
      }
      default:
        return value;
    }
  }

  object(value: Record<string, unknown>, type: SchemaType): Record<string, unknown> {
    let out: Record<string, unknown> | undefined;
    for (const key of Object.keys(value)) {
      const property = type.property.get(key);
      if (!property) continue;
      const v = value[key];
      if (isEmptyOmitted(property.field, v)) {
        out ??= { ...value };
        delete out[key];
        continue;
      }
      const d = this.typed(v, property.field.type);
      if (d !== v) (out ??= { ...value })[key] = d;
    }
    return out ?? value;
  }
}

const droppers = new WeakMap<SchemaRegistry, Dropper>();

function dropperFor(registry: SchemaRegistry): Dropper {
  let d = droppers.get(registry);
  if (!d) droppers.set(registry, (d = new Dropper(registry)));
  return d;
}

/** A top-level value (typed by apiVersion and kind) or a value of a named type, without omitted empties. */
export function withoutEmpty(registry: SchemaRegistry, value: unknown, typeName?: string): unknown {
  if (!isPlainObject(value)) return value;
  const dropper = dropperFor(registry);
  if (typeName) return dropper.object(value, registry.type(typeName));
  const { apiVersion, kind } = value;
  const served = typeof apiVersion === 'string' && typeof kind === 'string' ? registry.kind(apiVersion, kind) : undefined;
  return served ? dropper.object(value, served.type) : value;
}
