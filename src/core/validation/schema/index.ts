/**
 * What the server does to a custom resource's value with its version's structural schema, as
 * apiextensions-apiserver and kube-openapi do it in Kubernetes 1.32: prune on decode, default
 * on decode and on every read, validate on create and update; and the checks a definition's
 * defaults get. Pure functions; `compileSchema` once per schema, then its methods per object.
 */
export type { JSONSchemaProps, SchemaExtensions, ValidationRule } from './types';
export { schemaExtensions } from './types';
export { type CompiledSchema, compileSchema } from './compile';
export { type PruneOptions, type PruneResult, pruneValue, pruneNonNullableNulls, unknownFieldMessage } from './prune';
export { applyDefaults } from './defaults';
export { validateSchemaValue, validateSchemaUpdate, validateEmbeddedResources } from './values';
export { validateListSetsAndMaps } from './list-types';
export { type CheckDefaultsOptions, checkSchemaDefaults } from './check-defaults';
export { SchemaTooDeep, type SchemaNode, schemaNode } from './node';
