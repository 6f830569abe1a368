/**
 * apiextensions/v1 CustomResourceDefinition through the real generic store: upstream 1.32's
 * defaults and strategy (status reset on create, the storage version recorded, generation on
 * spec changes, the /status sub-strategy), ValidateCustomResourceDefinition(Update) in upstream's
 * words and paths (a schema every version shares is upstream's `spec.validation`), the
 * structural-schema rules, and the type's JSON, YAML, protobuf and CBOR forms under both naming
 * profiles (the schema's vendor extensions are `x-kubernetes-…` or `x-platform-…`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RequestContext } from '../../../src/core/api';
import { createCore, type Core } from '../../../src/core';
import type { CustomResourceDefinition } from '../../../src/core/resources';
import { builtinResources } from '../../../src/core/resources';
import { gatewayCodecs } from '../../../src/gateway/codecs';
import { buildOpenApiDocuments } from '../../../src/gateway/openapi';
import { ResourceIndex } from '../../../src/gateway/resource-index';
import { createNaming, VENDORS, type Vendor } from '../../../src/naming';
import { schemaRegistry } from '../../../src/schema';
import { createStore, type Store } from '../../../src/store';
import { StatusError } from '../../../src/status';
import { create, definition, stored, update } from './through-store';

const crds = definition('customresourcedefinitions');

type Json = Record<string, unknown>;

const OBJECT = { type: 'object' };

function version(name: string, extra: Json = {}): Json {
  return { name, served: true, storage: true, schema: { openAPIV3Schema: OBJECT }, ...extra };
}

function crd(spec: Json = {}, name = 'widgets.example.com', meta: Json = {}): Json {
  return {
    metadata: { name, ...meta },
    spec: { group: 'example.com', names: { plural: 'widgets', kind: 'Widget' }, scope: 'Namespaced', versions: [version('v1')], ...spec },
  };
}

/** One version whose schema is `schema` (with the version's other fields in `extra`). */
const withSchema = (schema: unknown, extra: Json = {}) => crd({ versions: [version('v1', { schema: { openAPIV3Schema: schema }, ...extra })] });

const messagesOf = async (input: unknown) => (await create<CustomResourceDefinition>(crds, input)).messages;

/** The messages of a CRD whose one schema is `{type: object, properties}`. */
const propertyMessages = (properties: Json) => messagesOf(withSchema({ type: 'object', properties }));

const V = 'spec.validation.openAPIV3Schema';

describe('CustomResourceDefinition defaults and strategy (SetDefaults_CustomResourceDefinition, PrepareForCreate)', () => {
  it('fills singular, listKind and conversion, starts at generation 1 with the status reset and the storage version stored', async () => {
    const { object, messages } = await create<CustomResourceDefinition>(crds, {
      ...crd(),
      status: { storedVersions: ['v0'], conditions: [{ type: 'Established', status: 'True' }], acceptedNames: { plural: 'x', kind: 'X' } },
    });
    expect(messages).toEqual([]);
    expect(object.spec?.names).toEqual({ plural: 'widgets', kind: 'Widget', singular: 'widget', listKind: 'WidgetList' });
    expect(object.spec?.conversion).toEqual({ strategy: 'None' });
    expect(object.status).toEqual({ conditions: null, acceptedNames: { plural: '', kind: '' }, storedVersions: ['v1'] });
    expect(object.metadata?.generation).toBe(1);
  });

  it('accepts both scopes, the first storage version stored, and defaults a webhook service port to 443', async () => {
    const cluster = await create<CustomResourceDefinition>(crds, crd({ scope: 'Cluster', versions: [version('v1', { storage: false }), version('v2')] }));
    expect(cluster.messages).toEqual([]);
    expect(cluster.object.status?.storedVersions).toEqual(['v2']);
    const webhook = await create<CustomResourceDefinition>(
      crds,
      crd({ conversion: { strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'ns', name: 'svc' } }, conversionReviewVersions: ['v1'] } } }),
    );
    expect(webhook.messages).toEqual([]);
    expect(webhook.object.spec?.conversion?.webhook?.clientConfig?.service).toEqual({ namespace: 'ns', name: 'svc', port: 443 });
  });

  it('keeps a full schema with every structural feature', async () => {
    const schema = {
      type: 'object',
      description: 'a widget',
      properties: {
        spec: {
          type: 'object',
          required: ['size'],
          properties: {
            size: { type: 'integer', minimum: 1, default: 3 },
            port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
            labels: { type: 'object', additionalProperties: { type: 'string' }, 'x-kubernetes-map-type': 'granular' },
            ports: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['name'],
              items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
            },
            tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string', enum: ['a', 'b'] } },
            template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
            extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            mode: { type: 'string', pattern: '^(a|b)$', allOf: [{ enum: ['a', 'b'] }], not: { enum: ['c'] } },
          },
          'x-kubernetes-validations': [{ rule: 'self.size < 10', message: 'too big', reason: 'FieldValueForbidden', fieldPath: '.size' }],
        },
        status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
      },
    };
    const { object, messages } = await create<CustomResourceDefinition>(
      crds,
      withSchema(schema, {
        subresources: { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
        additionalPrinterColumns: [{ name: 'Size', type: 'integer', format: 'int32', jsonPath: '.spec.size' }],
        selectableFields: [{ jsonPath: '.spec.mode' }],
      }),
    );
    expect(messages).toEqual([]);
    expect(object.spec?.versions?.[0]?.schema?.openAPIV3Schema).toEqual(schema);
  });
});

