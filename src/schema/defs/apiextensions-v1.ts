/**
 * apiextensions/v1: CustomResourceDefinition and the OpenAPI v3 schema it carries per version
 * (JSONSchemaProps). Facts (field numbers, JSON names, markers, pointer and omitempty) follow
 * upstream 1.32 (k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1, types.go and
 * types_jsonschema.go).
 *
 * JSONSchemaProps' vendor extensions are named by the profile (`extension: true`:
 * `x-kubernetes-preserve-unknown-fields` / `x-platform-preserve-unknown-fields`), so the types
 * that hold a schema are compiled per profile (src/schema/registry.ts). `default`, `example` and
 * `enum` items are raw JSON (`JSON_VALUE`); `items`, `additionalProperties`, `additionalItems`
 * and the values of `dependencies` are union types, written in JSON as one of two shapes by
 * upstream's hand-written marshallers and as their own messages in protobuf (`union`).
 */
import { BOOL, BYTES, DOUBLE, definePackage, f, INT32, INT64, JSON_VALUE, listKind, listOf, mapOf, msg, ref, STRING, TIME } from '../dsl';

const required = { emitEmpty: true, required: true } as const;
const atomic = { listType: 'atomic' } as const;

export const APIEXTENSIONS_V1 = definePackage('apiextensions.v1', [
  msg(
    'CustomResourceDefinition',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta')),
      f('spec', 2, ref('CustomResourceDefinitionSpec'), required),
      f('status', 3, ref('CustomResourceDefinitionStatus')),
    ],
    { typeMeta: true },
  ),
  listKind('CustomResourceDefinitionList', 'CustomResourceDefinition'),
  msg('CustomResourceDefinitionSpec', [
    f('group', 1, STRING, required),
    f('names', 3, ref('CustomResourceDefinitionNames'), required),
    f('scope', 4, STRING, required),
    f('versions', 7, listOf(ref('CustomResourceDefinitionVersion')), { ...required, ...atomic }),
    f('conversion', 9, ref('CustomResourceConversion'), { pointer: true }),
    f('preserveUnknownFields', 10, BOOL),
  ]),
  msg('CustomResourceConversion', [f('strategy', 1, STRING, required), f('webhook', 2, ref('WebhookConversion'), { pointer: true })]),
  msg('WebhookConversion', [
    f('clientConfig', 2, ref('WebhookClientConfig'), { pointer: true }),
    f('conversionReviewVersions', 3, listOf(STRING), { ...required, ...atomic }),
  ]),
  msg('WebhookClientConfig', [f('url', 3, STRING, { pointer: true }), f('service', 1, ref('ServiceReference'), { pointer: true }), f('caBundle', 2, BYTES)]),
  msg('ServiceReference', [
    f('namespace', 1, STRING, required),
    f('name', 2, STRING, required),
    f('path', 3, STRING, { pointer: true }),
    f('port', 4, INT32, { pointer: true }),
  ]),
  msg('CustomResourceDefinitionVersion', [
    f('name', 1, STRING, required),
    f('served', 2, BOOL, required),
    f('storage', 3, BOOL, required),
    f('deprecated', 7, BOOL),
    f('deprecationWarning', 8, STRING, { pointer: true }),
    f('schema', 4, ref('CustomResourceValidation'), { pointer: true }),
    f('subresources', 5, ref('CustomResourceSubresources'), { pointer: true }),
    f('additionalPrinterColumns', 6, listOf(ref('CustomResourceColumnDefinition')), atomic),
    f('selectableFields', 9, listOf(ref('SelectableField')), atomic),
  ]),
  msg('SelectableField', [f('jsonPath', 1, STRING, required)]),
  msg('CustomResourceColumnDefinition', [
    f('name', 1, STRING, required),
    f('type', 2, STRING, required),
    f('format', 3, STRING),
    f('description', 4, STRING),
    f('priority', 5, INT32),
    f('jsonPath', 6, STRING, required),
  ]),
  msg('CustomResourceDefinitionNames', [
    f('plural', 1, STRING, required),
    f('singular', 2, STRING),
    f('shortNames', 3, listOf(STRING), atomic),
    f('kind', 4, STRING, required),
    f('listKind', 5, STRING),
    f('categories', 6, listOf(STRING), atomic),
  ]),
  msg('CustomResourceDefinitionCondition', [
    f('type', 1, STRING, required),
    f('status', 2, STRING, required),
    f('lastTransitionTime', 3, TIME),
    f('reason', 4, STRING),
    f('message', 5, STRING),
  ]),
  // `conditions`, `acceptedNames` and `storedVersions` have no omitempty but are +optional.
  msg('CustomResourceDefinitionStatus', [
    f('conditions', 1, listOf(ref('CustomResourceDefinitionCondition')), { emitEmpty: true, listType: 'map', listMapKeys: ['type'] }),
    f('acceptedNames', 2, ref('CustomResourceDefinitionNames'), { emitEmpty: true }),
    f('storedVersions', 3, listOf(STRING), { emitEmpty: true, ...atomic }),
  ]),
  msg('CustomResourceValidation', [f('openAPIV3Schema', 1, ref('JSONSchemaProps'), { pointer: true })]),
  msg('CustomResourceSubresources', [
    f('status', 1, ref('CustomResourceSubresourceStatus'), { pointer: true }),
    f('scale', 2, ref('CustomResourceSubresourceScale'), { pointer: true }),
  ]),
  msg('CustomResourceSubresourceStatus', []),
  msg('CustomResourceSubresourceScale', [
    f('specReplicasPath', 1, STRING, required),
    f('statusReplicasPath', 2, STRING, required),
    f('labelSelectorPath', 3, STRING, { pointer: true }),
  ]),

  msg('JSONSchemaProps', [
    f('id', 1, STRING),
    f('$schema', 2, STRING),
    f('$ref', 3, STRING, { pointer: true }),
    f('description', 4, STRING),
    f('type', 5, STRING),
    f('format', 6, STRING),
    f('title', 7, STRING),
    f('default', 8, JSON_VALUE, { pointer: true }),
    f('maximum', 9, DOUBLE, { pointer: true }),
    f('exclusiveMaximum', 10, BOOL),
    f('minimum', 11, DOUBLE, { pointer: true }),
    f('exclusiveMinimum', 12, BOOL),
    f('maxLength', 13, INT64, { pointer: true }),
    f('minLength', 14, INT64, { pointer: true }),
    f('pattern', 15, STRING),
    f('maxItems', 16, INT64, { pointer: true }),
    f('minItems', 17, INT64, { pointer: true }),
    f('uniqueItems', 18, BOOL),
    f('multipleOf', 19, DOUBLE, { pointer: true }),
    f('enum', 20, listOf(JSON_VALUE), atomic),
    f('maxProperties', 21, INT64, { pointer: true }),
    f('minProperties', 22, INT64, { pointer: true }),
    f('required', 23, listOf(STRING), atomic),
    f('items', 24, ref('JSONSchemaPropsOrArray'), { pointer: true }),
    f('allOf', 25, listOf(ref('JSONSchemaProps')), atomic),
    f('oneOf', 26, listOf(ref('JSONSchemaProps')), atomic),
    f('anyOf', 27, listOf(ref('JSONSchemaProps')), atomic),
    f('not', 28, ref('JSONSchemaProps'), { pointer: true }),
    f('properties', 29, mapOf(ref('JSONSchemaProps'))),
    f('additionalProperties', 30, ref('JSONSchemaPropsOrBool'), { pointer: true }),
    f('patternProperties', 31, mapOf(ref('JSONSchemaProps'))),
    f('dependencies', 32, mapOf(ref('JSONSchemaPropsOrStringArray'))),
    f('additionalItems', 33, ref('JSONSchemaPropsOrBool'), { pointer: true }),
    f('definitions', 34, mapOf(ref('JSONSchemaProps'))),
    f('externalDocs', 35, ref('ExternalDocumentation'), { pointer: true }),
    f('example', 36, JSON_VALUE, { pointer: true }),
    f('nullable', 37, BOOL),
    f('preserve-unknown-fields', 38, BOOL, { pointer: true, extension: true }),
    f('embedded-resource', 39, BOOL, { extension: true }),
    f('int-or-string', 40, BOOL, { extension: true }),
    f('list-map-keys', 41, listOf(STRING), { ...atomic, extension: true }),
    f('list-type', 42, STRING, { pointer: true, extension: true }),
    f('map-type', 43, STRING, { pointer: true, extension: true }),
    f('validations', 44, listOf(ref('ValidationRule')), {
      listType: 'map',
      listMapKeys: ['rule'],
      patchStrategy: 'merge',
      patchMergeKey: 'rule',
      extension: true,
    }),
  ]),
  msg('ValidationRule', [
    f('rule', 1, STRING, required),
    f('message', 2, STRING),
    f('messageExpression', 3, STRING),
    f('reason', 4, STRING, { pointer: true }),
    f('fieldPath', 5, STRING),
    f('optionalOldSelf', 6, BOOL, { pointer: true }),
  ]),
  msg('ExternalDocumentation', [f('description', 1, STRING), f('url', 2, STRING)]),
  // The union types' own fields have no JSON tags upstream: their names here are protobuf's,
  // seen only on the wire.
  msg('JSONSchemaPropsOrArray', [f('schema', 1, ref('JSONSchemaProps'), { pointer: true }), f('jSONSchemas', 2, listOf(ref('JSONSchemaProps')), atomic)], {
    union: { object: 'schema', other: 'jSONSchemas' },
  }),
  msg('JSONSchemaPropsOrBool', [f('allows', 1, BOOL), f('schema', 2, ref('JSONSchemaProps'), { pointer: true })], {
    union: { object: 'schema', other: 'allows' },
  }),
  msg('JSONSchemaPropsOrStringArray', [f('schema', 1, ref('JSONSchemaProps'), { pointer: true }), f('property', 2, listOf(STRING), atomic)], {
    union: { object: 'schema', other: 'property' },
  }),
]);
