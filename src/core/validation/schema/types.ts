/**
 * The OpenAPI v3 schema a CustomResourceDefinition carries per version (upstream's
 * apiextensions/v1 JSONSchemaProps), as plain JSON. The vendor extensions
 * (`x-kubernetes-preserve-unknown-fields` in the kubernetes profile, `x-platform-…` in the
 * platform profile) are read through `SchemaExtensions`, never spelled here.
 */
import type { Naming } from '../../../naming';

export interface JSONSchemaProps {
  id?: string;
  $schema?: string;
  $ref?: string;
  description?: string;
  type?: string;
  format?: string;
  title?: string;
  default?: unknown;
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  multipleOf?: number;
  enum?: unknown[];
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  /** A schema, or (not structural) an array of schemas. */
  items?: JSONSchemaProps | JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  patternProperties?: Record<string, JSONSchemaProps>;
  dependencies?: Record<string, JSONSchemaProps | string[]>;
  additionalItems?: JSONSchemaProps | boolean;
  definitions?: Record<string, JSONSchemaProps>;
  externalDocs?: { description?: string; url?: string };
  example?: unknown;
  nullable?: boolean;
  /** The vendor extensions, under the profile's names (`SchemaExtensions`). */
  [extension: `x-${string}`]: unknown;
}

/** One `x-…-validations` rule (CEL; evaluated by issue 53's work, carried and checked for shape now). */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** The profile's names of the schema extensions a structural schema may carry. */
export interface SchemaExtensions {
  preserveUnknownFields: string;
  embeddedResource: string;
  intOrString: string;
  listType: string;
  listMapKeys: string;
  mapType: string;
  validations: string;
}

/** Shared by every server in the process: derived from the two constant profiles. */
const extensionsByVendor = new Map<string, SchemaExtensions>();

export function schemaExtensions(naming: Naming): SchemaExtensions {
  let ext = extensionsByVendor.get(naming.vendor);
  if (!ext) {
    ext = {
      preserveUnknownFields: naming.extension('preserve-unknown-fields'),
      embeddedResource: naming.extension('embedded-resource'),
      intOrString: naming.extension('int-or-string'),
      listType: naming.extension('list-type'),
      listMapKeys: naming.extension('list-map-keys'),
      mapType: naming.extension('map-type'),
      validations: naming.extension('validations'),
    };
    extensionsByVendor.set(naming.vendor, ext);
  }
  return ext;
}
