/** Shared helpers of the schema tests: both naming profiles' extension names, compiled schemas, messages. */
import { type JSONSchemaProps, type SchemaExtensions, compileSchema, schemaExtensions } from '../../../../src/core/validation/schema';
import { createNaming } from '../../../../src/naming';

export const K8S: SchemaExtensions = schemaExtensions(createNaming('kubernetes'));
export const PLATFORM: SchemaExtensions = schemaExtensions(createNaming('platform'));

/** A schema written with the kubernetes profile's extension names, renamed to `ext`'s. */
export function withExt(schema: unknown, ext: SchemaExtensions): JSONSchemaProps {
  const names: Record<string, string> = {
    'x-kubernetes-preserve-unknown-fields': ext.preserveUnknownFields,
    'x-kubernetes-embedded-resource': ext.embeddedResource,
    'x-kubernetes-int-or-string': ext.intOrString,
    'x-kubernetes-list-type': ext.listType,
    'x-kubernetes-list-map-keys': ext.listMapKeys,
    'x-kubernetes-map-type': ext.mapType,
  };
  const rename = (v: unknown, inDefault: boolean): unknown => {
    if (Array.isArray(v)) return v.map((e) => rename(e, inDefault));
    if (typeof v !== 'object' || v === null) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const isData = inDefault || k === 'default' || k === 'enum' || k === 'example';
      out[inDefault ? k : (names[k] ?? k)] = rename(x, isData);
    }
    return out;
  };
  return rename(schema, false) as JSONSchemaProps;
}

/** The schema compiled for the kubernetes profile (written with its names). */
export function compile(schema: unknown, ext: SchemaExtensions = K8S) {
  return compileSchema(withExt(schema, ext), ext);
}

export const messages = (errs: readonly { message: string }[]) => errs.map((e) => e.message);

/** `{type: object, properties: {<name>: schema}}`. */
export function objectWith(props: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'object', properties: props, ...extra };
}