describe('ValidateCustomResourceDefinition: metadata, group, names, scope', () => {
  it('requires the name to be spec.names.plural+"."+spec.group', async () => {
    expect(await messagesOf(crd({}, 'gadgets.example.com'))).toEqual([
      'metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group',
    ]);
  });

  it('requires a group that is a DNS subdomain with at least one dot', async () => {
    expect(await messagesOf(crd({ group: 'example' }, 'widgets.example'))).toEqual([
      'spec.group: Invalid value: "example": should be a domain with at least one dot',
    ]);
    expect(await messagesOf(crd({ group: 'Example.com' }, 'widgets.Example.com'))).toContain(
      "spec.group: Invalid value: \"Example.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
    expect(await messagesOf(crd({ group: '' }, 'widgets.'))).toContain('spec.group: Required value');
  });

  it('checks the names: DNS-1035 labels, mixed-case kinds, listKind unlike kind, and the required ones', async () => {
    const label =
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    expect(await messagesOf(crd({ names: { plural: 'widgets', singular: 'a.b', kind: 'Wid_get', shortNames: ['w', 'W'], categories: ['all', '9'] } }))).toEqual(
      [
        `spec.names.singular: Invalid value: "a.b": ${label}`,
        `spec.names.kind: Invalid value: "Wid_get": may have mixed case, but should otherwise match: ${label}`,
        `spec.names.listKind: Invalid value: "Wid_getList": may have mixed case, but should otherwise match: ${label}`,
        `spec.names.shortNames[1]: Invalid value: "W": ${label}`,
        `spec.names.categories[1]: Invalid value: "9": ${label}`,
      ],
    );
    expect(await messagesOf(crd({ names: { plural: 'widgets', kind: 'Widget', listKind: 'Widget' } }))).toEqual([
      'spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same',
    ]);
    expect(await messagesOf(crd({ names: { plural: 'widgets' } }))).toEqual([
      'spec.names.singular: Required value',
      'spec.names.kind: Required value',
      'spec.names.listKind: Required value',
    ]);
  });

  it('requires a scope of Cluster or Namespaced', async () => {
    expect(await messagesOf(crd({ scope: 'Global' }))).toEqual(['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"']);
    expect(await messagesOf(crd({ scope: '' }))).toEqual(['spec.scope: Required value']);
  });

  it('asks an approval annotation of the protected groups', async () => {
    const group = 'widgets.k8s.io';
    const key = 'api-approved.kubernetes.io';
    expect(await messagesOf(crd({ group }, `widgets.${group}`))).toEqual([
      `metadata.annotations[${key}]: Required value: protected groups must have approval annotation "${key}", see https://github.com/kubernetes/enhancements/pull/1111`,
    ]);
    expect(await messagesOf(crd({ group }, `widgets.${group}`, { annotations: { [key]: 'maybe' } }))).toEqual([
      `metadata.annotations[${key}]: Invalid value: "maybe": protected groups must have approval annotation "${key}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
    ]);
    expect(await messagesOf(crd({ group }, `widgets.${group}`, { annotations: { [key]: 'https://github.com/kubernetes/kubernetes/pull/78458' } }))).toEqual([]);
    expect(await messagesOf(crd({ group }, `widgets.${group}`, { annotations: { [key]: 'unapproved, experimental' } }))).toEqual([]);
  });

  it('refuses preserveUnknownFields: true', async () => {
    expect(await messagesOf(crd({ preserveUnknownFields: true }))).toEqual([
      'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
    ]);
  });
});

describe('ValidateCustomResourceDefinition: versions', () => {
  const v1Struct = (storage: boolean, name = 'v1') =>
    `apiextensions.CustomResourceDefinitionVersion{Name:"${name}", Served:true, Storage:${storage}, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}`;

  it('needs exactly one storage version, and then has no stored version', async () => {
    expect(await messagesOf(crd({ versions: [] }))).toEqual([
      'spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{}: must have exactly one version marked as storage version',
      'status.storedVersions: Invalid value: []string(nil): must have at least one stored version',
    ]);
    expect(await messagesOf(crd({ versions: [version('v1'), version('v2')] }))).toEqual([
      `spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{${v1Struct(true)}, ${v1Struct(true, 'v2')}}: must have exactly one version marked as storage version`,
      'status.storedVersions: Invalid value: []string{"v1"}: must have the storage version v2',
    ]);
  });

  it("needs unique DNS-1035 version names (the first is also upstream's spec.version)", async () => {
    expect(await messagesOf(crd({ versions: [version('v1'), version('v1', { storage: false })] }))).toEqual([
      `spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{${v1Struct(true)}, ${v1Struct(false)}}: must contain unique version names`,
    ]);
    const label =
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    expect(await messagesOf(crd({ versions: [version('V1')] }))).toEqual([
      `spec.versions[0].name: Invalid value: "V1": ${label}`,
      `spec.version: Invalid value: "V1": ${label}`,
    ]);
  });

  it('requires a schema in every version', async () => {
    expect(await messagesOf(crd({ versions: [version('v1', { schema: undefined }), version('v2', { storage: false, schema: undefined })] }))).toEqual([
      'spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required',
      'spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required',
    ]);
  });

  it('checks a deprecation warning', async () => {
    expect(await messagesOf(crd({ versions: [version('v1', { deprecationWarning: 'old' })] }))).toEqual([
      'spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for deprecated versions',
    ]);
    expect(await messagesOf(crd({ versions: [version('v1', { deprecated: true, deprecationWarning: 'x'.repeat(257) })] }))).toEqual([
      `spec.versions[0].deprecationWarning: Invalid value: "${'x'.repeat(257)}": must be <= 256 characters long`,
    ]);
    expect(await messagesOf(crd({ versions: [version('v1', { deprecated: true, deprecationWarning: 'a\tb' })] }))).toEqual([
      'spec.versions[0].deprecationWarning: Invalid value: "a\\tb": must only contain printable UTF-8 characters; non-printable character found at index 1',
    ]);
  });

  it('reports a schema every version shares at spec.validation, and differing ones per version', async () => {
    const bad = { type: 'object', properties: { spec: {} } };
    expect(
      await messagesOf(
        crd({ versions: [version('v1', { schema: { openAPIV3Schema: bad } }), version('v2', { storage: false, schema: { openAPIV3Schema: bad } })] }),
      ),
    ).toEqual([`${V}.properties[spec].type: Required value: must not be empty for specified object fields`]);
    expect(await messagesOf(crd({ versions: [version('v1'), version('v2', { storage: false, schema: { openAPIV3Schema: bad } })] }))).toEqual([
      'spec.versions[1].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
    ]);
  });
});

describe('ValidateCustomResourceDefinition: structural schemas', () => {
  it('requires types everywhere structural, an object at the root, items for arrays', async () => {
    expect(await messagesOf(withSchema({ properties: { a: { type: 'string' } } }))).toEqual([`${V}.type: Required value: must not be empty at the root`]);
    expect(await messagesOf(withSchema({ type: 'array', items: { type: 'string' } }))).toEqual([
      `${V}.type: Invalid value: "array": must be object at the root`,
    ]);
    expect(await propertyMessages({ list: { type: 'array' }, nested: { type: 'array', items: {} } })).toEqual([
      `${V}.properties[list].items: Required value: must be specified`,
      `${V}.properties[nested].items.type: Required value: must not be empty for specified array items`,
    ]);
  });

  it('forbids what structural schemas leave out: $ref, id, definitions, dependencies, items arrays, additionalItems, patternProperties, uniqueItems, null types', async () => {
    expect(
      await propertyMessages({
        a: { type: 'string', $ref: '#/definitions/x' },
        b: { type: 'string', id: 'b' },
        c: { type: 'array', items: [{ type: 'string' }] },
        d: { type: 'array', items: { type: 'string' }, uniqueItems: true },
        e: { type: 'null' },
        f: { type: 'object', patternProperties: { '^x': { type: 'string' } } },
      }),
    ).toEqual([
      `${V}.properties[a].$ref: Forbidden: $ref is not supported`,
      `${V}.properties[b].id: Forbidden: id is not supported`,
      `${V}.properties[c].items: Forbidden: items must be a schema object and not an array`,
      `${V}.properties[d].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
      `${V}.properties[e].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      `${V}.properties[e].type: Forbidden: type cannot be set to null, use nullable as an alternative`,
      `${V}.properties[f].patternProperties: Forbidden: patternProperties is not supported`,
    ]);
    expect(await propertyMessages({ a: { type: 'string', format: 'date', dependencies: { b: ['c'] }, definitions: { x: { type: 'string' } } } })).toEqual([
      `${V}.properties[a].definitions: Forbidden: definitions is not supported`,
      `${V}.properties[a].dependencies: Forbidden: dependencies is not supported`,
    ]);
  });

  it('reports what NewStructural cannot read only when nothing else is wrong', async () => {
    expect(await propertyMessages({ a: { type: 'array', items: { type: 'string' }, additionalItems: false } })).toEqual([
      `${V}.properties[a].additionalItems: Forbidden: additionalItems is not supported`,
    ]);
  });

  it('refuses additionalProperties beside properties and at the root', async () => {
    expect(await propertyMessages({ spec: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } } })).toEqual([
      `${V}.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
    ]);
    expect(await propertyMessages({ spec: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true } })).toEqual([]);
    expect(await messagesOf(withSchema({ type: 'object', additionalProperties: { type: 'string' } }))).toEqual([
      `${V}.additionalProperties: Forbidden: must not be used at the root`,
    ]);
  });

  it('keeps value validations free of types, defaults, descriptions, extensions and unspecified fields', async () => {
    expect(
      await propertyMessages({
        a: {
          type: 'object',
          properties: { x: { type: 'string' } },
          allOf: [{ type: 'string', description: 'd', properties: { y: { minLength: 1 }, metadata: {} } }],
          anyOf: [{ nullable: true, 'x-kubernetes-list-type': 'set', 'x-kubernetes-validations': [{ rule: 'true' }] }],
          not: { default: 'x', title: 't', additionalProperties: true, 'x-kubernetes-preserve-unknown-fields': true },
        },
      }),
    ).toEqual([
      `${V}.properties[a].allOf[0].description: Forbidden: must be empty to be structural`,
      `${V}.properties[a].allOf[0].properties[metadata]: Forbidden: must not be specified in a nested context`,
      `${V}.properties[a].allOf[0].type: Forbidden: must be empty to be structural`,
      `${V}.properties[a].anyOf[0].nullable: Forbidden: must be false to be structural`,
      `${V}.properties[a].anyOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural`,
      `${V}.properties[a].anyOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural`,
      `${V}.properties[a].not.additionalProperties: Forbidden: must be undefined to be structural`,
      `${V}.properties[a].not.default: Forbidden: must be undefined to be structural`,
      `${V}.properties[a].not.title: Forbidden: must be empty to be structural`,
      `${V}.properties[a].not.x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural`,
      // The OpenAPI checks walk into junctors too.
      `${V}.properties[a].anyOf[0].type: Required value: must be array if x-kubernetes-list-type is specified`,
    ]);
  });

  it("requires what the root's junctors restrict to be specified (upstream checks completeness at the root only)", async () => {
    const schema = {
      type: 'object',
      properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } },
      anyOf: [{ required: ['spec'] }, { properties: { spec: { properties: { b: { minLength: 1 } } }, status: {} } }],
      oneOf: [{ items: { minLength: 1 } }],
    };
    expect(await messagesOf(withSchema(schema))).toEqual([
      `${V}.items: Required value: because it is defined in ${V}.oneOf[0].items`,
      `${V}.properties[spec].properties[b]: Required value: because it is defined in ${V}.anyOf[1].properties[spec].properties[b]`,
      `${V}.properties[status]: Required value: because it is defined in ${V}.anyOf[1].properties[status]`,
    ]);
  });

  it('allows the two int-or-string patterns', async () => {
    const intOrString = [{ type: 'integer' }, { type: 'string' }];
    expect(
      await propertyMessages({
        a: { 'x-kubernetes-int-or-string': true, anyOf: intOrString },
        b: { 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: intOrString }, { pattern: '^[0-9]+%?$' }] },
      }),
    ).toEqual([]);
    expect(
      await propertyMessages({ a: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true, anyOf: [{ type: 'integer' }] } }),
    ).toEqual([
      `${V}.properties[a].anyOf[0].type: Forbidden: must be empty to be structural`,
      `${V}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
    ]);
  });

  it('restricts metadata: only name and generateName at the root, an object in embedded resources, nothing in junctors', async () => {
    expect(
      await propertyMessages({ metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 8 }, generateName: { type: 'string' } } } }),
    ).toEqual([]);
    expect(await propertyMessages({ metadata: { type: 'object', properties: { labels: { type: 'object' } } } })).toEqual([
      `${V}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
    ]);
    expect(await propertyMessages({ kind: { type: 'integer' }, metadata: { type: 'string' } })).toEqual([
      `${V}.properties[kind].type: Invalid value: "integer": must be string`,
      `${V}.properties[metadata].type: Invalid value: "string": must be object`,
    ]);
    expect(await propertyMessages({ metadata: { type: 'object', default: {} } })).toEqual([
      `${V}.properties[metadata].default: Forbidden: must not be set in top-level metadata`,
    ]);
  });

  it('checks embedded resources', async () => {
    expect(await propertyMessages({ e: { 'x-kubernetes-embedded-resource': true } })).toEqual([
      `${V}.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
      `${V}.properties[e].type: Required value: must be object if x-kubernetes-embedded-resource is true`,
    ]);
    expect(
      await propertyMessages({
        e: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: {
            apiVersion: { type: 'string' },
            metadata: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
          },
        },
      }),
    ).toEqual([`${V}.properties[e].properties[metadata].x-kubernetes-embedded-resource: Forbidden: must not be used inside of resource meta`]);
  });

  it('checks list types, list-map keys, map types and preserve-unknown-fields', async () => {
    expect(
      await propertyMessages({
        a: { type: 'string', 'x-kubernetes-list-type': 'set' },
        b: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'bag' },
        c: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-map-keys': ['k'] },
        d: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'map' },
        e: { type: 'string', 'x-kubernetes-map-type': 'granular' },
        f: { type: 'object', 'x-kubernetes-map-type': 'deep' },
        g: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false },
      }),
    ).toEqual([
      `${V}.properties[a].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified`,
      `${V}.properties[b].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`,
      `${V}.properties[c].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`,
      `${V}.properties[d].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
      `${V}.properties[d].items.type: Invalid value: "string": must be object if parent array's x-kubernetes-list-type is map`,
      `${V}.properties[e].type: Invalid value: "string": must be object if x-kubernetes-map-type is specified`,
      `${V}.properties[f].x-kubernetes-map-type: Unsupported value: "deep": supported values: "atomic", "granular"`,
      `${V}.properties[g].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`,
    ]);
    const items = { type: 'object', nullable: true, properties: { k: { type: 'object' }, n: { type: 'string', nullable: true } } };
    expect(
      await propertyMessages({ m: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k', 'n', 'z', 'n'], items } }),
    ).toEqual([
      `${V}.properties[m].items.properties[k].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map`,
      `${V}.properties[m].x-kubernetes-list-map-keys: Invalid value: []string{"k", "n", "z", "n"}: entries must all be names of item properties`,
      `${V}.properties[m].x-kubernetes-list-map-keys: Invalid value: []string{"k", "n", "z", "n"}: must not contain duplicate entries`,
      `${V}.properties[m].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map`,
      `${V}.properties[m].items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      `${V}.properties[m].items.properties[n].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      `${V}.properties[m].items.properties[n].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`,
      `${V}.properties[m].items.properties[n].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      `${V}.properties[m].items.properties[n].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`,
    ]);
    expect(
      await propertyMessages({ s: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'object', properties: { a: { type: 'string' } } } } }),
    ).toEqual([`${V}.properties[s].items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set`]);
  });

  it('checks patterns as Go compiles them and the shape of validation rules', async () => {
    expect(await propertyMessages({ a: { type: 'string', pattern: '(' } })).toEqual([
      `${V}.properties[a].pattern: Invalid value: "(": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): \`(\``,
    ]);
    const rules = [{ rule: ' ' }, { rule: 'a', message: ' ' }, { rule: 'a\nb' }, { rule: 'a', messageExpression: ' ', reason: 'Nope', fieldPath: '.missing' }];
    expect(await messagesOf(withSchema({ type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-validations': rules }))).toEqual([
      `${V}.x-kubernetes-validations[0].rule: Required value: rule is not specified`,
      `${V}.x-kubernetes-validations[1].message: Invalid value: " ": message must be non-empty if specified`,
      `${V}.x-kubernetes-validations[2].message: Required value: message must be specified if rule contains line breaks`,
      `${V}.x-kubernetes-validations[3].messageExpression: Required value: messageExpression must be non-empty if specified`,
      `${V}.x-kubernetes-validations[3].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
      `${V}.x-kubernetes-validations[3].fieldPath: Invalid value: ".missing": fieldPath must be a valid path`,
    ]);
  });

  it('with a status subresource, keeps the root to the fields that survive cutting out the status', async () => {
    const messages = await messagesOf(withSchema({ type: 'object', nullable: true, properties: { status: OBJECT } }, { subresources: { status: {} } }));
    expect(messages[0]).toMatch(
      /^spec\.validation\.openAPIV3Schema: Invalid value: apiextensions\.JSONSchemaProps\{.*\}: only \[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations\] fields are allowed at the root of the schema if the status subresource is enabled$/,
    );
    expect(messages.slice(1)).toEqual([`${V}.nullable: Forbidden: nullable cannot be true at the root`]);
    expect(await messagesOf(withSchema({ type: 'string' }, { subresources: { status: {} } }))).toEqual([
      `${V}.type: Invalid value: "string": only "object" is allowed as the type at the root of the schema if the status subresource is enabled`,
      `${V}.type: Invalid value: "string": must be object at the root`,
    ]);
  });

  it('checks defaults: pruned, valid, and not where upstream forbids them', async () => {
    const messages = await propertyMessages({
      spec: { type: 'object', properties: { b: { type: 'object', properties: { x: { type: 'string' } }, default: { x: 'a', zzz: 1 } } } },
    });
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(
      /^spec\.validation\.openAPIV3Schema\.properties\[spec\]\.properties\[b\]\.default: Invalid value: .*: must not have unknown fields$/,
    );
    expect(await propertyMessages({ apiVersion: { type: 'string', default: 'v1' } })).toEqual([
      `${V}.properties[apiVersion].default: Forbidden: must not be set in top-level apiVersion`,
    ]);
  });
});

describe('ValidateCustomResourceDefinition: selectable fields, printer columns, subresources, conversion', () => {
  const schema = {
    type: 'object',
    properties: { spec: { type: 'object', properties: { color: { type: 'string' }, size: { type: 'integer' }, nested: OBJECT } } },
  };

  it('checks selectable fields against the schema', async () => {
    const fields = ['.spec.color', '.spec.color', '.spec.nested', 'spec.size', '.spec.nope', '', ".spec['color']"].map((jsonPath) => ({ jsonPath }));
    expect(await messagesOf(withSchema(schema, { selectableFields: fields }))).toEqual([
      'spec.selectableFields[1].jsonPath: Duplicate value: ".spec.color"',
      'spec.selectableFields[2].jsonPath: Invalid value: ".spec.nested": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
      'spec.selectableFields[3].jsonPath: Invalid value: "spec.size": is an invalid path: expected [ or . but got: spec',
      'spec.selectableFields[4].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field',
      'spec.selectableFields[5].jsonPath: Required value',
      'spec.selectableFields[6].jsonPath: Invalid value: ".spec[\'color\']": is an invalid path: array notation is not allowed',
    ]);
    const many = { type: 'object', properties: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`f${i}`, { type: 'string' }])) };
    expect(await messagesOf(withSchema(many, { selectableFields: Array.from({ length: 9 }, (_, i) => ({ jsonPath: `.f${i}` })) }))).toEqual([
      'spec.selectableFields: Too many: 9: must have at most 8 items',
    ]);
  });

  it('checks printer columns', async () => {
    expect(await messagesOf(withSchema(schema, { additionalPrinterColumns: [{ name: 'A', type: 'text', format: 'uuid', jsonPath: 'spec.a' }, {}] }))).toEqual([
      'spec.additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string',
      'spec.additionalPrinterColumns[0].format: Invalid value: "uuid": must be one of byte,date,date-time,double,float,int32,int64,password',
      'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.a": must be a simple json path starting with .',
      'spec.additionalPrinterColumns[1].name: Required value',
      'spec.additionalPrinterColumns[1].type: Required value: must be one of boolean,date,integer,number,string',
      'spec.additionalPrinterColumns[1].JSONPath: Required value',
    ]);
  });

  it('checks the scale subresource paths', async () => {
    expect(
      await messagesOf(
        withSchema(schema, { subresources: { scale: { specReplicasPath: '.status.r', statusReplicasPath: 'r', labelSelectorPath: '.metadata.s' } } }),
      ),
    ).toEqual([
      'spec.subresources.scale.specReplicasPath: Invalid value: ".status.r": should be a json path under .spec',
      'spec.subresources.scale.statusReplicasPath: Invalid value: "r": must be a simple json path starting with .',
      'spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.s": should be a json path under either .spec or .status',
    ]);
    expect(await messagesOf(withSchema(schema, { subresources: { scale: {} } }))).toEqual([
      'spec.subresources.scale.specReplicasPath: Required value',
      'spec.subresources.scale.statusReplicasPath: Required value',
    ]);
  });

  it('checks the conversion: a strategy, and a webhook exactly when Webhook', async () => {
    expect(await messagesOf(crd({ conversion: { strategy: 'Webhook' } }))).toEqual([
      'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
      'spec.conversion.conversionReviewVersions: Required value',
    ]);
    const webhook = { clientConfig: { url: 'http://convert.example.com/?q=1' }, conversionReviewVersions: ['v2', 'v2', 'V3'] };
    expect(await messagesOf(crd({ conversion: { strategy: 'Webhook', webhook } }))).toEqual([
      'spec.conversion.webhookClientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; desired format: https://host[/path]',
      'spec.conversion.webhookClientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL',
      'spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version',
      "spec.conversion.conversionReviewVersions[2]: Invalid value: \"V3\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2", "v2", "V3"}: must include at least one of v1, v1beta1',
    ]);
    const both = { clientConfig: { url: 'https://x.example.com', service: { namespace: 'ns', name: 'svc' } }, conversionReviewVersions: ['v1'] };
    expect(await messagesOf(crd({ conversion: { strategy: 'Webhook', webhook: both } }))).toEqual([
      'spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required',
    ]);
    expect(
      await messagesOf(
        crd({ conversion: { strategy: 'None', webhook: { clientConfig: { url: 'https://x.example.com' }, conversionReviewVersions: ['v1'] } } }),
      ),
    ).toEqual([
      'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
      'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
    ]);
    expect(await messagesOf(crd({ conversion: { strategy: 'Magic' } }))).toEqual([
      'spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"',
    ]);
  });
});

describe('ValidateCustomResourceDefinitionUpdate and the strategy on updates', () => {
  const established = { conditions: [{ type: 'Established', status: 'True', lastTransitionTime: '2024-05-01T10:00:00Z', reason: 'InitialNamesAccepted' }] };

  it('bumps the generation on spec changes only, keeps the stored status and records a new storage version', async () => {
    const current = await stored<CustomResourceDefinition>(crds, crd());
    const changed = await update<CustomResourceDefinition>(
      crds,
      { ...current, spec: { ...current.spec, versions: [version('v1', { storage: false }), version('v2')] }, status: { storedVersions: ['v9'] } },
      current,
    );
    expect(changed.errors).toEqual([]);
    expect(changed.object.metadata?.generation).toBe(2);
    expect(changed.object.status?.storedVersions).toEqual(['v1', 'v2']);
    const relabelled = await update<CustomResourceDefinition>(crds, { ...current, metadata: { ...current.metadata, labels: { a: 'b' } } }, current);
    expect(relabelled.errors).toEqual([]);
    expect(relabelled.object.metadata?.generation).toBe(1);
  });

  it('keeps group and plural, and scope and kind once established; versions that were stored must stay', async () => {
    const current = await stored<CustomResourceDefinition>(crds, crd());
    const next = {
      ...current,
      spec: { ...current.spec, scope: 'Cluster', names: { ...current.spec?.names, kind: 'Gadget', listKind: 'GadgetList', singular: 'gadget' } },
    };
    expect((await update(crds, next, current)).messages).toEqual([]);
    expect((await update(crds, next, { ...current, status: { ...current.status, ...established } })).messages).toEqual([
      'spec.scope: Invalid value: "Cluster": field is immutable',
      'spec.names.kind: Invalid value: "Gadget": field is immutable',
    ]);
    const regroup = { ...current, spec: { ...current.spec, group: 'other.com', names: { ...current.spec?.names, plural: 'gizmos' } } };
    expect((await update(crds, regroup, current)).messages).toEqual([
      'spec.group: Invalid value: "other.com": field is immutable',
      'spec.names.plural: Invalid value: "gizmos": field is immutable',
    ]);
    const old = { ...current, status: { ...current.status, storedVersions: ['v1beta1', 'v1'] } };
    expect((await update(crds, { ...current, spec: { ...current.spec, versions: [version('v1')] } }, old)).messages).toEqual([
      'status.storedVersions[0]: Invalid value: "v1beta1": must appear in spec.versions',
    ]);
  });

  it('ratchets: a schema stored before a rule existed may stay as it was', async () => {
    const current = await stored<CustomResourceDefinition>(crds, crd());
    const invalidType = withSchema({ type: 'object', properties: { a: { type: 'nubmer' } } }).spec;
    // A stored definition written before types were checked (stored as it is, no validation).
    const old = { ...current, spec: invalidType };
    expect((await update(crds, { ...current, spec: invalidType }, old)).messages).toEqual([]);
    expect((await update(crds, { ...current, spec: invalidType }, current)).messages).toEqual([
      `${V}.properties[a].type: Unsupported value: "nubmer": supported values: "array", "boolean", "integer", "number", "object", "string"`,
    ]);
  });

  it('on /status: keeps the stored spec and checks only the accepted names', async () => {
    const current = await stored<CustomResourceDefinition>(crds, crd());
    const status = { ...established, acceptedNames: { plural: 'widgets', kind: 'Widget', singular: 'widget', listKind: 'WidgetList' }, storedVersions: ['v1'] };
    const viaStatus = await update<CustomResourceDefinition>(crds, { ...current, spec: { ...current.spec, scope: 'Cluster' }, status }, current, 'status');
    expect(viaStatus.errors).toEqual([]);
    expect(viaStatus.object.spec?.scope).toBe('Namespaced');
    expect(viaStatus.object.status).toEqual(status);
    expect(viaStatus.object.metadata?.generation).toBe(1);
    const bad = await update<CustomResourceDefinition>(
      crds,
      { ...current, status: { ...status, acceptedNames: { plural: 'Widgets', kind: 'Widget' } } },
      current,
      'status',
    );
    expect(bad.messages).toEqual([
      "status.acceptedNames.plural: Invalid value: \"Widgets\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ]);
    const main = await update<CustomResourceDefinition>(crds, { ...current, status }, current);
    expect(main.object.status).toEqual(current.status);
  });
});

describe('under the platform profile', () => {
  const ADMIN: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
  const naming = createNaming('platform');
  let opened: { core: Core; store: Store; dir: string } | undefined;

  async function core(): Promise<Core> {
    if (!opened) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keelson-crds-'));
      const store = createStore({ kind: 'embedded', dataDir: dir });
      const c = createCore({ store, naming, compactionIntervalMs: 0, resources: builtinResources(naming) });
      await c.ready();
      opened = { core: c, store, dir };
    }
    return opened.core;
  }

  afterAll(async () => {
    if (!opened) return;
    await opened.core.close();
    fs.rmSync(opened.dir, { recursive: true, force: true });
  });

  const target = { group: naming.groups.apiextensions, version: 'v1', resource: 'customresourcedefinitions' };

  async function createPlatform(input: Json): Promise<{ object?: CustomResourceDefinition; messages: string[] }> {
    try {
      const { object } = await (await core()).create(target, input, { dryRun: ['All'] }, ADMIN);
      return { object: object as CustomResourceDefinition, messages: [] };
    } catch (err) {
      if (!(err instanceof StatusError)) throw err;
      return { messages: (err.status.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`) };
    }
  }

  it('serves the definitions in apiextensions.platform.io and reads the x-platform-… extensions', async () => {
    const schema = {
      type: 'object',
      properties: {
        spec: { type: 'object', 'x-platform-preserve-unknown-fields': true },
        ports: {
          type: 'array',
          'x-platform-list-type': 'map',
          'x-platform-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        },
      },
    };
    for (const scope of ['Namespaced', 'Cluster']) {
      const { object, messages } = await createPlatform({ ...withSchema(schema), spec: { ...(withSchema(schema).spec as Json), scope } });
      expect(messages).toEqual([]);
      expect(object?.apiVersion).toBe('apiextensions.platform.io/v1');
      expect(object?.spec?.versions?.[0]?.schema?.openAPIV3Schema).toEqual(schema);
    }
  });

  it("prunes the other profile's extension names as unknown fields and names its own in messages", async () => {
    const { object } = await createPlatform(
      withSchema({ type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }),
    );
    expect(object?.spec?.versions?.[0]?.schema?.openAPIV3Schema).toEqual({ type: 'object', properties: { spec: { type: 'object' } } });
    expect((await createPlatform(withSchema({ type: 'object', properties: { e: { 'x-platform-embedded-resource': true } } }))).messages).toEqual([
      `${V}.properties[e].properties: Required value: must not be empty if x-platform-embedded-resource is true without x-platform-preserve-unknown-fields`,
      `${V}.properties[e].type: Required value: must be object if x-platform-embedded-resource is true`,
    ]);
    expect((await createPlatform({ ...crd({ preserveUnknownFields: true }) })).messages).toEqual([
      'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-platform-preserve-unknown-fields to true in spec.versions[*].schema instead',
    ]);
  });

  it('asks the approval annotation of its own domain', async () => {
    const group = 'widgets.platform.io';
    expect((await createPlatform(crd({ group }, `widgets.${group}`))).messages).toEqual([
      `metadata.annotations[api-approved.platform.io]: Required value: protected groups must have approval annotation "api-approved.platform.io", see https://github.com/kubernetes/enhancements/pull/1111`,
    ]);
    expect((await createPlatform(crd({ group: 'widgets.k8s.io' }, 'widgets.widgets.k8s.io'))).messages).toEqual([]);
  });
});

describe.each(VENDORS)('JSONSchemaProps on the wire (%s profile)', (vendor: Vendor) => {
  const naming = createNaming(vendor);
  const x = (name: string) => naming.extension(name);
  const codecs = gatewayCodecs(naming, { cbor: true, compression: false });
  const apiVersion = `${naming.groups.apiextensions}/v1`;
  const schema = {
    type: 'object',
    properties: {
      list: { type: 'array', items: [{ type: 'string', [x('list-type')]: 'atomic' }, { type: 'integer' }] },
      one: { type: 'array', items: { type: 'string', default: 'a', enum: ['a', null, 1, { k: [true] }] } },
      open: { type: 'object', additionalProperties: true, [x('preserve-unknown-fields')]: true },
      closed: { type: 'object', additionalProperties: false },
      typed: { type: 'object', additionalProperties: { type: 'string', example: { any: 'thing' } } },
      deps: { type: 'object', dependencies: { a: ['b', 'c'], d: { required: ['e'] } }, additionalItems: { type: 'string' } },
    },
    [x('validations')]: [{ rule: 'true', optionalOldSelf: false, reason: 'FieldValueInvalid' }],
  };
  // What protobuf's zero values decode to is set, so that every codec gives the object back.
  const object: Json = {
    apiVersion,
    kind: 'CustomResourceDefinition',
    ...withSchema(schema),
    metadata: { name: 'widgets.example.com', creationTimestamp: null },
    status: { conditions: null, acceptedNames: { plural: '', kind: '' }, storedVersions: null },
  };

  it.each([...codecs.keys()])('round-trips every shape of the union types through %s', (mediaType) => {
    const codec = codecs.get(mediaType)!;
    expect(codec.decode(codec.encode(object))).toEqual(object);
  });

  it("writes nested schemas in upstream's field order in JSON", () => {
    const json = codecs.get('application/json')!.encode({
      ...object,
      spec: {
        ...(object.spec as Json),
        versions: [version('v1', { schema: { openAPIV3Schema: { [x('int-or-string')]: true, items: [{ nullable: true, type: 'x' }], description: 'd' } } })],
      },
    });
    expect(Buffer.from(json).toString('utf8')).toContain(
      `"openAPIV3Schema":{"description":"d","items":[{"type":"x","nullable":true}],"${x('int-or-string')}":true}`,
    );
  });

  it("publishes upstream's OpenAPI definitions: apiextensions' module names, untyped JSON and union types, the profile's extension names", () => {
    const { v3 } = buildOpenApiDocuments(naming, new ResourceIndex(builtinResources(naming)), 'v1.32.0');
    const doc = v3.find((d) => d.path === `apis/${naming.groups.apiextensions}/v1`)!.document as Json;
    const schemas = (doc.components as Json).schemas as Record<string, Json>;
    const prefix = `${naming.groupDomain.split('.').reverse().join('.')}.apiextensions-apiserver.pkg.apis.apiextensions.v1`;
    const props = schemas[`${prefix}.JSONSchemaProps`]!.properties as Record<string, Json>;
    expect(props[x('preserve-unknown-fields')]).toEqual({ type: 'boolean' });
    expect(props.items).toEqual({ $ref: `#/components/schemas/${prefix}.JSONSchemaPropsOrArray` });
    expect(props.default).toEqual({ $ref: `#/components/schemas/${prefix}.JSON` });
    expect(schemas[`${prefix}.JSONSchemaPropsOrArray`]).toEqual({});
    expect(schemas[`${prefix}.JSON`]).toEqual({});
    expect(schemas[`${prefix}.CustomResourceDefinition`]![x('group-version-kind')]).toEqual([
      { group: naming.groups.apiextensions, kind: 'CustomResourceDefinition', version: 'v1' },
    ]);
  });

  it('names the extension fields by the profile in the schema registry', () => {
    const names = schemaRegistry(naming)
      .type('apiextensions.v1.JSONSchemaProps')
      .properties.map((p) => p.name)
      .filter((n) => n.startsWith('x-'));
    expect(names).toEqual(['preserve-unknown-fields', 'embedded-resource', 'int-or-string', 'list-map-keys', 'list-type', 'map-type', 'validations'].map(x));
  });
});
